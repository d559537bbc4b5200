package addon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/waits"
)

// The failure helpers below only decide: they set conditions in memory, queue an event when
// a condition's reason or message changes (never on every retry), and return the step.Stop
// that ends the pass. The pass's status write (commit) records them.

func (s *pass) countError(reason string) {
	if s.r.Metrics != nil {
		s.r.Metrics.ReconcileErrors.WithLabelValues(s.kind.GVK.Kind, reason).Inc()
	}
}

// fail records a failure on AddonReady (and so Ready). Terminal reasons wait for the user (or
// the periodic resync); others return cause so the work queue backs off exponentially.
func (s *pass) fail(reason, msg string, cause error) error {
	s.countError(reason)
	gen := s.obj.GetGeneration()
	if s.condition(status.TypeAddonReady, metav1.ConditionFalse, reason, msg) {
		s.event(corev1.EventTypeWarning, reason, msg)
	}
	s.update(func(st *kinds.Status) { st.ObservedGeneration = gen })
	if cause != nil {
		s.log.V(1).Info("will retry", "reason", reason, "error", cause.Error())
		return stopRetry(cause)
	}
	return stop(ctrl.Result{RequeueAfter: queue.Jitter(s.r.ResyncPeriod)})
}

// failureKind is how an API error is reported.
type failureKind int

const (
	failThrottled    failureKind = iota // Throttled; Ready untouched
	failForbidden                       // InvalidCredentials: cannot access the organisation
	failUnauthorized                    // InvalidCredentials: rejected credentials
	failUnavailable                     // ApiUnavailable (Synced=False on a Ready resource)
	failAPIError                        // ApiError
)

// classify decides how an API error is reported.
func classify(err error) failureKind {
	switch {
	case clevercloud.IsThrottled(err):
		return failThrottled
	case isForbidden(err):
		return failForbidden
	case clevercloud.IsUnauthorized(err):
		return failUnauthorized
	case clevercloud.IsRetryable(err):
		return failUnavailable
	default:
		return failAPIError
	}
}

// failAPI reports an API error met while doing something.
func (s *pass) failAPI(doing string, err error) error {
	if errors.Is(err, context.Canceled) {
		// The pass itself was cancelled (the operator is stopping, or lost its leadership):
		// Clever Cloud said nothing, so nothing is reported.
		return stopRetry(err)
	}
	switch classify(err) {
	case failThrottled:
		return s.throttled(doing, err)
	case failForbidden:
		return s.fail(status.ReasonInvalidCredentials,
			fmt.Sprintf("Clever Cloud refused access while %s: %s; the credentials in use (the operator's, or the namespace's clever-operator Secret) cannot access organisation %s", doing, clevercloud.Message(err), s.org), err)
	case failUnauthorized:
		return s.fail(status.ReasonInvalidCredentials,
			fmt.Sprintf("Clever Cloud rejected the operator's credentials while %s: %s; check the operator's API token or the namespace's clever-operator Secret", doing, clevercloud.Message(err)), err)
	case failUnavailable:
		msg := fmt.Sprintf("Clever Cloud API unavailable while %s (will retry): %s", doing, clevercloud.Message(err))
		if timedOut(err) {
			// A stuck endpoint (a namespace's credentials may name any): the pass gave up.
			msg = fmt.Sprintf("the Clever Cloud API endpoint %sdid not answer in time while %s (a pass gives up after %s; will retry): %s", s.endpointOf(), doing, s.r.passTimeout(), clevercloud.Message(err))
		}
		if a, ok := status.Find(s.conds, status.TypeAddonReady); ok && a.Status == string(metav1.ConditionTrue) {
			return s.unsynced(msg, err)
		}
		return s.fail(status.ReasonAPIUnavailable, msg, err)
	default:
		return s.fail(status.ReasonAPIError, fmt.Sprintf("Clever Cloud API error while %s: %s", doing, clevercloud.Message(err)), err)
	}
}

// unsynced records a transient failure of a Ready resource without flipping Ready
// (Synced=False), and retries with backoff.
func (s *pass) unsynced(msg string, cause error) error {
	s.countError(status.ReasonAPIUnavailable)
	old, _ := status.Find(s.conds, status.TypeSynced)
	s.condition(status.TypeSynced, metav1.ConditionFalse, status.ReasonAPIUnavailable, msg)
	if old.Message != msg {
		s.event(corev1.EventTypeWarning, status.ReasonAPIUnavailable, msg)
	}
	return stopRetry(cause)
}

// clearTransient drops the conditions of transient failures after a successful call.
func (s *pass) clearTransient() { s.change(status.Removing(status.TypeThrottled, status.TypeSynced)) }

