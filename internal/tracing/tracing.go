// Package tracing is the operator's OpenTelemetry tracing: off by default, and then free (no
// span, no allocation, no attribute built); on with --tracing or when an OTLP endpoint is set
// in the standard environment variables, exporting over OTLP (http/protobuf, or gRPC when
// OTEL_EXPORTER_OTLP_PROTOCOL says so) through the OpenTelemetry SDK, which reads the other
// OTEL_* variables itself (endpoint, headers, TLS, timeout, compression, sampler, batching,
// resource attributes). docs/operator.md ("Tracing") describes it.
//
// The spans (names and attributes are this package's constants):
//
//   - one per pass of the add-on engine ("reconcile <Kind>", StartReconcile/EndPass): the
//     resource's kind, namespace and name, the pass's mode, outcome and AddonReady reason;
//   - under it, one per HTTP attempt at the Clever Cloud API ("<METHOD> <route template>",
//     StartAPICall): the route template (never the concrete path: no id, query or credential;
//     templates keep the cardinality of span names low), the status code, the attempt;
//   - one per Helm action of the Helm side (install, upgrade, dry-run, uninstall;
//     StartHelm), with the resource's attributes and a link to the engine's last pass over
//     the same resource (usually the pass that published what Helm renders).
//
// No span carries a credential, a token, a signature, a URL, a request or response body, or
// an environment variable value: only the constants and the identifiers above.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every span of the operator.
const ScopeName = "github.com/clever-operator/clever-operator"

// ServiceName is the default service.name (OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win).
const ServiceName = "clever-operator"

// The standard variables the operator itself reads (the SDK and its exporters read the rest).
const (
	EnvEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol        = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol  = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvTracesExporter  = "OTEL_TRACES_EXPORTER"
	EnvSDKDisabled     = "OTEL_SDK_DISABLED"
	ProtocolHTTP       = "http/protobuf"
	ProtocolGRPC       = "grpc"
	exporterOTLP       = "otlp"
	exporterNone       = "none"
	defaultShutdownMax = 5 * time.Second
)

// Span attribute keys. Resource identity follows the OpenTelemetry semantic conventions where
// they have a key (k8s.namespace.name, http.*, url.template, server.address, error.type).
const (
	AttrKind          = attribute.Key("clever.resource.kind")
	AttrNamespace     = attribute.Key("k8s.namespace.name")
	AttrName          = attribute.Key("clever.resource.name")
	AttrMode          = attribute.Key("clever.reconcile.mode")
	AttrOutcome       = attribute.Key("clever.reconcile.outcome")
	AttrReason        = attribute.Key("clever.reconcile.reason")
	AttrStatusWrites  = attribute.Key("clever.reconcile.status_writes")
	AttrRequeueAfter  = attribute.Key("clever.reconcile.requeue_after_seconds")
	AttrMethod        = attribute.Key("http.request.method")
	AttrRoute         = attribute.Key("url.template")
	AttrStatusCode    = attribute.Key("http.response.status_code")
	AttrResendCount   = attribute.Key("http.request.resend_count")
	AttrServerAddress = attribute.Key("server.address")
	AttrErrorType     = attribute.Key("error.type")
	AttrHelmAction    = attribute.Key("clever.helm.action")
	AttrHelmRelease   = attribute.Key("clever.helm.release")
)

// Outcomes of a reconcile span (AttrOutcome).
const (
	OutcomeSuccess  = "success"   // the pass ended without an error for the work queue
	OutcomeError    = "error"     // the pass returned an error: the work queue backs off
	OutcomeNotFound = "not_found" // the resource was gone: nothing to do
)

// tracer is the active tracer; nil while tracing is off (the default).
var tracer atomic.Pointer[trace.Tracer]

// On reports whether spans are recorded.
func On() bool { return tracer.Load() != nil }

// Use makes tp the provider of the operator's spans (and OpenTelemetry's global provider), or
// turns tracing off with nil. Setup calls it; tests call it with an in-memory exporter.
func Use(tp trace.TracerProvider) {
	if tp == nil {
		tracer.Store(nil)
		return
	}
	t := tp.Tracer(ScopeName)
	otel.SetTracerProvider(tp)
	tracer.Store(&t)
}

// Options configures Setup.
type Options struct {
	// Flag is --tracing: export traces even when no OTLP endpoint variable is set (to the
	// SDK's default, localhost:4318 for http/protobuf, localhost:4317 for gRPC).
	Flag bool
	// Version is service.version.
	Version string
	// Log receives the exporter's errors (at most one line a minute).
	Log logr.Logger
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
}

