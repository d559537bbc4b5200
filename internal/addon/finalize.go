package addon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/memberships"
	"github.com/clever-operator/clever-operator/internal/patch"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/internal/status"
)

// finalize deletes the add-on before the resource (and, after it, the Helm release and the
// Secret) goes away. A 404 means already gone only once a call that only the real API answers
// confirms it (confirmGone). The live object is read first: a stale cached copy must not
// cause a second DELETE.
func (r *Reconciler) finalize(ctx context.Context, s *pass) error {
	if !controllerutil.ContainsFinalizer(s.obj, r.Kind.Finalizer()) {
		return nil
	}
	live := r.newObject()
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.obj), live); err != nil {
		return client.IgnoreNotFound(err)
	}
	s.reset(live)
	obj := s.obj
	if !controllerutil.ContainsFinalizer(obj, r.Kind.Finalizer()) {
		return nil
	}
	org := s.org
	addonID := s.st.Addon
	what := addonID
	if what == "" {
		what = "named " + r.Kind.AddonName(string(obj.GetUID())) + " (if it exists)"
	}

	if r.deletionPolicy(ctx, obj, &s.st, s.life) == kinds.DeletionPolicyOrphan {
		s.event(corev1.EventTypeNormal, status.EventAddonOrphaned,
			fmt.Sprintf("Deletion policy Orphan: add-on %s in organisation %s is kept at Clever Cloud", what, org))
		return r.release(ctx, s)
	}
	if obj.GetAnnotations()[kinds.AnnotationSkipDeprovision] == "true" {
		s.event(corev1.EventTypeWarning, status.EventAddonLeftBehind,
			fmt.Sprintf("Annotation %s=true: add-on %s in organisation %s was NOT deleted and is still billed; delete it at Clever Cloud if it is no longer needed", kinds.AnnotationSkipDeprovision, what, org))
		return r.release(ctx, s)
	}

	if addonID == "" && refusedBefore(s.conds) {
		// Its credentials refused it before it was deleted, and it never recorded an add-on:
		// the operator never called Clever Cloud for it, so there is nothing to look for.
		s.event(corev1.EventTypeWarning, status.EventAddonLeftBehind,
			fmt.Sprintf("Released without calling Clever Cloud: its credentials refused this resource (%s) and it never had an add-on", addonReadyReason(s.conds)))
		return r.release(ctx, s)
	}
	if err := r.connect(ctx, s); err != nil {
		return err
	}
	api := s.api
	if addonID != "" && s.st.Adopted && !r.bindingStillAllowed(s, addonID) {
		// deletionPolicy Delete on an add-on this resource bound but did not create, and
		// neither a claim of its namespace nor its credentials allow binding it (any more):
		// a resource never deletes an add-on it could not have bound.
		s.event(corev1.EventTypeWarning, status.EventAddonOrphaned, fmt.Sprintf(
			"Add-on %s in organisation %s was bound, not created, by this resource and binding it is not allowed for namespace %s: it is kept at Clever Cloud despite deletionPolicy Delete", addonID, org, obj.GetNamespace()))
		return r.release(ctx, s)
	}
	if addonID == "" && kinds.ValidOwnerID(org) {
		// Never recorded (crash after create, or created by another operator): look it up by
		// name so a paid add-on is not leaked silently. Only a list Clever Cloud answered
		// proves there is none: a 404 here proves nothing (wrong endpoint, proxy, incident)
		// unless the API confirms it does not know the organisation.
		list, err := api.ListAddons(ctx, org)
		if err != nil {
			if !clevercloud.IsNotFound(err) {
				return s.failDeleteAPI(err)
			}
			if gone, why := ownerUnknown(ctx, api); !gone {
				return s.deletionUnconfirmed(fmt.Sprintf("listing the add-ons of organisation %s answered 404, which does not prove that no add-on named %s exists (%s)", org, r.Kind.AddonName(string(obj.GetUID())), why))
			}
		}
		for _, a := range list {
			if a.AddonName() == r.Kind.AddonName(string(obj.GetUID())) {
				addonID = a.ID
				break
			}
		}
	}
	if addonID != "" && !s.st.Adopted {
		// Read before deleting: a resource restored from this one's backup (in this cluster or
		// another) may have taken the add-on over since (takeover.go); it is then kept.
		a, err := api.GetAddon(ctx, org, addonID)
		switch {
		case err == nil:
			if other := r.otherHolder(obj, a); other != "" {
				s.event(corev1.EventTypeWarning, status.EventAddonOrphaned, fmt.Sprintf(
					"Add-on %s was not deleted: %s", addonID, r.managedElsewhereMessage(a, other)))
				return r.release(ctx, s)
			}
		case !clevercloud.IsNotFound(err):
			return s.failDeleteAPI(err)
		}
	}
	if addonID != "" {
		// Leave its Network Groups first, as clever-tools unlinks members (404: not a member).
		if err := memberships.Leave(ctx, s, api); err != nil {
			return s.failDeleteAPI(err)
		}
		err := api.DeleteAddon(ctx, org, addonID)
		switch {
		case err == nil:
			// Any 2xx (the API answers 200 with a JSON message) is success.
		case clevercloud.IsNotFound(err):
			if gone, why := confirmGone(ctx, api, org, addonID); !gone {
				return s.deletionUnconfirmed(fmt.Sprintf("deleting add-on %s answered 404, but %s", addonID, why))
			}
		case deletionRefused(err):
			return s.deletionDeferred(addonID, err)
		default:
			return s.failDeleteAPI(err)
		}
		s.event(corev1.EventTypeNormal, status.EventAddonDeleted, fmt.Sprintf("Deleted managed %s instance %s on Clever Cloud", r.Kind.Noun, addonID))
	}
	return r.release(ctx, s)
}

