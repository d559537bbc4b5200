package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Credentials expiry (issue 13): Clever Cloud's API tokens (bearer, from the console or
// `clever tokens create`, at most one year) and OAuth1 tokens (three months by default)
// expire. When the expiry is known (api.token-expiration, clever-tools.json's
// expirationDate, or the exp claim of a bearer token that is a JWT) the operator exports it
// and warns before it is reached.
const (
	// DefaultCredentialsExpiryWarning is how long before the expiry the warnings start.
	DefaultCredentialsExpiryWarning = 7 * 24 * time.Hour
	// MetricCredentialsExpiry is the expiry, as a Unix timestamp, per credentials source.
	MetricCredentialsExpiry = "clever_operator_credentials_expiry_timestamp_seconds"
	// status.ReasonCredentialsExpiring and status.ReasonCredentialsExpired are the Warning events' reasons.
	// SourceOperator is the metric's source label for the operator's own credentials;
	// a namespace's override Secret is "secret:<namespace>/<name>".
	SourceOperator = "operator"

	expiryCheckInterval = time.Hour
	expiryEventInterval = 24 * time.Hour
)

func expiryGauge(reg prometheus.Registerer) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: MetricCredentialsExpiry,
		Help: "When the Clever Cloud credentials expire (Unix seconds), where known: api.token-expiration, clever-tools.json's expirationDate, or a JWT bearer token's exp claim. source is \"operator\" or \"secret:<namespace>/<name>\".",
	}, []string{"source", "from"})
	if err := reg.Register(g); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(*prometheus.GaugeVec); ok {
				return existing
			}
		}
	}
	return g
}

// expiryWatcher checks, at start, hourly and when an override Secret is added or changed, the expiry of the operator's credentials and
// of every per-namespace override Secret, sets the metric, and sends a Warning event at
// most once a day per object while the expiry is within the warning window (or past):
// on the override Secret for a namespace's credentials (seen by the namespace's owners
// with `kubectl get events`), on the operator's Pod for its own (plus a log line).
type expiryWatcher struct {
	global config.APIConfig
	// secrets lists the per-namespace override Secrets (nil: none).
	secrets  func(context.Context) []corev1.Secret
	recorder record.EventRecorder
	gauge    *prometheus.GaugeVec
	warn     time.Duration
	pod      *corev1.Pod // nil: no event for the operator's own credentials
	log      logr.Logger
	now      func() time.Time

	warned map[string]time.Time   // object key → last event
	set    map[[2]string]struct{} // label pairs this watcher set
	kick   chan struct{}          // an override Secret was added or changed
}

// changed asks for a check soon (an override Secret was added or changed); never blocks.
func (w *expiryWatcher) changed() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func newExpiryWatcher(o Options, overrides *overrideSecrets, recorder record.EventRecorder) *expiryWatcher {
	w := &expiryWatcher{
		global: o.API, secrets: overrides.list, recorder: recorder, gauge: expiryGauge(o.Registerer),
		warn: o.CredentialsExpiryWarning, log: o.Log.WithName("credentials"), now: time.Now,
		warned: map[string]time.Time{}, set: map[[2]string]struct{}{}, kick: make(chan struct{}, 1),
	}
	if w.warn == 0 {
		w.warn = DefaultCredentialsExpiryWarning
	}
	if parts := strings.Split(o.Pod, "/"); len(parts) >= 2 && parts[0] != "" && parts[1] != "" {
		w.pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: parts[0], Name: parts[1]}}
		if len(parts) > 2 {
			w.pod.UID = types.UID(parts[2])
		}
	}
	return w
}

// Start implements manager.Runnable.
func (w *expiryWatcher) Start(ctx context.Context) error {
	t := time.NewTicker(expiryCheckInterval)
	defer t.Stop()
	for {
		w.check(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-w.kick:
			// Let a burst of Secret events (the initial sync) settle into one check.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
			select {
			case <-w.kick:
			default:
			}
		}
	}
}

// NeedLeaderElection: every replica exports the metric; events come from the leader only
// would need a second runnable, and a daily event per replica is harmless.
func (w *expiryWatcher) NeedLeaderElection() bool { return false }

func (w *expiryWatcher) check(ctx context.Context) {
	now := w.now()
	seen := map[[2]string]struct{}{}
	observe := func(source string, c config.APIConfig, obj runtime.Object, key, what string) {
		exp, from, ok := c.Expiry()
		if !ok {
			return
		}
		labels := [2]string{source, from}
		seen[labels] = struct{}{}
		w.gauge.WithLabelValues(source, from).Set(float64(exp.Unix()))
		left := exp.Sub(now)
		if w.warn < 0 || left > w.warn {
			return
		}
		if last, ok := w.warned[key]; ok && now.Sub(last) < expiryEventInterval {
			return
		}
		w.warned[key] = now
		reason, msg := status.ReasonCredentialsExpiring, fmt.Sprintf("%s expire at %s (in %s, from %s); renew them before then", what, exp.UTC().Format(time.RFC3339), left.Round(time.Hour), from)
		if left <= 0 {
			reason, msg = status.ReasonCredentialsExpired, fmt.Sprintf("%s expired at %s (from %s); Clever Cloud refuses them: renew them", what, exp.UTC().Format(time.RFC3339), from)
		}
		w.log.Info("Clever Cloud credentials expiring", "source", source, "reason", reason, "expiry", exp.UTC().Format(time.RFC3339))
		if obj != nil && w.recorder != nil {
			w.recorder.Event(obj, corev1.EventTypeWarning, reason, msg)
		}
	}
	var podObj runtime.Object
	if w.pod != nil {
		podObj = w.pod
	}
	observe(SourceOperator, w.global, podObj, "operator", "The operator's Clever Cloud credentials")
	if w.secrets != nil {
		for _, sec := range w.secrets(ctx) {
			over, err := config.ParseOverrideSecret(sec.Data, credentials.OverrideSecretKey)
			if err != nil {
				continue // the engine reports it on the resources
			}
			cfg, err := config.ApplyOverride(w.global, over)
			if err != nil {
				continue
			}
			src := "secret:" + sec.Namespace + "/" + sec.Name
			observe(src, cfg, &sec, src, "The Clever Cloud credentials of this Secret")
		}
	}
	for labels := range w.set {
		if _, ok := seen[labels]; !ok {
			w.gauge.DeleteLabelValues(labels[0], labels[1])
		}
	}
	w.set = seen
}
