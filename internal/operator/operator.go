// Package operator assembles the operator: one Helm reconciler and one provisioning engine
// per watches.yaml entry, on a manager whose cache holds only what the operator needs. main,
// the demo and the test suites all build the operator through it.
package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/operator-framework/helm-operator-plugins/pkg/watches"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/clever-operator/clever-operator/api/v1alpha1"
	"github.com/clever-operator/clever-operator/internal/addon"
	"github.com/clever-operator/clever-operator/internal/catalog"
	"github.com/clever-operator/clever-operator/internal/cellarbucket"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/hybrid"
	"github.com/clever-operator/clever-operator/internal/intern"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/metrics"
	"github.com/clever-operator/clever-operator/internal/networkgroup"
	"github.com/clever-operator/clever-operator/internal/statusmerge"
)

// Options configures the operator. The command line fills it (BindFlags, then Validate);
// the test suites set the fields they need and call Setup.
type Options struct {
	// CommandLine: what only the command line sets (main and NewManager read it, Setup does not).
	CommandLine
	API                 config.APIConfig
	Watches             []watches.Watch
	ResyncPeriod        time.Duration // engine refresh of Ready add-ons; default 10m
	PriceRefresh        time.Duration // price systems' TTL (status.price); 0: catalog.DefaultPriceRefresh; < 0: off
	HelmReconcilePeriod time.Duration // for watches that set none; default 10m
	Workers             int           // per kind; default 4
	APIRateLimit        float64       // requests/s per credential set; 0 = client default
	APITimeout          time.Duration // per-attempt Clever Cloud request timeout; 0 = client default (30s)
	// DefaultDeletionPolicy ("Delete" or "Orphan") and OnAddonMissing ("recreate" or "report")
	// apply to resources that do not choose.
	DefaultDeletionPolicy string
	OnAddonMissing        string
	// BackupMaxAge: how old the newest backup may be before BackupStale (default 36h).
	BackupMaxAge time.Duration
	// Namespaces are the watched namespaces, as given to ManagerOptions (nil: all).
	Namespaces []string
	// CredentialsExpiryWarning is how long before a known credentials expiry the operator
	// warns (Warning events and the expiry metric's alert); default 7 days, negative: never.
	CredentialsExpiryWarning time.Duration
	// Pod names the operator's own Pod (namespace/name[/uid], from the downward API), which
	// receives the Warning events about the operator's own credentials; "" = log only.
	Pod string
	// DefaultCredentials is the ClusterCleverCredentials of resources that name none (and
	// have no override Secret); "" = "default". NoDefaultCredentials: none (every such
	// resource uses the operator's credentials, allowed everything).
	DefaultCredentials   string
	NoDefaultCredentials bool
	// SkipCreateDefaultCredentials: do not create the default ClusterCleverCredentials at
	// start-up when it is absent.
	SkipCreateDefaultCredentials bool
	// OperatorNamespace is where a ClusterCleverCredentials' Secret is when it names no
	// namespace (default: the namespace of Pod).
	OperatorNamespace string
	// CredentialsCheckPeriod is how often credentials objects are checked (default 10m).
	CredentialsCheckPeriod time.Duration
	Registerer             prometheus.Registerer
	Log                    logr.Logger
	// ClaimKey signs the addon-claim annotations (proof that a namespace created an add-on);
	// nil: LoadClaimKey's order (env CLEVER_OPERATOR_CLAIM_KEY, then ClaimKeySecret,
	// created when missing, else a key for this process only).
	ClaimKey       []byte
	ClaimKeySecret types.NamespacedName
	// CacheGuard is the guard given to ManagerOptions: Setup gives it the claim key.
	CacheGuard *CacheGuard
	// Selector (--watch-selector) limits both sides to the resources it selects, on top of
	// each watch's own selector; nil: all. RestrictCache applies it to the manager's cache.
	Selector *WatchSelector
	// CellarEndpoint maps a Cellar host (CELLAR_ADDON_HOST) and key id to the S3 endpoint
	// CellarBuckets call and whether over TLS (nil: the host itself, over TLS; tests point it
	// at a local S3 server).
	CellarEndpoint func(host, keyID string) (endpoint string, secure bool)
	// Kinds is the table of kinds the watches are looked up in (nil: kinds.Kinds); a test
	// adds a kind with a copy of it holding one more row (test/newkind).
	Kinds []kinds.Kind
}

