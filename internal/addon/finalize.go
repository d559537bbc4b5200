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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/status"
)

// finalize deletes the add-on before the resource (and, after it, the Helm release and the
// Secret) goes away. A 404 means already gone only once a call that only the real API answers
// confirms it (confirmGone). The live object is read first: a stale cached copy must not
// cause a second DELETE.
func (r *Reconciler) finalize(ctx context.Context, cached *unstructured.Unstructured) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cached, r.Kind.Finalizer()) {
		return ctrl.Result{}, nil
	}
	obj := r.newObject()
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !controllerutil.ContainsFinalizer(obj, r.Kind.Finalizer()) {
		return ctrl.Result{}, nil
	}
	org, _, _ := unstructured.NestedString(obj.Object, "spec", "organisation")
	addonID, _, _ := unstructured.NestedString(obj.Object, "status", "addon")

	if r.deletionPolicy(ctx, obj, lifecycleOf(obj)) == DeletionPolicyOrphan {
		what := addonID
		if what == "" {
			what = "named " + r.Kind.AddonName(string(obj.GetUID())) + " (if it exists)"
		}
		r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventAddonOrphaned,
			"Deletion policy Orphan: add-on %s in organisation %s is kept at Clever Cloud", what, org)
		return r.release(ctx, obj)
	}

	if obj.GetAnnotations()[AnnotationSkipDeprovision] == "true" {
		what := addonID
		if what == "" {
			what = "named " + r.Kind.AddonName(string(obj.GetUID())) + " (if it exists)"
		}
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, EventAddonLeftBehind,
			"Annotation %s=true: add-on %s in organisation %s was NOT deleted and is still billed; delete it at Clever Cloud if it is no longer needed", AnnotationSkipDeprovision, what, org)
		return r.release(ctx, obj)
	}

	api, _, err := r.Credentials.For(ctx, obj.GetNamespace())
	if err != nil {
		return r.failDelete(ctx, obj, fmt.Sprintf("cannot delete the add-on: no usable Clever Cloud credentials for namespace %s: %v", obj.GetNamespace(), err), err)
	}
	if addonID == "" && ValidOwnerID(org) {
		// Never recorded (crash after create, or created by another operator): look it up by
		// name so a paid add-on is not leaked silently. Only a list Clever Cloud answered
		// proves there is none: a 404 here proves nothing (wrong endpoint, proxy, incident)
		// unless the API confirms it does not know the organisation.
		list, err := api.ListAddons(ctx, org)
		if err != nil {
			if !clevercloud.IsNotFound(err) {
				return r.failDeleteAPI(ctx, obj, err)
			}
			if gone, why := r.ownerUnknown(ctx, api, org); !gone {
				return r.deletionUnconfirmed(ctx, obj, fmt.Sprintf("listing the add-ons of organisation %s answered 404, which does not prove that no add-on named %s exists (%s)", org, r.Kind.AddonName(string(obj.GetUID())), why))
			}
		}
		for _, a := range list {
			if a.AddonName() == r.Kind.AddonName(string(obj.GetUID())) {
				addonID = a.ID
				break
			}
		}
	}
	if addonID != "" {
		err := api.DeleteAddon(ctx, org, addonID)
		switch {
		case err == nil:
			// Any 2xx (the API answers 200 with a JSON message) is success.
		case clevercloud.IsNotFound(err):
			if gone, why := r.confirmGone(ctx, api, org, addonID); !gone {
				return r.deletionUnconfirmed(ctx, obj, fmt.Sprintf("deleting add-on %s answered 404, but %s", addonID, why))
			}
		case deletionRefused(err):
			return r.deletionDeferred(ctx, obj, addonID, err)
		default:
			return r.failDeleteAPI(ctx, obj, err)
		}
		r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventAddonDeleted, "Deleted managed %s instance %s on Clever Cloud", r.Kind.Noun, addonID)
	}
	return r.release(ctx, obj)
}

// confirmGone decides whether a 404 on an add-on proves it is gone. Only an answer that the
// real API alone gives counts: the organisation's add-on list (200) without the add-on, or,
// when the list itself answers 404, GET /v2/self answering 200 (the API is reached and does
// not know the organisation, so nothing lives in it). why explains a refusal.
func (r *Reconciler) confirmGone(ctx context.Context, api API, org, addonID string) (gone bool, why string) {
	list, err := api.ListAddons(ctx, org)
	switch {
	case err == nil:
		for _, a := range list {
			if a.ID == addonID || a.RealID == addonID {
				return false, fmt.Sprintf("organisation %s still lists it", org)
			}
		}
		return true, ""
	case clevercloud.IsNotFound(err):
		return r.ownerUnknown(ctx, api, org)
	default:
		return false, "confirming it through the organisation's add-on list failed: " + apiMessage(err)
	}
}

