package addon

import (
	"context"
	"errors"
	"fmt"
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
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clever-operator/clever-operator/api/shared"
	"github.com/clever-operator/clever-operator/internal/catalog"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/memberships"
	"github.com/clever-operator/clever-operator/internal/metrics"
	"github.com/clever-operator/clever-operator/internal/patch"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/statusmerge"
	"github.com/clever-operator/clever-operator/internal/step"
	"github.com/clever-operator/clever-operator/internal/templates"
	"github.com/clever-operator/clever-operator/internal/tracing"
	"github.com/clever-operator/clever-operator/internal/waits"
)

// Reconciler is the generic provisioning engine for one kind.
type Reconciler struct {
	Kind        *kinds.Kind
	Client      client.Client // the manager's (cached) client
	APIReader   client.Reader // live reads, used before any irreversible call
	Recorder    record.EventRecorder
	Credentials credentials.Credentials
	Plans       *catalog.PlanCache
	// Prices, when set, fills status.price from Clever Cloud's price systems (prices.go);
	// nil: no price is looked up.
	Prices *catalog.PriceCache
	// ClaimKey signs and verifies the addon-claim annotations (binding.go); nil: no claims
	// are written and none verifies.
	ClaimKey []byte
	// NetworkGroupChanged, when set, is told of every NetworkGroup resource (namespace, name)
	// an add-on joined or left, so the group's status lists its members at once.
	NetworkGroupChanged func(namespace, name string)
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
	// BackupMaxAge is how old the newest backup of a kind Clever Cloud backs up may be before
	// BackupStale turns True (default backups.DefaultMaxAge; the backup-max-age annotation
	// overrides it per resource).
	BackupMaxAge time.Duration
	// Metrics, when set, records time-to-ready, deletion durations and errors.
	Metrics *metrics.Engine
	// MaxConcurrentReconciles defaults to 4.
	MaxConcurrentReconciles int
	Log                     logr.Logger
	Now                     func() time.Time

	// Triggers, when set, wakes resources from outside (credentials objects and override
	// Secrets that changed: internal/credentials.Enqueuer).
	Triggers source.Source
	// Handoff, when set (shared with this kind's Helm side), lets the pass that publishes a
	// resource's credentials for the first time leave its status write to the Helm side's,
	// which follows the rendering (handoff.go). nil: every pass writes its own status.
	Handoff *statusmerge.Board
	// PassTimeout bounds each pass (default DefaultPassTimeout); TenantWorkers is how many
	// workers the passes of one tenant's credentials may hold at once (default half the
	// workers, at least one; negative: no limit). fairness.go.
	PassTimeout   time.Duration
	TenantWorkers int

	observed  sync.Map // types.UID -> time.Time of the last API observation
	refreshes sync.Map // types.UID -> *int, periodic refreshes done (alternating reads)
	// fresh holds the resources this process put the finalizer on: no operator had touched
	// them before, so nothing left by the Rust operator can exist for them. Lost on restart,
	// when the live checks run again.
	fresh sync.Map // types.UID -> struct{}
	// board holds the add-ons being provisioned this process waits for (internal/waits).
	board waits.Board
	// slots are the passes each tenant has in flight (fairness.go).
	slots queue.TenantSlots
	// source and caps are what the kind's row gives the pass (capabilities.go), built once.
	capsOnce sync.Once
	source   step.Source
	caps     []step.Capability
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
		r.ResyncPeriod = queue.DefaultResyncPeriod
	}
	if r.MaxConcurrentReconciles == 0 {
		r.MaxConcurrentReconciles = 4
	}
	if r.Plans == nil {
		r.Plans = &catalog.PlanCache{}
	}
	// Who is bound to which add-on (a second claimant is refused, binding.go).
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), r.newObject(), IndexStatusAddon, indexStatusAddon); err != nil {
		return fmt.Errorf("indexing %s by %s: %w", r.Kind.GVK.Kind, IndexStatusAddon, err)
	}
	sourceSecrets := predicate.NewPredicateFuncs(r.Kind.IsSourceSecret)
	onlyDeletes := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
	}
	// A source Secret changed by anyone but the operator (its signature no longer verifies)
	// is written again by the pass it wakes: the Helm side renders nothing from it meanwhile.
	deletedOrForged := predicate.Or[client.Object](onlyDeletes, predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			sec, ok := e.ObjectNew.(*corev1.Secret)
			return ok && !secrets.Verified(r.ClaimKey, sec)
		},
	})
	forPreds := []predicate.Predicate{predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{})}
	if r.Selector != nil && !r.Selector.Empty() {
		sel := r.Selector
		forPreds = append(forPreds, predicate.NewPredicateFuncs(func(o client.Object) bool { return sel.Matches(labels.Set(o.GetLabels())) }))
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(r.Kind.Lower()+"-addon").
		For(r.newObject(), builder.WithPredicates(forPreds...)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), r.newObject(), handler.OnlyControllerOwner()),
			builder.WithPredicates(sourceSecrets, deletedOrForged))
	if r.Triggers != nil {
		b = b.WatchesRawSource(r.Triggers)
	}
	_, caps := r.capabilities()
	for _, c := range caps {
		// What else wakes the kind's resources (a NetworkGroup that becomes Ready, or goes).
		if obj, users := c.Watch(r.Kind); obj != nil {
			b = b.Watches(obj, handler.EnqueueRequestsFromMapFunc(users))
		}
	}
	// Waiters woken when an add-on of their group is seen provisioned (internal/waits).
	r.board.Wake = make(chan event.TypedGenericEvent[*unstructured.Unstructured], 1024)
	b = b.WatchesRawSource(source.Channel(r.board.Wake, &handler.TypedEnqueueRequestForObject[*unstructured.Unstructured]{}))
	return b.
		WithOptions(controller.Options{
			MaxConcurrentReconciles: r.MaxConcurrentReconciles,
			// Failed API calls back off per resource from 1 s to 10 min; no hot retry loop.
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, 10*time.Minute),
			NewQueue:    queue.New[reconcile.Request],
		}).
		Complete(r)
}

