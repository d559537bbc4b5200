package chartinstall_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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

// createAll creates the resources. Right after an install the credentials policy refuses
// them with "failed to find resource referenced by paramKind" until the API server has
// discovered the ClusterCleverCredentials CRD (up to about 30 s; documented in
// config/credentials-policy/README.md, "Fresh install": retry): createAll retries that
// refusal only, as a user would, and returns how long it refused.
func createAll(objs ...*unstructured.Unstructured) time.Duration {
	GinkgoHelper()
	var refused time.Duration
	for _, u := range objs {
		start := time.Now()
		Eventually(func() error {
			err := k8s.Create(context.Background(), u.DeepCopy())
			if err != nil && !strings.Contains(err.Error(), "failed to find resource referenced by paramKind") {
				return StopTrying("create " + u.GetKind()).Wrap(err)
			}
			return err
		}, 45*time.Second, time.Second).Should(Succeed(), u.GetKind())
		refused += time.Since(start).Truncate(time.Second)
	}
	return refused
}

// namespacePhase is namespace ns's phase, or "gone".
func namespacePhase(ns string) func() string {
	return func() string {
		n := &corev1.Namespace{}
		err := k8s.Get(context.Background(), client.ObjectKey{Name: ns}, n)
		if apierrors.IsNotFound(err) {
			return "gone"
		}
		if err != nil {
			return err.Error()
		}
		return string(n.Status.Phase)
	}
}

// namespaceConditions are the messages of namespace ns's True conditions (what `kubectl
// describe namespace` shows a user waiting on it).
func namespaceConditions(ns string) string {
	n := &corev1.Namespace{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: ns}, n); err != nil {
		return err.Error()
	}
	var out []string
	for _, c := range n.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			out = append(out, c.Reason+": "+c.Message)
		}
	}
	return strings.Join(out, "; ")
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

// addonsAt lists the ids of the add-ons of org at the fake Clever Cloud.
func addonsAt(org string) []string {
	var out []string
	for _, a := range fake.Addons(org) {
		out = append(out, a.ID)
	}
	return out
}

// deletes and creates count the add-on DELETEs and creations the fake served for org.
func deletes(org string) int {
	return fake.CountsFor(org)["DELETE /v2/organisations/{ownerId}/addons/{addonId}"]
}

func creates(org string) int {
	return fake.CountsFor(org)["POST /v2/organisations/{ownerId}/addons"]
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

var schemaCRDList = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinitionList")
