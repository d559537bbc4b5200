package badinput_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/envtestutil"
)

var seq atomic.Int64

// caseCtx is one case's own namespace and organisation: the fake counts requests per
// organisation and the API server counter per namespace, so each case is measured alone.
type caseCtx struct {
	ns, org string
	n       int64
}

func newCase() *caseCtx {
	n := seq.Add(1)
	c := &caseCtx{ns: fmt.Sprintf("bad-%d", n), org: fmt.Sprintf("orga_bad00000-0000-0000-0000-%012d", n), n: n}
	Expect(k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns}})).To(Succeed())
	return c
}

// sample loads config/samples/<file> into the case's namespace and organisation.
func (c *caseCtx) sample(file string) *unstructured.Unstructured {
	u, err := envtestutil.Sample(file, c.ns)
	Expect(err).NotTo(HaveOccurred())
	Expect(unstructured.SetNestedField(u.Object, c.org, "spec", "organisation")).To(Succeed())
	return u
}

// override writes the namespace's clever-operator Secret with these data.
func (c *caseCtx) override(data map[string]string) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "clever-operator", Namespace: c.ns}, StringData: data}
	Expect(k8s.Create(context.Background(), s)).To(Succeed())
}

// useTenant makes the namespace use tenant credential set i (its own client and circuit).
func (c *caseCtx) useTenant(i int) {
	c.override(map[string]string{"config": fmt.Sprintf("[api]\ntoken = %q\nsecret = %q\n", tenants[i].Token, tenants[i].Secret)})
}

// faults are the suite's injected faults: per organisation, plus global ones set by a case
// and cleared by it.
var faults = struct {
	sync.Mutex
	owners  map[string]fakeapi.OwnerFault
	hidden  []string
	revoked []string
}{owners: map[string]fakeapi.OwnerFault{}}

func applyFaults() {
	owners := map[string]fakeapi.OwnerFault{}
	for k, v := range faults.owners {
		owners[k] = v
	}
	fake.SetFaults(fakeapi.Faults{Owners: owners, HiddenProviders: faults.hidden, RevokedTokens: faults.revoked})
}

func setOwnerFault(org string, f fakeapi.OwnerFault) {
	faults.Lock()
	defer faults.Unlock()
	faults.owners[org] = f
	applyFaults()
}

func setGlobalFaults(hidden, revoked []string) {
	faults.Lock()
	defer faults.Unlock()
	faults.hidden, faults.revoked = hidden, revoked
	applyFaults()
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

// condition returns "<status>/<reason>" of a condition type, "" when absent, "<gone>" when
// the object no longer exists.
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
	if u == nil {
		return ""
	}
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
	if u == nil {
		return ""
	}
	s, _, _ := unstructured.NestedString(u.Object, "status", field)
	return s
}

// events returns "<type> <reason>" of the events about an object.
func events(u *unstructured.Unstructured) func() []string {
	return func() []string {
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
}

// eventMessages returns the messages of the events about an object.
func eventMessages(u *unstructured.Unstructured) []string {
	list := &corev1.EventList{}
	Expect(k8s.List(context.Background(), list, client.InNamespace(u.GetNamespace()))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Name == u.GetName() && e.InvolvedObject.Kind == u.GetKind() {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

func annotate(u *unstructured.Unstructured, kv map[string]string) {
	Eventually(func() error {
		cur := get(u)
		ann := cur.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		for k, v := range kv {
			ann[k] = v
		}
		cur.SetAnnotations(ann)
		return k8s.Update(context.Background(), cur)
	}).Should(Succeed())
}

// canaryNS holds the healthy resources created during each case, with the global credentials.
var canaryOnce sync.Once

const canaryNS, canaryOrg = "canary", "orga_ca000000-0000-0000-0000-000000000001"

// newCanary creates a healthy Redis, in the canary namespace (global credentials) or, with
// tenant ≥ 0, in a namespace of its own using that tenant credential set.
func newCanary(tenant int) *unstructured.Unstructured {
	ns := canaryNS
	if tenant >= 0 {
		c := newCase()
		c.useTenant(tenant)
		ns = c.ns
	} else {
		canaryOnce.Do(func() {
			Expect(k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: canaryNS}})).To(Succeed())
		})
	}
	u, err := envtestutil.Sample("api_v1_redis.yaml", ns)
	Expect(err).NotTo(HaveOccurred())
	u.SetName(fmt.Sprintf("canary-%d", seq.Add(1)))
	Expect(unstructured.SetNestedField(u.Object, canaryOrg, "spec", "organisation")).To(Succeed())
	Expect(k8s.Create(context.Background(), u)).To(Succeed())
	return u
}
