package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Gone is what Condition says of a resource that no longer exists.
const Gone = "<gone>"

// Get reads the live resource u names; nil when it does not exist.
func (s *Suite) Get(u *unstructured.Unstructured) *unstructured.Unstructured {
	GinkgoHelper()
	out := &unstructured.Unstructured{}
	out.SetGroupVersionKind(u.GroupVersionKind())
	err := s.Client.Get(context.Background(), client.ObjectKeyFromObject(u), out)
	if apierrors.IsNotFound(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	return out
}

// Live reads the live resource u names, which must exist.
func (s *Suite) Live(u *unstructured.Unstructured) *unstructured.Unstructured {
	GinkgoHelper()
	cur := s.Get(u)
	Expect(cur).NotTo(BeNil(), "%s %s/%s exists", u.GetKind(), u.GetNamespace(), u.GetName())
	return cur
}

// GetOf returns a function reading u (for Eventually(...).Should(BeNil())).
func (s *Suite) GetOf(u *unstructured.Unstructured) func() *unstructured.Unstructured {
	return func() *unstructured.Unstructured { return s.Get(u) }
}

// ReadyOf returns a function reading "<status>/<reason>" of u's live Ready condition.
func (s *Suite) ReadyOf(u *unstructured.Unstructured) func() string {
	return func() string { return Condition(s.Get(u), "Ready") }
}

// NotReady lists the resources whose Ready condition is not True (for Eventually).
func (s *Suite) NotReady(objs ...*unstructured.Unstructured) func() []string {
	return func() []string {
		var out []string
		for _, u := range objs {
			cur := s.Get(u)
			if got := Condition(cur, "Ready"); !strings.HasPrefix(got, "True/") {
				out = append(out, u.GetKind()+" "+u.GetName()+": "+got+" "+ConditionMessage(cur, "Ready"))
			}
		}
		return out
	}
}

// Remaining lists the resources that still exist (for Eventually).
func (s *Suite) Remaining(objs ...*unstructured.Unstructured) func() []string {
	return func() []string {
		var out []string
		for _, u := range objs {
			if s.Get(u) != nil {
				out = append(out, u.GetKind()+" "+u.GetName())
			}
		}
		return out
	}
}

// Condition returns "<status>/<reason>" of condition type t, "" when absent, Gone when u is
// nil (the resource no longer exists).
func Condition(u *unstructured.Unstructured, t string) string {
	if u == nil {
		return Gone
	}
	if m := conditionOf(u, t); m != nil {
		return fmt.Sprintf("%v/%v", m["status"], m["reason"])
	}
	return ""
}

// ConditionMessage returns the message of condition type t ("" when absent or u is nil).
func ConditionMessage(u *unstructured.Unstructured, t string) string {
	_, _, msg := ConditionFields(u, t)
	return msg
}

// ConditionFields returns the status, reason and message of condition type t ("" when absent
// or u is nil).
func ConditionFields(u *unstructured.Unstructured, t string) (status, reason, message string) {
	m := conditionOf(u, t)
	status, _ = m["status"].(string)
	reason, _ = m["reason"].(string)
	message, _ = m["message"].(string)
	return status, reason, message
}

func conditionOf(u *unstructured.Unstructured, t string) map[string]any {
	if u == nil {
		return nil
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == t {
			return m
		}
	}
	return nil
}

// StatusString returns status.<field> ("" when absent or u is nil).
func StatusString(u *unstructured.Unstructured, field string) string {
	if u == nil {
		return ""
	}
	s, _, _ := unstructured.NestedString(u.Object, "status", field)
	return s
}

// conflictRetry is how long writes retry when the operator's own writes (status,
// finalizers) got in between: about 10 s.
var conflictRetry = wait.Backoff{Steps: 30, Duration: 10 * time.Millisecond, Factor: 1.5, Jitter: 0.1, Cap: time.Second}

// Mutate applies fn to the live resource and writes it, re-reading and retrying on conflict.
func (s *Suite) Mutate(u *unstructured.Unstructured, fn func(live *unstructured.Unstructured)) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(conflictRetry, func() error {
		live := s.Get(u)
		if live == nil {
			return fmt.Errorf("%s %s/%s is gone", u.GetKind(), u.GetNamespace(), u.GetName())
		}
		fn(live)
		return s.Client.Update(context.Background(), live)
	})).To(Succeed())
}

// Update writes cur's spec, labels and annotations onto the live resource, retrying on
// conflict.
func (s *Suite) Update(cur *unstructured.Unstructured) {
	GinkgoHelper()
	s.Mutate(cur, func(live *unstructured.Unstructured) {
		live.Object["spec"] = cur.Object["spec"]
		live.SetLabels(cur.GetLabels())
		live.SetAnnotations(cur.GetAnnotations())
	})
}

// Annotate sets annotations on the live resource (an empty value removes the key), retrying
// on conflict.
func (s *Suite) Annotate(u *unstructured.Unstructured, kv map[string]string) {
	GinkgoHelper()
	s.Mutate(u, func(live *unstructured.Unstructured) {
		ann := live.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		for k, v := range kv {
			if v == "" {
				delete(ann, k)
			} else {
				ann[k] = v
			}
		}
		live.SetAnnotations(ann)
	})
}

// Sample loads config/samples/<file> into namespace ns and organisation org ("" keeps the
// sample's).
func Sample(file, ns, org string) *unstructured.Unstructured {
	GinkgoHelper()
	u, err := ReadSample(file, ns)
	Expect(err).NotTo(HaveOccurred())
	if org != "" {
		Expect(unstructured.SetNestedField(u.Object, org, "spec", "organisation")).To(Succeed())
	}
	return u
}

// Sample loads config/samples/<file> into namespace ns, in the namespace's own organisation
// (OrgOf).
func (s *Suite) Sample(file, ns string) *unstructured.Unstructured {
	GinkgoHelper()
	return Sample(file, ns, s.OrgOf(ns))
}

// Manifest is what a backup (or a tenant copying another namespace's YAML) keeps of a
// resource, put in namespace ns: spec, labels and annotations; no UID, no status, no owner
// references.
func Manifest(u *unstructured.Unstructured, ns string) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(),
		"metadata": map[string]any{"name": u.GetName(), "namespace": ns},
		"spec":     u.Object["spec"],
	}}
	out.SetLabels(u.GetLabels())
	out.SetAnnotations(u.GetAnnotations())
	return out.DeepCopy()
}