// NewScheme returns the scheme the manager needs: the built-in types and the credentials
// kinds. The add-on custom resources are handled as unstructured objects by both sides, so
// their typed API is not registered (the Helm reconciler registers each GVK as Unstructured
// itself).
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	// The credentials kinds are typed (only they: the add-on kinds stay unstructured).
	s.AddKnownTypes(v1alpha1.GroupVersion, &v1alpha1.CleverCredentials{}, &v1alpha1.CleverCredentialsList{},
		&v1alpha1.ClusterCleverCredentials{}, &v1alpha1.ClusterCleverCredentialsList{})
	metav1.AddToGroupVersion(s, v1alpha1.GroupVersion)
	return s, nil
}

// ManagerOptions returns manager options with the operator's cache layout: unstructured
// reads are cached, only Secrets and ConfigMaps labelled as the operator's are cached (not
// every one in the cluster), and cached objects carry no managedFields. namespaces restricts
// the watch (empty: all namespaces). guard, given to Setup too (Options.CacheGuard), keeps
// the data of only the Secrets the operator signed (nil: no guard, for unit tests). The
// RESTMapper remembers its mappings (restmapper.go).
func ManagerOptions(scheme *runtime.Scheme, namespaces []string, guard *CacheGuard) ctrl.Options {
	opts := ctrl.Options{
		Scheme: scheme,
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Cache: cache.Options{
			// Nothing reads managedFields; without them a cached resource or Secret takes
			// about a third less memory. The strings cached objects repeat (keys, namespace,
			// labels, conditions' reasons...) then share one copy: about a quarter less again
			// for an unstructured resource (internal/intern).
			DefaultTransform: chainTransforms(cache.TransformStripManagedFields(), dropRenderedSecretData, intern.NewPool(0).Transform),
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Secret{}:    {Label: labels.SelectorFromSet(labels.Set{kinds.LabelManagedBy: kinds.ManagedByValue})},
				&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(labels.Set{kinds.LabelManagedBy: kinds.ManagedByValue})},
			},
		},
		LeaderElectionID: DefaultLeaderElectionID,
		MapperProvider:   newRESTMapper,
	}
	if guard != nil {
		// ByObject is keyed by pointer: its own entries are updated in place.
		for obj, by := range opts.Cache.ByObject {
			by.Transform = chainTransforms(opts.Cache.DefaultTransform, guard.Transform)
			opts.Cache.ByObject[obj] = by
		}
	}
	opts.Cache.DefaultNamespaces = namespaceConfig(namespaces)
	return opts
}

// renderedRoles are the roles of the Secrets the chart renders from the source Secret.
var renderedRoles = map[string]bool{kinds.RoleCredentials: true, "binding": true}

// dropRenderedSecretData is a cache transform: the Secrets the chart renders (the credentials
// Secret and the binding Secret, labelled with the operator's managed-by label and a role of
// renderedRoles) are cached without their data. The operator reads only their metadata from
// the cache (the uid and resourceVersion of the Helm side's drift check, the credentials-hash
// annotation of the rollout, their existence for the Rust operator's adoption), and nothing
// updates them from a cached copy (Helm writes them with its own client, from the release).
// The add-on's credentials are then held once in the cache, in the source Secret they are
// rendered from, instead of three times; about a tenth of the cache at 5,000 resources.
// Code that needs a rendered Secret's data must read it live (APIReader).
func dropRenderedSecretData(o any) (any, error) {
	if s, ok := o.(*corev1.Secret); ok && s.Labels[kinds.LabelManagedBy] == kinds.ManagedByValue && renderedRoles[s.Labels[kinds.LabelRole]] {
		s.Data, s.StringData = nil, nil
	}
	return o, nil
}

// chainTransforms applies cache transforms in turn.
func chainTransforms(fs ...toolscache.TransformFunc) toolscache.TransformFunc {
	return func(o any) (any, error) {
		var err error
		for _, f := range fs {
			if o, err = f(o); err != nil {
				return nil, err
			}
		}
		return o, nil
	}
}

// namespaceConfig restricts a cache to the given namespaces (nil: all namespaces).
func namespaceConfig(namespaces []string) map[string]cache.Config {
	var m map[string]cache.Config
	for _, n := range namespaces {
		if n = strings.TrimSpace(n); n != "" {
			if m == nil {
				m = map[string]cache.Config{}
			}
			m[n] = cache.Config{}
		}
	}
	return m
}

