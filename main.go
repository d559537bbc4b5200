// Command clever-operator manages Clever Cloud add-ons as Kubernetes custom resources.
//
// It is a Helm-hybrid operator: for every entry of watches.yaml a helm-operator-plugins
// reconciler renders the credentials Secret from a chart in helm-charts/, and a generic Go
// provisioning engine (internal/addon) does every Clever Cloud API call.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/operator-framework/helm-operator-plugins/pkg/watches"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/clever-operator/clever-operator/internal/addon"
	"github.com/clever-operator/clever-operator/internal/admission"
	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/config/check"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/hybrid"
	"github.com/clever-operator/clever-operator/internal/logging"
	"github.com/clever-operator/clever-operator/internal/operator"
	"github.com/clever-operator/clever-operator/internal/tracing"
)

// The operator's cluster-scoped permissions (controller-gen writes the ClusterRole
// manager-role, config/rbac/role.yaml, from these markers; always bound cluster-wide). What it
// needs inside the watched namespaces (the add-on kinds, Secrets, ConfigMaps, events,
// workloads) is in internal/rbac/namespaced (ClusterRole manager-namespaced-role), bound per
// watched namespace when the operator watches a set of namespaces.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// The admin-managed credentials (internal/credentials): read, the default one created at
// start-up, status written.
// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=clusterclevercredentials,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=clusterclevercredentials/status,verbs=get;update;patch
// The metrics endpoint's authentication and authorization (--metrics-secure, the default).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// version is set at build time (-ldflags -X main.version=...).
var version = "dev"

// gcPercent is the operator's default GOGC. Its live heap is small (tens of MiB, mostly the
// cache) and its garbage comes in bursts (Helm renders and encodes releases), so Go's default
// of 100, a heap up to twice the live data, made most of the memory peak; 40 keeps it 1.4x
// for a little more GC work. Measured with the bench (-only P5,P6, one run each,
// docs/performance.md): 50 left P5 and P6's peaks a few MiB over their goals, 40 brought both
// under with P6's growth unchanged in that run, 30 took about 8 MiB more off P5 but slowed
// the 5,000 point by a fifth. The GOGC environment variable, when set, wins.
const gcPercent = 40

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "clever-operator: "+err.Error())
		os.Exit(1)
	}
}

type flags struct {
	metricsAddr, probeAddr, pprofAddr string
	metrics                           operator.MetricsConfig
	leaderElect                       bool
	watchNamespace                    string
	watchesFile                       string
	configFile                        string
	cleverToolsFile                   string
	check                             bool
	expiryWarning                     time.Duration
	leaderNS                          string
	claimKeySecret                    string
	deletionPolicy                    string
	onMissing                         string
	backupMaxAge                      time.Duration
	kubeconfig                        string
	version                           bool
	resyncPeriod                      time.Duration
	priceRefresh                      time.Duration
	cellarEndpoint                    string
	helmPeriod                        time.Duration
	workers                           int
	apiRate                           float64
	api                               config.APIConfig
	defaultCredentials                string
	createDefaultCredentials          bool
	credentialsCheckPeriod            time.Duration
	// installAdmissionPolicy: --install-admission-policy (internal/admission).
	installAdmissionPolicy bool
	// tracing: --tracing (internal/tracing; the OTEL_* variables turn it on too).
	tracing bool
	// watchSelector and leaderElectionID: --watch-selector and --leader-election-id, to split
	// the resources between operator instances (docs/operator.md, Sharding).
	watchSelector    string
	leaderElectionID string
}

