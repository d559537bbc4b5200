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
	"k8s.io/apimachinery/pkg/labels"
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
	// Selector, when set, limits the engine to the resources it matches (the watches.yaml
	// entry's selector, which the Helm side applies too).
	Selector labels.Selector
	// DefaultDeletionPolicy is "Delete" (default) or "Orphan" for resources that set none.
	DefaultDeletionPolicy string
	// OnAddonMissing is "recreate" (default) or "report": what to do when the add-on was
	// deleted out of band.
	OnAddonMissing string
	// Metrics, when set, records time-to-ready, deletion durations and errors.
	Metrics *Metrics
	// MaxConcurrentReconciles defaults to 4.
	MaxConcurrentReconciles int
	Log                     logr.Logger
	Now                     func() time.Time

	observed  sync.Map // types.UID -> time.Time of the last API observation
	refreshes sync.Map // types.UID -> *int, periodic refreshes done (alternating reads)
	// operatorInfo carries an operator add-on's v4 answer from credentials to publish.
	operatorInfo sync.Map // types.UID -> *clevercloud.OperatorInfo
	// fresh holds the resources this process put the finalizer on: no operator had touched
	// them before, so nothing left by the Rust operator can exist for them. Lost on restart,
	// when the live checks run again.
	fresh sync.Map // types.UID -> struct{}
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
		r.ResyncPeriod = DefaultResyncPeriod
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
	forPreds := []predicate.Predicate{predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{})}
	if r.Selector != nil && !r.Selector.Empty() {
		sel := r.Selector
		forPreds = append(forPreds, predicate.NewPredicateFuncs(func(o client.Object) bool { return sel.Matches(labels.Set(o.GetLabels())) }))
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.Kind.Lower()+"-addon").
		For(r.newObject(), builder.WithPredicates(forPreds...)).
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
		r.refreshes.Delete(obj.GetUID())
		r.fresh.Delete(obj.GetUID())
		return r.finalize(ctx, obj)
	}
	added, err := r.ensureFinalizer(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if added {
		r.fresh.Store(obj.GetUID(), struct{}{})
		ctx = context.WithValue(ctx, firstPassKey{}, true)
	}
	if pausedChanged(obj) {
		if err := r.updateStatus(ctx, obj, func(*unstructured.Unstructured) {}); err != nil {
			return ctrl.Result{}, err
		}
	}
	if rotationRequested(obj) {
		if res, done, err := r.rotate(ctx, obj); done || err != nil {
			return res, err
		}
	}
	switch mode, wait := r.plan(ctx, obj); mode {
	case upToDate:
		if rolloutDue(obj) {
			return r.rollout(ctx, obj)
		}
		return ctrl.Result{RequeueAfter: wait}, nil
	case refreshDue:
		if res, done, err := r.refresh(ctx, obj); done {
			return res, err
		}
	}
	return r.provision(ctx, obj)
}

type passMode int

const (
	upToDate   passMode = iota // nothing to do: no API call
	refreshDue                 // periodic refresh: one API call
	fullPass                   // find or create, then publish
)

// plan decides how much work a pass needs. upToDate when the spec generation was handled, the
// add-on is ready, its credentials are published and no periodic refresh is due; refreshDue
// when only the period elapsed.
func (r *Reconciler) plan(ctx context.Context, obj *unstructured.Unstructured) (passMode, time.Duration) {
	addonID, _, _ := unstructured.NestedString(obj.Object, "status", "addon")
	og, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	a, _ := status.Find(status.Conditions(obj), status.TypeAddonReady)
	if addonID == "" || og != obj.GetGeneration() || a.Status != string(metav1.ConditionTrue) || operatorActionsPending(r.Kind, obj) {
		return fullPass, 0
	}
	src := &corev1.Secret{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Kind.SourceSecretName(obj.GetName())}, src); err != nil {
		return fullPass, 0
	}
	if requested := obj.GetAnnotations()[AnnotationReconcileRequestedAt]; requested != "" {
		if handled, _, _ := unstructured.NestedString(obj.Object, "status", "lastHandledReconcileAt"); handled != requested {
			return refreshDue, 0
		}
	}
	period := r.resyncPeriod(obj)
	last, seen := r.observed.Load(obj.GetUID())
	if !seen {
		// First sight after a (re)start: trust the published state, refresh one period later.
		r.observed.Store(obj.GetUID(), r.now())
		return upToDate, r.jitter(period)
	}
	elapsed := r.now().Sub(last.(time.Time))
	if elapsed >= period*9/10 {
		return refreshDue, 0
	}
	return upToDate, r.jitter(period - elapsed)
}

