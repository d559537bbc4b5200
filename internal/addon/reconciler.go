package addon

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Event reasons (Normal when something changed, Warning with the condition reason on failures).
const (
	EventAddonCreated       = "AddonCreated"
	EventAddonAdopted       = "AddonAdopted"
	EventAddonDeleted       = "AddonDeleted"
	EventAddonLeftBehind    = "AddonLeftBehind"
	EventAddonMissing       = "AddonMissing"
	EventCredentialsWritten = "CredentialsWritten"
	EventCredentialsUpdated = "CredentialsUpdated"
	EventVariablesPushed    = "VariablesPushed"
)

// Reconciler is the generic provisioning engine for one kind.
type Reconciler struct {
	Kind        *Kind
	Client      client.Client // the manager's (cached) client
	APIReader   client.Reader // live reads, used before any irreversible call
	Recorder    record.EventRecorder
	Credentials Credentials
	Plans       *PlanCache
	// ResyncPeriod is how often a Ready resource is read again at Clever Cloud (one call).
	ResyncPeriod time.Duration
	// MaxConcurrentReconciles defaults to 4.
	MaxConcurrentReconciles int
	Log                     logr.Logger
	Now                     func() time.Time

	observed sync.Map // types.UID -> time.Time of the last API observation
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) newObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.Kind.GVK)
	return u
}

// SetupWithManager registers the engine as controller "<kind>-addon". It reacts to spec
// (generation) and annotation changes, deletion, and deletion of its source Secret; status
// writes (its own and Helm's) do not wake it, so they cost no API calls.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.ResyncPeriod == 0 {
		r.ResyncPeriod = 10 * time.Minute
	}
	if r.MaxConcurrentReconciles == 0 {
		r.MaxConcurrentReconciles = 4
	}
	if r.Plans == nil {
		r.Plans = &PlanCache{}
	}
	sourceSecrets := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[LabelRole] == RoleSource && o.GetLabels()[LabelKind] == r.Kind.Lower()
	})
	onlyDeletes := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.Kind.Lower()+"-addon").
		For(r.newObject(), builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), r.newObject(), handler.OnlyControllerOwner()),
			builder.WithPredicates(sourceSecrets, onlyDeletes)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: r.MaxConcurrentReconciles,
			// Failed API calls back off per resource from 1 s to 10 min; no hot retry loop.
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, 10*time.Minute),
		}).
		Complete(r)
}

// Reconcile provisions, refreshes or deletes the add-on behind one resource.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	log := r.Log.WithValues(r.Kind.Lower(), req.NamespacedName)
	ctx = logr.NewContext(ctx, log)
	if obj.GetDeletionTimestamp() != nil {
		r.observed.Delete(obj.GetUID())
		return r.finalize(ctx, obj)
	}
	if err := r.ensureFinalizer(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	if wait, ok := r.upToDate(ctx, obj); ok {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	return r.provision(ctx, obj)
}

// upToDate is the no-call fast path: the spec generation was handled, the add-on is ready,
// its credentials are published and no periodic refresh is due.
func (r *Reconciler) upToDate(ctx context.Context, obj *unstructured.Unstructured) (time.Duration, bool) {
	addonID, _, _ := unstructured.NestedString(obj.Object, "status", "addon")
	og, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	a, _ := status.Find(status.Conditions(obj), status.TypeAddonReady)
	if addonID == "" || og != obj.GetGeneration() || a.Status != string(metav1.ConditionTrue) {
		return 0, false
	}
	src := &corev1.Secret{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Kind.SourceSecretName(obj.GetName())}, src); err != nil {
		return 0, false
	}
	last, seen := r.observed.Load(obj.GetUID())
	if !seen {
		// First sight after a (re)start: trust the published state, refresh one period later.
		r.observed.Store(obj.GetUID(), r.now())
		return r.jitter(r.ResyncPeriod), true
	}
	elapsed := r.now().Sub(last.(time.Time))
	if elapsed >= r.ResyncPeriod*9/10 {
		return 0, false
	}
	return r.jitter(r.ResyncPeriod - elapsed), true
}

func (r *Reconciler) jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Second
	}
	return d + time.Duration(rand.Int64N(int64(d/10)+1))
}

func (r *Reconciler) ensureFinalizer(ctx context.Context, obj *unstructured.Unstructured) error {
	if controllerutil.ContainsFinalizer(obj, r.Kind.Finalizer()) {
		return nil
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := r.newObject()
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
			return err
		}
		if live.GetDeletionTimestamp() != nil || !controllerutil.AddFinalizer(live, r.Kind.Finalizer()) {
			obj.SetFinalizers(live.GetFinalizers())
			return nil
		}
		if err := r.Client.Update(ctx, live); err != nil {
			return err
		}
		obj.SetFinalizers(live.GetFinalizers())
		obj.SetResourceVersion(live.GetResourceVersion())
		return nil
	})
}