// Setup registers both reconcilers of every watch, and the health checks, on mgr.
func Setup(mgr ctrl.Manager, o Options) error {
	if o.Registerer == nil {
		o.Registerer = ctrlmetrics.Registry
	}
	apiMetrics := clevercloud.NewMetrics(o.Registerer)
	overrides, err := newOverrideSecrets(mgr, o.Namespaces)
	if err != nil {
		return err
	}
	defName := o.DefaultCredentials
	if defName == "" {
		defName = credentials.DefaultCredentialsName
	}
	if o.NoDefaultCredentials {
		defName = ""
	}
	opNS := o.OperatorNamespace
	if opNS == "" && o.Pod != "" {
		opNS, _, _ = strings.Cut(o.Pod, "/")
	}
	creds := &credentials.Resolver{
		Reader:            mgr.GetClient(),
		Overrides:         overrides,
		SecretReader:      mgr.GetAPIReader(),
		Global:            o.API,
		DefaultName:       defName,
		OperatorNamespace: opNS,
		NewClient: func(c config.APIConfig) (*clevercloud.Client, error) {
			return clevercloud.NewFromConfig(c, clevercloud.ClientOptions{RateLimit: o.APIRateLimit, Timeout: o.APITimeout, Metrics: apiMetrics})
		},
	}
	claimKey := o.ClaimKey
	if len(claimKey) == 0 {
		if claimKey, err = LoadClaimKey(context.Background(), mgr, o.ClaimKeySecret, o.Log); err != nil {
			return err
		}
	}
	if o.CacheGuard != nil {
		o.CacheGuard.SetKey(claimKey)
	}
	enq := &credentials.Enqueuer{Reader: mgr.GetClient(), DefaultName: defName, Log: o.Log.WithName("credentials")}
	plans := &catalog.PlanCache{}
	var prices *catalog.PriceCache
	if o.PriceRefresh >= 0 {
		prices = &catalog.PriceCache{TTL: o.PriceRefresh}
	}
	o.Watches = withSelector(o.Watches, o.Selector)
	table := o.Kinds
	if table == nil {
		table = kinds.Kinds
	}
	var watched []kinds.Kind
	for _, w := range o.Watches {
		if k, ok := kinds.Lookup(table, w.GroupVersionKind); ok {
			watched = append(watched, *k)
		}
	}
	engineMetrics := metrics.NewEngine(o.Registerer, mgr.GetCache(), watched)
	ngr := &networkgroup.Reconciler{Client: mgr.GetClient(), Credentials: creds, Recorder: mgr.GetEventRecorderFor("clever-operator"),
		ResyncPeriod: o.ResyncPeriod, Log: o.Log.WithName("networkgroup")}
	if o.Selector != nil {
		ngr.Selector = o.Selector.Labels
	}
	recorder := mgr.GetEventRecorderFor("clever-operator")
	// One index of Helm release Secrets for every kind's Helm side: Helm's queries become GETs
	// by name instead of LISTs that go through every Secret of the namespace.
	adoptCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	releases, err := hybrid.NewReleaseIndex(adoptCtx, mgr, namespaceConfig(o.Namespaces), o.Log.WithName("helm"))
	cancel()
	if err != nil {
		return err
	}
	for _, w := range o.Watches {
		kind, ok := kinds.Lookup(table, w.GroupVersionKind)
		if !ok {
			return fmt.Errorf("watches.yaml lists %s, which the operator does not manage", w.GroupVersionKind)
		}
		// The first publication of a resource writes its status once, with the Helm side's
		// write after the install (statusmerge.Board).
		ho := statusmerge.New()
		handoffs := engineMetrics.StatusHandoffs.MustCurryWith(prometheus.Labels{"kind": kind.GVK.Kind})
		ho.Observe = func(outcome string) { handoffs.WithLabelValues(outcome).Inc() }
		if err := hybrid.Setup(mgr, w, kind, hybrid.Options{
			DefaultReconcilePeriod: o.HelmReconcilePeriod, DefaultMaxConcurrentReconciles: o.Workers, Log: o.Log.WithName("helm"),
			Releases: releases, Handoff: ho, SourceKey: claimKey,
		}); err != nil {
			return err
		}
		var sel labels.Selector
		if w.Selector != nil {
			var err error
			if sel, err = metav1.LabelSelectorAsSelector(w.Selector); err != nil {
				return fmt.Errorf("watches.yaml %s: selector: %w", w.GroupVersionKind, err)
			}
		}
		eng := &addon.Reconciler{
			Selector: sel,
			Kind:     kind, Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder,
			Credentials: creds, Plans: plans, Prices: prices, ResyncPeriod: o.ResyncPeriod, MaxConcurrentReconciles: o.Workers,
			DefaultDeletionPolicy: o.DefaultDeletionPolicy, OnAddonMissing: o.OnAddonMissing, BackupMaxAge: o.BackupMaxAge, Metrics: engineMetrics,
			Log: o.Log.WithName("addon"), Triggers: enq.Source(kind.GVK), ClaimKey: claimKey, NetworkGroupChanged: ngr.Wake,
			Handoff: ho,
		}
		if err := eng.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up %s: %w", kind.GVK.Kind, err)
		}
	}
	if err := ngr.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up NetworkGroup: %w", err)
	}
	cbr := &cellarbucket.Reconciler{Client: mgr.GetClient(), Credentials: creds, Recorder: recorder,
		ResyncPeriod: o.ResyncPeriod, Log: o.Log.WithName("cellarbucket"), Endpoint: o.CellarEndpoint, SignKey: claimKey}
	if o.Selector != nil {
		cbr.Selector = o.Selector.Labels
	}
	if err := cbr.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up CellarBucket: %w", err)
	}
	inUse, err := setupInUse(mgr, o, watched)
	if err != nil {
		return err
	}
	if err := setupCredentials(mgr, o, creds, enq, overrides, recorder, inUse); err != nil {
		return err
	}
	expiry := newExpiryWatcher(o, overrides, recorder)
	if err := overrides.onChange(context.Background(), expiry.changed); err != nil {
		return err
	}
	if err := mgr.Add(expiry); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	var synced atomic.Bool
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			synced.Store(true)
		}
		<-ctx.Done()
		return nil
	})); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("readyz", syncedCheck(&synced))
}