func (r *Reconciler) jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Second
	}
	return d + time.Duration(rand.Int64N(int64(d/10)+1))
}

// firstPassKey marks the context of the pass that put the finalizer on the resource: no
// operator (this one, or the Rust operator, which uses the same finalizer) has worked on it
// before, so no add-on can carry its name yet and the name lookup is skipped.
type firstPassKey struct{}

func isFirstPass(ctx context.Context) bool {
	v, _ := ctx.Value(firstPassKey{}).(bool)
	return v
}

// DefaultResyncPeriod is how often a Ready add-on is read again when --resync-period is not set.
const DefaultResyncPeriod = 10 * time.Minute

// HelmUninstallFinalizer is the finalizer helm-operator-plugins puts on a resource before its
// first install (it uninstalls the release on deletion).
const HelmUninstallFinalizer = "uninstall-helm-release"

// ensureFinalizer adds the engine's finalizer; added reports that the live resource did not
// carry it (read live, so a stale cache never makes a resource look new). The Helm side's
// finalizer goes in the same write: otherwise both sides update the new resource at the same
// moment, one of them fails on a conflict, and every write starts another round of both.
func (r *Reconciler) ensureFinalizer(ctx context.Context, obj *unstructured.Unstructured) (added bool, err error) {
	if controllerutil.ContainsFinalizer(obj, r.Kind.Finalizer()) {
		return false, nil
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := r.newObject()
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
			return err
		}
		if live.GetDeletionTimestamp() != nil || !controllerutil.AddFinalizer(live, r.Kind.Finalizer()) {
			obj.SetFinalizers(live.GetFinalizers())
			return nil
		}
		controllerutil.AddFinalizer(live, HelmUninstallFinalizer)
		if err := r.Client.Update(ctx, live); err != nil {
			return err
		}
		added = true
		obj.SetFinalizers(live.GetFinalizers())
		obj.SetResourceVersion(live.GetResourceVersion())
		return nil
	})
	return added, err
}