// Decide says whether traces are exported and over which protocol, from --tracing and the
// standard variables: OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn tracing off
// whatever else says; --tracing, OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT turn it on. The protocol is
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf;
// http/json and exporters other than otlp are refused (the Go SDK has neither).
func Decide(flag bool, getenv func(string) string) (on bool, protocol string, err error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if strings.EqualFold(env(EnvSDKDisabled), "true") {
		return false, "", nil
	}
	switch exp := strings.ToLower(env(EnvTracesExporter)); exp {
	case "", exporterOTLP:
	case exporterNone:
		return false, "", nil
	default:
		return false, "", fmt.Errorf("%s=%s is not supported: the operator exports traces over OTLP only (otlp, or none)", EnvTracesExporter, exp)
	}
	if !flag && env(EnvEndpoint) == "" && env(EnvTracesEndpoint) == "" {
		return false, "", nil
	}
	protocol = env(EnvTracesProtocol)
	if protocol == "" {
		protocol = env(EnvProtocol)
	}
	switch protocol {
	case "", ProtocolHTTP:
		return true, ProtocolHTTP, nil
	case ProtocolGRPC:
		return true, ProtocolGRPC, nil
	default:
		return false, "", fmt.Errorf("OTLP protocol %q is not supported for traces: use %s (default) or %s", protocol, ProtocolHTTP, ProtocolGRPC)
	}
}

// Setup starts exporting when Decide says so. The returned shutdown flushes the spans still
// buffered and stops the exporter (bounded by its context, else 5 s); it is a no-op when
// tracing is off, as on is false.
func Setup(ctx context.Context, o Options) (shutdown func(context.Context) error, on bool, err error) {
	noop := func(context.Context) error { return nil }
	on, protocol, err := Decide(o.Flag, o.Getenv)
	if err != nil || !on {
		return noop, false, err
	}
	// The exporters read OTEL_EXPORTER_OTLP_{,TRACES_}{ENDPOINT,HEADERS,TIMEOUT,COMPRESSION,
	// CERTIFICATE,CLIENT_KEY,CLIENT_CERTIFICATE,INSECURE} themselves. Neither connects here.
	var exp sdktrace.SpanExporter
	if protocol == ProtocolGRPC {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return noop, false, fmt.Errorf("tracing: OTLP %s exporter: %w", protocol, err)
	}
	res, err := newResource(ctx, o)
	if err != nil {
		return noop, false, fmt.Errorf("tracing: resource: %w", err)
	}
	// The sampler (OTEL_TRACES_SAMPLER, default parentbased_always_on) and the batch
	// processor's settings (OTEL_BSP_*) come from the environment too.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetErrorHandler(throttledLog(o.Log))
	Use(tp)
	return func(ctx context.Context) error {
		Use(nil)
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, defaultShutdownMax)
			defer cancel()
		}
		return tp.Shutdown(ctx)
	}, true, nil
}

// newResource describes the process: service.name clever-operator and service.version, the
// operator's Pod from the downward API variables the manifests set, then what
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES say (they win).
func newResource(ctx context.Context, o Options) (*resource.Resource, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", ServiceName)}
	if o.Version != "" {
		attrs = append(attrs, attribute.String("service.version", o.Version))
	}
	for key, env := range map[string]string{"k8s.pod.name": "POD_NAME", "k8s.namespace.name": "POD_NAMESPACE", "k8s.pod.uid": "POD_UID"} {
		if v := getenv(env); v != "" {
			attrs = append(attrs, attribute.String(key, v))
		}
	}
	r, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if errors.Is(err, resource.ErrPartialResource) {
		err = nil // a malformed OTEL_RESOURCE_ATTRIBUTES entry is skipped, the rest kept
	}
	return r, err
}

// throttledLog logs OpenTelemetry's errors (an unreachable collector fails every export) at
// most once a minute.
func throttledLog(log logr.Logger) otel.ErrorHandler {
	var mu sync.Mutex
	var last time.Time
	var dropped int
	return otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(last) >= time.Minute {
			log.Error(errors.New(redactUserinfo(err.Error())), "OpenTelemetry tracing", "suppressedSinceLast", dropped)
			last, dropped = now, 0
			return
		}
		dropped++
	})
}

// userinfo matches the user:password@ of a URL (an OTLP endpoint may carry one; export errors
// quote the endpoint).
var userinfo = regexp.MustCompile(`://[^/@\s"]*@`)

func redactUserinfo(s string) string { return userinfo.ReplaceAllString(s, "://REDACTED@") }
