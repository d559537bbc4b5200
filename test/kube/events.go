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
// any kind when kind is "") and maps them through f.
func (s *Suite) eventsAbout(ns, kind, name string, f func(corev1.Event) string) []string {
	GinkgoHelper()
	list := &corev1.EventList{}
	Expect(s.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name && (kind == "" || e.InvolvedObject.Kind == kind) {
			out = append(out, f(e))
		}
	}
	return out
}

func typeReason(e corev1.Event) string { return e.Type + " " + e.Reason }

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
	return s.eventsAbout(u.GetNamespace(), u.GetKind(), u.GetName(), func(e corev1.Event) string { return e.Reason + ": " + e.Message })
}

// Warnings returns the reasons of the Warning Events about the object named name in ns.
func (s *Suite) Warnings(ns, name string) []string {
	GinkgoHelper()
	var out []string
	for _, tr := range s.EventsByName(ns, "", name) {
		if len(tr) > len(corev1.EventTypeWarning)+1 && tr[:len(corev1.EventTypeWarning)+1] == corev1.EventTypeWarning+" " {
			out = append(out, tr[len(corev1.EventTypeWarning)+1:])
		}
	}
	return out
}
