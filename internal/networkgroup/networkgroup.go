// Package networkgroup reconciles NetworkGroup resources: Clever Cloud Network Groups
// (issue #18 §3). The group's id is chosen by the operator and recorded in status before the
// group is asked for (the API takes the id from the client), so a pass that crashes or a
// retry never makes a second group; creation is asynchronous at Clever Cloud (every client
// polls until the group shows), and so is the resource's Ready. Add-ons join groups through
// their spec.networkGroups (internal/addon/networkgroups.go).
package networkgroup

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/internal/standalone"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Finalizer keeps a NetworkGroup until its group is deleted at Clever Cloud.
const Finalizer = kinds.Group + "/networkgroup"

// API is the Clever Cloud calls a NetworkGroup needs (*clevercloud.Client implements it).
type API interface {
	GetNetworkGroup(ctx context.Context, ownerID, id string) (*clevercloud.NetworkGroup, error)
	CreateNetworkGroup(ctx context.Context, ng clevercloud.NewNetworkGroup) error
	DeleteNetworkGroup(ctx context.Context, ownerID, id string) error
}

// Reconciler reconciles NetworkGroup resources.
type Reconciler struct {
	Client      client.Client
	Credentials credentials.Credentials
	Recorder    record.EventRecorder
	// Selector, when set, limits the controller to the resources it matches (--watch-selector).
	Selector     labels.Selector
	ResyncPeriod time.Duration
	Log          logr.Logger
	// Now and NewID are the clock and the id generator (tests).
	Now   func() time.Time
	NewID func() string

	wake    chan event.TypedGenericEvent[*unstructured.Unstructured]
	tenants standalone.Tenants
}

// Wake asks for a pass over the NetworkGroup namespace/name soon (an add-on joined or left
// it: its status.members is read again). It never blocks.
func (r *Reconciler) Wake(namespace, name string) {
	if r == nil || r.wake == nil {
		return
	}
	u := newObject()
	u.SetNamespace(namespace)
	u.SetName(name)
	select {
	case r.wake <- event.TypedGenericEvent[*unstructured.Unstructured]{Object: u}:
	default: // full: the resync reads the members anyway
	}
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) newID() string {
	if r.NewID != nil {
		return r.NewID()
	}
	return "ng_" + uuid.NewString()
}

func newObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kinds.NetworkGroupGVK)
	return u
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.ResyncPeriod == 0 {
		r.ResyncPeriod = queue.DefaultResyncPeriod
	}
	r.wake = make(chan event.TypedGenericEvent[*unstructured.Unstructured], 256)
	return ctrl.NewControllerManagedBy(mgr).
		Named("networkgroup").
		For(newObject(), builder.WithPredicates(standalone.ForPredicates(r.Selector)...)).
		WatchesRawSource(source.Channel(r.wake, &handler.TypedEnqueueRequestForObject[*unstructured.Unstructured]{})).
		WithOptions(standalone.ControllerOptions()).
		Complete(r)
}

// Reconcile creates, observes or deletes one Network Group.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return standalone.Run(ctx, r.Client, req, kinds.NetworkGroupGVK, Finalizer, &r.tenants, r.reconcile)
}

func (r *Reconciler) report() standalone.Reporter {
	return standalone.Reporter{Recorder: r.Recorder, Now: r.Now}
}

// connect resolves the resource's credentials as the add-on kinds do (err:
// standalone.ErrTenantBusy, which the pass returns as is).
func (r *Reconciler) connect(ctx context.Context, obj *unstructured.Unstructured, org string) (api API, reason, msg string, err error) {
	g, reason, msg, err := standalone.Connect(ctx, r.Credentials, obj, org)
	if g == nil {
		return nil, reason, msg, err
	}
	api, ok := g.API.(API)
	if !ok {
		return nil, status.ReasonInvalidCredentials, "the Clever Cloud client in use has no Network Group calls", nil
	}
	return api, "", "", nil
}

