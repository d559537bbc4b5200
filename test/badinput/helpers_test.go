package badinput_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
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
	suite.CreateNamespace(c.ns)
	return c
}

// sample loads config/samples/<file> into the case's namespace and organisation.
func (c *caseCtx) sample(file string) *unstructured.Unstructured {
	return kube.Sample(file, c.ns, c.org)
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
		canaryOnce.Do(func() { suite.CreateNamespace(canaryNS) })
	}
	u := kube.Sample("api_v1_redis.yaml", ns, canaryOrg)
	u.SetName(fmt.Sprintf("canary-%d", seq.Add(1)))
	Expect(k8s.Create(context.Background(), u)).To(Succeed())
	return u
}
