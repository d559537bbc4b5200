package operator

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/clever-operator/clever-operator/internal/admission"
	"github.com/clever-operator/clever-operator/internal/backups"
	"github.com/clever-operator/clever-operator/internal/catalog"
	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/hybrid"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/internal/tracing"
)

// CommandLine holds what only the command line sets (BindFlags), embedded in Options: what
// the process reads at start-up, what it serves, its leader election, and the text of the
// flags Validate parses into Options fields. main and NewManager read it; Setup does not.
type CommandLine struct {
	// Config says where config.Load reads the API configuration: --config, the --api-* flags
	// (its Flags, the highest precedence) and --clever-tools-config. main puts the result in
	// Options.API.
	Config config.LoadOptions
	// Check (--check, -t): prove the configuration against the API and exit (internal/config/check).
	Check bool
	// Version (--version): print the version and exit.
	Version bool
	// WatchesFile is watches.yaml's path (the charts it names are relative to the working directory).
	WatchesFile string
	// Kubeconfig is the kubeconfig file; empty: in-cluster, $KUBECONFIG or ~/.kube/config.
	Kubeconfig string
	// Metrics says how /metrics is served; ProbeAddr and PprofAddr where /healthz, /readyz and
	// /debug/pprof are ("0": off).
	Metrics              MetricsConfig
	ProbeAddr, PprofAddr string
	// LeaderElect turns leader election on, on the Lease LeaderElectionID in
	// LeaderElectionNamespace ("": the Pod's).
	LeaderElect                               bool
	LeaderElectionNamespace, LeaderElectionID string
	// SelectorFlag (--watch-selector) and CellarEndpointFlag (--cellar-endpoint) are the text
	// Validate parses into Options.Selector and Options.CellarEndpoint.
	SelectorFlag, CellarEndpointFlag string
	// InstallAdmissionPolicy (--install-admission-policy): the operator keeps the credentials
	// ValidatingAdmissionPolicy itself (internal/admission; for OLM, whose bundles cannot ship one).
	InstallAdmissionPolicy bool
	// Tracing (--tracing): OpenTelemetry traces over OTLP (internal/tracing; the OTEL_*
	// variables turn it on too).
	Tracing bool
	// Zap holds the logging flags (--zap-log-level, ...).
	Zap zap.Options
}

