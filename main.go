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
	"os"
	"strings"

	"github.com/operator-framework/helm-operator-plugins/pkg/watches"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/clever-operator/clever-operator/internal/admission"
	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/config/check"
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

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "clever-operator: "+err.Error())
		os.Exit(1)
	}
}

// run starts the operator: the command line, the configuration (--check stops there),
// logging, memory, tracing, then the manager with the operator on it.
func run(args []string, stdout io.Writer) error {
	// The command line: every flag is a field of operator.Options (docs/operator.md).
	var o operator.Options
	fs := flag.NewFlagSet("clever-operator", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Version {
		fmt.Fprintln(stdout, "clever-operator "+version)
		return nil
	}

	// The Clever Cloud API configuration (internal/config); --check proves it and stops.
	cfg, err := config.Load(o.Config)
	if err == nil {
		err = cfg.API.Validate()
	}
	if err != nil {
		return err
	}
	if o.Check {
		return check.Run(context.Background(), cfg, stdout)
	}
	o.API = cfg.API

	// Logging (verbosity capped: client-go logs bodies at V(8)), then the Go runtime's memory.
	ctrl.SetLogger(logging.Capped(zap.New(zap.UseFlagOptions(&o.Zap)), logging.MaxVerbosity))
	o.Log = ctrl.Log
	log := ctrl.Log.WithName("setup")
	operator.TuneMemory(log)
	for _, n := range cfg.API.Notes() {
		log.Info(n)
	}

	// OpenTelemetry traces (internal/tracing), flushed when run returns.
	shutdownTracing, traced, err := tracing.Setup(context.Background(), tracing.Options{Flag: o.Tracing, Version: version, Log: ctrl.Log.WithName("tracing")})
	if err != nil {
		return err
	}
	defer func() { _ = shutdownTracing(context.Background()) }()
	if traced {
		log.Info("exporting OpenTelemetry traces over OTLP (the OTEL_EXPORTER_OTLP_* variables say where)")
	}

	// The manager, the operator on it (a Helm reconciler and an engine per watches.yaml
	// entry), and the admission policy when asked for.
	if o.Watches, err = watches.Load(o.WatchesFile); err != nil {
		return fmt.Errorf("loading %s: %w", o.WatchesFile, err)
	}
	mgr, err := operator.NewManager(&o)
	if err != nil {
		return err
	}
	if err := operator.Setup(mgr, o); err != nil {
		return err
	}
	if o.InstallAdmissionPolicy {
		if err := admission.AddToManager(mgr); err != nil {
			return fmt.Errorf("--install-admission-policy: %w", err)
		}
	}
	log.Info("starting manager", "version", version, "kinds", len(o.Watches), "endpoint", cfg.API.RequestEndpoint(), "credentials", cfg.API.Mode(),
		"sources", strings.Join(cfg.Sources, ", "), "selector", o.Selector.String(), "lease", o.LeaderElectionID)
	return mgr.Start(ctrl.SetupSignalHandler())
}
