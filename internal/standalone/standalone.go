// Package standalone holds what the operator's Go-only controllers share (NetworkGroup,
// CellarBucket: kinds with no Helm release): their Ready and Stalled conditions, refusals and
// failures reported as conditions and Warning events, and one status write per pass through internal/patch.
package standalone

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/patch"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Reporter writes conditions and events of one resource.
type Reporter struct {
	Recorder record.EventRecorder
	Now      func() time.Time
}

func (r Reporter) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Ready sets Ready (and Stalled when stalled) and status.observedGeneration on obj.
func (r Reporter) Ready(obj *unstructured.Unstructured, s metav1.ConditionStatus, reason, msg string, stalled bool) {
	conds := status.Conditions(obj)
	conds, _ = status.Set(conds, status.Condition{Type: status.TypeReady, Status: string(s), Reason: reason, Message: msg, ObservedGeneration: obj.GetGeneration()}, r.now())
	if stalled {
		conds, _ = status.Set(conds, status.Condition{Type: status.TypeStalled, Status: string(metav1.ConditionTrue), Reason: reason, Message: msg, ObservedGeneration: obj.GetGeneration()}, r.now())
	} else {
		conds, _ = status.Remove(conds, status.TypeStalled)
	}
	status.SetConditions(obj, conds)
	_ = unstructured.SetNestedField(obj.Object, obj.GetGeneration(), "status", "observedGeneration")
}

// Refuse reports a refusal that waits for a change (Ready False, Stalled; a Warning event
// when it is new).
func (r Reporter) Refuse(obj *unstructured.Unstructured, reason, msg string) (ctrl.Result, error) {
	prev, _ := status.Find(status.Conditions(obj), status.TypeReady)
	r.Ready(obj, metav1.ConditionFalse, reason, msg, true)
	if prev.Reason != reason || prev.Message != msg {
		r.Recorder.Event(obj, corev1.EventTypeWarning, reason, msg)
	}
	return ctrl.Result{}, nil
}

// Wait reports a state that clears by itself (Ready False, not Stalled) and looks again after d.
func (r Reporter) Wait(obj *unstructured.Unstructured, reason, msg string, d time.Duration) (ctrl.Result, error) {
	prev, _ := status.Find(status.Conditions(obj), status.TypeReady)
	r.Ready(obj, metav1.ConditionFalse, reason, msg, false)
	if prev.Reason != reason || prev.Message != msg {
		r.Recorder.Event(obj, corev1.EventTypeWarning, reason, msg)
	}
	return ctrl.Result{RequeueAfter: d}, nil
}

// Fail reports a failed Clever Cloud call and lets the work queue back off (ErrTenantBusy
// passes through: no call was made).
func (r Reporter) Fail(obj *unstructured.Unstructured, what string, err error) (ctrl.Result, error) {
	if errors.Is(err, ErrTenantBusy) {
		return ctrl.Result{}, err
	}
	reason := status.ReasonAPIError
	if clevercloud.IsRetryable(err) {
		reason = status.ReasonAPIUnavailable
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return r.FailWith(obj, reason, what+": the Clever Cloud API endpoint did not answer in time (will retry): "+clevercloud.Message(err))
	}
	return r.FailWith(obj, reason, what+": "+clevercloud.Message(err))
}

// FailWith reports a failure (Ready False, a Warning event when the message is new) and lets
// the work queue back off.
func (r Reporter) FailWith(obj *unstructured.Unstructured, reason, msg string) (ctrl.Result, error) {
	prev, _ := status.Find(status.Conditions(obj), status.TypeReady)
	r.Ready(obj, metav1.ConditionFalse, reason, msg, false)
	if prev.Message != msg {
		r.Recorder.Event(obj, corev1.EventTypeWarning, reason, msg)
	}
	return ctrl.Result{}, fmt.Errorf("%s", msg)
}

// Tenants shares a controller's workers between tenants by the engine's rule (docs/security.md,
// "Fairness between tenants"): the passes whose credentials a namespace supplied, or whose
// endpoint is not the operator's (credentials.Grant.Tenant), hold at most half of the workers at
// once per tenant. The zero value is ready.
type Tenants struct {
	// Share overrides the share (0: half of ControllerOptions' workers, at least one;
	// negative: no limit).
	Share int
	slots queue.TenantSlots
}

func (t *Tenants) share() int {
	switch {
	case t.Share > 0:
		return t.Share
	case t.Share < 0:
		return 0
	}
	return max(1, ControllerOptions().MaxConcurrentReconciles/2)
}

// ErrTenantBusy ends a pass whose tenant holds its share of workers: Connect returns it before
// any call, the pass returns it as is (Reporter.Fail passes it through), and Run drops the
// pass's status changes and tries it again after queue.TenantJitter.
var ErrTenantBusy = errors.New("the credentials' share of workers is in use")

// slotKey is the context key of the pass's slot (Run puts it there, Connect takes it).
type slotKey struct{}