// Reconcile provisions, refreshes or deletes the add-on behind one resource.
// With tracing on, each call is one span (internal/tracing), the parent of its API calls'.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	ctx, endSpan := tracing.StartReconcile(ctx, r.Kind.GVK.Kind, req.Namespace, req.Name)
	outcome := tracing.OutcomeSuccess
	defer func() {
		if err != nil {
			outcome = tracing.OutcomeError
		}
		endSpan(outcome, res.RequeueAfter.Seconds(), err)
	}()
	obj := r.newObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			outcome = tracing.OutcomeNotFound
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	// Requests also come from raw sources (credentials wake-ups, waiters), which the For
	// predicate does not filter: a resource the selector does not match is not this engine's.
	if r.Selector != nil && !r.Selector.Empty() && !r.Selector.Matches(labels.Set(obj.GetLabels())) {
		r.forget(obj) // relabelled away from this operator: what it remembered of it is stale
		return ctrl.Result{}, nil
	}
	ctx = logr.NewContext(ctx, r.Log.WithValues(r.Kind.Lower(), req.NamespacedName))
	res, err = r.reconcileObject(ctx, obj)
	if queue.NamespaceTerminating(err) {
		// The namespace controller deleted a Secret of the resource and will delete the
		// resource next: nothing can be created there any more, and its deletion wakes it.
		logr.FromContextOrDiscard(ctx).V(1).Info("namespace being deleted: nothing more is written there", "refused", err.Error())
		return ctrl.Result{}, nil
	}
	return res, err
}

// reconcileObject runs one pass over obj: the steps decide in memory, and the deferred commit
// writes the status once (nothing when nothing changed) before the pass's events are recorded.
func (r *Reconciler) reconcileObject(ctx context.Context, obj *unstructured.Unstructured) (res ctrl.Result, err error) {
	s := r.newPass(ctx, obj)
	// The steps run under the pass's deadline; what they decided is written without it.
	pctx, cancel := context.WithTimeout(ctx, r.passTimeout())
	defer func() {
		cancel()
		r.releaseSlot(s)
		cerr := r.commit(ctx, s)
		if cerr != nil && err == nil {
			res, err = ctrl.Result{}, cerr
		}
		if cerr == nil {
			// After the status write: the event this metadata write causes is seen by a
			// later pass only once the cache holds that status too.
			r.writeClaim(ctx, s)
		}
		r.flushEvents(s)
		if err == nil {
			res = r.requeueForHandoff(s.obj.GetUID(), res)
		}
		tracing.EndPass(ctx, s.obj.GetUID(), s.mode, addonReadyReason(s.conds), s.writes)
	}()
	return end(r.run(pctx, s))
}

