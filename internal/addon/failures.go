package addon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/status"
)

func setCondition(u *unstructured.Unstructured, t string, s metav1.ConditionStatus, reason, msg string, now time.Time) {
	conds, _ := status.Set(status.Conditions(u), status.Condition{Type: t, Status: string(s), Reason: reason, Message: msg, ObservedGeneration: u.GetGeneration()}, now)
	status.SetConditions(u, conds)
}

// statusExtraKey carries, in a pass's context, a status change that goes with the pass's
// next status write (see provision).
type statusExtraKey struct{}

// updateStatus applies mutate to the resource's status and writes it when it changed,
// recomputing Ready. Conflicts (the Helm reconciler writes status too) are retried on a
// fresh copy.
func (r *Reconciler) updateStatus(ctx context.Context, obj *unstructured.Unstructured, mutate func(*unstructured.Unstructured)) error {
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := obj
		if !first {
			cur = r.newObject()
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
				return err
			}
		}
		first = false
		next := cur.DeepCopy()
		mutate(next)
		if extra, ok := ctx.Value(statusExtraKey{}).(func(*unstructured.Unstructured)); ok {
			extra(next)
		}
		syncPaused(next, r.now())
		status.ApplyReady(next, r.now())
		if equality.Semantic.DeepEqual(cur.Object["status"], next.Object["status"]) {
			return nil
		}
		if err := r.Client.Status().Update(ctx, next); err != nil {
			return err
		}
		obj.Object = next.Object
		return nil
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// syncPaused mirrors the pause annotation in the Paused condition.
func syncPaused(u *unstructured.Unstructured, now time.Time) {
	conds := status.Conditions(u)
	var changed bool
	if u.GetAnnotations()[AnnotationPaused] == "true" {
		conds, changed = status.Set(conds, status.Condition{Type: status.TypePaused, Status: string(metav1.ConditionTrue), Reason: status.ReasonPauseRequested,
			Message: "paused by the annotation " + AnnotationPaused + ": no Clever Cloud writes and no Secret re-rendering; reads and the existing Secret stay", ObservedGeneration: u.GetGeneration()}, now)
	} else {
		conds, changed = status.Remove(conds, status.TypePaused)
	}
	if changed {
		status.SetConditions(u, conds)
	}
}

// pausedChanged says whether the Paused condition does not match the annotation yet.
func pausedChanged(u *unstructured.Unstructured) bool {
	_, has := status.Find(status.Conditions(u), status.TypePaused)
	return has != (u.GetAnnotations()[AnnotationPaused] == "true")
}

// fail records a failure on AddonReady (and so Ready) with a Warning event when the reason or
// message changed, never on every retry. Terminal reasons wait for the user (or the periodic
// resync); others return cause so the work queue backs off exponentially.
func (r *Reconciler) fail(ctx context.Context, obj *unstructured.Unstructured, reason, msg string, cause error) (ctrl.Result, error) {
	old, _ := status.Find(status.Conditions(obj), status.TypeAddonReady)
	if r.Metrics != nil {
		r.Metrics.ReconcileErrors.WithLabelValues(r.Kind.GVK.Kind, reason).Inc()
	}
	if err := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		setCondition(u, status.TypeAddonReady, metav1.ConditionFalse, reason, msg, r.now())
		_ = unstructured.SetNestedField(u.Object, obj.GetGeneration(), "status", "observedGeneration")
	}); err != nil {
		return ctrl.Result{}, err
	}
	if old.Reason != reason || old.Message != msg {
		r.Recorder.Event(obj, corev1.EventTypeWarning, reason, msg)
	}
	if cause != nil {
		logr.FromContextOrDiscard(ctx).V(1).Info("will retry", "reason", reason, "error", cause.Error())
		return ctrl.Result{}, cause
	}
	return ctrl.Result{RequeueAfter: r.jitter(r.ResyncPeriod)}, nil
}

// failAPI classifies an API error.
func (r *Reconciler) failAPI(ctx context.Context, obj *unstructured.Unstructured, doing string, err error) (ctrl.Result, error) {
	switch {
	case clevercloud.IsThrottled(err):
		return r.throttled(ctx, obj, doing, err)
	case isForbidden(err):
		org, _, _ := unstructured.NestedString(obj.Object, "spec", "organisation")
		return r.fail(ctx, obj, status.ReasonInvalidCredentials,
			fmt.Sprintf("Clever Cloud refused access while %s: %s; the credentials in use (the operator's, or the namespace's clever-operator Secret) cannot access organisation %s", doing, apiMessage(err), org), err)
	case clevercloud.IsUnauthorized(err):
		return r.fail(ctx, obj, status.ReasonInvalidCredentials,
			fmt.Sprintf("Clever Cloud rejected the operator's credentials while %s: %s; check the operator's API token or the namespace's clever-operator Secret", doing, apiMessage(err)), err)
	case clevercloud.IsRetryable(err):
		msg := fmt.Sprintf("Clever Cloud API unavailable while %s (will retry): %s", doing, apiMessage(err))
		if a, ok := status.Find(status.Conditions(obj), status.TypeAddonReady); ok && a.Status == string(metav1.ConditionTrue) {
			return r.unsynced(ctx, obj, msg, err)
		}
		return r.fail(ctx, obj, status.ReasonAPIUnavailable, msg, err)
	default:
		return r.fail(ctx, obj, status.ReasonAPIError, fmt.Sprintf("Clever Cloud API error while %s: %s", doing, apiMessage(err)), err)
	}
}