// provision finds or creates the add-on, fetches its credentials into the source Secret and
// reports the result in status.
func (r *Reconciler) provision(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, error) {
	org, _, _ := unstructured.NestedString(obj.Object, "spec", "organisation")
	if !ValidOwnerID(org) {
		return r.fail(ctx, obj, status.ReasonInvalidSpec, fmt.Sprintf("spec.organisation %q is not a Clever Cloud organisation id (orga_<uuid>) or user id (user_<uuid>)", org), nil)
	}
	api, key, err := r.Credentials.For(ctx, obj.GetNamespace())
	if err != nil {
		// Retried with backoff: fixing the namespace's Secret is picked up without a touch.
		return r.fail(ctx, obj, status.ReasonInvalidCredentials, fmt.Sprintf("no usable Clever Cloud credentials for namespace %s: %v", obj.GetNamespace(), err), err)
	}
	l := lifecycleOf(obj)
	created := false
	sentVersion := ""
	addon, adopted, err := r.findAddon(ctx, api, obj, org, l)
	if err != nil {
		if clevercloud.IsNotFound(err) && l.bindID != "" {
			return r.fail(ctx, obj, status.ReasonAddonNotFound, fmt.Sprintf("add-on %s (spec.addonId or the %s annotation) does not exist in organisation %s", l.bindID, AnnotationAddonID, org), nil)
		}
		return r.failAPI(ctx, obj, "looking up the add-on", err)
	}
	if addon == nil {
		prev, _, _ := unstructured.NestedString(obj.Object, "status", "addon")
		switch {
		case l.observeOnly:
			return r.fail(ctx, obj, status.ReasonAddonNotFound, fmt.Sprintf("managementPolicy ObserveOnly: no add-on named %s in organisation %s to observe; set spec.addonId", r.Kind.AddonName(string(obj.GetUID())), org), nil)
		case prev != "" && r.onMissing(l) == OnMissingReport:
			return r.fail(ctx, obj, status.ReasonAddonMissing, fmt.Sprintf("add-on %s was deleted outside the operator; delete this resource, or annotate it %s=recreate to create a new add-on", prev, AnnotationOnAddonMissing), nil)
		case l.paused:
			return ctrl.Result{RequeueAfter: r.jitter(r.resyncPeriod(obj))}, r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
				setCondition(u, status.TypeAddonReady, metav1.ConditionFalse, status.ReasonPauseRequested, "creating the add-on is paused (annotation "+AnnotationPaused+")", r.now())
			})
		}
		if addon, sentVersion, err = r.create(ctx, api, key, obj, org); addon == nil {
			return ctrl.Result{RequeueAfter: r.jitter(r.ResyncPeriod)}, err
		}
		created = true
	}
	// Record the id in status. For an add-on created in this pass it goes with the pass's next
	// status write (pending, published or failed) instead of a write of its own: a pass that
	// dies before that write leaves a resource whose next pass finds the add-on by name.
	recordAddon := func(u *unstructured.Unstructured) {
		if adopted {
			_ = unstructured.SetNestedField(u.Object, true, "status", "adopted")
		}
		_ = unstructured.SetNestedField(u.Object, addon.ID, "status", "addon")
		_ = unstructured.SetNestedField(u.Object, addon.Plan.ID, "status", "plan")
		setOrRemove(u, r.Kind.PublicationFor(obj).SecretName, "status", "secretName")
		if created && sentVersion != "" && r.Kind.Operator == "" {
			_ = unstructured.SetNestedField(u.Object, sentVersion, "status", "version")
		}
	}
	if created {
		ctx = context.WithValue(ctx, statusExtraKey{}, recordAddon)
	} else if err := r.updateStatus(ctx, obj, recordAddon); err != nil {
		return ctrl.Result{}, err
	}
	if !created && r.Kind.Migrations && !l.observeOnly {
		if res, handled, err := r.migrate(ctx, api, key, obj, org, addon); handled || err != nil {
			return res, err
		}
	}
	if !created && r.Kind.Operator != "" && !l.observeOnly && !l.paused {
		if res, handled, err := r.operatorActions(ctx, api, obj, addon); handled || err != nil {
			return res, err
		}
	}

	data, pending, err := r.credentials(ctx, api, obj, org, addon.ID, addon.RealID, addon.ConfigKeys, created)
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
	return r.publish(ctx, obj, addon.ID, addon.RealID, data)
}

