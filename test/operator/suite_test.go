// Package operator_test runs the whole operator (Helm reconcilers + provisioning engine) on a
// real kube-apiserver + etcd (envtest) against the fake Clever Cloud API over HTTP with
// OAuth1 HMAC-SHA512 signature checks.
package operator_test

import (
	"context"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/helm-operator-plugins/pkg/watches"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cfgpkg "github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/logging"
	"github.com/clever-operator/clever-operator/internal/operator"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/envtestutil"
)

func TestOperator(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "Operator suite (envtest + fake Clever Cloud API)")
}

// Long enough (≥ envtestutil.MinSecretLen) for the leak check to look for them.
var creds = fakeapi.Credential{ConsumerKey: "ck-test", ConsumerSecret: "cs-test-9f2c61d0", Token: "tk-test-5b7e04a3", Secret: "ts-test-c81d2e97"}

var (
	env     *envtest.Environment
	restCfg *rest.Config
	k8s     client.Client
	fake    *fakeapi.Server
	fakeSrv *httptest.Server
	stopMgr context.CancelFunc
	mgrDone chan struct{}
	mgr     ctrl.Manager
	// registry holds the operator's metrics (kept across manager restarts).
	registry = prometheus.NewRegistry()
	// probeAddr serves /healthz and /readyz of the running manager.
	probeAddr string
	// logs receives everything the operator logs, at the highest verbosity, so the suite can
	// prove no credential ever reaches a log line.
	logs = &envtestutil.LogBuffer{}
)

var _ = BeforeSuite(func() {
	// The operator's own cap (as main sets it) over a logger opened to the highest verbosity.
	ctrl.SetLogger(logging.Capped(zap.New(zap.WriteTo(io.MultiWriter(GinkgoWriter, logs)), zap.UseDevMode(true), zap.Level(zapcore.Level(-10))), logging.MaxVerbosity))
	// Charts in watches.yaml are relative to the repository root, as for `make run`.
	Expect(os.Chdir(filepath.Join("..", ".."))).To(Succeed())
	var err error
	env, err = envtestutil.New(filepath.Join("config", "crd", "bases"))
	Expect(err).NotTo(HaveOccurred())
	restCfg, err = env.Start()
	Expect(err).NotTo(HaveOccurred())
	// No client-side throttling, as main runs the operator (client-go's default is 5 requests/s
	// per resource type, which would slow the manager and make the suite's samplers miss moments).
	restCfg.QPS = -1
	k8s, err = client.New(restCfg, client.Options{})
	Expect(err).NotTo(HaveOccurred())

	fake, fakeSrv = fakeapi.NewTestServer(fakeapi.Options{
		Credentials:       []fakeapi.Credential{creds},
		ProvisioningDelay: 300 * time.Millisecond,
		MigrationDuration: 2 * time.Second,
		Seed:              42,
	})
	startManager()
})

var _ = AfterSuite(func() {
	if fake != nil && k8s != nil {
		assertNoCredentialLeak()
	}
	stopManager()
	if fakeSrv != nil {
		fakeSrv.Close()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// apiConfig is the operator's global configuration: the fake's URL and credentials.
func apiConfig() cfgpkg.APIConfig {
	return cfgpkg.APIConfig{Endpoint: fakeSrv.URL, ConsumerKey: creds.ConsumerKey, ConsumerSecret: creds.ConsumerSecret, Token: creds.Token, Secret: creds.Secret}
}

// startManager runs the operator in-process exactly as main does (same wiring package).
func startManager() { startManagerWith(time.Hour) }

// startManagerWith runs it with the given engine resync period.
func startManagerWith(resync time.Duration) {
	ws, err := watches.Load("watches.yaml")
	Expect(err).NotTo(HaveOccurred())
	scheme, err := operator.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	opts := operator.ManagerOptions(scheme, nil)
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	probeAddr = freeAddr()
	opts.HealthProbeBindAddress = probeAddr
	// The suite restarts the manager in-process; controller names repeat across managers.
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	mgr, err = ctrl.NewManager(restCfg, opts)
	Expect(err).NotTo(HaveOccurred())
	Expect(operator.Setup(mgr, operator.Options{
		API: apiConfig(), Watches: ws, ResyncPeriod: resync, Workers: 4,
		Registerer: registry, Log: ctrl.Log,
	})).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	stopMgr = cancel
	mgrDone = make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(mgrDone)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
}

func stopManager() {
	if stopMgr != nil {
		stopMgr()
		Eventually(mgrDone).Should(BeClosed())
		stopMgr = nil
	}
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}