// TypeSynced is False while the last Clever Cloud call for a Ready resource failed
// transiently (5xx, timeout, outage). Ready keeps its value: the add-on keeps serving and its
// Secret stays; the condition goes at the next successful call.
const TypeSynced = "Synced"

// unsynced records a transient failure of a Ready resource without flipping Ready, with a
// Warning event when the message changes, and retries with backoff.
func (r *Reconciler) unsynced(ctx context.Context, obj *unstructured.Unstructured, msg string, cause error) (ctrl.Result, error) {
	old, _ := status.Find(status.Conditions(obj), TypeSynced)
	if r.Metrics != nil {
		r.Metrics.ReconcileErrors.WithLabelValues(r.Kind.GVK.Kind, status.ReasonAPIUnavailable).Inc()
	}
	if err := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		setCondition(u, TypeSynced, metav1.ConditionFalse, status.ReasonAPIUnavailable, msg, r.now())
	}); err != nil {
		return ctrl.Result{}, err
	}
	if old.Message != msg {
		r.Recorder.Event(obj, corev1.EventTypeWarning, status.ReasonAPIUnavailable, msg)
	}
	return ctrl.Result{}, cause
}

// clearTransient drops the conditions of transient failures after a successful call.
func clearTransient(u *unstructured.Unstructured) {
	conds := status.Conditions(u)
	var a, b bool
	conds, a = status.Remove(conds, TypeThrottled)
	conds, b = status.Remove(conds, TypeSynced)
	if a || b {
		status.SetConditions(u, conds)
	}
}

// TypeThrottled is set while Clever Cloud (or the operator's own budget) throttles the
// resource's calls. It does not flip Ready: the add-on keeps serving.
const TypeThrottled = "Throttled"

// throttled records throttling without touching a Ready add-on, and retries with backoff.
func (r *Reconciler) throttled(ctx context.Context, obj *unstructured.Unstructured, doing string, err error) (ctrl.Result, error) {
	msg := fmt.Sprintf("Clever Cloud API throttled while %s (will retry): %s", doing, apiMessage(err))
	if r.Metrics != nil {
		r.Metrics.ReconcileErrors.WithLabelValues(r.Kind.GVK.Kind, TypeThrottled).Inc()
	}
	old, _ := status.Find(status.Conditions(obj), status.TypeAddonReady)
	notReady := old.Status != string(metav1.ConditionTrue)
	if uerr := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		setCondition(u, TypeThrottled, metav1.ConditionTrue, TypeThrottled, msg, r.now())
		if a, ok := status.Find(status.Conditions(u), status.TypeAddonReady); !ok || a.Status != string(metav1.ConditionTrue) {
			setCondition(u, status.TypeAddonReady, metav1.ConditionFalse, status.ReasonAPIUnavailable, msg, r.now())
		}
	}); uerr != nil {
		return ctrl.Result{}, uerr
	}
	// Like fail: a Warning when AddonReady takes this reason or message, not on every retry.
	if notReady && (old.Reason != status.ReasonAPIUnavailable || old.Message != msg) {
		r.Recorder.Event(obj, corev1.EventTypeWarning, status.ReasonAPIUnavailable, msg)
	}
	if d := clevercloud.RetryDelay(err); d > 0 {
		// Clever Cloud's Retry-After, or the open circuit, says when: wait that long instead
		// of growing the resource's backoff, which after a long throttle or outage would
		// leave it waiting minutes once the API is back. Sent requests stay under the
		// client's rate limit either way.
		return ctrl.Result{RequeueAfter: r.jitter(max(d, time.Second))}, nil
	}
	return ctrl.Result{}, err
}

// pending reports an add-on that Clever Cloud is still provisioning and polls again soon,
// backing off with its age (2 s, growing to 30 s).
func (r *Reconciler) pending(ctx context.Context, obj *unstructured.Unstructured, addon *clevercloud.Addon, msg string) (ctrl.Result, error) {
	if err := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		setCondition(u, status.TypeAddonReady, metav1.ConditionFalse, status.ReasonProvisioning, msg, r.now())
		_ = unstructured.SetNestedField(u.Object, obj.GetGeneration(), "status", "observedGeneration")
	}); err != nil {
		return ctrl.Result{}, err
	}
	age := r.now().Sub(time.UnixMilli(int64(addon.CreationDate)))
	wait := 2 * time.Second
	if age > 0 {
		wait = min(max(age/4, 2*time.Second), 30*time.Second)
	}
	return ctrl.Result{RequeueAfter: wait}, nil
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
func (r *Reconciler) failWrite(ctx context.Context, obj *unstructured.Unstructured, err error) (ctrl.Result, error) {
	var fe *ForeignSourceSecretError
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
		return r.fail(ctx, obj, status.ReasonSecretConflict, fmt.Sprintf("%s; delete or rename that Secret (the operator writes the add-on's credentials there before rendering Secret %s)", fe.Error(), SecretName(obj)), nil)
	case apierrors.IsInvalid(err) || apierrors.IsRequestEntityTooLargeError(err):
		return r.fail(ctx, obj, status.ReasonRenderFailed, "the add-on's credentials cannot be stored in a Secret: "+truncateMessage(err.Error(), 300), nil)
	}
	return ctrl.Result{}, err
}

func truncateMessage(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func apiMessage(err error) string {
	var ae *clevercloud.APIError
	if errors.As(err, &ae) {
		if ae.Message != "" {
			return fmt.Sprintf("%d %s", ae.StatusCode, ae.Message)
		}
		return fmt.Sprintf("HTTP %d", ae.StatusCode)
	}
	return err.Error()
}