// ownerUnknown: the owner's add-on list answered 404; only GET /v2/self answering 200 shows
// that this is Clever Cloud saying it does not know the organisation.
func (r *Reconciler) ownerUnknown(ctx context.Context, api API, org string) (bool, string) {
	if _, err := api.Self(ctx); err != nil {
		return false, fmt.Sprintf("the organisation's add-on list answered 404 too and GET /v2/self failed (%s): the endpoint in use does not look like the Clever Cloud API", apiMessage(err))
	}
	return true, ""
}

// deletionRefused: Clever Cloud answered the DELETE with a refusal that waiting fixes (the
// add-on is still being provisioned: 4xx other than 401/403/404/429).
func deletionRefused(err error) bool {
	var ae *clevercloud.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.StatusCode {
	case http.StatusBadRequest, http.StatusConflict, http.StatusLocked, http.StatusPreconditionFailed, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// deletionBackoff grows with the time the resource has waited for its deletion: 1 s, up to
// 5 min, so a refused or unconfirmed deletion is retried without an error loop.
func deletionBackoff(waited time.Duration) time.Duration {
	return min(max(waited/2, time.Second), 5*time.Minute)
}

func (r *Reconciler) deletionWait(obj *unstructured.Unstructured) time.Duration {
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		return deletionBackoff(r.now().Sub(ts.Time))
	}
	return deletionBackoff(0)
}

// deletionUnconfirmed keeps the finalizer after a 404 nothing confirmed, says so (condition
// DeletionUnconfirmed and a Warning event when the message changes) and tries again later.
func (r *Reconciler) deletionUnconfirmed(ctx context.Context, obj *unstructured.Unstructured, msg string) (ctrl.Result, error) {
	msg += fmt.Sprintf("; the resource is kept (finalizer) and the deletion retried until Clever Cloud confirms (check the API endpoint; to release it without deleting the add-on, annotate it %s=true)", AnnotationSkipDeprovision)
	return r.deletionWaiting(ctx, obj, status.ReasonDeletionUnconfirmed, msg)
}

// deletionDeferred: Clever Cloud refused the deletion for now (still provisioning).
func (r *Reconciler) deletionDeferred(ctx context.Context, obj *unstructured.Unstructured, addonID string, err error) (ctrl.Result, error) {
	msg := fmt.Sprintf("Clever Cloud refused to delete add-on %s for now (%s); it is probably still being provisioned; retrying with a growing delay", addonID, apiMessage(err))
	return r.deletionWaiting(ctx, obj, status.ReasonDeletionDeferred, msg)
}

func (r *Reconciler) deletionWaiting(ctx context.Context, obj *unstructured.Unstructured, reason, msg string) (ctrl.Result, error) {
	if r.Metrics != nil {
		r.Metrics.ReconcileErrors.WithLabelValues(r.Kind.GVK.Kind, reason).Inc()
	}
	old, _ := status.Find(status.Conditions(obj), status.TypeAddonReady)
	if err := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		setCondition(u, status.TypeAddonReady, metav1.ConditionFalse, reason, msg, r.now())
	}); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if old.Reason != reason || old.Message != msg {
		r.Recorder.Event(obj, corev1.EventTypeWarning, reason, msg)
	}
	return ctrl.Result{RequeueAfter: r.deletionWait(obj)}, nil
}

// release removes the source Secret (credentials must not outlive the add-on) and the
// finalizer; the Helm reconciler then uninstalls the release and the resource goes away.
func (r *Reconciler) release(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, error) {
	if err := r.deleteSource(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.removeFinalizer(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	if r.Metrics != nil && obj.GetDeletionTimestamp() != nil {
		r.Metrics.DeletionDuration.WithLabelValues(r.Kind.GVK.Kind).Observe(r.now().Sub(obj.GetDeletionTimestamp().Time).Seconds())
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) failDeleteAPI(ctx context.Context, obj *unstructured.Unstructured, err error) (ctrl.Result, error) {
	if r.Metrics != nil {
		r.Metrics.ReconcileErrors.WithLabelValues(r.Kind.GVK.Kind, status.ReasonDeleteFailed).Inc()
	}
	return r.failDelete(ctx, obj, "deleting the add-on at Clever Cloud failed: "+apiMessage(err), err)
}

// failDelete reports a deletion that cannot proceed (reason DeleteFailed) and how to release
// the resource anyway; the work queue retries with backoff.
func (r *Reconciler) failDelete(ctx context.Context, obj *unstructured.Unstructured, msg string, cause error) (ctrl.Result, error) {
	msg += fmt.Sprintf(" (to release the resource without deleting the add-on, annotate it %s=true)", AnnotationSkipDeprovision)
	reason := status.ReasonDeleteFailed
	old, _ := status.Find(status.Conditions(obj), status.TypeAddonReady)
	if err := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		setCondition(u, status.TypeAddonReady, metav1.ConditionFalse, reason, msg, r.now())
	}); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if old.Reason != reason || old.Message != msg {
		r.Recorder.Event(obj, corev1.EventTypeWarning, reason, msg)
	}
	return ctrl.Result{}, cause
}
