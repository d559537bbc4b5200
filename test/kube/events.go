package kube

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// eventsAbout lists the Events of namespace ns about the object named name (of that kind,
// any kind when kind is "") and maps them through f, keeping those f says to keep.
func (s *Suite) eventsAbout(ns, kind, name string, f func(corev1.Event) (string, bool)) []string {
	GinkgoHelper()
	list := &corev1.EventList{}
	Expect(s.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Name != name || (kind != "" && e.InvolvedObject.Kind != kind) {
			continue
		}
		if v, keep := f(e); keep {
			out = append(out, v)
		}
	}
	return out
}

func typeReason(e corev1.Event) (string, bool) { return e.Type + " " + e.Reason, true }

// Events returns "<type> <reason>" of the Events about u.
func (s *Suite) Events(u *unstructured.Unstructured) []string {
	GinkgoHelper()
	return s.eventsAbout(u.GetNamespace(), u.GetKind(), u.GetName(), typeReason)
}

// EventsOf returns a function listing Events(u) (for Eventually).
func (s *Suite) EventsOf(u *unstructured.Unstructured) func() []string {
	return func() []string { return s.Events(u) }
}

// EventsByName returns "<type> <reason>" of the Events of namespace ns about any object named
// name (kind is "" for any kind).
func (s *Suite) EventsByName(ns, kind, name string) []string {
	GinkgoHelper()
	return s.eventsAbout(ns, kind, name, typeReason)
}

// EventMessages returns "<reason>: <message>" of the Events about u.
func (s *Suite) EventMessages(u *unstructured.Unstructured) []string {
	GinkgoHelper()
	return s.eventsAbout(u.GetNamespace(), u.GetKind(), u.GetName(), func(e corev1.Event) (string, bool) { return e.Reason + ": " + e.Message, true })
}

// Warnings returns the reasons of the Warning Events about the object named name in ns.
func (s *Suite) Warnings(ns, name string) []string {
	GinkgoHelper()
	return s.eventsAbout(ns, "", name, func(e corev1.Event) (string, bool) { return e.Reason, e.Type == corev1.EventTypeWarning })
}

// EventsOfUID returns "<type> <reason>" of the Events about this very object (its UID): not
// those of an earlier object of the same name.
func (s *Suite) EventsOfUID(u *unstructured.Unstructured) []string {
	GinkgoHelper()
	return s.eventsAbout(u.GetNamespace(), u.GetKind(), u.GetName(), func(e corev1.Event) (string, bool) {
		return e.Type + " " + e.Reason, e.InvolvedObject.UID == u.GetUID()
	})
}
