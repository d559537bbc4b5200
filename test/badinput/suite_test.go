// Package badinput_test is the bad-input matrix: the whole operator (Helm reconcilers and
// provisioning engine, in-process, wired as main does) on a real kube-apiserver + etcd
// (envtest) against the fake Clever Cloud API over HTTP, fed with invalid specs, broken
// credentials, hostile API answers and conflicting objects. Each case asserts the exact
// reason on Ready (and Stalled), a Warning event of that reason, no hot retry (requests
// counted at the fake per organisation and at the API server per namespace over a window),
// and that a healthy canary created meanwhile becomes Ready. The operator logs at the
// highest verbosity its caps allow, and no secret may appear in logs, events or status.
package badinput_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestBadInput(t *testing.T) {
	kube.RunSuite(t, "Bad-input matrix (envtest + fake Clever Cloud API)", 30*time.Second, 100*time.Millisecond)
}

// The operator's global credentials, and tenant sets that namespaces use through override
// Secrets: each tenant set has its own client, rate limiter and circuit breaker, so a storm
// injected for one case cannot throttle the canaries (which use the global set).
var (
	global  = fakeapi.Credential{ConsumerKey: "bi-consumer-key", ConsumerSecret: "bi-consumer-secret-3e9d71c4", Token: "bi-token-a4f02b88", Secret: "bi-token-secret-6c15e0d2"}
	tenants = []fakeapi.Credential{
		{ConsumerKey: "bi-consumer-key", ConsumerSecret: "bi-consumer-secret-3e9d71c4", Token: "bi-tenant1-token-0d9c7b21", Secret: "bi-tenant1-secret-f3a85e60"},
		{ConsumerKey: "bi-consumer-key", ConsumerSecret: "bi-consumer-secret-3e9d71c4", Token: "bi-tenant2-token-71be4c09", Secret: "bi-tenant2-secret-2d6f91aa"},
		{ConsumerKey: "bi-consumer-key", ConsumerSecret: "bi-consumer-secret-3e9d71c4", Token: "bi-tenant3-token-c4e2a7f5", Secret: "bi-tenant3-secret-85b0d3e1"},
		{ConsumerKey: "bi-consumer-key", ConsumerSecret: "bi-consumer-secret-3e9d71c4", Token: "bi-tenant4-token-9a1f6d30", Secret: "bi-tenant4-secret-4e7c02b9"},
		{ConsumerKey: "bi-consumer-key", ConsumerSecret: "bi-consumer-secret-3e9d71c4", Token: "bi-tenant5-token-e85d3c17", Secret: "bi-tenant5-secret-b92a64f0"},
	}
	// rejected are credentials the fake does not know (written into override Secrets).
	rejected = fakeapi.Credential{ConsumerKey: "bi-unknown-consumer", ConsumerSecret: "bi-unknown-consumer-secret-5f1e", Token: "bi-unknown-token-8c2d", Secret: "bi-unknown-secret-93ab"}
)

// apiTimeout is the per-attempt Clever Cloud timeout the suite runs the operator with, so the
// timeout case takes seconds, not minutes.
const apiTimeout = 2 * time.Second

var (
	k8s  client.Client
	fake *fakeapi.Server
	mgr  *kube.Manager
	// suite is this suite's world for the shared helpers (test/kube).
	suite *kube.Suite
	// logs receives everything the operator logs, at the highest verbosity its caps allow.
	logs *kube.LogBuffer
	// apiserver counts the operator's requests to the API server, by namespace.
	apiserver = &requestCounter{}
)

var _ = BeforeSuite(func() {
	suite = kube.StartSuite(kube.SuiteOptions{Name: "test/badinput", NamespacePrefix: "bad", Throttled: true, Fake: fakeapi.Options{
		Credentials:       append([]fakeapi.Credential{global}, tenants...),
		ProvisioningDelay: 100 * time.Millisecond,
		Seed:              7,
	}})
	k8s, fake, logs = suite.Client, suite.Fake, suite.Logs
	mgr = suite.StartManager(kube.ManagerOptions{
		API:          suite.APIConfig(global),
		ResyncPeriod: time.Hour, Workers: 4, APITimeout: apiTimeout,
		Wrap: apiserver.wrap,
	})
})

var _ = AfterSuite(func() {
	if suite != nil {
		assertNoLeak()
	}
	mgr.Stop()
})

// requestCounter counts the requests the operator sends to the API server per namespace, and
// its reads of the namespace override Secret (one per engine pass that talks to Clever Cloud).
type requestCounter struct {
	mu        sync.Mutex
	byNS      map[string]int
	overrides map[string]int
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return kube.RoundTripFunc(func(r *http.Request) (*http.Response, error) {
		if ns, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "namespaces/"); ok && !strings.Contains(ns, "watch") {
			name, tail, _ := strings.Cut(rest, "/")
			c.mu.Lock()
			if c.byNS == nil {
				c.byNS, c.overrides = map[string]int{}, map[string]int{}
			}
			if r.URL.Query().Get("watch") != "true" {
				c.byNS[name]++
			}
			if r.Method == http.MethodGet && tail == "secrets/clever-operator" {
				c.overrides[name]++
			}
			c.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

// counts returns (API server requests, engine passes) for namespace ns.
func (c *requestCounter) counts(ns string) (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byNS[ns], c.overrides[ns]
}

// caseSecrets are values cases put into override Secrets, env answers or variables.
var caseSecrets struct {
	sync.Mutex
	values []string
}

// assertNoLeak checks that no secret the suite handled appears in the operator's logs (at the
// highest verbosity its caps allow), in any Event, or in the status (conditions and messages
// included) of any resource of any kind and version: the OAuth tokens, token secrets and
// consumer secrets of every credential set (global, tenants, rejected), every add-on
// environment value (except the URLs mirrored into status by design), every ConfigProvider
// variable value, the values cases injected, and their base64 forms.
func assertNoLeak() {
	values := suite.SecretValues(append([]fakeapi.Credential{global, rejected}, tenants...)...)
	caseSecrets.Lock()
	values = append(values, caseSecrets.values...)
	caseSecrets.Unlock()
	suite.ExpectNoLeak(logs.String(), values)
}
