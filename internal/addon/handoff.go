package addon

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// openHandoff opens a handoff before the pass writes the source Secret, when that write is
// the resource's first publication: no source Secret yet (the Helm side is held until it
// exists, then installs and writes status), no pause (a paused Helm side renders nothing),
// Helm's Deployed not True, and no handoff of an earlier pass pending.
func (r *Reconciler) openHandoff(ctx context.Context, s *pass) {
	if r.Handoff == nil || s.handoffOpen || s.overlay != nil || s.life.paused || s.syncPause || s.obj.GetDeletionTimestamp() != nil {
		return
	}
	if d, ok := status.Find(s.conds, status.TypeDeployed); ok && d.Status == string(metav1.ConditionTrue) {
		return
	}
	src := &corev1.Secret{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: s.obj.GetNamespace(), Name: r.Kind.SourceSecretName(s.obj.GetName())}, src)
	if !apierrors.IsNotFound(err) {
		return
	}
	s.handoffOpen = r.Handoff.Open(s.obj.GetUID())
}

// handOff marks a pass that published with an open handoff: commit fills it instead of
// writing (reconcileObject then brings the next pass forward to its deadline).
func (s *pass) handOff() {
	if !s.handoffOpen {
		return
	}
	s.handingOff = true
}

// requeueForHandoff brings the resource's next pass forward to when a handoff it still holds
// is due, so the status lands even if the Helm side never writes.
func (r *Reconciler) requeueForHandoff(uid types.UID, res ctrl.Result) ctrl.Result {
	if r.Handoff == nil || res.Requeue && res.RequeueAfter == 0 {
		return res
	}
	if d, ok := r.Handoff.DueIn(uid); ok && (res.RequeueAfter <= 0 || res.RequeueAfter > d) {
		res.RequeueAfter = d
	}
	return res
}

// takeHandedOff, at the start of a pass, applies a handoff of an earlier pass that the Helm
// side has not written yet: as written while its deadline has not passed (plan sees the
// published state; a write of this pass carries it), else as this pass's own changes, which
// commit writes.
func (r *Reconciler) takeHandedOff(s *pass) {
	if r.Handoff == nil {
		return
	}
	changes, due := r.Handoff.Pending(s.obj.GetUID(), s.obj.GetResourceVersion())
	if changes == nil {
		return
	}
	defer func() { s.st, s.conds = kinds.StatusOf(s.obj), status.Conditions(s.obj) }() // they change the conditions and the typed status
	if due {
		s.log.V(1).Info("the Helm side has not written the handed-off status; writing it")
		for _, c := range changes {
			s.set(c)
		}
		return
	}
	for _, c := range changes {
		c(s.obj)
		c(s.base)
	}
	s.overlay = changes
}