func parseFlags(args []string) (*flags, *zap.Options, error) {
	f, zopts, fs := newFlagSet()
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if fs.NArg() > 0 {
		return nil, nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return f, zopts, nil
}

// newFlagSet defines every command-line flag (docs/operator.md lists them; a test checks).
func newFlagSet() (*flags, *zap.Options, *flag.FlagSet) {
	f := &flags{}
	fs := flag.NewFlagSet("clever-operator", flag.ContinueOnError)
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint (0 disables it)")
	fs.BoolVar(&f.metrics.Secure, "metrics-secure", true, "serve /metrics over HTTPS to authenticated and authorized clients only (a bearer token allowed to GET /metrics: ClusterRole clever-operator-metrics-reader); false: plain HTTP to anyone")
	fs.StringVar(&f.metrics.CertPath, "metrics-cert-path", "", "directory of the metrics server's TLS certificate and key (default: a self-signed certificate generated at start-up)")
	fs.StringVar(&f.metrics.CertName, "metrics-cert-name", "tls.crt", "file name of the metrics server's certificate in --metrics-cert-path")
	fs.StringVar(&f.metrics.KeyName, "metrics-cert-key", "tls.key", "file name of the metrics server's key in --metrics-cert-path")
	fs.BoolVar(&f.metrics.EnableHTTP2, "enable-http2", false, "serve the metrics endpoint with HTTP/2 too (off: HTTP/2 Rapid Reset, CVE-2023-44487)")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.StringVar(&f.pprofAddr, "pprof-bind-address", "0", "address of Go's /debug/pprof endpoints, for profiling (0 disables them)")
	fs.BoolVar(&f.leaderElect, "leader-elect", false, "use leader election so only one replica reconciles")
	fs.StringVar(&f.claimKeySecret, "claim-key-secret", defaultClaimKeySecret(), "namespace/name of the Secret holding the key that signs add-on claims (created when missing; back it up); env "+operator.ClaimKeyEnv+" wins")
	fs.StringVar(&f.leaderNS, "leader-election-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the leader-election lease (default: the pod's namespace, env POD_NAMESPACE, else the in-cluster service account's; required outside a cluster)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster config, $KUBECONFIG, or ~/.kube/config)")
	fs.StringVar(&f.watchNamespace, "watch-namespace", os.Getenv("WATCH_NAMESPACE"), "comma-separated namespaces to watch (default: all; env WATCH_NAMESPACE)")
	fs.StringVar(&f.watchesFile, "watches-file", "watches.yaml", "path of watches.yaml (charts are relative to the working directory)")
	fs.StringVar(&f.configFile, "config", "", "configuration file (toml, yaml or json); default: search the standard paths")
	fs.StringVar(&f.configFile, "c", "", "shorthand for --config")
	fs.BoolVar(&f.check, "check", false, "validate the configuration and exit")
	fs.BoolVar(&f.check, "t", false, "shorthand for --check")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	fs.DurationVar(&f.resyncPeriod, "resync-period", addon.DefaultResyncPeriod, "how often a Ready add-on is read again at Clever Cloud (one API call)")
	fs.DurationVar(&f.priceRefresh, "price-refresh-period", addon.DefaultPriceRefresh, "how long a Clever Cloud price system is used before it is read again (status.price, the price metric); 0 turns price lookups off")
	fs.StringVar(&f.cellarEndpoint, "cellar-endpoint", "", "S3 endpoint URL (http[s]://host[:port]) CellarBuckets reach every Cellar add-on at, instead of its CELLAR_ADDON_HOST over HTTPS (a proxy, a local S3 server for demos and tests)")
	fs.DurationVar(&f.helmPeriod, "helm-reconcile-period", hybrid.DefaultReconcilePeriod, "default Helm reconcile period for watches that set none")
	fs.IntVar(&f.workers, "max-concurrent-reconciles", 4, "workers per kind, for the engine and for watches that set none")
	fs.StringVar(&f.deletionPolicy, "default-deletion-policy", "Delete", "what deleting a resource does to its add-on when neither the resource nor its namespace says: Delete or Orphan")
	fs.DurationVar(&f.backupMaxAge, "backup-max-age", addon.DefaultBackupMaxAge, "how old the newest Clever Cloud backup of a PostgreSQL, MySQL, MongoDB, Redis or Elasticsearch add-on may be before the condition BackupStale turns True (the api.clever-cloud.com/backup-max-age annotation overrides it)")
	fs.StringVar(&f.onMissing, "on-addon-missing", "recreate", "when an add-on was deleted outside the operator: recreate it, or report it (condition AddonMissing)")
	fs.Float64Var(&f.apiRate, "api-rate-limit", 10, "Clever Cloud API requests per second per credential set")
	fs.StringVar(&f.api.Endpoint, config.FlagEndpoint, "", "Clever Cloud API base URL (env CLEVER_OPERATOR_API_ENDPOINT)")
	fs.StringVar(&f.api.Token, config.FlagToken, "", "OAuth1 token (prefer env CLEVER_OPERATOR_API_TOKEN: flags show in ps)")
	fs.StringVar(&f.api.Secret, config.FlagSecret, "", "OAuth1 token secret (prefer env CLEVER_OPERATOR_API_SECRET)")
	fs.StringVar(&f.api.ConsumerKey, config.FlagConsumerKey, "", "OAuth1 consumer key (env CLEVER_OPERATOR_API_CONSUMER_KEY)")
	fs.StringVar(&f.api.ConsumerSecret, config.FlagConsumerSecret, "", "OAuth1 consumer secret (prefer env CLEVER_OPERATOR_API_CONSUMER_SECRET)")
	fs.StringVar(&f.api.BearerToken, config.FlagBearerToken, "", "API token for bearer authentication (prefer env CLEVER_OPERATOR_API_BEARER_TOKEN)")
	fs.StringVar(&f.api.BridgeEndpoint, config.FlagBridgeEndpoint, "", "API bridge base URL, where bearer tokens are sent (env CLEVER_OPERATOR_API_BRIDGE_ENDPOINT; default "+config.DefaultBridgeEndpoint+")")
	fs.StringVar(&f.api.TokenExpiration, config.FlagTokenExpiration, "", "when the token expires (RFC 3339 or YYYY-MM-DD), for the expiry warning (env CLEVER_OPERATOR_API_TOKEN_EXPIRATION)")
	fs.StringVar(&f.cleverToolsFile, config.FlagCleverToolsConfig, "", "clever-tools login file (clever-tools.json) to take the credentials from (env CLEVER_OPERATOR_CLEVER_TOOLS_CONFIG; default: "+strings.Join(config.DefaultCleverToolsPaths, ", ")+" when it exists)")
	fs.DurationVar(&f.expiryWarning, "credentials-expiry-warning", operator.DefaultCredentialsExpiryWarning, "warn (Warning events, log) this long before known credentials expire; 0 or less: never")
	fs.StringVar(&f.defaultCredentials, "default-credentials", addon.DefaultCredentialsName, "ClusterCleverCredentials of the resources that name none and whose namespace has no override Secret (\"\": none, the operator's credentials allowed everywhere)")
	fs.BoolVar(&f.createDefaultCredentials, "create-default-credentials", true, "create the --default-credentials ClusterCleverCredentials at start-up when it is absent (every namespace, any organisation)")
	fs.DurationVar(&f.credentialsCheckPeriod, "credentials-check-period", credentials.DefaultCheckPeriod, "how often CleverCredentials and ClusterCleverCredentials are checked at Clever Cloud (GET /v2/self)")
	// The credentials ValidatingAdmissionPolicy, installed by the operator itself (for OLM,
	// whose bundles cannot ship one).
	fs.BoolVar(&f.installAdmissionPolicy, "install-admission-policy", false, "create (and keep) the ValidatingAdmissionPolicy "+admission.PolicyName+" and its binding, which refuse at admission resources whose ClusterCleverCredentials do not allow their namespace or organisation (the OLM bundle sets it; kustomize and the chart install the policy themselves)")
	// OpenTelemetry traces over OTLP (internal/tracing, docs/operator.md "Tracing").
	fs.BoolVar(&f.tracing, "tracing", false, "export OpenTelemetry traces over OTLP (a span per engine pass, per Clever Cloud call, per Helm action) to the endpoint of the standard OTEL_EXPORTER_OTLP_* variables (default localhost:4318, http/protobuf); also on when "+tracing.EnvEndpoint+" or "+tracing.EnvTracesEndpoint+" is set; "+tracing.EnvSDKDisabled+"=true or "+tracing.EnvTracesExporter+"=none turn it off")
	// Sharding: several instances, each with its selector and its own lease.
	fs.StringVar(&f.watchSelector, "watch-selector", os.Getenv("WATCH_SELECTOR"), "label selector on the add-on resources this instance manages, e.g. shard=a or 'team in (pay,web)' (default: all; env WATCH_SELECTOR); instances with disjoint selectors split the resources")
	fs.StringVar(&f.leaderElectionID, "leader-election-id", envOr("LEADER_ELECTION_ID", operator.DefaultLeaderElectionID), "name of the leader-election Lease (env LEADER_ELECTION_ID); each instance of a split (--watch-selector) needs its own")
	zopts := &zap.Options{}
	zopts.BindFlags(fs)
	return f, zopts, fs
}

func run(args []string, stdout io.Writer) error {
	f, zopts, err := parseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if f.deletionPolicy != "Delete" && f.deletionPolicy != "Orphan" {
		return fmt.Errorf("--default-deletion-policy must be Delete or Orphan, not %q", f.deletionPolicy)
	}
	if f.backupMaxAge <= 0 {
		return fmt.Errorf("--backup-max-age must be a positive duration (for example 36h), not %s", f.backupMaxAge)
	}
	if f.onMissing != "recreate" && f.onMissing != "report" {
		return fmt.Errorf("--on-addon-missing must be recreate or report, not %q", f.onMissing)
	}
	cellarEndpoint, err := parseCellarEndpoint(f.cellarEndpoint)
	if err != nil {
		return err
	}
	sel, err := operator.ParseWatchSelector(f.watchSelector)
	if err != nil {
		return err
	}
	if f.leaderElectionID == "" {
		return errors.New("--leader-election-id must not be empty")
	}
	if f.version {
		fmt.Fprintln(stdout, "clever-operator "+version)
		return nil
	}
	cfg, err := config.Load(config.LoadOptions{ConfigFile: f.configFile, Flags: f.api, CleverToolsFile: f.cleverToolsFile})
	if err != nil {
		return err
	}
	if err := cfg.API.Validate(); err != nil {
		return err
	}
	if f.check {
		return check.Run(context.Background(), cfg, stdout)
	}
	ctrl.SetLogger(logging.Capped(zap.New(zap.UseFlagOptions(zopts)), logging.MaxVerbosity))
	log := ctrl.Log.WithName("setup")
	if limit, limited := operator.ContainerMemoryLimit(); limited {
		if soft := operator.SetMemoryLimitFrom(limit); soft > 0 {
			log.Info("Go soft memory limit set from the container's memory limit (GOMEMLIMIT unset): 80 % of it, at most the limit less the code reserve", "bytes", soft, "limitBytes", limit, "codeReserveBytes", operator.CodeReserve)
		}
		switch advised, err := operator.ReadCodePageByPageUnder(limit); {
		case err != nil:
			log.Error(err, "could not ask the kernel to read the executable page by page under the small memory limit; under memory pressure it may stall", "limitBytes", limit)
		case advised > 0:
			log.Info("small container memory limit: the executable's pages are read one at a time when the kernel reads them back (no read-around)", "limitBytes", limit, "belowBytes", operator.PageByPageBelow)
		}
	}
	for _, n := range cfg.API.Notes() {
		log.Info(n)
	}
	shutdownTracing, traced, err := tracing.Setup(context.Background(), tracing.Options{Flag: f.tracing, Version: version, Log: ctrl.Log.WithName("tracing")})
	if err != nil {
		return err
	}
	defer func() { _ = shutdownTracing(context.Background()) }() // flushes the last spans
	if traced {
		log.Info("exporting OpenTelemetry traces over OTLP (the OTEL_EXPORTER_OTLP_* variables say where)")
	}
	warn := f.expiryWarning
	if warn <= 0 {
		warn = -1
	}

	ws, err := watches.Load(f.watchesFile)
	if err != nil {
		return fmt.Errorf("loading %s: %w", f.watchesFile, err)
	}
	scheme, err := operator.NewScheme()
	if err != nil {
		return err
	}
	namespaces := strings.Split(f.watchNamespace, ",")
	guard := operator.NewCacheGuard()
	mopts := operator.ManagerOptions(scheme, namespaces, guard)
	operator.RestrictCache(&mopts, sel, ws)
	mopts.LeaderElectionID = f.leaderElectionID
	f.metrics.BindAddress = f.metricsAddr
	mopts.Metrics = operator.MetricsServerOptions(f.metrics)
	mopts.HealthProbeBindAddress = f.probeAddr
	mopts.PprofBindAddress = f.pprofAddr
	mopts.LeaderElection = f.leaderElect
	mopts.LeaderElectionNamespace = f.leaderNS
	restCfg, err := restConfig(f.kubeconfig)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(restCfg, mopts)
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if err := operator.Setup(mgr, operator.Options{
		API: cfg.API, Watches: ws, ResyncPeriod: f.resyncPeriod, PriceRefresh: priceRefresh(f.priceRefresh), HelmReconcilePeriod: f.helmPeriod,
		Workers: f.workers, APIRateLimit: f.apiRate, Log: ctrl.Log, Namespaces: namespaces,
		DefaultDeletionPolicy: f.deletionPolicy, OnAddonMissing: f.onMissing, BackupMaxAge: f.backupMaxAge,
		CredentialsExpiryWarning: warn, Pod: podRef(), ClaimKeySecret: claimKeyRef(f.claimKeySecret), CacheGuard: guard,
		DefaultCredentials: f.defaultCredentials, NoDefaultCredentials: f.defaultCredentials == "",
		SkipCreateDefaultCredentials: !f.createDefaultCredentials, CredentialsCheckPeriod: f.credentialsCheckPeriod,
		Selector: sel, CellarEndpoint: cellarEndpoint,
	}); err != nil {
		return err
	}
	// --install-admission-policy: the credentials ValidatingAdmissionPolicy (internal/admission).
	if f.installAdmissionPolicy {
		if err := admission.AddToManager(mgr); err != nil {
			return fmt.Errorf("--install-admission-policy: %w", err)
		}
	}
	log.Info("starting manager", "version", version, "kinds", len(ws), "endpoint", cfg.API.RequestEndpoint(), "credentials", cfg.API.Mode(),
		"sources", strings.Join(cfg.Sources, ", "), "selector", sel.String(), "lease", f.leaderElectionID)
	return mgr.Start(ctrl.SetupSignalHandler())
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
		}
		if cfg.QPS == 0 {
			cfg.QPS = -1 // as ctrl.GetConfig: rely on the apiserver's priority and fairness
		}
		return cfg, nil
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no Kubernetes configuration: %w", err)
	}
	return cfg, nil
}

