package olm_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/test/kube"
	"github.com/clever-operator/clever-operator/test/kube/cluster"
)

// everyKind is one resource of every kind in ns, in ns's organisation.
func everyKind(ns string) []*unstructured.Unstructured { return cluster.EveryKind(ns, suite.OrgOf(ns)) }

// samples loads the named config/samples files into ns, in ns's organisation.
func samples(ns string, files ...string) []*unstructured.Unstructured {
	GinkgoHelper()
	var out []*unstructured.Unstructured
	for _, f := range files {
		out = append(out, suite.Sample(f, ns))
	}
	return out
}

func createAll(objs ...*unstructured.Unstructured) {
	GinkgoHelper()
	for _, u := range objs {
		Expect(k8s.Create(context.Background(), u)).To(Succeed(), u.GetKind())
	}
}

func deleteAll(objs ...*unstructured.Unstructured) {
	GinkgoHelper()
	for _, u := range objs {
		Expect(k8s.Delete(context.Background(), u)).To(Succeed(), u.GetKind())
	}
}

// addonIDs returns the ids the resources recorded in their status (status.addon, or
// status.id for a NetworkGroup), by kind/name.
func addonIDs(objs ...*unstructured.Unstructured) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	for _, u := range objs {
		cur := suite.Get(u)
		for _, f := range []string{"addon", "id"} {
			if id := kube.StatusString(cur, f); id != "" {
				out[u.GetKind()+"/"+u.GetName()] = id
				break
			}
		}
	}
	return out
}

// Routes of the fake that create or delete something at Clever Cloud.
const (
	addonCreate = "POST /v2/organisations/{ownerId}/addons"
	addonDelete = "DELETE /v2/organisations/{ownerId}/addons/{addonId}"
	ngCreate    = "POST /v4/networkgroups/organisations/{ownerId}/networkgroups"
	ngDelete    = "DELETE /v4/networkgroups/organisations/{ownerId}/networkgroups/{ngId}"
)

// lifecycleCalls counts the add-on and Network Group creations and deletions the fake
// served for org.
func lifecycleCalls(org string) map[string]int {
	c := fake.CountsFor(org)
	return map[string]int{addonCreate: c[addonCreate], addonDelete: c[addonDelete], ngCreate: c[ngCreate], ngDelete: c[ngDelete]}
}

// callsSince returns the fake's counts for org that changed since before (non-zero deltas).
func callsSince(org string, before map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range fake.CountsFor(org) {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// atFake lists the add-on and Network Group ids the fake holds for org.
func atFake(org string) []string {
	var out []string
	for _, a := range fake.Addons(org) {
		out = append(out, a.ID)
	}
	for _, g := range fake.NetworkGroups(org) {
		out = append(out, g.ID)
	}
	return out
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

func kinds(objs ...*unstructured.Unstructured) string {
	var b strings.Builder
	for _, u := range objs {
		fmt.Fprintf(&b, "%s/%s ", u.GetKind(), u.GetName())
	}
	return strings.TrimSpace(b.String())
}

// denials returns the requests of the ServiceAccount OLM created in ns that RBAC refused.
func denials(ns string) []string {
	GinkgoHelper()
	return whole.Denials("system:serviceaccount:"+ns+":"+serviceAccount(), 0)
}