// run is the pass, top to bottom. Each step returns nil to go on, or a step.Stop (or an error
// for the work queue's backoff) that ends the pass.
//
//  1. deletion: finalize (delete the add-on, release the resource);
//  2. finalizers (the engine's and Helm's, one write to the resource);
//  3. a pending credentials rotation (rotate; a renewal goes on with a full pass);
//  4. how much work is due (plan): none (a due rollout only), a periodic refresh (one API
//     call; falls through to a full pass when the published state is incomplete), or
//  5. a full pass (provision): find or create, migrate, operator actions, credentials,
//     publish, rollout.
func (r *Reconciler) run(ctx context.Context, s *pass) error {
	if s.obj.GetDeletionTimestamp() != nil {
		s.mode = modeDelete
		r.forget(s.obj)
		return r.finalize(ctx, s)
	}
	cached := controllerutil.ContainsFinalizer(s.obj, r.Kind.Finalizer())
	// The Helm side's finalizer goes in the same write: otherwise both sides update the new
	// resource at once, one fails on a conflict, and every write starts another round of both.
	added, err := patch.AddFinalizer(ctx, r.Client, r.APIReader, s.obj, r.Kind.Finalizer(), kinds.HelmUninstallFinalizer)
	if err != nil {
		return err
	}
	if !cached && s.obj.GetDeletionTimestamp() == nil {
		s.reset(s.obj) // read live by AddFinalizer: snapshot what the API server answered
	}
	if added {
		statusmerge.DropNew(s.obj.GetUID())
	}
	if added || statusmerge.TakeNew(ctx, s.obj.GetUID()) {
		r.fresh.Store(s.obj.GetUID(), struct{}{})
		s.first = true
	}
	r.takeHandedOff(s)
	s.syncPause = s.pausedChanged()
	// Every pass checks the credentials, even one with nothing to do at Clever Cloud: a revoked
	// override Secret or a restricted credentials object takes effect at once.
	if err := r.connect(ctx, s); err != nil {
		return err
	}
	if rotationRequested(s.obj, &s.st) {
		if err := r.rotate(ctx, s); err != nil {
			return err
		}
	}
	mode, wait := r.plan(ctx, s)
	s.mode = mode.String()
	switch mode {
	case upToDate:
		r.check(s) // an edited backup-max-age annotation takes effect now (no call)
		if rolloutDue(&s.st) {
			return r.rollout(ctx, s)
		}
		return stop(ctrl.Result{RequeueAfter: wait})
	case refreshDue:
		if err := r.refresh(ctx, s); err != nil {
			return err
		}
	case fullPass:
		if w := r.waiting(s); w != nil {
			// Its add-on is being provisioned: one env read when due, nothing else.
			s.mode = modeWait
			return r.waitPass(ctx, s, w)
		}
	}
	s.mode = fullPass.String()
	return r.provision(ctx, s)
}

// forget drops what the engine remembers of a resource being deleted (or no longer selected).
func (r *Reconciler) forget(obj *unstructured.Unstructured) {
	statusmerge.DropNew(obj.GetUID())
	r.observed.Delete(obj.GetUID())
	r.refreshes.Delete(obj.GetUID())
	r.fresh.Delete(obj.GetUID())
	r.board.Drop(obj.GetUID())
	if r.Handoff != nil {
		r.Handoff.Drop(obj.GetUID())
	}
}