func (r *Reconciler) reconcile(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, error) {
	if obj.GetDeletionTimestamp() != nil {
		return r.finalize(ctx, obj)
	}
	if err := standalone.EnsureFinalizer(ctx, r.Client, obj, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	org := standalone.Str(obj, "spec", "organisation")
	if !kinds.ValidOwnerID(org) {
		return r.report().Refuse(obj, status.ReasonInvalidSpec, fmt.Sprintf("spec.organisation %q is not a Clever Cloud organisation id (orga_<uuid>) or user id (user_<uuid>)", org))
	}
	api, reason, msg, err := r.connect(ctx, obj, org)
	if err != nil {
		return ctrl.Result{}, err
	}
	if api == nil {
		return r.report().Refuse(obj, reason, msg)
	}
	id := standalone.Str(obj, "status", "id")
	if id == "" {
		// Recorded first: the POST carries it, and every later pass looks it up.
		id = r.newID()
		_ = unstructured.SetNestedField(obj.Object, id, "status", "id")
		r.report().Ready(obj, metav1.ConditionFalse, status.ReasonCreating, fmt.Sprintf("creating Network Group %s in organisation %s", id, org), false)
		return ctrl.Result{Requeue: true}, nil
	}
	ng, err := api.GetNetworkGroup(ctx, org, id)
	switch {
	case clevercloud.IsNotFound(err):
		prev, _ := status.Find(status.Conditions(obj), status.TypeReady)
		if prev.Reason == status.ReasonAvailable {
			r.Recorder.Event(obj, corev1.EventTypeWarning, status.ReasonNetworkGroupMissing, fmt.Sprintf("Network Group %s was deleted outside the operator; creating it again", id))
		}
		err := api.CreateNetworkGroup(ctx, clevercloud.NewNetworkGroup{ID: id, OwnerID: org, Label: label(obj),
			Description: standalone.Str(obj, "spec", "description"), Tags: tags(obj)})
		if err != nil && !clevercloud.IsConflict(err) {
			if clevercloud.IsBadRequest(err) {
				return r.report().Refuse(obj, status.ReasonInvalidSpec, "Clever Cloud refused the Network Group: "+clevercloud.Message(err))
			}
			return r.report().Fail(obj, "creating Network Group "+id, err)
		}
		r.report().Ready(obj, metav1.ConditionFalse, status.ReasonCreating, fmt.Sprintf("Clever Cloud is creating Network Group %s in organisation %s", id, org), false)
		return ctrl.Result{RequeueAfter: r.creatingBackoff(obj)}, nil
	case err != nil:
		return r.report().Fail(obj, "reading Network Group "+id, err)
	}
	prev, _ := status.Find(status.Conditions(obj), status.TypeReady)
	if prev.Reason == status.ReasonCreating {
		r.Recorder.Event(obj, corev1.EventTypeNormal, status.EventNetworkGroupCreated, fmt.Sprintf("Created Network Group %s (%s) in organisation %s", id, ng.Label, org))
	}
	members := make([]any, 0, len(ng.Members))
	for _, m := range ng.Members {
		e := map[string]any{"id": m.ID, "kind": m.Kind}
		if m.DomainName != "" {
			e["domainName"] = m.DomainName
		}
		if m.Label != "" {
			e["label"] = m.Label
		}
		members = append(members, e)
	}
	if len(members) > 0 {
		_ = unstructured.SetNestedSlice(obj.Object, members, "status", "members")
	} else {
		unstructured.RemoveNestedField(obj.Object, "status", "members")
	}
	if ng.NetworkIP != "" {
		_ = unstructured.SetNestedField(obj.Object, ng.NetworkIP, "status", "network")
	}
	if len(ng.Peers) > 0 {
		_ = unstructured.SetNestedField(obj.Object, int64(len(ng.Peers)), "status", "peers")
	} else {
		unstructured.RemoveNestedField(obj.Object, "status", "peers")
	}
	r.report().Ready(obj, metav1.ConditionTrue, status.ReasonAvailable, fmt.Sprintf("Network Group %s exists in organisation %s with %d member(s)", id, org, len(ng.Members)), false)
	return ctrl.Result{RequeueAfter: queue.Jitter(r.ResyncPeriod)}, nil
}

// creatingBackoff: 1 s, growing with the time the group has been Creating, up to 1 min.
func (r *Reconciler) creatingBackoff(obj *unstructured.Unstructured) time.Duration {
	return r.report().Backoff(obj, time.Second, time.Minute)
}

func label(obj *unstructured.Unstructured) string {
	if l := standalone.Str(obj, "spec", "label"); l != "" {
		return l
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

func tags(obj *unstructured.Unstructured) []string {
	t, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "tags")
	return t
}

func (r *Reconciler) finalize(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return ctrl.Result{}, nil
	}
	id, org := standalone.Str(obj, "status", "id"), standalone.Str(obj, "spec", "organisation")
	switch {
	case id == "":
	case standalone.Str(obj, "spec", "deletionPolicy") == "Orphan":
		r.Recorder.Event(obj, corev1.EventTypeNormal, status.EventNetworkGroupOrphaned, fmt.Sprintf("Deletion policy Orphan: Network Group %s in organisation %s is kept at Clever Cloud", id, org))
	case obj.GetAnnotations()[kinds.AnnotationSkipDeprovision] == "true":
		r.Recorder.Event(obj, corev1.EventTypeNormal, status.EventNetworkGroupOrphaned, fmt.Sprintf("Annotation %s: Network Group %s in organisation %s is kept at Clever Cloud", kinds.AnnotationSkipDeprovision, id, org))
	default:
		api, reason, msg, err := r.connect(ctx, obj, org)
		if err != nil {
			return ctrl.Result{}, err
		}
		if api == nil {
			return r.report().Refuse(obj, reason, msg+fmt.Sprintf("; the resource is kept (finalizer) until its credentials allow deleting the group (to release it without deleting the group, annotate it %s=true)", kinds.AnnotationSkipDeprovision))
		}
		if err := api.DeleteNetworkGroup(ctx, org, id); err != nil && !clevercloud.IsNotFound(err) {
			return r.report().Fail(obj, "deleting Network Group "+id, err)
		}
		r.Recorder.Event(obj, corev1.EventTypeNormal, status.EventNetworkGroupDeleted, fmt.Sprintf("Deleted Network Group %s in organisation %s", id, org))
	}
	return standalone.Release(ctx, r.Client, obj, Finalizer)
}