// create resolves the plan (only needed here: an existing add-on is used as it is) and creates
// the add-on. On failure it returns a nil add-on and the result of reporting the failure.
// version is the version it asked for ("" when none).
func (r *Reconciler) create(ctx context.Context, api API, key string, obj *unstructured.Unstructured, org string) (*clevercloud.Addon, string, error) {
	report := func(res ctrl.Result, err error) (*clevercloud.Addon, string, error) { return nil, "", err }
	region, err := r.Kind.Region(obj)
	if err != nil {
		return report(r.fail(ctx, obj, status.ReasonInvalidSpec, err.Error(), nil))
	}
	if _, err := r.Kind.Options(obj); err != nil {
		return report(r.fail(ctx, obj, status.ReasonInvalidSpec, err.Error(), nil))
	}
	plan := r.Kind.FixedPlan
	if r.Kind.PlanFromSpec() {
		plan, err = r.Plans.Resolve(ctx, api, key, org, r.Kind.ProviderID, r.Kind.SpecPlan(obj))
		if err != nil {
			var se *SpecError
			if errors.As(err, &se) {
				return report(r.fail(ctx, obj, status.ReasonPlanNotFound, se.Msg, nil))
			}
			return report(r.failAPI(ctx, obj, "resolving the plan", err))
		}
	}
	options, err := r.options(ctx, api, key, org, obj, plan)
	if err != nil {
		var se *SpecError
		if errors.As(err, &se) {
			return report(r.fail(ctx, obj, specErrorReason(se, status.ReasonInvalidSpec), se.Msg, nil))
		}
		return report(r.failAPI(ctx, obj, "reading the provider's versions", err))
	}
	if prev, _, _ := unstructured.NestedString(obj.Object, "status", "addon"); prev != "" {
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, EventAddonMissing, "Add-on %s no longer exists at Clever Cloud; creating a new one", prev)
	}
	addon, err := api.CreateAddon(ctx, org, clevercloud.CreateOpts{
		Name: r.Kind.AddonName(string(obj.GetUID())), Region: region, ProviderID: r.Kind.ProviderID, Plan: plan, Options: options,
	})
	if err != nil {
		if clevercloud.IsBadRequest(err) {
			return report(r.fail(ctx, obj, status.ReasonInvalidSpec, "Clever Cloud refused to create the add-on: "+apiMessage(err), nil))
		}
		// A create whose answer was lost (timeout, broken connection, 5xx) may have made the
		// add-on: the next pass is not a first pass, so it looks the add-on up by name
		// before creating again (findAddon), and never makes a second one.
		return report(r.failAPI(ctx, obj, "creating the add-on", err))
	}
	r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventAddonCreated, "Created managed %s instance %s on Clever Cloud", r.Kind.Noun, addon.ID)
	return addon, options.Version, nil
}

// refresh is the periodic check of a Ready resource: one API call (the add-on's env) detects
// changed credentials and an add-on deleted out of band. done is false when a full pass is
// needed (the add-on is gone, or the published state is incomplete).
func (r *Reconciler) refresh(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, bool, error) {
	src := &corev1.Secret{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Kind.SourceSecretName(obj.GetName())}, src); err != nil {
		return ctrl.Result{}, false, nil
	}
	addonID, realID := src.Annotations[AnnotationAddonID], src.Annotations[AnnotationRealID]
	if addonID == "" || (r.Kind.ConfigProvider && realID == "") {
		return ctrl.Result{}, false, nil
	}
	org, _, _ := unstructured.NestedString(obj.Object, "spec", "organisation")
	api, key, err := r.Credentials.For(ctx, obj.GetNamespace())
	if err != nil {
		res, err := r.fail(ctx, obj, status.ReasonInvalidCredentials, fmt.Sprintf("no usable Clever Cloud credentials for namespace %s: %v", obj.GetNamespace(), err), err)
		return res, true, err
	}
	requested := obj.GetAnnotations()[AnnotationReconcileRequestedAt]
	handled, _, _ := unstructured.NestedString(obj.Object, "status", "lastHandledReconcileAt")
	forced := requested != "" && requested != handled
	if n := r.countRefresh(obj); n%2 == 1 && !forced {
		// Every other period reads the add-on itself instead of its env (still one call):
		// an add-on deleted out of band, or whose plan or region changed, is seen too.
		a, err := api.GetAddon(ctx, org, addonID)
		switch {
		case clevercloud.IsNotFound(err):
			return ctrl.Result{}, false, nil
		case err != nil:
			res, err := r.failAPI(ctx, obj, "refreshing the add-on", err)
			return res, true, err
		}
		r.observed.Store(obj.GetUID(), r.now())
		if err := r.updateStatus(ctx, obj, clearTransient); err != nil {
			return ctrl.Result{}, true, err
		}
		return ctrl.Result{RequeueAfter: r.jitter(r.resyncPeriod(obj))}, true, r.reportDrift(ctx, obj, r.addonDrift(obj, a))
	}
	data, pending, err := r.credentials(ctx, api, obj, org, addonID, realID, nil, false)
	switch {
	case clevercloud.IsNotFound(err):
		return ctrl.Result{}, false, nil
	case err != nil:
		res, err := r.failAPI(ctx, obj, "refreshing the add-on's credentials", err)
		return res, true, err
	case pending != "":
		return ctrl.Result{}, false, nil
	}
	var d *drift
	if r.Kind.VersionCode != nil {
		// Operator add-ons report their version in status instead.
		d = r.versionDrift(obj, data)
	}
	if d != nil && r.sharedPlanApplied(ctx, api, key, obj) {
		// Shared (DEV, free) plans run the cluster's version, whatever the spec says: never a
		// VersionDrift for them. (Asked only when a drift is seen: the steady state costs no
		// catalogue read.)
		d = nil
	}
	if err := r.reportDrift(ctx, obj, d); err != nil {
		return ctrl.Result{}, true, err
	}
	res, err := r.publish(ctx, obj, addonID, realID, data)
	return res, true, err
}

