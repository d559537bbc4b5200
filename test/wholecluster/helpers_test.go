package wholecluster_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
	"github.com/clever-operator/clever-operator/test/kube/cluster"
)

// everyKind is one resource of every kind in ns, in its organisation.
func everyKind(ns string) []*unstructured.Unstructured {
	return cluster.EveryKind(ns, suite.OrgOf(ns))
}

func createAll(objs ...*unstructured.Unstructured) {
	GinkgoHelper()
	for _, u := range objs {
		Expect(k8s.Create(context.Background(), u)).To(Succeed(), u.GetKind())
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

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }
