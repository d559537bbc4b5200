package kube

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cfgpkg "github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// RunSuite runs a package's Ginkgo specs with the default Eventually timeout and polling
// interval given (zero: Gomega's, 1 s and 10 ms).
func RunSuite(t *testing.T, description string, timeout, polling time.Duration) {
	RegisterFailHandler(Fail)
	if timeout > 0 {
		SetDefaultEventuallyTimeout(timeout)
	}
	if polling > 0 {
		SetDefaultEventuallyPollingInterval(polling)
	}
	RunSpecs(t, description)
}

// SuiteOptions is what StartSuite starts for a suite that runs the operator in-process.
type SuiteOptions struct {
	// Name seeds the per-namespace organisations (Suite.OrgOf), e.g. "test/operator".
	Name string
	// NamespacePrefix names the namespaces Suite.NewNamespace creates.
	NamespacePrefix string
	// Throttled keeps client-go's client-side rate limit for the suite's and the operator's
	// clients (default: off, as main runs the operator).
	Throttled bool
	// Fake configures the suite's fake Clever Cloud API.
	Fake fakeapi.Options
}

// StartSuite, called from a BeforeSuite, starts the suite's world: the control plane with the
// operator's CRDs (StartControlPlane, the operator's logs into Suite.Logs) and the fake Clever
// Cloud API over HTTP. Both stop when the suite ends, after its AfterSuite (which can still
// read them: leak checks); the operators a suite starts are its own to stop.
func StartSuite(o SuiteOptions) *Suite {
	GinkgoHelper()
	logs := &LogBuffer{}
	cp := StartControlPlane(logs, !o.Throttled)
	DeferCleanup(func() { Expect(cp.Env.Stop()).To(Succeed()) })
	fake, srv := fakeapi.NewTestServer(o.Fake)
	DeferCleanup(srv.Close)
	return &Suite{Name: o.Name, Client: cp.Client, Fake: fake, NamespacePrefix: o.NamespacePrefix,
		Env: cp.Env, Config: cp.Config, FakeServer: srv, Logs: logs}
}

// APIConfig is the operator's global configuration for the suite's fake with credential set c.
func (s *Suite) APIConfig(c fakeapi.Credential) cfgpkg.APIConfig {
	return APIConfig(s.FakeServer.URL, c)
}

// APIConfig is the operator's global configuration for a Clever Cloud API at endpoint with
// credential set c.
func APIConfig(endpoint string, c fakeapi.Credential) cfgpkg.APIConfig {
	return cfgpkg.APIConfig{Endpoint: endpoint, ConsumerKey: c.ConsumerKey, ConsumerSecret: c.ConsumerSecret, Token: c.Token, Secret: c.Secret}
}

// OverrideConfig is a complete credential set as a namespace override Secret's or a
// credentials object's `config` document (an endpoint other than the operator's needs one).
func OverrideConfig(endpoint string, c fakeapi.Credential) string {
	return fmt.Sprintf("[api]\nendpoint = %q\nconsumer-key = %q\nconsumer-secret = %q\ntoken = %q\nsecret = %q\n",
		endpoint, c.ConsumerKey, c.ConsumerSecret, c.Token, c.Secret)
}

// StartManager runs the operator in-process on the suite's control plane (StartManager).
func (s *Suite) StartManager(o ManagerOptions) *Manager {
	GinkgoHelper()
	return StartManager(s.Config, o)
}

// NewFake starts a fake Clever Cloud API over HTTP, closed when the running spec ends (or,
// called from a BeforeSuite, when the suite ends): a spec's own fake, or a suite's.
func NewFake(o fakeapi.Options) (*fakeapi.Server, *httptest.Server) {
	GinkgoHelper()
	fake, srv := fakeapi.NewTestServer(o)
	DeferCleanup(srv.Close)
	return fake, srv
}

// StartEnvironment starts env (NewEnvironment, changed as the suite needs) and returns its
// config and an admin client with opts; the control plane stops when the suite (called from a
// BeforeSuite) or the spec ends.
func StartEnvironment(env *envtest.Environment, opts client.Options) (*rest.Config, client.Client) {
	GinkgoHelper()
	cfg, err := env.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(env.Stop()).To(Succeed()) })
	k8s, err := client.New(cfg, opts)
	Expect(err).NotTo(HaveOccurred())
	return cfg, k8s
}

// RoundTripFunc is an http.RoundTripper of a function (ManagerOptions.Wrap's counters).
type RoundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f RoundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