// publish writes the source Secret and reports the add-on ready, with where its credentials
// are published (spec.secret), and restarts opted-in workloads when they changed.
func (r *Reconciler) publish(ctx context.Context, obj *unstructured.Unstructured, addonID, realID string, data map[string]string) (ctrl.Result, error) {
	if err := r.adoptLegacySecret(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeSource(ctx, obj, addonID, realID, data); err != nil {
		return r.failWrite(ctx, obj, err)
	}
	r.observed.Store(obj.GetUID(), r.now())
	p := r.Kind.PublicationFor(obj)
	if _, err := RenderTemplates(p.Templates, data); err != nil {
		// The Helm side refuses the same templates, so the published Secret stays as it was.
		return r.fail(ctx, obj, status.ReasonSecretTemplateInvalid, err.Error(), nil)
	}
	if prev, _ := status.Find(status.Conditions(obj), status.TypeAddonReady); prev.Status != string(metav1.ConditionTrue) && r.Metrics != nil {
		if og, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration"); og == 0 || obj.GetGeneration() == 1 {
			r.Metrics.TimeToReady.WithLabelValues(r.Kind.GVK.Kind).Observe(r.now().Sub(obj.GetCreationTimestamp().Time).Seconds())
		}
	}
	msg := fmt.Sprintf("add-on %s is provisioned; credentials are in Secret %s", addonID, p.SecretName)
	if p.Disabled {
		msg = fmt.Sprintf("add-on %s is provisioned; no credentials Secret is published (spec.secret.disabled)", addonID)
	}
	hash := CredentialsHash(data)
	info := r.takeOperatorInfo(obj)
	if err := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		setOperatorStatus(u, info)
		for field, env := range r.Kind.URLStatus {
			if v := data[env]; v != "" {
				_ = unstructured.SetNestedField(u.Object, v, "status", field)
			}
		}
		setOrRemove(u, p.SecretName, "status", "secretName")
		setOrRemove(u, p.ConfigMapName, "status", "configMapName")
		if p.BindingName != "" {
			_ = unstructured.SetNestedField(u.Object, p.BindingName, "status", "binding", "name")
		} else {
			unstructured.RemoveNestedField(u.Object, "status", "binding")
		}
		recordCredentials(u, hash, r.now())
		unstructured.RemoveNestedField(u.Object, "status", "credentials", "revokedKeyHash")
		_ = unstructured.SetNestedField(u.Object, obj.GetGeneration(), "status", "observedGeneration")
		if requested := obj.GetAnnotations()[AnnotationReconcileRequestedAt]; requested != "" {
			_ = unstructured.SetNestedField(u.Object, requested, "status", "lastHandledReconcileAt")
		}
		setCondition(u, status.TypeAddonReady, metav1.ConditionTrue, status.ReasonProvisioned, msg, r.now())
		clearTransient(u)
	}); err != nil {
		return ctrl.Result{}, err
	}
	if rolloutDue(obj) {
		return r.rollout(ctx, obj)
	}
	return ctrl.Result{RequeueAfter: r.jitter(r.resyncPeriod(obj))}, nil
}

func setOrRemove(u *unstructured.Unstructured, v string, path ...string) {
	if v == "" {
		unstructured.RemoveNestedField(u.Object, path...)
		return
	}
	_ = unstructured.SetNestedField(u.Object, v, path...)
}

func envToMap(env []clevercloud.Variable) map[string]string {
	data := make(map[string]string, len(env))
	for _, e := range env {
		data[e.Name] = e.Value
	}
	return data
}

