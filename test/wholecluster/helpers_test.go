package wholecluster_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
)

// everyKind is one resource of every kind in namespace ns (the samples: the 14 typed kinds,
// the generic Addon, a NetworkGroup and a CellarBucket in the Cellar), in ns's organisation.
func everyKind(ns string) []*unstructured.Unstructured {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join("config", "samples", "api_*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var out []*unstructured.Unstructured
	for _, f := range files {
		base := filepath.Base(f)
		if strings.Contains(base, "credentials") {
			continue
		}
		out = append(out, suite.Sample(base, ns))
	}
	Expect(out).To(HaveLen(17))
	return out
}

func createAll(objs ...*unstructured.Unstructured) {
	GinkgoHelper()
	for _, u := range objs {
		Expect(k8s.Create(context.Background(), u)).To(Succeed(), u.GetKind())
	}
}

// notReady lists the resources whose Ready condition is not True.
func notReady(objs ...*unstructured.Unstructured) func() []string {
	return func() []string {
		var out []string
		for _, u := range objs {
			if got := kube.Condition(suite.Get(u), "Ready"); !strings.HasPrefix(got, "True/") {
				out = append(out, u.GetKind()+" "+u.GetName()+": "+got+" "+kube.ConditionMessage(suite.Get(u), "Ready"))
			}
		}
		return out
	}
}

// remaining lists the resources that still exist.
func remaining(objs ...*unstructured.Unstructured) func() []string {
	return func() []string {
		var out []string
		for _, u := range objs {
			if suite.Get(u) != nil {
				out = append(out, u.GetKind()+" "+u.GetName())
			}
		}
		return out
	}
}

// namespaceGone says whether namespace ns no longer exists.
func namespaceGone(ns string) func() bool {
	return func() bool {
		return apierrors.IsNotFound(k8s.Get(context.Background(), client.ObjectKey{Name: ns}, &corev1.Namespace{}))
	}
}

// addonIDs returns the add-on ids the resources recorded (status.addon), by kind/name.
func addonIDs(objs ...*unstructured.Unstructured) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	for _, u := range objs {
		if id := kube.StatusString(suite.Get(u), "addon"); id != "" {
			out[u.GetKind()+"/"+u.GetName()] = id
		}
	}
	return out
}

// deletes counts the DELETEs of each add-on id the fake served for org.
func deletes(org string) int {
	return fake.CountsFor(org)["DELETE /v2/organisations/{ownerId}/addons/{addonId}"]
}

func describe(objs ...*unstructured.Unstructured) string {
	var b strings.Builder
	for _, u := range objs {
		fmt.Fprintf(&b, "%s/%s ", u.GetKind(), u.GetName())
	}
	return b.String()
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }
