// Package kube is the helper package of the envtest suites and the test programs:
//
//   - the control plane: envtest's kube-apiserver + etcd (StartSuite, StartControlPlane,
//     StartEnvironment); the whole cluster (kube-controller-manager, kube-scheduler, KWOK,
//     OLM) is test/kube/cluster's, which builds on this package;
//   - the operator in-process (StartManager, wired as main wires it) or as processes that can
//     be killed and restarted (Harness, Operator: hack/demo, test/bench, test/chaos,
//     test/realapi; test/kube/proc measures them from /proc and runs them in memory cgroups);
//   - the fake Clever Cloud API, one per suite (StartSuite, NewFake) or per spec (NewFake);
//   - the leak scanner (Secrets, Leaks, ExpectNoLeak) and counters (CountCalls per
//     organisation at the fake, RequestRecorder, RoundTripFunc wrappers of the operator's
//     transport, the audit log);
//   - reading resources and their conditions, Secrets and Events, writing with retries on
//     conflict, namespaces and their Clever Cloud organisations.
//
// As CloudNativePG's tests/utils: helpers, not state. Each suite owns its world (its API
// server client, fake Clever Cloud API, namespaces, counters) and hands it to the helpers in a
// Suite. The helpers called from Ginkgo specs assert with Gomega and are nil-safe: a resource
// that is gone reads as nil, its condition as "<gone>", its fields as "".
package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"sync/atomic"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// Suite is one suite's world as the helpers see it.
type Suite struct {
	// Name seeds the suite's per-namespace organisations (OrgOf), e.g. "test/operator".
	Name string
	// Client reads and writes the API server (the suite's admin client).
	Client client.Client
	// Fake is the suite's fake Clever Cloud API (nil when the suite has none of its own).
	Fake *fakeapi.Server
	// NamespacePrefix names the namespaces NewNamespace creates (<prefix>-<n>).
	NamespacePrefix string

	// Set by StartSuite: the control plane, its admin config (Client's), the fake's HTTP
	// server and everything the operators of the suite log.
	Env        *envtest.Environment
	Config     *rest.Config
	FakeServer *httptest.Server
	Logs       *LogBuffer

	seq atomic.Int64
}

// Next returns the suite's next sequence number (1, 2, ...), as used in namespace names.
func (s *Suite) Next() int64 { return s.seq.Add(1) }

// OrgOf is the Clever Cloud organisation of a namespace: one per namespace and suite, so a
// spec counts the calls made about its own resources (CountCalls) and injects faults into its
// own organisation only, whatever other specs' resources do meanwhile.
func (s *Suite) OrgOf(ns string) string { return Org(s.Name + ":" + ns) }

// Org returns a well-formed organisation id derived from seed.
func Org(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	h := hex.EncodeToString(sum[:16])
	return fmt.Sprintf("orga_%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
}