// findAddon looks the add-on up by the id in status, then by its deterministic name, so an
// add-on created by a pass that crashed before recording it (or by the Rust operator) is
// adopted instead of duplicated.
// An add-on bound by id (spec.addonId or the annotation) is only ever read: a 404 is returned
// as an error, never answered by creating one. adopted reports an add-on this resource did
// not create.
func (r *Reconciler) findAddon(ctx context.Context, api API, obj *unstructured.Unstructured, org string, l lifecycle) (*clevercloud.Addon, bool, error) {
	id, _, _ := unstructured.NestedString(obj.Object, "status", "addon")
	wasAdopted, _, _ := unstructured.NestedBool(obj.Object, "status", "adopted")
	if id == "" && l.bindID != "" {
		a, err := api.GetAddon(ctx, org, l.bindID)
		if err != nil {
			return nil, false, err
		}
		r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventAddonAdopted, "Bound to existing add-on %s; it was not created by this resource", a.ID)
		return a, true, nil
	}
	if id != "" {
		a, err := api.GetAddon(ctx, org, id)
		if err == nil {
			return a, wasAdopted, nil
		}
		if !clevercloud.IsNotFound(err) || l.bindID != "" {
			return nil, false, err
		}
	}
	if id == "" && isFirstPass(ctx) {
		// A brand-new resource: nothing can be named after its UID yet. Listing the whole
		// organisation is only needed when an earlier pass (or operator) may have created it.
		return nil, false, nil
	}
	list, err := api.ListAddons(ctx, org)
	if err != nil {
		return nil, false, err
	}
	name := r.Kind.AddonName(string(obj.GetUID()))
	for i := range list {
		if id != "" && list[i].ID == id {
			// The organisation lists the add-on its GET said was not found: that 404 was not
			// Clever Cloud's (proxy, wrong path, incident). Use it; never create a second one.
			return &list[i], wasAdopted, nil
		}
	}
	for i := range list {
		if list[i].AddonName() == name {
			r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventAddonAdopted, "Found existing add-on %s named %s; using it", list[i].ID, name)
			return &list[i], true, nil
		}
	}
	return nil, false, nil
}

// credentials returns the Secret data for the add-on. pending is non-empty while Clever Cloud
// has not published every variable yet.
// configKeys, when known, are the variables Clever Cloud will publish (nil: take the env as is).
func (r *Reconciler) credentials(ctx context.Context, api API, obj *unstructured.Unstructured, org, addonID, realID string, configKeys []string, created bool) (map[string]string, string, error) {
	if r.Kind.ConfigProvider {
		want := r.Kind.Variables(obj)
		var have []clevercloud.Variable
		if !created {
			// A configuration provider created in this pass holds no variables: no read.
			var err error
			if have, err = api.GetConfigProviderEnv(ctx, realID); err != nil {
				return nil, "", err
			}
		}
		if l := lifecycleOf(obj); l.observeOnly || l.paused {
			// No write: publish what the add-on holds.
			return envToMap(have), "", nil
		}
		if !sameVariables(have, want) {
			if _, err := api.PutConfigProviderEnv(ctx, realID, toVariables(want)); err != nil {
				return nil, "", err
			}
			r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventVariablesPushed, "Pushed %d variables to configuration provider %s", len(want), addonID)
		}
		return want, "", nil
	}
	if r.Kind.Operator != "" {
		return r.operatorCredentials(ctx, api, obj, org, addonID, realID)
	}
	env, err := api.GetAddonEnv(ctx, org, addonID)
	if err != nil {
		return nil, "", err
	}
	data := envToMap(env)
	missing := 0
	for _, k := range configKeys {
		if _, ok := data[k]; !ok {
			missing++
		}
	}
	if missing > 0 {
		return nil, fmt.Sprintf("waiting for Clever Cloud to provision add-on %s (%d of %d variables published)", addonID, len(configKeys)-missing, len(configKeys)), nil
	}
	if staleAfterRotation(r.Kind, obj, data) {
		return nil, fmt.Sprintf("waiting for Clever Cloud to publish the renewed credentials of add-on %s (its env still shows the revoked key)", addonID), nil
	}
	return data, "", nil
}
