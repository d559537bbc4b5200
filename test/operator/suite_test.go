// Package operator_test runs the whole operator (Helm reconcilers + provisioning engine) on a
// real kube-apiserver + etcd (envtest) against the fake Clever Cloud API over HTTP with
// OAuth1 HMAC-SHA512 signature checks.
package operator_test

import (
	"net/http/httptest"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cfgpkg "github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/operator"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestOperator(t *testing.T) {
	kube.RunSuite(t, "Operator suite (envtest + fake Clever Cloud API)", 30*time.Second, 100*time.Millisecond)
}

// Long enough (≥ kube.MinSecretLen) for the leak check to look for them.
var creds = fakeapi.Credential{ConsumerKey: "ck-test", ConsumerSecret: "cs-test-9f2c61d0", Token: "tk-test-5b7e04a3", Secret: "ts-test-c81d2e97"}

var (
	restCfg *rest.Config
	k8s     client.Client
	fake    *fakeapi.Server
	fakeSrv *httptest.Server
	// mgr is the operator running in-process (its ProbeAddr serves /healthz and /readyz).
	mgr *kube.Manager
	// registry holds the operator's metrics (kept across manager restarts).
	registry = prometheus.NewRegistry()
	// suite is this suite's world for the shared helpers (test/kube).
	suite *kube.Suite
	// logs receives everything the operator logs, at the highest verbosity, so the suite can
	// prove no credential ever reaches a log line.
	logs *kube.LogBuffer
)

var _ = BeforeSuite(func() {
	suite = kube.StartSuite(kube.SuiteOptions{Name: "test/operator", NamespacePrefix: "t", Fake: fakeapi.Options{
		Credentials:       []fakeapi.Credential{creds},
		ProvisioningDelay: 300 * time.Millisecond,
		MigrationDuration: 2 * time.Second,
		Seed:              42,
	}})
	restCfg, k8s, fake, fakeSrv, logs = suite.Config, suite.Client, suite.Fake, suite.FakeServer, suite.Logs
	suite.CreateNamespace(claimKeySecret.Namespace)
	startManager()
})

var _ = AfterSuite(func() {
	if suite != nil {
		assertNoCredentialLeak()
	}
	mgr.Stop()
})

// claimKeySecret keeps the key of the signed add-on claims across the suite's restarts of the
// operator, as the operator's namespace does in a cluster (a restore needs it, or an admin's
// binding grant).
var claimKeySecret = types.NamespacedName{Namespace: "clever-operator-system", Name: "clever-operator-claim-key"}

// apiConfig is the operator's global configuration: the fake's URL and credentials.
func apiConfig() cfgpkg.APIConfig { return suite.APIConfig(creds) }

// startManager runs the operator in-process as main does (the same wiring package), with the
// suite's fake and metrics registry, an hour's resync, 4 workers and health probes; opts
// change that start only (e.g. a shorter resync period).
// specLabel marks a spec's own resources for fastRefresh.
const specLabel = "test.clever-operator.io/spec"

// fastRefresh restarts the manager with a 1 s refresh period for the resources labelled
// specLabel=ns only (its --watch-selector): the resources other specs left behind are not
// refreshed, so they do not share the client's request budget (10 requests/s) with the
// spec's own and a spec's timing does not depend on how many ran before it.
func fastRefresh(ns string) {
	GinkgoHelper()
	sel, err := operator.ParseWatchSelector(specLabel + "=" + ns)
	Expect(err).NotTo(HaveOccurred())
	mgr.Stop()
	startManager(func(o *kube.ManagerOptions) { o.ResyncPeriod = time.Second; o.Selector = sel })
}

// ownSample is suite.Sample labelled for fastRefresh's selector.
func ownSample(file, ns string) *unstructured.Unstructured {
	GinkgoHelper()
	cr := suite.Sample(file, ns)
	l := cr.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[specLabel] = ns
	cr.SetLabels(l)
	return cr
}

func startManager(opts ...func(*kube.ManagerOptions)) {
	GinkgoHelper()
	o := kube.ManagerOptions{API: apiConfig(), ResyncPeriod: time.Hour, Workers: 4, Registerer: registry, Probes: true, ClaimKeySecret: claimKeySecret,
		CellarEndpoint: cellarEndpoint, Wrap: secretReads.wrap}
	for _, f := range opts {
		f(&o)
	}
	mgr = kube.StartManager(restCfg, o)
}