// envOr is the environment variable's value, or def when it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// defaultClaimKeySecret is clever-operator-claim-key in the operator's namespace (the
// downward API's POD_NAMESPACE); "" outside a Pod.
func defaultClaimKeySecret() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns + "/clever-operator-claim-key"
	}
	return ""
}

// claimKeyRef parses namespace/name ("" or a bare name: none).
func claimKeyRef(v string) types.NamespacedName {
	ns, name, ok := strings.Cut(v, "/")
	if !ok {
		return types.NamespacedName{}
	}
	return types.NamespacedName{Namespace: ns, Name: name}
}

// podRef is the operator's Pod as namespace/name/uid, from the downward API variables
// the manifests set (POD_NAMESPACE, POD_NAME, POD_UID); "" outside a Pod.
func podRef() string {
	ns, name := os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME")
	if ns == "" || name == "" {
		return ""
	}
	return ns + "/" + name + "/" + os.Getenv("POD_UID")
}

// parseCellarEndpoint turns --cellar-endpoint into the CellarBuckets' endpoint mapping (nil:
// each Cellar's own host, over HTTPS).
func parseCellarEndpoint(v string) (func(host, keyID string) (string, bool), error) {
	if v == "" {
		return nil, nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("--cellar-endpoint must be an http:// or https:// URL with a host and no path, not %q", v)
	}
	host, secure := u.Host, u.Scheme == "https"
	return func(string, string) (string, bool) { return host, secure }, nil
}

// priceRefresh maps the flag (0: off) to operator.Options.PriceRefresh (negative: off).
func priceRefresh(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}
