package tracing

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name     string
		flag     bool
		env      map[string]string
		on       bool
		protocol string
		err      string
	}{
		{name: "off by default", env: nil},
		{name: "flag", flag: true, on: true, protocol: ProtocolHTTP},
		{name: "endpoint", env: map[string]string{EnvEndpoint: "http://collector:4318"}, on: true, protocol: ProtocolHTTP},
		{name: "traces endpoint", env: map[string]string{EnvTracesEndpoint: "http://collector:4318/v1/traces"}, on: true, protocol: ProtocolHTTP},
		{name: "blank endpoint", env: map[string]string{EnvEndpoint: "  "}},
		{name: "grpc", env: map[string]string{EnvEndpoint: "http://c:4317", EnvProtocol: "grpc"}, on: true, protocol: ProtocolGRPC},
		{name: "traces protocol wins", env: map[string]string{EnvEndpoint: "http://c:4317", EnvProtocol: "grpc", EnvTracesProtocol: "http/protobuf"}, on: true, protocol: ProtocolHTTP},
		{name: "sdk disabled wins over the flag", flag: true, env: map[string]string{EnvSDKDisabled: "TRUE", EnvEndpoint: "http://c"}},
		{name: "exporter none", flag: true, env: map[string]string{EnvTracesExporter: "none"}},
		{name: "exporter otlp", env: map[string]string{EnvTracesExporter: "otlp", EnvEndpoint: "http://c"}, on: true, protocol: ProtocolHTTP},
		{name: "exporter zipkin", flag: true, env: map[string]string{EnvTracesExporter: "zipkin"}, err: "OTEL_TRACES_EXPORTER=zipkin is not supported"},
		{name: "http/json", env: map[string]string{EnvEndpoint: "http://c", EnvProtocol: "http/json"}, err: `OTLP protocol "http/json" is not supported`},
		{name: "bad protocol ignored while off", env: map[string]string{EnvProtocol: "http/json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			on, protocol, err := Decide(tc.flag, env(tc.env))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || on != tc.on || protocol != tc.protocol {
				t.Fatalf("Decide = %v, %q, %v; want %v, %q", on, protocol, err, tc.on, tc.protocol)
			}
		})
	}
}

// Off (the default), the hooks cost nothing: the context comes back as it was, and nothing is
// allocated.
func TestOffIsFree(t *testing.T) {
	Use(nil)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		c, end := StartReconcile(ctx, "Redis", "ns", "name")
		if c != ctx {
			t.Fatal("the context changed")
		}
		endCall := StartAPICall(c, "GET", "/v2/self", "api.example", 1)
		endCall(200, "")
		endHelm := StartHelm(c, HelmInstall, Resource{Kind: "Redis", Namespace: "ns", Name: "name", UID: "u"}, "redis-name")
		endHelm(nil)
		EndPass(c, "u", "full", "Provisioned", 1)
		end(OutcomeSuccess, 1, nil)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per pass with tracing off, want 0", allocs)
	}
	if _, ok := passes.lookup("u"); ok {
		t.Fatal("a pass was remembered with tracing off")
	}
}

func memory(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	Use(tp)
	t.Cleanup(func() { Use(nil); _ = tp.Shutdown(context.Background()) })
	return exp
}