// throttled records throttling without touching a Ready add-on, and retries: after the delay
// the API gave, else with backoff.
func (s *pass) throttled(doing string, err error) error {
	msg := fmt.Sprintf("Clever Cloud API throttled while %s (will retry): %s", doing, clevercloud.Message(err))
	s.countError(status.TypeThrottled)
	old, _ := status.Find(s.conds, status.TypeAddonReady)
	notReady := old.Status != string(metav1.ConditionTrue)
	s.condition(status.TypeThrottled, metav1.ConditionTrue, status.TypeThrottled, msg)
	set := status.Setting(status.TypeAddonReady, metav1.ConditionFalse, status.ReasonAPIUnavailable, msg, s.r.now)
	s.change(func(conds []status.Condition, u *unstructured.Unstructured) ([]status.Condition, bool) {
		if a, ok := status.Find(conds, status.TypeAddonReady); !ok || a.Status != string(metav1.ConditionTrue) {
			return set(conds, u)
		}
		return conds, false
	})
	// Like fail: a Warning when AddonReady takes this reason or message, not on every retry.
	if notReady && (old.Reason != status.ReasonAPIUnavailable || old.Message != msg) {
		s.event(corev1.EventTypeWarning, status.ReasonAPIUnavailable, msg)
	}
	if d := clevercloud.RetryDelay(err); d > 0 {
		// Clever Cloud's Retry-After, or the open circuit, says when: wait that long instead
		// of growing the resource's backoff, which after a long throttle or outage would
		// leave it waiting minutes once the API is back. Sent requests stay under the
		// client's rate limit either way.
		return stop(ctrl.Result{RequeueAfter: queue.Jitter(max(d, time.Second))})
	}
	return stopRetry(err)
}

// pending reports an add-on that Clever Cloud is still provisioning and polls again soon,
// backing off with its age (2 s, growing to 30 s).
func (s *pass) pending(addon *clevercloud.Addon, msg string) error {
	return s.pendingFor(msg, waits.PendingPoll(s.now().Sub(time.UnixMilli(int64(addon.CreationDate)))))
}

// pendingFor reports the add-on as provisioning and looks again after that long.
func (s *pass) pendingFor(msg string, after time.Duration) error {
	gen := s.obj.GetGeneration()
	s.condition(status.TypeAddonReady, metav1.ConditionFalse, status.ReasonProvisioning, msg)
	s.update(func(st *kinds.Status) { st.ObservedGeneration = gen })
	if after <= 0 {
		return stop(ctrl.Result{Requeue: true})
	}
	return stop(ctrl.Result{RequeueAfter: after})
}

// isForbidden: Clever Cloud answered 403, the credentials are valid but may not do this
// (typically: they cannot access spec.organisation).
func isForbidden(err error) bool {
	var ae *clevercloud.APIError
	return errors.As(err, &ae) && ae.StatusCode == http.StatusForbidden
}

// ForeignSourceSecretError is a source Secret that exists and is not controlled by the
// resource: the engine never overwrites it.
type ForeignSourceSecretError struct{ Name, Kind, Owner string }

func (e *ForeignSourceSecretError) Error() string {
	return fmt.Sprintf("secret %s exists and is not controlled by %s %s; refusing to overwrite it", e.Name, e.Kind, e.Owner)
}

// failWrite reports a source Secret the engine cannot write. A foreign Secret in the way is
// SecretConflict; credentials the API server refuses to store (a variable name that is not a
// valid Secret key, values over the Secret size limit) are RenderFailed: both need the user,
// so neither is retried before the next change or resync. Other errors (conflicts, API server
// unavailable) are returned for the work queue's backoff.
func (r *Reconciler) failWrite(ctx context.Context, s *pass, err error) error {
	var fe *ForeignSourceSecretError
	obj := s.obj
	if apierrors.IsAlreadyExists(err) {
		// Only the operator's labelled Secrets are cached: a foreign one is seen on create.
		key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Kind.SourceSecretName(obj.GetName())}
		sec := &corev1.Secret{}
		if gerr := r.APIReader.Get(ctx, key, sec); gerr == nil && !metav1.IsControlledBy(sec, obj) {
			err = &ForeignSourceSecretError{Name: key.Name, Kind: r.Kind.GVK.Kind, Owner: obj.GetName()}
		}
	}
	switch {
	case errors.As(err, &fe):
		return s.fail(status.ReasonSecretConflict, fmt.Sprintf("%s; delete or rename that Secret (the operator writes the add-on's credentials there before rendering Secret %s)", fe.Error(), kinds.SecretName(obj)), nil)
	case apierrors.IsInvalid(err) || apierrors.IsRequestEntityTooLargeError(err):
		return s.fail(status.ReasonRenderFailed, "the add-on's credentials cannot be stored in a Secret: "+truncateMessage(err.Error(), 300), nil)
	}
	return err
}

func truncateMessage(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