// confirmGone decides whether a 404 on an add-on proves it is gone. Only an answer that the
// real API alone gives counts: the organisation's add-on list (200) without the add-on, or,
// when the list itself answers 404, GET /v2/self answering 200 (the API is reached and does
// not know the organisation, so nothing lives in it). why explains a refusal.
func confirmGone(ctx context.Context, api credentials.API, org, addonID string) (gone bool, why string) {
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
		return ownerUnknown(ctx, api)
	default:
		return false, "confirming it through the organisation's add-on list failed: " + clevercloud.Message(err)
	}
}

// ownerUnknown: the owner's add-on list answered 404; only GET /v2/self answering 200 shows
// that this is Clever Cloud saying it does not know the organisation.
func ownerUnknown(ctx context.Context, api credentials.API) (bool, string) {
	if _, err := api.Self(ctx); err != nil {
		return false, fmt.Sprintf("the organisation's add-on list answered 404 too and GET /v2/self failed (%s): the endpoint in use does not look like the Clever Cloud API", clevercloud.Message(err))
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
	return queue.GrowingDelay(waited, time.Second, 5*time.Minute)
}

func (s *pass) deletionWait() time.Duration {
	if ts := s.obj.GetDeletionTimestamp(); ts != nil {
		return deletionBackoff(s.now().Sub(ts.Time))
	}
	return deletionBackoff(0)
}

// deletionUnconfirmed keeps the finalizer after a 404 nothing confirmed, says so (condition
// DeletionUnconfirmed and a Warning event when the message changes) and tries again later.
func (s *pass) deletionUnconfirmed(msg string) error {
	msg += fmt.Sprintf("; the resource is kept (finalizer) and the deletion retried until Clever Cloud confirms (check the API endpoint; to release it without deleting the add-on, annotate it %s=true)", kinds.AnnotationSkipDeprovision)
	return s.deletionWaiting(status.ReasonDeletionUnconfirmed, msg)
}

// deletionDeferred: Clever Cloud refused the deletion for now (still provisioning).
func (s *pass) deletionDeferred(addonID string, err error) error {
	msg := fmt.Sprintf("Clever Cloud refused to delete add-on %s for now (%s); it is probably still being provisioned; retrying with a growing delay", addonID, clevercloud.Message(err))
	return s.deletionWaiting(status.ReasonDeletionDeferred, msg)
}

func (s *pass) deletionWaiting(reason, msg string) error {
	s.countError(reason)
	if s.condition(status.TypeAddonReady, metav1.ConditionFalse, reason, msg) {
		s.event(corev1.EventTypeWarning, reason, msg)
	}
	return stop(ctrl.Result{RequeueAfter: s.deletionWait()})
}

// release removes the source Secret (credentials must not outlive the add-on) and the
// finalizer; the Helm reconciler then uninstalls the release and the resource goes away.
// Nothing is written to the resource's status after that.
func (r *Reconciler) release(ctx context.Context, s *pass) error {
	if err := r.deleteSource(ctx, s.obj); err != nil {
		return err
	}
	if err := patch.RemoveFinalizer(ctx, r.Client, s.obj, r.Kind.Finalizer()); err != nil {
		return err
	}
	s.released = true
	if r.Metrics != nil && s.obj.GetDeletionTimestamp() != nil {
		r.Metrics.DeletionDuration.WithLabelValues(r.Kind.GVK.Kind).Observe(r.now().Sub(s.obj.GetDeletionTimestamp().Time).Seconds())
	}
	return nil
}

func (s *pass) failDeleteAPI(err error) error {
	if errors.Is(err, context.Canceled) {
		return stopRetry(err) // cancelled, not refused: nothing to report (see failAPI)
	}
	s.countError(status.ReasonDeleteFailed)
	return s.failDelete("deleting the add-on at Clever Cloud failed: "+clevercloud.Message(err), err)
}

// failDelete reports a deletion that cannot proceed (reason DeleteFailed) and how to release
// the resource anyway; the work queue retries with backoff.
func (s *pass) failDelete(msg string, cause error) error {
	msg += fmt.Sprintf(" (to release the resource without deleting the add-on, annotate it %s=true)", kinds.AnnotationSkipDeprovision)
	if s.condition(status.TypeAddonReady, metav1.ConditionFalse, status.ReasonDeleteFailed, msg) {
		s.event(corev1.EventTypeWarning, status.ReasonDeleteFailed, msg)
	}
	return stopRetry(cause)
}

// credentialsRefusals are the reasons connect reports a resource refused by its credentials.
var credentialsRefusals = map[string]bool{
	status.ReasonCredentialsNotFound:    true,
	status.ReasonCredentialsNotAllowed:  true,
	status.ReasonOrganisationNotAllowed: true,
}

func addonReadyReason(conds []status.Condition) string {
	c, _ := status.Find(conds, status.TypeAddonReady)
	return c.Reason
}

// refusedBefore: the resource's last pass was refused by its credentials (it never got
// past connect since, so no Clever Cloud call was made for it in that state).
func refusedBefore(conds []status.Condition) bool {
	return credentialsRefusals[addonReadyReason(conds)]
}