func attrs(s tracetest.SpanStub) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// The span tree of one pass: the reconcile span, its API call spans as children with the
// route template and status, and a Helm action linked to the pass.
func TestSpanTree(t *testing.T) {
	exp := memory(t)
	ctx, end := StartReconcile(context.Background(), "Redis", "ns1", "cache")
	StartAPICall(ctx, "POST", "/v2/organisations/{ownerId}/addons", "api.example", 0)(201, "")
	StartAPICall(ctx, "GET", "/v2/organisations/{ownerId}/addons/{addonId}/env", "api.example", 0)(503, "")
	StartAPICall(ctx, "GET", "/v2/organisations/{ownerId}/addons/{addonId}/env", "api.example", 1)(0, "sending request")
	EndPass(ctx, "uid-1", "full", "Provisioning", 1)
	end(OutcomeError, 0, errors.New("secret-looking text"))
	StartHelm(context.Background(), HelmInstall, Resource{Kind: "Redis", Namespace: "ns1", Name: "cache", UID: "uid-1"}, "redis-cache")(nil)
	StartHelm(context.Background(), HelmUninstall, Resource{Kind: "Redis", Namespace: "ns1", Name: "cache", UID: "uid-1"}, "redis-cache")(errors.New("x"))
	StartHelm(context.Background(), HelmInstall, Resource{Kind: "Redis", Namespace: "ns1", Name: "cache", UID: "uid-1"}, "redis-cache")(nil)

	spans := exp.GetSpans()
	if len(spans) != 7 {
		t.Fatalf("%d spans, want 7: %v", len(spans), spans)
	}
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	rec := byName["reconcile Redis"]
	if len(rec) != 1 {
		t.Fatalf("reconcile spans: %v", rec)
	}
	r := rec[0]
	want := map[string]string{"clever.resource.kind": "Redis", "k8s.namespace.name": "ns1", "clever.resource.name": "cache",
		"clever.reconcile.outcome": "error", "clever.reconcile.mode": "full", "clever.reconcile.reason": "Provisioning", "clever.reconcile.status_writes": "1"}
	if got := attrs(r); !subset(want, got) {
		t.Errorf("reconcile attributes %v, want %v", got, want)
	}
	if r.Status.Description != OutcomeError || r.Parent.IsValid() {
		t.Errorf("reconcile status %+v parent %v", r.Status, r.Parent)
	}
	post := byName["POST /v2/organisations/{ownerId}/addons"]
	env := byName["GET /v2/organisations/{ownerId}/addons/{addonId}/env"]
	if len(post) != 1 || len(env) != 2 {
		t.Fatalf("call spans %v %v", post, env)
	}
	for _, c := range append(post, env...) {
		if c.Parent.SpanID() != r.SpanContext.SpanID() || c.SpanContext.TraceID() != r.SpanContext.TraceID() || c.SpanKind != trace.SpanKindClient {
			t.Errorf("%s is not a client child of the reconcile span", c.Name)
		}
	}
	if a := attrs(post[0]); a["http.response.status_code"] != "201" || a["url.template"] != "/v2/organisations/{ownerId}/addons" || a["error.type"] != "" || a["http.request.resend_count"] != "" {
		t.Errorf("POST attributes %v", a)
	}
	if a := attrs(env[0]); a["http.response.status_code"] != "503" || a["error.type"] != "503" {
		t.Errorf("503 attributes %v", a)
	}
	if a := attrs(env[1]); a["http.response.status_code"] != "" || a["error.type"] != "sending request" || a["http.request.resend_count"] != "1" {
		t.Errorf("retry attributes %v", a)
	}
	helm := byName["helm install"]
	if len(helm) != 2 || len(byName["helm uninstall"]) != 1 {
		t.Fatalf("helm spans %v", byName)
	}
	if len(helm[0].Links) != 1 || helm[0].Links[0].SpanContext.SpanID() != r.SpanContext.SpanID() {
		t.Errorf("the install is not linked to the pass: %v", helm[0].Links)
	}
	if a := attrs(helm[0]); a["clever.helm.release"] != "redis-cache" || a["clever.resource.kind"] != "Redis" || a["clever.helm.action"] != "install" {
		t.Errorf("helm attributes %v", a)
	}
	if u := byName["helm uninstall"][0]; len(u.Links) != 1 || u.Status.Description != "helm uninstall failed" {
		t.Errorf("uninstall %v %+v", u.Links, u.Status)
	}
	if len(helm[1].Links) != 0 {
		t.Errorf("the pass is still linked after the uninstall")
	}
	for _, s := range spans {
		if strings.Contains(s.Status.Description, "secret-looking") {
			t.Errorf("span %s carries an error's text", s.Name)
		}
	}
}