// connect resolves the resource's credentials (once per pass) and checks spec.organisation
// against what they allow, before any Clever Cloud call: every step that calls the API
// (provision, refresh, rotation, deletion) goes through it. A refusal (credentials not found,
// not allowed for the namespace, invalid, or an organisation they do not allow) is reported on
// the resource with a Warning event, and nothing is called.
func (r *Reconciler) connect(ctx context.Context, s *pass) error {
	if s.grant != nil {
		return nil
	}
	deleting := s.obj.GetDeletionTimestamp() != nil
	hint := ""
	if deleting {
		// Never call the API with credentials that do not allow the resource, and never
		// release it silently: it stays Terminating until they do, or until told.
		hint = fmt.Sprintf("; the resource is kept (finalizer) until its credentials allow deleting the add-on (to release it without deleting the add-on, annotate it %s=true)", kinds.AnnotationSkipDeprovision)
	}
	g, err := credentials.Connect(ctx, r.Credentials, s.obj, s.org)
	if err != nil {
		if ref, ok := credentials.AsRefused(err); ok {
			// Waits for the credentials (or the resource) to change: a change of a credentials
			// object or override Secret enqueues the resources using it.
			return s.fail(ref.Reason, ref.Message+hint, nil)
		}
		return s.fail(status.ReasonInvalidCredentials, err.Error()+hint, err)
	}
	if err := r.takeSlot(s, g); err != nil {
		return err
	}
	s.grant, s.api, s.key = g, g.API, g.Key
	return nil
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
func (r *Reconciler) plan(ctx context.Context, s *pass) (passMode, time.Duration) {
	obj, st := s.obj, &s.st
	a, _ := status.Find(s.conds, status.TypeAddonReady)
	if st.Addon == "" || st.ObservedGeneration != obj.GetGeneration() || a.Status != string(metav1.ConditionTrue) || r.due(obj, st, s.conds) {
		return fullPass, 0
	}
	src := &corev1.Secret{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Kind.SourceSecretName(obj.GetName())}, src); err != nil {
		return fullPass, 0
	}
	if requested := obj.GetAnnotations()[kinds.AnnotationReconcileRequestedAt]; requested != "" {
		if st.LastHandledReconcileAt != requested {
			return refreshDue, 0
		}
	}
	period := r.resyncPeriod(obj)
	last, seen := r.observed.Load(obj.GetUID())
	if !seen {
		// First sight after a (re)start: trust the published state, refresh one period later.
		r.observed.Store(obj.GetUID(), r.now())
		return upToDate, queue.Jitter(period)
	}
	elapsed := r.now().Sub(last.(time.Time))
	if elapsed >= period*9/10 {
		return refreshDue, 0
	}
	return upToDate, queue.Jitter(period - elapsed)
}

// provision is the full pass: find or create the add-on, record it, migrate it or act on
// it, read its credentials and publish them.
func (r *Reconciler) provision(ctx context.Context, s *pass) error {
	if !kinds.ValidOwnerID(s.org) {
		return s.fail(status.ReasonInvalidSpec, fmt.Sprintf("spec.organisation %q is not a Clever Cloud organisation id (orga_<uuid>) or user id (user_<uuid>)", s.org), nil)
	}
	if err := r.connect(ctx, s); err != nil {
		return err
	}
	l := s.life
	created := false
	var createdAt time.Time
	sentVersion := ""
	addon, adopted, err := r.findAddon(ctx, s)
	if err != nil {
		var sp *step.Stop
		if errors.As(err, &sp) {
			return err // a refusal already reported (BindingNotAllowed, AddonClaimed, ...)
		}
		if clevercloud.IsNotFound(err) && l.bindID != "" {
			return s.fail(status.ReasonAddonNotFound, fmt.Sprintf("add-on %s (spec.addonId or the %s annotation) does not exist in organisation %s", l.bindID, kinds.AnnotationAddonID, s.org), nil)
		}
		return s.failAPI("looking up the add-on", err)
	}
	if addon == nil {
		if err := r.mayCreate(s); err != nil {
			return err
		}
		if addon, sentVersion, err = r.create(ctx, s); err != nil {
			return err
		}
		created, createdAt = true, r.now()
	}
	src, caps := r.capabilities()
	s.update(recordAddon(addon, adopted, r.Kind.PublicationFor(s.obj).SecretName, created && !src.ReportsVersion(), sentVersion))
	if !adopted {
		r.ensureClaim(s, addon.ID)
	}
	if !created {
		for _, c := range caps {
			// Migrations, the operator add-ons' actions.
			if err := c.Existing(ctx, s, addon); err != nil {
				return err
			}
		}
	}

	if created && r.waitable(s, addon, createdAt) && r.board.Busy(s.key, s.org, r.Kind.Lower()) {
		// Add-ons of this kind created earlier in this organisation are still being
		// provisioned: this one is too; it waits with them, without reading its env now.
		return s.pendingFor(pendingMessage(r.Kind, &s.st, addon.ID, addon.ConfigKeys, nil), r.wait(s, addon, createdAt))
	}
	data, pending, err := r.credentials(ctx, s, addon, created)
	if err != nil {
		if clevercloud.IsNotFound(err) {
			// Deleted between the lookup and now: the next pass looks it up again.
			return stop(ctrl.Result{Requeue: true})
		}
		return s.failAPI("reading the add-on's credentials", err)
	}
	if pending != "" {
		born := time.UnixMilli(int64(addon.CreationDate))
		if now := r.now(); born.After(now) {
			born = now
		}
		if created {
			born = createdAt // this clock: the age is not skewed by Clever Cloud's
		}
		if r.waitable(s, addon, born) {
			return s.pendingFor(pending, r.wait(s, addon, born))
		}
		return s.pending(addon, pending)
	}
	r.board.Drop(s.obj.GetUID())
	for _, c := range caps {
		// Network Group memberships.
		if soon := c.Provisioned(ctx, s, addon); soon > 0 && (s.soon == 0 || soon < s.soon) {
			s.soon = soon
		}
	}
	s.provisioned = true
	return r.publish(ctx, s, addon.ID, addon.RealID, data)
}