// BindFlags defines every command-line flag on fs (docs/operator.md lists them; a test
// checks) and stores their defaults in o, some from the environment (POD_NAMESPACE,
// WATCH_NAMESPACE, WATCH_SELECTOR, LEADER_ELECTION_ID). It also sets o.Pod from the downward
// API's variables, which are not flags. Parse fs, then call Validate.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	o.Pod = podFromEnv()
	fs.StringVar(&o.Metrics.BindAddress, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint (0 disables it)")
	fs.BoolVar(&o.Metrics.Secure, "metrics-secure", true, "serve /metrics over HTTPS to authenticated and authorized clients only (a bearer token allowed to GET /metrics: ClusterRole clever-operator-metrics-reader); false: plain HTTP to anyone")
	fs.StringVar(&o.Metrics.CertPath, "metrics-cert-path", "", "directory of the metrics server's TLS certificate and key (default: a self-signed certificate generated at start-up)")
	fs.StringVar(&o.Metrics.CertName, "metrics-cert-name", "tls.crt", "file name of the metrics server's certificate in --metrics-cert-path")
	fs.StringVar(&o.Metrics.KeyName, "metrics-cert-key", "tls.key", "file name of the metrics server's key in --metrics-cert-path")
	fs.BoolVar(&o.Metrics.EnableHTTP2, "enable-http2", false, "serve the metrics endpoint with HTTP/2 too (off: HTTP/2 Rapid Reset, CVE-2023-44487)")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", "0", "address of Go's /debug/pprof endpoints, for profiling (0 disables them)")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "use leader election so only one replica reconciles")
	o.ClaimKeySecret = claimKeyRef(defaultClaimKeySecret())
	fs.Var((*namespacedName)(&o.ClaimKeySecret), "claim-key-secret", "namespace/name of the Secret holding the key that signs add-on claims (created when missing; back it up); env "+ClaimKeyEnv+" wins")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the leader-election lease (default: the pod's namespace, env POD_NAMESPACE, else the in-cluster service account's; required outside a cluster)")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster config, $KUBECONFIG, or ~/.kube/config)")
	o.Namespaces = nil
	if ns := os.Getenv("WATCH_NAMESPACE"); ns != "" {
		o.Namespaces = strings.Split(ns, ",")
	}
	fs.Var((*commaList)(&o.Namespaces), "watch-namespace", "comma-separated namespaces to watch (default: all; env WATCH_NAMESPACE)")
	fs.StringVar(&o.WatchesFile, "watches-file", "watches.yaml", "path of watches.yaml (charts are relative to the working directory)")
	fs.StringVar(&o.Config.ConfigFile, "config", "", "configuration file (toml, yaml or json); default: search the standard paths")
	fs.StringVar(&o.Config.ConfigFile, "c", "", "shorthand for --config")
	fs.BoolVar(&o.Check, "check", false, "validate the configuration and exit")
	fs.BoolVar(&o.Check, "t", false, "shorthand for --check")
	fs.BoolVar(&o.Version, "version", false, "print the version and exit")
	fs.DurationVar(&o.ResyncPeriod, "resync-period", queue.DefaultResyncPeriod, "how often a Ready add-on is read again at Clever Cloud (one API call)")
	o.PriceRefresh = catalog.DefaultPriceRefresh
	fs.Var((*durationOrOff)(&o.PriceRefresh), "price-refresh-period", "how long a Clever Cloud price system is used before it is read again (status.price, the price metric); 0 turns price lookups off")
	fs.StringVar(&o.CellarEndpointFlag, "cellar-endpoint", "", "S3 endpoint URL (http[s]://host[:port]) CellarBuckets reach every Cellar add-on at, instead of its CELLAR_ADDON_HOST over HTTPS (a proxy, a local S3 server for demos and tests)")
	fs.DurationVar(&o.HelmReconcilePeriod, "helm-reconcile-period", hybrid.DefaultReconcilePeriod, "default Helm reconcile period for watches that set none")
	fs.IntVar(&o.Workers, "max-concurrent-reconciles", 4, "workers per kind, for the engine and for watches that set none")
	fs.StringVar(&o.DefaultDeletionPolicy, "default-deletion-policy", "Delete", "what deleting a resource does to its add-on when neither the resource nor its namespace says: Delete or Orphan")
	fs.DurationVar(&o.BackupMaxAge, "backup-max-age", backups.DefaultMaxAge, "how old the newest Clever Cloud backup of a PostgreSQL, MySQL, MongoDB, Redis or Elasticsearch add-on may be before the condition BackupStale turns True (the api.clever-cloud.com/backup-max-age annotation overrides it)")
	fs.StringVar(&o.OnAddonMissing, "on-addon-missing", "recreate", "when an add-on was deleted outside the operator: recreate it, or report it (condition AddonMissing)")
	fs.Float64Var(&o.APIRateLimit, "api-rate-limit", 10, "Clever Cloud API requests per second per credential set")
	api := &o.Config.Flags
	fs.StringVar(&api.Endpoint, config.FlagEndpoint, "", "Clever Cloud API base URL (env CLEVER_OPERATOR_API_ENDPOINT)")
	fs.StringVar(&api.Token, config.FlagToken, "", "OAuth1 token (prefer env CLEVER_OPERATOR_API_TOKEN: flags show in ps)")
	fs.StringVar(&api.Secret, config.FlagSecret, "", "OAuth1 token secret (prefer env CLEVER_OPERATOR_API_SECRET)")
	fs.StringVar(&api.ConsumerKey, config.FlagConsumerKey, "", "OAuth1 consumer key (env CLEVER_OPERATOR_API_CONSUMER_KEY)")
	fs.StringVar(&api.ConsumerSecret, config.FlagConsumerSecret, "", "OAuth1 consumer secret (prefer env CLEVER_OPERATOR_API_CONSUMER_SECRET)")
	fs.StringVar(&api.BearerToken, config.FlagBearerToken, "", "API token for bearer authentication (prefer env CLEVER_OPERATOR_API_BEARER_TOKEN)")
	fs.StringVar(&api.BridgeEndpoint, config.FlagBridgeEndpoint, "", "API bridge base URL, where bearer tokens are sent (env CLEVER_OPERATOR_API_BRIDGE_ENDPOINT; default "+config.DefaultBridgeEndpoint+")")
	fs.StringVar(&api.TokenExpiration, config.FlagTokenExpiration, "", "when the token expires (RFC 3339 or YYYY-MM-DD), for the expiry warning (env CLEVER_OPERATOR_API_TOKEN_EXPIRATION)")
	fs.StringVar(&o.Config.CleverToolsFile, config.FlagCleverToolsConfig, "", "clever-tools login file (clever-tools.json) to take the credentials from (env CLEVER_OPERATOR_CLEVER_TOOLS_CONFIG; default: "+strings.Join(config.DefaultCleverToolsPaths, ", ")+" when it exists)")
	o.CredentialsExpiryWarning = DefaultCredentialsExpiryWarning
	fs.Var((*durationOrOff)(&o.CredentialsExpiryWarning), "credentials-expiry-warning", "warn (Warning events, log) this long before known credentials expire; 0 or less: never")
	o.DefaultCredentials, o.NoDefaultCredentials = credentials.DefaultCredentialsName, false
	fs.Var(&defaultCredentials{o}, "default-credentials", "ClusterCleverCredentials of the resources that name none and whose namespace has no override Secret (\"\": none, the operator's credentials allowed everywhere)")
	o.SkipCreateDefaultCredentials = false
	fs.Var(&negatedBool{&o.SkipCreateDefaultCredentials}, "create-default-credentials", "create the --default-credentials ClusterCleverCredentials at start-up when it is absent (every namespace, any organisation)")
	fs.DurationVar(&o.CredentialsCheckPeriod, "credentials-check-period", credentials.DefaultCheckPeriod, "how often CleverCredentials and ClusterCleverCredentials are checked at Clever Cloud (GET /v2/self)")
	fs.BoolVar(&o.InstallAdmissionPolicy, "install-admission-policy", false, "create (and keep) the ValidatingAdmissionPolicy "+admission.PolicyName+" and its binding, which refuse at admission resources whose ClusterCleverCredentials do not allow their namespace or organisation (the OLM bundle sets it; kustomize and the chart install the policy themselves)")
	fs.BoolVar(&o.Tracing, "tracing", false, "export OpenTelemetry traces over OTLP (a span per engine pass, per Clever Cloud call, per Helm action) to the endpoint of the standard OTEL_EXPORTER_OTLP_* variables (default localhost:4318, http/protobuf); also on when "+tracing.EnvEndpoint+" or "+tracing.EnvTracesEndpoint+" is set; "+tracing.EnvSDKDisabled+"=true or "+tracing.EnvTracesExporter+"=none turn it off")
	// Sharding: several instances, each with its selector and its own lease (docs/operator.md, Sharding).
	fs.StringVar(&o.SelectorFlag, "watch-selector", os.Getenv("WATCH_SELECTOR"), "label selector on the add-on resources this instance manages, e.g. shard=a or 'team in (pay,web)' (default: all; env WATCH_SELECTOR); instances with disjoint selectors split the resources")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", envOr("LEADER_ELECTION_ID", DefaultLeaderElectionID), "name of the leader-election Lease (env LEADER_ELECTION_ID); each instance of a split (--watch-selector) needs its own")
	o.Zap.BindFlags(fs)
}

