package tracing

import (
	"context"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/types"
)

// ---- the engine's pass ----

// StartReconcile starts the span of one engine pass over a resource, the parent of the
// pass's API call spans (ctx carries it). end records the outcome and ends it. While tracing
// is off it returns ctx as it is and an end that does nothing, without allocating.
func StartReconcile(ctx context.Context, kind, namespace, name string) (context.Context, func(outcome string, requeueAfterSeconds float64, err error)) {
	t := tracer.Load()
	if t == nil {
		return ctx, endNothing
	}
	ctx, span := (*t).Start(ctx, "reconcile "+kind, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(AttrKind.String(kind), AttrNamespace.String(namespace), AttrName.String(name)))
	return ctx, func(outcome string, requeueAfter float64, err error) {
		span.SetAttributes(AttrOutcome.String(outcome))
		if requeueAfter > 0 {
			span.SetAttributes(AttrRequeueAfter.Float64(requeueAfter))
		}
		if err != nil {
			// Not the error's text: the reason (EndPass) says what failed, the log the rest.
			span.SetStatus(codes.Error, OutcomeError)
		}
		span.End()
	}
}

func endNothing(string, float64, error) {}

// EndPass records on the pass's span (from ctx) what the pass did: its mode (delete,
// up-to-date, refresh, full), the AddonReady reason it left, its status writes; and
// remembers the span for the Helm actions that render what it published (StartHelm links to
// it). Nothing happens when ctx's span is not recording.
func EndPass(ctx context.Context, uid types.UID, mode, reason string, writes int) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{AttrStatusWrites.Int(writes)}
	if mode != "" {
		attrs = append(attrs, AttrMode.String(mode))
	}
	if reason != "" {
		attrs = append(attrs, AttrReason.String(reason))
	}
	span.SetAttributes(attrs...)
	if uid != "" {
		passes.remember(uid, span.SpanContext())
	}
}

// ---- Clever Cloud API calls ----

// StartAPICall starts the span of one HTTP attempt at the Clever Cloud API, a child of ctx's
// span: named "<METHOD> <route template>", with the route template (never the concrete path),
// the server's host and, from the second attempt on, the attempt's number. end records the
// status code (0: no answer) and, on failure, what failed (errType: the status code or a
// fixed description of the failing step, never an error's text). Off: nothing is allocated.
func StartAPICall(ctx context.Context, method, route, host string, attempt int) func(status int, errType string) {
	t := tracer.Load()
	if t == nil {
		return endCallNothing
	}
	attrs := []attribute.KeyValue{AttrMethod.String(method), AttrRoute.String(route), AttrServerAddress.String(host)}
	if attempt > 0 {
		attrs = append(attrs, AttrResendCount.Int(attempt))
	}
	_, span := (*t).Start(ctx, method+" "+route, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return func(status int, errType string) {
		if status > 0 {
			span.SetAttributes(AttrStatusCode.Int(status))
		}
		if errType == "" && status >= 400 {
			errType = strconv.Itoa(status)
		}
		if errType != "" {
			span.SetAttributes(AttrErrorType.String(errType))
			span.SetStatus(codes.Error, errType)
		}
		span.End()
	}
}

func endCallNothing(int, string) {}

// ---- the Helm side ----

// Resource identifies the resource a Helm action is about.
type Resource struct {
	Kind, Namespace, Name string
	UID                   types.UID
}

// Helm actions (AttrHelmAction; the span is named "helm <action>").
const (
	HelmInstall   = "install"
	HelmUpgrade   = "upgrade"
	HelmDryRun    = "dry-run"
	HelmUninstall = "uninstall"
)

// StartHelm starts the span of one Helm action on a resource's release, linked to the
// engine's last pass over that resource in this process (what the action renders came from
// it). end ends it, with an error status when err is set (not its text: Helm's errors may
// quote rendered objects). An uninstall forgets the resource's pass.
func StartHelm(ctx context.Context, action string, r Resource, release string) func(err error) {
	t := tracer.Load()
	if t == nil {
		return endHelmNothing
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		AttrKind.String(r.Kind), AttrNamespace.String(r.Namespace), AttrName.String(r.Name),
		AttrHelmAction.String(action), AttrHelmRelease.String(release))}
	if sc, ok := passes.lookup(r.UID); ok {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	if action == HelmUninstall {
		passes.forget(r.UID)
	}
	_, span := (*t).Start(ctx, "helm "+action, opts...)
	return func(err error) {
		if err != nil {
			span.SetStatus(codes.Error, "helm "+action+" failed")
		}
		span.End()
	}
}

func endHelmNothing(error) {}

// ---- the engine's last pass per resource ----

// maxPasses bounds the passes remembered (one per resource; forgotten on uninstall): past
// it, the table starts again (links are a help, not a record).
const maxPasses = 100000

type passTable struct {
	mu sync.Mutex
	m  map[types.UID]trace.SpanContext
}

var passes = &passTable{m: map[types.UID]trace.SpanContext{}}

func (p *passTable) remember(uid types.UID, sc trace.SpanContext) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) >= maxPasses {
		p.m = map[types.UID]trace.SpanContext{}
	}
	p.m[uid] = sc
}

func (p *passTable) lookup(uid types.UID) (trace.SpanContext, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sc, ok := p.m[uid]
	return sc, ok
}

func (p *passTable) forget(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, uid)
}
