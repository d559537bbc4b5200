package kube

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/helm-operator-plugins/pkg/watches"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cfgpkg "github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/operator"
)

// ManagerOptions is how a suite runs the operator in-process.
type ManagerOptions struct {
	// API is the operator's global Clever Cloud configuration (the suite's fake).
	API cfgpkg.APIConfig
	// ResyncPeriod of the engine (default 1h: nothing is refreshed during a spec unless asked).
	ResyncPeriod time.Duration
	// Workers per controller (0: the operator's default).
	Workers int
	// APITimeout per Clever Cloud attempt (0: the operator's default).
	APITimeout time.Duration
	// Registerer receives the operator's metrics (default: a registry of this start's own).
	Registerer prometheus.Registerer
	// Probes serves /healthz and /readyz on a free local address (Manager.ProbeAddr).
	Probes bool
	// Wrap wraps the operator's transport to the API server (e.g. to count its requests).
	Wrap func(http.RoundTripper) http.RoundTripper
	// Log is the operator's logger (default ctrl.Log).
	Log logr.Logger
	// Namespaces the operator watches (--watch-namespace; nil: all).
	Namespaces []string
	// Configure changes the manager's options last (e.g. leader election).
	Configure func(*ctrl.Options)
	// ClaimKeySecret is the Secret holding the key of the signed add-on claims (the
	// operator's --claim-key-secret; its namespace must exist). Empty: a key of this start
	// only, as the operator outside a cluster.
	ClaimKeySecret types.NamespacedName
	// Selector is the operator's --watch-selector (nil: all resources), applied to the cache
	// and to both sides as main does.
	Selector *operator.WatchSelector
	// CellarEndpoint maps a Cellar host to the S3 endpoint the operator calls (a local S3
	// server in tests; nil: the host itself, over TLS).
	CellarEndpoint func(host, keyID string) (endpoint string, secure bool)
	// Watches is the watches file (default watches.yaml, at the repository root) and Kinds
	// the table of kinds (nil: the operator's): a spec adding a kind gives both.
	Watches string
	Kinds   []kinds.Kind
}

// Manager is the operator running in-process.
type Manager struct {
	ctrl.Manager
	// ProbeAddr serves /healthz and /readyz when ManagerOptions.Probes is set.
	ProbeAddr string
	stop      context.CancelFunc
	done      chan struct{}
}

// StartManager runs the operator in-process exactly as main does (the same wiring package:
// watches.yaml, charts relative to the working directory, so run from the repository root).
func StartManager(cfg *rest.Config, o ManagerOptions) *Manager {
	GinkgoHelper()
	if o.ResyncPeriod == 0 {
		o.ResyncPeriod = time.Hour
	}
	if o.Log.GetSink() == nil {
		o.Log = ctrl.Log
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	if o.Watches == "" {
		o.Watches = "watches.yaml"
	}
	ws, err := watches.Load(o.Watches)
	Expect(err).NotTo(HaveOccurred())
	scheme, err := operator.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	guard := operator.NewCacheGuard()
	opts := operator.ManagerOptions(scheme, o.Namespaces, guard)
	operator.RestrictCache(&opts, o.Selector, ws)
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	m := &Manager{}
	opts.HealthProbeBindAddress = "0"
	if o.Probes {
		m.ProbeAddr = FreeAddr()
		opts.HealthProbeBindAddress = m.ProbeAddr
	}
	// Suites restart the manager in-process; controller names repeat across managers.
	opts.Controller.SkipNameValidation = ptr.To(true)
	if o.Configure != nil {
		o.Configure(&opts)
	}
	cfg = rest.CopyConfig(cfg)
	if o.Wrap != nil {
		cfg.Wrap(o.Wrap)
	}
	m.Manager, err = ctrl.NewManager(cfg, opts)
	Expect(err).NotTo(HaveOccurred())
	Expect(operator.Setup(m.Manager, operator.Options{
		API: o.API, Watches: ws, ResyncPeriod: o.ResyncPeriod, Workers: o.Workers, APITimeout: o.APITimeout,
		Registerer: o.Registerer, Log: o.Log, Namespaces: o.Namespaces, ClaimKeySecret: o.ClaimKeySecret, CacheGuard: guard,
		Selector: o.Selector, CellarEndpoint: o.CellarEndpoint, Kinds: o.Kinds,
	})).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	m.stop, m.done = cancel, make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(m.done)
		Expect(m.Manager.Start(ctx)).To(Succeed())
	}()
	return m
}

// Stop stops the manager and waits for it to return (nil-safe, idempotent).
func (m *Manager) Stop() {
	GinkgoHelper()
	if m == nil || m.stop == nil {
		return
	}
	m.stop()
	Eventually(m.done).Should(BeClosed())
	m.stop = nil
}

// FreeAddr returns a free 127.0.0.1 address.
func FreeAddr() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}