// syncedCheck fails until the manager's caches have synced, so a new replica is not Ready
// before it can serve (controller-runtime's own checks only ping).
func syncedCheck(synced *atomic.Bool) healthz.Checker {
	return func(*http.Request) error {
		if !synced.Load() {
			return errors.New("caches not synced yet")
		}
		return nil
	}
}

// setupCredentials registers the credentials objects' controllers, the creation of the
// default ClusterCleverCredentials, and the wake-ups of the resources whose override Secret
// changed.
func setupCredentials(mgr ctrl.Manager, o Options, res *credentials.Resolver, enq *credentials.Enqueuer, overrides *overrideSecrets, recorder record.EventRecorder, inUse *credentials.InUse) error {
	for _, cluster := range []bool{false, true} {
		r := &credentials.Reconciler{Cluster: cluster, Client: mgr.GetClient(), Resolver: res, Enqueuer: enq, Recorder: recorder,
			Period: o.CredentialsCheckPeriod, Log: o.Log.WithName("credentials")}
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the credentials controller: %w", err)
		}
	}
	if res.DefaultName != "" && !o.SkipCreateDefaultCredentials {
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			// Not fatal: without it, resources use the operator's credentials, allowed everything.
			if err := credentials.EnsureDefault(ctx, mgr.GetClient(), mgr.GetAPIReader(), res.DefaultName, o.Log.WithName("credentials")); err != nil {
				o.Log.Error(err, "creating the default ClusterCleverCredentials")
			}
			return nil
		})); err != nil {
			return err
		}
	}
	// Namespaces' labels decide which ClusterCleverCredentials select them: the resolver reads
	// them from this metadata-only cache, and a change of labels wakes the namespace's resources.
	nsMeta := &metav1.PartialObjectMetadata{}
	nsMeta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	inf, err := mgr.GetCache().GetInformer(context.Background(), nsMeta)
	if err != nil {
		return fmt.Errorf("cache of namespaces: %w", err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(client.Object)
			n, ok2 := newObj.(client.Object)
			if ok1 && ok2 && !labels.Equals(o.GetLabels(), n.GetLabels()) {
				enq.All(context.Background(), n.GetName())
			}
		},
	}); err != nil {
		return err
	}
	return overrides.onNamespaceChange(context.Background(), func(ns string) {
		if ns != "" {
			enq.Namespace(context.Background(), ns)
			inUse.Wake(ns)
		}
	})
}

// setupInUse registers the controller that keeps a namespace's own credentials while its
// deletion still needs them (credentials.InUseFinalizer), with a cache of the metadata of the
// Secrets it marked.
func setupInUse(mgr ctrl.Manager, o Options, watched []kinds.Kind) (*credentials.InUse, error) {
	sec := &metav1.PartialObjectMetadata{}
	sec.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	armed, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:        mgr.GetHTTPClient(),
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: namespaceConfig(o.Namespaces),
		DefaultTransform:  cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			sec: {Label: labels.SelectorFromSet(labels.Set{credentials.InUseLabel: "true"})},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("cache of the Secrets marked in use: %w", err)
	}
	if err := mgr.Add(cacheRunnable{armed}); err != nil {
		return nil, err
	}
	kinds := []schema.GroupVersionKind{kinds.NetworkGroupGVK, cellarbucket.GVK}
	for _, k := range watched {
		kinds = append(kinds, k.GVK)
	}
	r := &credentials.InUse{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Kinds: kinds, Armed: armed,
		Log: o.Log.WithName("credentials-in-use")}
	if err := r.SetupWithManager(mgr, credentials.ArmedSource(armed)); err != nil {
		return nil, fmt.Errorf("setting up the credentials-in-use controller: %w", err)
	}
	return r, nil
}