// recordAddon records the add-on in status, so later passes use the cheaper GET by id. For
// an add-on just created (withVersion) it records the version asked for too.
func recordAddon(addon *clevercloud.Addon, adopted bool, secretName string, withVersion bool, version string) func(*kinds.Status) {
	id, plan := addon.ID, addon.Plan.ID
	return func(st *kinds.Status) {
		st.Adopted, st.Addon, st.Plan, st.SecretName = adopted, id, plan, secretName
		if withVersion && version != "" {
			st.Version = version
		}
	}
}

// mayCreate decides whether a resource whose add-on was not found may get a new one:
// ObserveOnly never creates (AddonNotFound), an add-on deleted out of band under the report
// policy is reported (AddonMissing), and a paused resource waits.
func (r *Reconciler) mayCreate(s *pass) error {
	prev := s.st.Addon
	switch {
	case s.life.observeOnly:
		return s.fail(status.ReasonAddonNotFound, fmt.Sprintf("managementPolicy ObserveOnly: no add-on named %s in organisation %s to observe; set spec.addonId", r.Kind.AddonName(string(s.obj.GetUID())), s.org), nil)
	case prev != "" && r.onMissing(s.life) == kinds.OnMissingReport:
		return s.fail(status.ReasonAddonMissing, fmt.Sprintf("add-on %s was deleted outside the operator; delete this resource, or annotate it %s=recreate to create a new add-on", prev, kinds.AnnotationOnAddonMissing), nil)
	case s.life.paused:
		s.condition(status.TypeAddonReady, metav1.ConditionFalse, status.ReasonPauseRequested, "creating the add-on is paused (annotation "+kinds.AnnotationPaused+")")
		return stop(ctrl.Result{RequeueAfter: queue.Jitter(r.resyncPeriod(s.obj))})
	}
	return nil
}

// create resolves the plan (only needed here: an existing add-on is used as it is) and creates
// the add-on. version is the version it asked for ("" when none). Its error ends the pass.
//
// A create whose answer was lost (timeout, broken connection, 5xx) may have made the add-on:
// no marker is written before the POST, because the next pass is never a first pass, so it
// looks the add-on up by name (findAddon) before creating again, and never makes a second one.
func (r *Reconciler) create(ctx context.Context, s *pass) (*clevercloud.Addon, string, error) {
	obj, api := s.obj, s.api
	region, err := r.Kind.Region(obj)
	if err != nil {
		return nil, "", s.fail(status.ReasonInvalidSpec, err.Error(), nil)
	}
	if _, err := r.Kind.Options(obj); err != nil {
		return nil, "", s.fail(status.ReasonInvalidSpec, err.Error(), nil)
	}
	plan, provider := r.Kind.FixedPlan, r.Kind.Provider(obj)
	switch {
	case r.Kind.Generic:
		// Any provider: provider, plan and region are checked against the live catalogue
		// first, so a typo ends as a condition listing what is on offer, with no create.
		if plan, err = r.Plans.Check(ctx, api, s.key, s.org, provider, r.Kind.SpecPlan(obj), region); err != nil {
			return nil, "", s.failSpecOrAPI(err, status.ReasonPlanNotFound, "reading the Clever Cloud catalogue")
		}
	case r.Kind.PlanFromSpec():
		if plan, err = r.Plans.Resolve(ctx, api, s.key, s.org, provider, r.Kind.SpecPlan(obj)); err != nil {
			return nil, "", s.failSpecOrAPI(err, status.ReasonPlanNotFound, "resolving the plan")
		}
	}
	options, err := r.options(ctx, s, plan, true)
	if err != nil {
		return nil, "", s.failSpecOrAPI(err, status.ReasonInvalidSpec, "reading the provider's versions")
	}
	if prev := s.st.Addon; prev != "" {
		s.event(corev1.EventTypeWarning, status.EventAddonMissing, fmt.Sprintf("Add-on %s no longer exists at Clever Cloud; creating a new one", prev))
	}
	addon, err := api.CreateAddon(ctx, s.org, clevercloud.CreateOpts{
		Name: r.Kind.AddonName(string(obj.GetUID())), Region: region, ProviderID: provider, Plan: plan, Options: options,
	})
	if err != nil {
		if clevercloud.IsBadRequest(err) {
			return nil, "", s.fail(status.ReasonInvalidSpec, "Clever Cloud refused to create the add-on: "+clevercloud.Message(err), nil)
		}
		return nil, "", s.failAPI("creating the add-on", err)
	}
	s.event(corev1.EventTypeNormal, status.EventAddonCreated, fmt.Sprintf("Created managed %s instance %s on Clever Cloud", r.Kind.Noun, addon.ID))
	return addon, options.Version, nil
}