// provision finds or creates the add-on, fetches its credentials into the source Secret and
// reports the result in status.
func (r *Reconciler) provision(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, error) {
	org, _, _ := unstructured.NestedString(obj.Object, "spec", "organisation")
	api, key, err := r.Credentials.For(ctx, obj.GetNamespace())
	if err != nil {
		return r.fail(ctx, obj, status.ReasonInvalidCredentials, fmt.Sprintf("no usable Clever Cloud credentials for namespace %s: %v", obj.GetNamespace(), err), nil)
	}
	region, err := r.Kind.Region(obj)
	if err != nil {
		return r.fail(ctx, obj, status.ReasonInvalidSpec, err.Error(), nil)
	}
	options, err := r.Kind.Options(obj)
	if err != nil {
		return r.fail(ctx, obj, status.ReasonInvalidSpec, err.Error(), nil)
	}
	plan := r.Kind.FixedPlan
	if r.Kind.PlanFromSpec() {
		plan, err = r.Plans.Resolve(ctx, api, key, r.Kind.ProviderID, r.Kind.SpecPlan(obj))
		if err != nil {
			var se *SpecError
			if errors.As(err, &se) {
				return r.fail(ctx, obj, status.ReasonPlanNotFound, se.Msg, nil)
			}
			return r.failAPI(ctx, obj, "resolving the plan", err)
		}
	}

	addon, err := r.findAddon(ctx, api, obj, org)
	if err != nil {
		return r.failAPI(ctx, obj, "looking up the add-on", err)
	}
	if addon == nil {
		if prev, _, _ := unstructured.NestedString(obj.Object, "status", "addon"); prev != "" {
			r.Recorder.Eventf(obj, corev1.EventTypeWarning, EventAddonMissing, "Add-on %s no longer exists at Clever Cloud; creating a new one", prev)
		}
		addon, err = api.CreateAddon(ctx, org, clevercloud.CreateOpts{
			Name: r.Kind.AddonName(string(obj.GetUID())), Region: region, ProviderID: r.Kind.ProviderID, Plan: plan, Options: options,
		})
		if err != nil {
			if clevercloud.IsBadRequest(err) {
				return r.fail(ctx, obj, status.ReasonInvalidSpec, "Clever Cloud refused to create the add-on: "+apiMessage(err), nil)
			}
			return r.failAPI(ctx, obj, "creating the add-on", err)
		}
		r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventAddonCreated, "Created managed %s instance %s on Clever Cloud", r.Kind.Noun, addon.ID)
	}
	// Persist the id at once: the name lookup would find it again, but this saves a list call.
	if err := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, addon.ID, "status", "addon")
		_ = unstructured.SetNestedField(u.Object, addon.Plan.ID, "status", "plan")
		_ = unstructured.SetNestedField(u.Object, SecretName(obj), "status", "secretName")
	}); err != nil {
		return ctrl.Result{}, err
	}

	data, pending, err := r.credentials(ctx, api, obj, org, addon)
	if err != nil {
		if clevercloud.IsNotFound(err) {
			// Deleted between the lookup and now: the next pass creates it again.
			return ctrl.Result{Requeue: true}, nil
		}
		return r.failAPI(ctx, obj, "reading the add-on's credentials", err)
	}
	if pending != "" {
		return r.pending(ctx, obj, addon, pending)
	}
	if err := r.writeSource(ctx, obj, addon, data); err != nil {
		return ctrl.Result{}, err
	}
	r.observed.Store(obj.GetUID(), r.now())
	msg := fmt.Sprintf("add-on %s is provisioned; credentials are in Secret %s", addon.ID, SecretName(obj))
	if err := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		for field, env := range r.Kind.URLStatus {
			if v := data[env]; v != "" {
				_ = unstructured.SetNestedField(u.Object, v, "status", field)
			}
		}
		_ = unstructured.SetNestedField(u.Object, obj.GetGeneration(), "status", "observedGeneration")
		setCondition(u, status.TypeAddonReady, metav1.ConditionTrue, status.ReasonProvisioned, msg, r.now())
	}); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.jitter(r.ResyncPeriod)}, nil
}

// findAddon looks the add-on up by the id in status, then by its deterministic name, so an
// add-on created by a pass that crashed before recording it (or by the Rust operator) is
// adopted instead of duplicated.
func (r *Reconciler) findAddon(ctx context.Context, api API, obj *unstructured.Unstructured, org string) (*clevercloud.Addon, error) {
	if id, _, _ := unstructured.NestedString(obj.Object, "status", "addon"); id != "" {
		a, err := api.GetAddon(ctx, org, id)
		if err == nil {
			return a, nil
		}
		if !clevercloud.IsNotFound(err) {
			return nil, err
		}
	}
	list, err := api.ListAddons(ctx, org)
	if err != nil {
		return nil, err
	}
	name := r.Kind.AddonName(string(obj.GetUID()))
	for i := range list {
		if list[i].AddonName() == name {
			r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventAddonAdopted, "Found existing add-on %s named %s; using it", list[i].ID, name)
			return &list[i], nil
		}
	}
	return nil, nil
}

// credentials returns the Secret data for the add-on. pending is non-empty while Clever Cloud
// has not published every variable yet.
func (r *Reconciler) credentials(ctx context.Context, api API, obj *unstructured.Unstructured, org string, addon *clevercloud.Addon) (map[string]string, string, error) {
	if r.Kind.ConfigProvider {
		want := r.Kind.Variables(obj)
		have, err := api.GetConfigProviderEnv(ctx, addon.RealID)
		if err != nil {
			return nil, "", err
		}
		if !sameVariables(have, want) {
			if _, err := api.PutConfigProviderEnv(ctx, addon.RealID, toVariables(want)); err != nil {
				return nil, "", err
			}
			r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventVariablesPushed, "Pushed %d variables to configuration provider %s", len(want), addon.ID)
		}
		return want, "", nil
	}
	env, err := api.GetAddonEnv(ctx, org, addon.ID)
	if err != nil {
		return nil, "", err
	}
	data := make(map[string]string, len(env))
	for _, e := range env {
		data[e.Name] = e.Value
	}
	missing := 0
	for _, k := range addon.ConfigKeys {
		if _, ok := data[k]; !ok {
			missing++
		}
	}
	if missing > 0 {
		return nil, fmt.Sprintf("waiting for Clever Cloud to provision add-on %s (%d of %d variables published)", addon.ID, len(addon.ConfigKeys)-missing, len(addon.ConfigKeys)), nil
	}
	return data, "", nil
}