func subset(want, got map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// receiver collects what an OTLP exporter sends.
type receiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	res     []*commonpb.KeyValue
	headers []http.Header
}

func (r *receiver) add(req *coltracepb.ExportTraceServiceRequest, h http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		r.res = append(r.res, rs.GetResource().GetAttributes()...)
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
	r.headers = append(r.headers, h)
}

func (r *receiver) check(t *testing.T, wantHeader string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	names := map[string]*tracepb.Span{}
	for _, s := range r.spans {
		names[s.GetName()] = s
	}
	rec, call := names["reconcile PostgreSql"], names["GET /v2/self"]
	if rec == nil || call == nil {
		t.Fatalf("spans received: %v", r.spans)
	}
	if string(call.GetParentSpanId()) != string(rec.GetSpanId()) {
		t.Error("the call span is not the reconcile span's child")
	}
	res := map[string]string{}
	for _, kv := range r.res {
		res[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	if res["service.name"] != "clever-operator" || res["service.version"] != "v9.9.9" || res["deployment.environment.name"] != "test" || res["k8s.pod.name"] != "op-0" {
		t.Errorf("resource %v", res)
	}
	if wantHeader != "" {
		found := false
		for _, h := range r.headers {
			found = found || h.Get("x-tenant") == wantHeader
		}
		if !found {
			t.Errorf("OTEL_EXPORTER_OTLP_HEADERS not sent: %v", r.headers)
		}
	}
}

func exportOne(t *testing.T) {
	t.Helper()
	shutdown, on, err := Setup(context.Background(), Options{Version: "v9.9.9", Getenv: nil})
	if err != nil || !on {
		t.Fatalf("Setup: %v %v", on, err)
	}
	ctx, end := StartReconcile(context.Background(), "PostgreSql", "ns", "db")
	StartAPICall(ctx, "GET", "/v2/self", "api.example", 0)(200, "")
	end(OutcomeSuccess, 600, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if On() {
		t.Fatal("tracing still on after shutdown")
	}
}

func commonEnv(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
	t.Setenv("POD_NAME", "op-0")
	t.Setenv(EnvTracesEndpoint, "")
	t.Setenv(EnvTracesProtocol, "")
	t.Setenv(EnvSDKDisabled, "")
	t.Setenv(EnvTracesExporter, "")
}

// The exporter is wired from the standard variables alone (endpoint, headers): an in-process
// OTLP/HTTP receiver decodes the protobuf export requests and finds the spans.
func TestOTLPHTTPFromEnv(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		req := &coltracepb.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(body, req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rcv.add(req, r.Header.Clone())
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	defer srv.Close()
	commonEnv(t)
	t.Setenv(EnvEndpoint, srv.URL)
	t.Setenv(EnvProtocol, "")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=team-a")
	exportOne(t)
	rcv.check(t, "team-a")
}

type grpcReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	rcv *receiver
}

func (g *grpcReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.rcv.add(req, nil)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc selects the gRPC exporter: an in-process OTLP/gRPC
// receiver gets the spans.
func TestOTLPGRPCFromEnv(t *testing.T) {
	rcv := &receiver{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(s, &grpcReceiver{rcv: rcv})
	go func() { _ = s.Serve(l) }()
	defer s.Stop()
	commonEnv(t)
	t.Setenv(EnvEndpoint, "http://"+l.Addr().String())
	t.Setenv(EnvProtocol, "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "")
	exportOne(t)
	rcv.check(t, "")
}

// Export errors are logged, at most once a minute, without the user:password of an endpoint.
func TestErrorLog(t *testing.T) {
	var lines []string
	h := throttledLog(funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{}))
	h.Handle(errors.New(`Post "https://tenant:s3cr3t-key@collector.example/v1/traces": dial tcp: refused`))
	h.Handle(errors.New("again"))
	if len(lines) != 1 || strings.Contains(lines[0], "s3cr3t-key") || !strings.Contains(lines[0], "REDACTED@collector.example") {
		t.Fatalf("logged %q", lines)
	}
}
