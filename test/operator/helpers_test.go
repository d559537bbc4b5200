package operator_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/envtestutil"
)

var nsCounter atomic.Int64

// newNamespace creates a fresh namespace so every spec is isolated.
func newNamespace() string {
	name := fmt.Sprintf("t-%d", nsCounter.Add(1))
	Expect(k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// sample loads config/samples/<file> into namespace ns, in the namespace's own organisation
// (orgOf): every spec's add-ons, API calls and faults at the shared fake are its own.
func sample(file, ns string) *unstructured.Unstructured {
	u, err := envtestutil.Sample(file, ns)
	Expect(err).NotTo(HaveOccurred())
	Expect(unstructured.SetNestedField(u.Object, orgOf(ns), "spec", "organisation")).To(Succeed())
	return u
}

// orgOf is the Clever Cloud organisation of a spec's namespace: one per namespace, so a spec
// counts the calls made about its own resources (fake.CountsFor) and injects faults into its
// own organisation only (ownerFault), whatever other specs' resources do meanwhile.
func orgOf(ns string) string {
	sum := sha256.Sum256([]byte("test/operator:" + ns))
	h := hex.EncodeToString(sum[:16])
	return "orga_" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// apiCounter counts the fake's requests about one organisation from the moment it was made.
type apiCounter struct {
	owner string
	base  map[string]int
}

// countCalls starts counting the requests about namespace ns's organisation.
func countCalls(ns string) *apiCounter {
	return &apiCounter{owner: orgOf(ns), base: fake.CountsFor(orgOf(ns))}
}

// route returns the requests on one route template since the counter was made.
func (c *apiCounter) route(r string) int { return fake.CountsFor(c.owner)[r] - c.base[r] }

// matching sums the requests since the counter was made on the route templates containing
// substr ("" = all).
func (c *apiCounter) matching(substr string) int {
	n := 0
	for r, v := range fake.CountsFor(c.owner) {
		if strings.Contains(r, substr) {
			n += v - c.base[r]
		}
	}
	return n
}

// ownerFault makes the fake answer the requests about namespace ns's organisation with f
// until the spec ends (or clearOwnerFault). Other specs' organisations are not affected.
func ownerFault(ns string, f fakeapi.OwnerFault) {
	fake.SetOwnerFault(orgOf(ns), &f)
	DeferCleanup(func() { fake.SetOwnerFault(orgOf(ns), nil) })
}

// clearOwnerFault lifts namespace ns's fault.
func clearOwnerFault(ns string) { fake.SetOwnerFault(orgOf(ns), nil) }

// failRoutes makes the requests about namespace ns's organisation on the given route
// templates answer 500 (a Clever Cloud incident) until the spec ends or clearOwnerFault.
func failRoutes(ns string, routes ...string) {
	ownerFault(ns, fakeapi.OwnerFault{Status: 500, Routes: routes})
}

func get(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{}
	out.SetGroupVersionKind(u.GroupVersionKind())
	err := k8s.Get(context.Background(), client.ObjectKeyFromObject(u), out)
	if apierrors.IsNotFound(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	return out
}

// condition returns "<status>/<reason>" of a condition type, or "" when absent.
func condition(u *unstructured.Unstructured, t string) string {
	if u == nil {
		return "<gone>"
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == t {
			return fmt.Sprintf("%v/%v", m["status"], m["reason"])
		}
	}
	return ""
}

func conditionMessage(u *unstructured.Unstructured, t string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == t {
			s, _ := m["message"].(string)
			return s
		}
	}
	return ""
}

func readyOf(u *unstructured.Unstructured) func() string {
	return func() string { return condition(get(u), "Ready") }
}

func statusString(u *unstructured.Unstructured, field string) string {
	s, _, _ := unstructured.NestedString(u.Object, "status", field)
	return s
}

func secret(ns, name string) *corev1.Secret {
	s := &corev1.Secret{}
	err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	return s
}

func secretKeys(s *corev1.Secret) []string {
	if s == nil {
		return nil
	}
	keys := make([]string, 0, len(s.Data))
	for k := range s.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// update writes cur's spec, labels and annotations onto the live resource, retrying when the
// operator's own writes (status, finalizers) got in between.
func update(cur *unstructured.Unstructured) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := get(cur)
		if live == nil {
			return fmt.Errorf("%s %s is gone", cur.GetKind(), cur.GetName())
		}
		live.Object["spec"] = cur.Object["spec"]
		live.SetLabels(cur.GetLabels())
		live.SetAnnotations(cur.GetAnnotations())
		return k8s.Update(context.Background(), live)
	})).To(Succeed())
}

// addonsNamed returns the fake's add-ons with that name, across owners.
func addonsNamed(name string) []fakeapi.Addon {
	var out []fakeapi.Addon
	for _, list := range fake.AllAddons() {
		for _, a := range list {
			if a.AddonName() == name {
				out = append(out, a)
			}
		}
	}
	return out
}

func addonName(u *unstructured.Unstructured) string {
	return "kubernetes::" + u.GetKind() + "::" + string(u.GetUID())
}

func envMap(vars []fakeapi.Variable) map[string]string {
	m := map[string]string{}
	for _, v := range vars {
		m[v.Name] = v.Value
	}
	return m
}

func secretData(s *corev1.Secret) map[string]string {
	m := map[string]string{}
	if s == nil {
		return m
	}
	for k, v := range s.Data {
		m[k] = string(v)
	}
	return m
}

// events returns "<type> <reason>" of the events about an object.
func events(u *unstructured.Unstructured) []string {
	list := &corev1.EventList{}
	Expect(k8s.List(context.Background(), list, client.InNamespace(u.GetNamespace()))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Name == u.GetName() && e.InvolvedObject.Kind == u.GetKind() {
			out = append(out, e.Type+" "+e.Reason)
		}
	}
	return out
}

// v4Values returns, for an operator add-on (Keycloak, Metabase, Matomo, Otoroshi), the values
// its Secret must carry from the fake's v4 answer (access URL, initial credentials where the
// add-on has them); nil for an add-on the fake does not serve at v4.
func v4Values(realID string) []string {
	doc, ok := fake.OperatorAddon(realID)
	if !ok {
		return nil
	}
	want := []string{}
	if u, _ := doc["accessUrl"].(string); u != "" {
		want = append(want, u)
	}
	if ic, ok := doc["initialCredentials"].(map[string]any); ok {
		for _, k := range []string{"user", "password"} {
			if v, _ := ic[k].(string); v != "" {
				want = append(want, v)
			}
		}
	}
	Expect(want).NotTo(BeEmpty(), "the fake's v4 answer for %s has an access URL", realID)
	return want
}

// mapValues returns the values of m.
func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