// Validate checks the values BindFlags stored (from the flags or their defaults), each
// error one line naming the flag, and parses --watch-selector and --cellar-endpoint into
// Selector and CellarEndpoint.
func (o *Options) Validate() error {
	if o.DefaultDeletionPolicy != "Delete" && o.DefaultDeletionPolicy != "Orphan" {
		return fmt.Errorf("--default-deletion-policy must be Delete or Orphan, not %q", o.DefaultDeletionPolicy)
	}
	if o.BackupMaxAge <= 0 {
		return fmt.Errorf("--backup-max-age must be a positive duration (for example 36h), not %s", o.BackupMaxAge)
	}
	if o.OnAddonMissing != "recreate" && o.OnAddonMissing != "report" {
		return fmt.Errorf("--on-addon-missing must be recreate or report, not %q", o.OnAddonMissing)
	}
	var err error
	if o.CellarEndpoint, err = parseCellarEndpoint(o.CellarEndpointFlag); err != nil {
		return err
	}
	if o.Selector, err = ParseWatchSelector(o.SelectorFlag); err != nil {
		return err
	}
	if o.LeaderElectionID == "" {
		return errors.New("--leader-election-id must not be empty")
	}
	return nil
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

// podFromEnv is the operator's Pod as namespace/name/uid, from the downward API variables
// the manifests set (POD_NAMESPACE, POD_NAME, POD_UID); "" outside a Pod.
func podFromEnv() string {
	ns, name := os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME")
	if ns == "" || name == "" {
		return ""
	}
	return ns + "/" + name + "/" + os.Getenv("POD_UID")
}

// The flag values whose text and Options field differ.

// namespacedName is --claim-key-secret: namespace/name ("" or a bare name: none).
type namespacedName types.NamespacedName

func (n *namespacedName) String() string {
	if n.Name == "" {
		return ""
	}
	return n.Namespace + "/" + n.Name
}

func (n *namespacedName) Set(v string) error {
	*n = namespacedName(claimKeyRef(v))
	return nil
}

// commaList is --watch-namespace: comma-separated names (empty ones ignored by
// ManagerOptions; none: every namespace).
type commaList []string

func (l *commaList) String() string { return strings.Join(*l, ",") }

func (l *commaList) Set(v string) error {
	*l = strings.Split(v, ",")
	return nil
}

// durationOrOff is a duration flag whose zero or negative value means off (or never), stored
// as -1: in Options a negative duration is off and 0 is the default.
type durationOrOff time.Duration

func (d *durationOrOff) String() string {
	if *d < 0 {
		return "0s"
	}
	return time.Duration(*d).String()
}

func (d *durationOrOff) Set(v string) error {
	p, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	if p <= 0 {
		p = -1
	}
	*d = durationOrOff(p)
	return nil
}

// defaultCredentials is --default-credentials: a ClusterCleverCredentials name, or "" for
// none (Options.NoDefaultCredentials; in Options "" is the default name).
type defaultCredentials struct{ o *Options }

func (d *defaultCredentials) String() string {
	if d.o == nil || d.o.NoDefaultCredentials {
		return ""
	}
	return d.o.DefaultCredentials
}

func (d *defaultCredentials) Set(v string) error {
	d.o.DefaultCredentials, d.o.NoDefaultCredentials = v, v == ""
	return nil
}

// negatedBool is a boolean flag stored negated (--create-default-credentials into
// Options.SkipCreateDefaultCredentials).
type negatedBool struct{ skip *bool }

func (b *negatedBool) IsBoolFlag() bool { return true }

func (b *negatedBool) String() string {
	if b.skip == nil {
		return "false" // the zero value flag.PrintDefaults compares the default with
	}
	return strconv.FormatBool(!*b.skip)
}

func (b *negatedBool) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	*b.skip = !on
	return nil
}