// failSpecOrAPI reports a SpecError with its reason (def unless it names one), any other
// error as an API error met while doing.
func (s *pass) failSpecOrAPI(err error, def, doing string) error {
	var se *kinds.SpecError
	if errors.As(err, &se) {
		return s.fail(specErrorReason(se, def), se.Msg, nil)
	}
	return s.failAPI(doing, err)
}

// refresh is the periodic check of a Ready resource: one API call (the add-on's env) detects
// changed credentials and an add-on deleted out of band. It returns nil when a full pass is
// needed (the add-on is gone, or the published state is incomplete).
func (r *Reconciler) refresh(ctx context.Context, s *pass) error {
	obj := s.obj
	src := &corev1.Secret{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Kind.SourceSecretName(obj.GetName())}, src); err != nil {
		return nil
	}
	// The source Secret is in the tenant's namespace: its ids are used only when the
	// operator's signature verifies and its add-on is the one status records (status is
	// written by the operator alone). Anything else takes the full pass, which finds the
	// add-on from status and the binding rules and writes the source Secret again.
	addonID, realID := src.Annotations[kinds.AnnotationAddonID], src.Annotations[secrets.AnnotationRealID]
	source, _ := r.capabilities()
	if addonID == "" || (source.NeedsRealID() && realID == "") || !r.trustedSource(&s.st, src) {
		return nil
	}
	if err := r.connect(ctx, s); err != nil {
		return err
	}
	requested := obj.GetAnnotations()[kinds.AnnotationReconcileRequestedAt]
	forced := requested != "" && requested != s.st.LastHandledReconcileAt
	n := r.countRefresh(obj)
	read := r.Kind.RefreshReadFor(n)
	if forced {
		read = kinds.ReadEnv
	}
	if took, err := r.refreshRead(ctx, s, read, realID); took {
		// Kinds Clever Cloud backs up read their backups list every third period (backups.go);
		// BackupStale is evaluated on what it answers.
		return err
	}
	r.check(s) // the other reads: BackupStale from status.backups, no call
	if read != kinds.ReadEnv {
		// Every other period reads the add-on itself instead of its env (still one call):
		// an add-on deleted out of band, or whose plan or region changed, is seen too.
		a, err := s.api.GetAddon(ctx, s.org, addonID)
		switch {
		case clevercloud.IsNotFound(err):
			return nil
		case err != nil:
			return s.failAPI("refreshing the add-on", err)
		}
		if !s.st.Adopted {
			if err := r.refuseIfManagedElsewhere(s, a); err != nil {
				return err
			}
		}
		r.observed.Store(obj.GetUID(), r.now())
		s.clearTransient()
		s.reportDrift(r.addonDrift(obj, &s.st, a))
		return stop(ctrl.Result{RequeueAfter: queue.Jitter(r.resyncPeriod(obj))})
	}
	rd, err := source.Read(ctx, s, &clevercloud.Addon{ID: addonID, RealID: realID}, false)
	if rd.Status != nil {
		s.recorded = rd.Status
	}
	data, pending := rd.Data, rd.Pending
	switch {
	case clevercloud.IsNotFound(err):
		return nil
	case err != nil:
		return s.failAPI("refreshing the add-on's credentials", err)
	case pending != "":
		return nil
	}
	var d *drift
	if r.Kind.VersionCode != nil {
		// Operator add-ons report their version in status instead.
		d = versionDrift(&s.st, data)
	}
	if d != nil && r.sharedPlanApplied(ctx, s) {
		// Shared (DEV, free) plans run the cluster's version, whatever the spec says: never a
		// VersionDrift for them. (Asked only when a drift is seen: the steady state costs no
		// catalogue read.)
		d = nil
	}
	s.reportDrift(d)
	return r.publish(ctx, s, addonID, realID, data)
}

