package addon

import (
	"context"
	"fmt"

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
// Secret) goes away. 404 means already gone. The live object is read first: a stale cached
// copy must not cause a second DELETE.
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
		// name so a paid add-on is not leaked silently. (Nothing can exist in an organisation
		// whose id is malformed, or that Clever Cloud does not know: 404.)
		list, err := api.ListAddons(ctx, org)
		if err != nil && !clevercloud.IsNotFound(err) {
			return r.failDeleteAPI(ctx, obj, err)
		}
		for _, a := range list {
			if a.AddonName() == r.Kind.AddonName(string(obj.GetUID())) {
				addonID = a.ID
				break
			}
		}
	}
	if addonID != "" {
		if err := api.DeleteAddon(ctx, org, addonID); err != nil && !clevercloud.IsNotFound(err) {
			return r.failDeleteAPI(ctx, obj, err)
		}
		r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventAddonDeleted, "Deleted managed %s instance %s on Clever Cloud", r.Kind.Noun, addonID)
	}
	return r.release(ctx, obj)
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