type slot struct {
	tenants *Tenants
	held    string
}

// Connect resolves obj's credentials as the add-on kinds do, checks they allow org, and takes
// a worker of their tenant's share for the rest of the pass (Run gives it back). When the
// credentials do not allow org, grant is nil and reason and msg say why (for a refusal); err
// is ErrTenantBusy when the share is in use.
func Connect(ctx context.Context, creds credentials.Credentials, obj *unstructured.Unstructured, org string) (grant *credentials.Grant, reason, msg string, err error) {
	g, err := credentials.Connect(ctx, creds, obj, org)
	if err != nil {
		if ref, ok := credentials.AsRefused(err); ok {
			return nil, ref.Reason, ref.Message, nil
		}
		return nil, status.ReasonInvalidCredentials, err.Error(), nil
	}
	if s, _ := ctx.Value(slotKey{}).(*slot); s != nil && s.tenants != nil && g.Tenant != "" && s.held == "" {
		if share := s.tenants.share(); share > 0 {
			if !s.tenants.slots.Acquire(g.Tenant, share) {
				return nil, "", "", ErrTenantBusy
			}
			s.held = g.Tenant
		}
	}
	return g, "", "", nil
}

// Str reads a string field.
func Str(u *unstructured.Unstructured, fields ...string) string {
	v, _, _ := unstructured.NestedString(u.Object, fields...)
	return v
}

// Backoff is a delay that grows with the time Ready has been in its current state: half
// that time, between lo and hi.
func (r Reporter) Backoff(obj *unstructured.Unstructured, lo, hi time.Duration) time.Duration {
	c, _ := status.Find(status.Conditions(obj), status.TypeReady)
	age, _ := c.Age(r.now())
	return queue.GrowingDelay(age, lo, hi)
}

// ForPredicates are the predicates of a standalone kind's own watch: a change of spec or
// annotations, of a resource within the --watch-selector (nil: all).
func ForPredicates(sel labels.Selector) []predicate.Predicate {
	preds := []predicate.Predicate{predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{})}
	if sel != nil && !sel.Empty() {
		preds = append(preds, predicate.NewPredicateFuncs(func(o client.Object) bool { return sel.Matches(labels.Set(o.GetLabels())) }))
	}
	return preds
}

// ControllerOptions: two workers; failed passes back off per resource from 1 s to 10 min.
func ControllerOptions() controller.Options {
	return controller.Options{
		MaxConcurrentReconciles: 2,
		RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, 10*time.Minute),
		NewQueue:                queue.New[reconcile.Request],
	}
}

// Run is one pass over the resource of gvk named by req: pass works on a copy and changes its
// status in memory, within queue.DefaultPassTimeout (a credentials' endpoint may never
// answer), holding a worker of its tenant's share from Connect on (tenants; nil: no share);
// the status is written once, at the end (not after the finalizer went), without that
// deadline. A pass over its tenant's share writes nothing and comes back in 1 to 2 s.
func Run(ctx context.Context, c client.Client, req ctrl.Request, gvk schema.GroupVersionKind, finalizer string, tenants *Tenants,
	pass func(context.Context, *unstructured.Unstructured) (ctrl.Result, error)) (ctrl.Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	h := patch.New(obj)
	sl := &slot{tenants: tenants}
	pctx, cancel := context.WithTimeout(context.WithValue(ctx, slotKey{}, sl), queue.DefaultPassTimeout)
	res, err := pass(pctx, obj)
	cancel()
	if sl.held != "" {
		tenants.slots.Release(sl.held)
	}
	if errors.Is(err, ErrTenantBusy) {
		ctrl.LoggerFrom(ctx).V(1).Info("waiting for a worker of its credentials' share")
		return ctrl.Result{RequeueAfter: queue.TenantJitter()}, nil
	}
	if queue.NamespaceTerminating(err) {
		// Its namespace is being deleted (and the resource with it, which wakes it).
		err = nil
	}
	if obj.GetDeletionTimestamp() != nil && !controllerutil.ContainsFinalizer(obj, finalizer) {
		return res, err // released
	}
	// The pass owns the status: a conflict replays it on the live resource.
	if _, werr := h.Commit(ctx, c, patch.Options[*unstructured.Unstructured]{Owned: true}); werr != nil && err == nil {
		return ctrl.Result{}, werr
	}
	return res, err
}

// EnsureFinalizer adds finalizer to obj (one write when it is missing).
func EnsureFinalizer(ctx context.Context, c client.Client, obj *unstructured.Unstructured, finalizer string) error {
	_, err := patch.AddFinalizer(ctx, c, c, obj, finalizer)
	return err
}

// Release removes finalizer from obj: the resource may go.
func Release(ctx context.Context, c client.Client, obj *unstructured.Unstructured, finalizer string) (ctrl.Result, error) {
	return ctrl.Result{}, patch.RemoveFinalizer(ctx, c, obj, finalizer)
}