// publish writes the source Secret and reports the add-on ready, with where its credentials
// are published (spec.secret), and restarts opted-in workloads when they changed.
func (r *Reconciler) publish(ctx context.Context, s *pass, addonID, realID string, data map[string]string) error {
	obj := s.obj
	if err := r.adoptLegacySecret(ctx, s); err != nil {
		return err
	}
	data = r.Kind.WithPrivateHost(obj, s.st.NetworkGroups, data)
	r.openHandoff(ctx, s)
	if err := r.writeSource(ctx, s, addonID, realID, data); err != nil {
		return r.failWrite(ctx, s, err)
	}
	r.observed.Store(obj.GetUID(), r.now())
	p := r.Kind.PublicationFor(obj)
	if _, err := templates.Render(p.Templates, data); err != nil {
		// The Helm side refuses the same templates, so the published Secret stays as it was.
		return s.fail(status.ReasonSecretTemplateInvalid, err.Error(), nil)
	}
	if prev, _ := status.Find(s.conds, status.TypeAddonReady); prev.Status != string(metav1.ConditionTrue) && r.Metrics != nil {
		if og := s.st.ObservedGeneration; og == 0 || obj.GetGeneration() == 1 {
			r.Metrics.TimeToReady.WithLabelValues(r.Kind.GVK.Kind).Observe(r.now().Sub(obj.GetCreationTimestamp().Time).Seconds())
		}
	}
	msg := fmt.Sprintf("add-on %s is provisioned; credentials are in Secret %s", addonID, p.SecretName)
	if p.Disabled {
		msg = fmt.Sprintf("add-on %s is provisioned; no credentials Secret is published (spec.secret.disabled)", addonID)
	}
	s.update(published(r.Kind, p, data, s.recorded, obj.GetGeneration(), obj.GetAnnotations()[kinds.AnnotationReconcileRequestedAt], r.now()))
	if zone, err := r.Kind.Region(obj); err == nil {
		r.recordPrice(ctx, s, zone)
	}
	s.condition(status.TypeAddonReady, metav1.ConditionTrue, status.ReasonProvisioned, msg)
	s.clearTransient()
	if rolloutDue(&s.st) {
		return r.rollout(ctx, s)
	}
	s.handOff()
	return stop(ctrl.Result{RequeueAfter: s.requeueAfter(queue.Jitter(r.resyncPeriod(obj)))})
}

// published is the status of a resource whose credentials were just published.
func published(k *kinds.Kind, p kinds.Publication, data map[string]string, recorded func(*kinds.Status), gen int64, requested string, now time.Time) func(*kinds.Status) {
	hash := secrets.Hash(data)
	urls := map[string]string{}
	for field, env := range k.URLStatus {
		if v := data[env]; v != "" {
			urls[field] = v
		}
	}
	return func(st *kinds.Status) {
		if recorded != nil {
			recorded(st) // what the kind's source reads to status (an operator add-on's version)
		}
		for field, v := range urls {
			st.SetURL(field, v)
		}
		st.SecretName, st.ConfigMapName, st.Binding = p.SecretName, p.ConfigMapName, nil
		if p.BindingName != "" {
			st.Binding = &shared.BindingStatus{Name: p.BindingName}
		}
		recordCredentials(st, hash, now)
		st.Credentials.RevokedKeyHash = ""
		st.ObservedGeneration = gen
		if requested != "" {
			st.LastHandledReconcileAt = requested
		}
	}
}

// findAddon looks the add-on up by the id in status, then by its deterministic name, so an
// add-on created by a pass that crashed before recording it (or by the Rust operator) is
// adopted instead of duplicated.
// An add-on bound by id (spec.addonId or the annotation) is only ever read: a 404 is returned
// as an error, never answered by creating one. adopted reports an add-on this resource did
// not create. The name lookup is skipped on a first pass (nothing can carry the name yet).
func (r *Reconciler) findAddon(ctx context.Context, s *pass) (*clevercloud.Addon, bool, error) {
	obj, api, org, l := s.obj, s.api, s.org, s.life
	id, wasAdopted := s.st.Addon, s.st.Adopted
	if id == "" && l.bindID != "" {
		a, err := api.GetAddon(ctx, org, l.bindID)
		if err != nil {
			return nil, false, err
		}
		adopted, err := r.mayBind(ctx, s, a)
		if err != nil {
			return nil, false, err
		}
		if adopted {
			s.event(corev1.EventTypeNormal, status.EventAddonAdopted, fmt.Sprintf("Bound to existing add-on %s; it was not created by this resource", a.ID))
		}
		return a, adopted, nil
	}
	if id != "" {
		a, err := api.GetAddon(ctx, org, id)
		if err == nil {
			if wasAdopted {
				// Recorded by an earlier pass: the binding is checked again (the credentials'
				// binding policy may have changed, or it was recorded before it existed).
				if wasAdopted, err = r.mayBind(ctx, s, a); err != nil {
					return nil, false, err
				}
			} else if err := r.refuseIfManagedElsewhere(s, a); err != nil {
				return nil, false, err
			} else if err := r.refuseIfBoundElsewhere(ctx, s, a.ID); err != nil {
				return nil, false, err
			}
			return a, wasAdopted, nil
		}
		if !clevercloud.IsNotFound(err) || l.bindID != "" {
			return nil, false, err
		}
	}
	if id == "" {
		// Restore from backup: no status, but the operator's signed claim names the add-on.
		if a, adopted, found, err := r.claimedAddon(ctx, s); found || err != nil {
			return a, adopted, err
		}
	}
	if id == "" && s.first {
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
			// Named after this resource's UID: this resource created it (a pass that crashed
			// before recording it, or the Rust operator); not adopted.
			s.event(corev1.EventTypeNormal, status.EventAddonAdopted, fmt.Sprintf("Found existing add-on %s named %s; using it", list[i].ID, name))
			return &list[i], false, nil
		}
	}
	if id == "" && secrets.ParseClaim(r.ClaimKey, obj) != nil {
		// A claim that does not verify and no add-on of its own: never a new add-on in place
		// of the one the claim names.
		return nil, false, s.refuseClaim()
	}
	return nil, false, nil
}

// credentials reads the Secret data of the add-on from the kind's source (capabilities.go).
// pending is non-empty while Clever Cloud has not served all of it yet.
func (r *Reconciler) credentials(ctx context.Context, s *pass, addon *clevercloud.Addon, created bool) (map[string]string, string, error) {
	src, _ := r.capabilities()
	rd, err := src.Read(ctx, s, addon, created)
	if rd.Status != nil {
		s.recorded = rd.Status
	}
	return rd.Data, rd.Pending, err
}

// pendingMessage says why an add-on's env cannot be published yet ("" when it can): variables
// announced in its configKeys are missing, or it still shows the key the last rotation
// revoked.
func pendingMessage(k *kinds.Kind, st *kinds.Status, addonID string, configKeys []string, data map[string]string) string {
	missing := 0
	for _, key := range configKeys {
		if _, ok := data[key]; !ok {
			missing++
		}
	}
	if missing > 0 {
		return fmt.Sprintf("waiting for Clever Cloud to provision add-on %s (%d of %d variables published)", addonID, len(configKeys)-missing, len(configKeys))
	}
	if staleAfterRotation(k, st, data) {
		return fmt.Sprintf("waiting for Clever Cloud to publish the renewed credentials of add-on %s (its env still shows the revoked key)", addonID)
	}
	return ""
}

// refreshRead gives the periodic refresh's read to the capability it is the turn of (the
// backups list: backups.go), which ends the pass; took is false when none took it.
func (r *Reconciler) refreshRead(ctx context.Context, s *pass, read kinds.RefreshRead, realID string) (took bool, err error) {
	_, caps := r.capabilities()
	for _, c := range caps {
		took, err := c.Refresh(ctx, s, read, realID)
		switch {
		case !took:
			continue
		case err != nil:
			return true, err
		}
		r.observed.Store(s.obj.GetUID(), r.now())
		return true, stop(ctrl.Result{RequeueAfter: queue.Jitter(r.resyncPeriod(s.obj))})
	}
	return false, nil
}

// check has the capabilities re-evaluate what they report from status (no call).
func (r *Reconciler) check(s *pass) {
	_, caps := r.capabilities()
	for _, c := range caps {
		c.Check(s)
	}
}

// due says whether a capability needs a full pass of obj (an action asked for, memberships
// not settled).
func (r *Reconciler) due(obj *unstructured.Unstructured, st *kinds.Status, conds []status.Condition) bool {
	_, caps := r.capabilities()
	for _, c := range caps {
		if c.Due(obj, st, conds) {
			return true
		}
	}
	return false
}

// memberships is the Network Group memberships' capability, with the engine's client.
func (r *Reconciler) memberships() *memberships.Syncer {
	return &memberships.Syncer{Client: r.Client, Changed: r.NetworkGroupChanged}
}
