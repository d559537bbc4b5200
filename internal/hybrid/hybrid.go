// Package hybrid wires the Helm side of the operator: one helm-operator-plugins reconciler per
// watches.yaml entry that only renders the credentials Secret from what the provisioning
// engine (package addon) published. It never calls the Clever Cloud API.
package hybrid

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/operator-framework/helm-operator-plugins/pkg/annotation"
	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"github.com/operator-framework/helm-operator-plugins/pkg/reconciler"
	"github.com/operator-framework/helm-operator-plugins/pkg/values"
	"github.com/operator-framework/helm-operator-plugins/pkg/watches"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"helm.sh/helm/v3/pkg/strvals"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/logging"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/internal/statusmerge"
	"github.com/clever-operator/clever-operator/internal/templates"
	"github.com/clever-operator/clever-operator/internal/tracing"
)

// Defaults for a watches.yaml entry that does not set them.
const (
	DefaultReconcilePeriod         = 30 * time.Minute
	DefaultMaxConcurrentReconciles = 4
	// MaxReleaseHistory keeps old credentials from lingering in release Secrets.
	MaxReleaseHistory = 2
)

// ErrNotProvisioned is returned by the translator while the engine has not published the
// add-on's credentials yet (the pause handler normally prevents reaching it).
var ErrNotProvisioned = errors.New("add-on not provisioned yet")

// Options configures the Helm side.
type Options struct {
	// DefaultReconcilePeriod and DefaultMaxConcurrentReconciles apply where the watch is silent.
	DefaultReconcilePeriod         time.Duration
	DefaultMaxConcurrentReconciles int
	Log                            logr.Logger
	// Releases answers the release storage's queries (nil: Helm's Secrets driver as
	// helm-operator-plugins sets it up, one LIST per query).
	Releases *ReleaseIndex
	// Handoff, shared with the kind's engine, lets the engine's first publication of a
	// resource leave its status to this side's write after the install (nil: not used).
	Handoff *statusmerge.Board
	// SourceKey verifies the source Secrets' signatures (the operator's claim key): a source
	// Secret whose signature does not verify is rendered from as if it were missing.
	SourceKey []byte
}

// Setup builds and registers one Helm reconciler for a watches.yaml entry, honouring every
// option of the entry (watchDependentResources is "watch", so it is inverted into Skip...).
func Setup(mgr ctrl.Manager, w watches.Watch, kind *kinds.Kind, o Options) error {
	if w.Chart == nil {
		return fmt.Errorf("watch %s: chart %q not loaded", w.GroupVersionKind, w.ChartPath)
	}
	st := settingsFor(w, o)
	acg, err := actionClientGetter(mgr, kind, o.Releases)
	if err != nil {
		return err
	}
	opts := []reconciler.Option{
		reconciler.WithGroupVersionKind(w.GroupVersionKind),
		reconciler.WithChart(*w.Chart),
		reconciler.WithActionClientGetter(acg),
		reconciler.WithClient(NewStatusClient(mgr.GetClient(), kind).WithRecorder(mgr.GetEventRecorderFor("clever-operator")).WithHandoff(o.Handoff)),
		reconciler.WithValueTranslator(withOverrides(Translator(mgr.GetClient(), kind, o.SourceKey), w.OverrideValues)),
		reconciler.WithPauseReconcileHandler(PauseHandler(mgr.GetClient(), kind, o.SourceKey)),
		reconciler.WithReconcilePeriod(st.period),
		reconciler.WithMaxConcurrentReconciles(st.workers),
		reconciler.WithMaxReleaseHistory(MaxReleaseHistory),
		reconciler.SkipDependentWatches(st.skipDependentWatches),
		reconciler.WithInstallAnnotations(annotation.DefaultInstallAnnotations...),
		reconciler.WithUpgradeAnnotations(annotation.DefaultUpgradeAnnotations...),
		reconciler.WithUninstallAnnotations(annotation.DefaultUninstallAnnotations...),
		reconciler.WithLog(logging.Capped(o.Log.WithName(kind.Lower()), logging.MaxHelmVerbosity)),
	}
	if w.Selector != nil {
		opts = append(opts, reconciler.WithSelector(*w.Selector))
	}
	wake, err := sourceWatch(mgr.GetCache(), mgr.GetClient(), kind, w.GroupVersionKind, w.Selector)
	if err != nil {
		return err
	}
	opts = append(opts, reconciler.WithControllerSetupFunc(wake))
	r, err := reconciler.New(opts...)
	if err != nil {
		return fmt.Errorf("helm reconciler for %s: %w", w.GroupVersionKind, err)
	}
	return r.SetupWithManager(statusBlind(mgr, w.GroupVersionKind))
}

// settings are the reconciler settings of one watches.yaml entry.
type settings struct {
	period               time.Duration
	workers              int
	skipDependentWatches bool
}

// ReconcilePeriod is the Helm reconcile period of a watches.yaml entry: its own, else the
// operator's default (o.DefaultReconcilePeriod, else DefaultReconcilePeriod).
func ReconcilePeriod(w watches.Watch, o Options) time.Duration {
	switch {
	case w.ReconcilePeriod != nil:
		return w.ReconcilePeriod.Duration
	case o.DefaultReconcilePeriod != 0:
		return o.DefaultReconcilePeriod
	default:
		return DefaultReconcilePeriod
	}
}

// settingsFor maps a watch entry to reconciler settings. watchDependentResources defaults to
// true and means "watch"; the reconciler's option is "skip", so it is inverted here (the
// upstream helm-operator run command passes it through uninverted).
func settingsFor(w watches.Watch, o Options) settings {
	st := settings{period: ReconcilePeriod(w, o), workers: o.DefaultMaxConcurrentReconciles}
	if st.workers == 0 {
		st.workers = DefaultMaxConcurrentReconciles
	}
	if w.MaxConcurrentReconciles != nil {
		st.workers = *w.MaxConcurrentReconciles
	}
	st.skipDependentWatches = w.WatchDependentResources != nil && !*w.WatchDependentResources
	return st
}

// Translator builds the chart values from the resource and its source Secret (read from the
// cache; never an API call).
func Translator(c client.Client, kind *kinds.Kind, sourceKey []byte) values.Translator {
	return values.TranslatorFunc(func(ctx context.Context, obj *unstructured.Unstructured) (chartutil.Values, error) {
		src := &corev1.Secret{}
		key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: kind.SourceSecretName(obj.GetName())}
		if err := c.Get(ctx, key, src); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, ErrNotProvisioned
			}
			return nil, err
		}
		if !metav1.IsControlledBy(src, obj) {
			return nil, fmt.Errorf("secret %s is not controlled by this resource", key.Name)
		}
		if !secrets.Verified(sourceKey, src) {
			// Not as the operator wrote it (edited in the namespace, or not yet signed by
			// this version): the engine writes it again; the published Secret stays as it is.
			return nil, ErrNotProvisioned
		}
		return Values(kind, obj, src, secrets.Strings(src.Data))
	})
}

// Values builds the chart values from the resource's spec.secret and the add-on's keys.
// The templates are rendered here, under the operator's limits (templates.Render), and
// the chart only copies the results: Helm never executes a tenant's template. A bad template
// stops before Helm renders anything: the published Secret stays as it was.
func Values(kind *kinds.Kind, obj *unstructured.Unstructured, src *corev1.Secret, data map[string]string) (chartutil.Values, error) {
	p := kind.PublicationFor(obj)
	rendered, err := templates.Render(p.Templates, data)
	if err != nil {
		return nil, err
	}
	vals := chartutil.Values{
		"crName":          obj.GetName(),
		"kind":            kind.GVK.Kind,
		"component":       kind.Lower(),
		"addonId":         src.Annotations[kinds.AnnotationAddonID],
		"credentialsHash": src.Annotations[secrets.AnnotationCredentialsHash],
		"secret": map[string]any{
			"name":        p.SecretName,
			"enabled":     !p.Disabled,
			"labels":      anyMap(p.Labels),
			"annotations": anyMap(p.Annotations),
		},
		"credentials": anyMap(p.SecretData(data)),
		"templates":   anyMap(rendered),
	}
	if p.ConfigMapName != "" {
		vals["configMap"] = map[string]any{"name": p.ConfigMapName, "data": anyMap(p.ConfigMapData(kind, data))}
	}
	if p.BindingName != "" {
		vals["binding"] = map[string]any{"name": p.BindingName, "type": kind.Binding.Type, "data": anyMap(kind.BindingData(data))}
	}
	return vals, nil
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// withOverrides applies a watch's overrideValues (strvals syntax; watches.Load already expanded
// $ENV and templates) onto the
// translated values. helm-operator-plugins would apply them to the resource's spec, which
// this operator's translator does not pass to the chart, so they are applied here instead.
func withOverrides(t values.Translator, overrides map[string]string) values.Translator {
	if len(overrides) == 0 {
		return t
	}
	return values.TranslatorFunc(func(ctx context.Context, obj *unstructured.Unstructured) (chartutil.Values, error) {
		vals, err := t.Translate(ctx, obj)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(overrides))
		for k := range overrides {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := strvals.ParseInto(k+"="+overrides[k], vals); err != nil {
				return nil, fmt.Errorf("watches.yaml overrideValues %q: %w", k, err)
			}
		}
		return vals, nil
	})
}

// PauseHandler holds the Helm reconciler back (a) while the engine's finalizer is on a
// deleting resource, so the add-on is deleted before the Secret and release go, (b) while
// the add-on has not been provisioned yet, so no error is logged for the wait, and (c) while
// the user pauses the resource (api.clever-cloud.com/paused: "true"). A deleting resource is
// never held by a user pause.
func PauseHandler(c client.Client, kind *kinds.Kind, sourceKey []byte) reconciler.PauseReconcileHandlerFunc {
	return func(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
		if obj.GetDeletionTimestamp() != nil {
			return controllerutil.ContainsFinalizer(obj, kind.Finalizer()), nil
		}
		if obj.GetAnnotations()[kinds.AnnotationPaused] == "true" {
			return true, nil
		}
		return sourceNotUsable(ctx, c, kind, obj, sourceKey)
	}
}

// sourceNotUsable says whether obj's source Secret is absent from c (the cache), or not as
// the operator wrote it (its signature does not verify: edited in the namespace). The Helm
// reconcile is held then, as before the first publication: the published Secret stays as it
// is until the engine has written the source Secret again.
func sourceNotUsable(ctx context.Context, c client.Reader, kind *kinds.Kind, obj client.Object, key []byte) (bool, error) {
	src := &corev1.Secret{}
	err := c.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: kind.SourceSecretName(obj.GetName())}, src)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, err
	}
	return !secrets.Verified(key, src), nil
}

// sourceSecretMissing says whether obj's source Secret is absent from c (the cache): the pause
// handler holds the Helm reconcile then, and the Helm side's client leaves the finalizer write
// of a new resource to the engine (StatusClient.Update).
func sourceSecretMissing(ctx context.Context, c client.Reader, kind *kinds.Kind, obj client.Object) (bool, error) {
	err := c.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: kind.SourceSecretName(obj.GetName())}, &corev1.Secret{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// actionClientGetter prefixes release names with the kind so kinds never share a release.
func actionClientGetter(mgr ctrl.Manager, kind *kinds.Kind, releases *ReleaseIndex) (helmclient.ActionClientGetter, error) {
	var opts []helmclient.ActionConfigGetterOption
	if releases != nil {
		opts = append(opts, helmclient.StorageDriverMapper(releases.StorageDriver))
	}
	acg, err := helmclient.NewActionConfigGetter(mgr.GetConfig(), mgr.GetRESTMapper(), opts...)
	if err != nil {
		return nil, err
	}
	// The chart is ours and deterministic, and the API server validates what it receives: the
	// client-side OpenAPI validation of every install and (dry-run) upgrade would fetch and
	// parse the cluster's OpenAPI document each time, which was most of the operator's CPU.
	inner, err := helmclient.NewActionClientGetter(&cachingCapabilities{ActionConfigGetter: acg},
		helmclient.AppendInstallOptions(func(i *action.Install) error { i.DisableOpenAPIValidation = true; return nil }),
		helmclient.AppendUpgradeOptions(func(u *action.Upgrade) error { u.DisableOpenAPIValidation = true; return nil }),
	)
	if err != nil {
		return nil, err
	}
	return helmclient.ActionClientGetterFunc(func(ctx context.Context, obj client.Object) (helmclient.ActionInterface, error) {
		ac, err := inner.ActionClientFor(ctx, obj)
		if err != nil {
			return nil, err
		}
		return &prefixedActionClient{ActionInterface: ac, kind: kind, namespace: obj.GetNamespace(), cache: mgr.GetClient(), ctx: ctx, traced: traced(kind, obj), recover: func(name string) error {
			cfg, err := acg.ActionConfigFor(ctx, obj)
			if err != nil {
				return err
			}
			return failPendingRelease(cfg.Releases, name)
		}}, nil
	}), nil
}

type prefixedActionClient struct {
	helmclient.ActionInterface
	kind *kinds.Kind
	// namespace is the resource's (and its release's).
	namespace string
	// recover marks an interrupted release failed (see Upgrade).
	recover func(releaseName string) error
	// current is the release the last Get of this reconcile returned (an action client is
	// made per reconcile, and helm-operator-plugins reads the release twice before it acts):
	// the second read and the dry-run upgrade that follows are answered with it. Any install,
	// upgrade or uninstall forgets it. missing is the same for a release that does not exist
	// (the second read before an install).
	current *release.Release
	missing string
	// taken is a release a Get of this reconcile refused as another resource's
	// (releaseTaken): an uninstall of this resource leaves it alone.
	taken string
	// cache reads the published objects for the drift repair's shortcut (see Reconcile).
	cache client.Reader
	// ctx is the reconcile's and traced its resource: each install, upgrade, dry-run or
	// uninstall is a trace span when tracing is on (internal/tracing.StartHelm).
	ctx    context.Context
	traced tracing.Resource
}

// traced identifies obj in the trace spans of its Helm actions.
func traced(kind *kinds.Kind, obj client.Object) tracing.Resource {
	return tracing.Resource{Kind: kind.GVK.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}
}

// span starts the trace span of a Helm action (nothing when tracing is off).
func (p *prefixedActionClient) span(action, release string) func(error) {
	ctx := p.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	return tracing.StartHelm(ctx, action, p.traced, release)
}

// errPending is Helm's refusal to touch a release whose last operation never finished.
const errPending = "another operation (install/upgrade/rollback) is in progress"

// failPendingRelease marks the last revision of a release failed when it is still pending:
// the operator that started it died mid-way (one reconcile per resource runs at a time, under
// leader election, so nobody else is working on it). Helm then upgrades from it as usual;
// as an upgrade creates new objects before deleting old ones, nothing published is lost.
func failPendingRelease(store *storage.Storage, name string) error {
	last, err := store.Last(name)
	if err != nil {
		return err
	}
	if !last.Info.Status.IsPending() {
		return nil
	}
	last.SetStatus(release.StatusFailed, "interrupted: the operator stopped during this operation; marked failed by clever-operator")
	return store.Update(last)
}

// releaseTaken is the refusal of a release that another resource of the kind installed: a
// name of 53 characters or more is shortened with a hash (kinds.Kind.ReleaseName), and a
// shorter name can spell that shortened name exactly. Acting on it would replace (upgrade)
// or delete (uninstall) the other resource's published objects.
func (p *prefixedActionClient) releaseTaken(rel *release.Release, name string) error {
	owner, ok := rel.Config["crName"].(string)
	if !ok || owner == name {
		return nil
	}
	return fmt.Errorf("helm release %s belongs to %s %s of this namespace (both names give that release name): rename this resource; the operator leaves that release alone",
		rel.Name, p.kind.GVK.Kind, owner)
}

func (p *prefixedActionClient) Get(name string, opts ...helmclient.GetOption) (*release.Release, error) {
	if len(opts) > 0 {
		rel, err := p.ActionInterface.Get(p.kind.ReleaseName(name), opts...)
		if err == nil && rel != nil {
			if terr := p.releaseTaken(rel, name); terr != nil {
				return nil, terr
			}
		}
		return rel, err
	}
	if p.current != nil && p.current.Name == p.kind.ReleaseName(name) {
		return p.current, nil
	}
	if p.missing != "" && p.missing == p.kind.ReleaseName(name) {
		return nil, driver.ErrReleaseNotFound
	}
	rel, err := p.ActionInterface.Get(p.kind.ReleaseName(name))
	if err == nil && rel != nil {
		if terr := p.releaseTaken(rel, name); terr != nil {
			p.taken = rel.Name
			return nil, terr
		}
	}
	switch {
	case err == nil:
		p.current = rel
	case errors.Is(err, driver.ErrReleaseNotFound):
		p.missing = p.kind.ReleaseName(name)
	}
	return rel, err
}

func (p *prefixedActionClient) History(name string, opts ...helmclient.HistoryOption) ([]*release.Release, error) {
	return p.ActionInterface.History(p.kind.ReleaseName(name), opts...)
}

// actionSlots bounds the Helm installs and (dry-run) upgrades running at once across every
// kind. Each one holds a rendered chart, a release being gzip-encoded (about 1 MiB of
// compressor state) and decoded objects: with 4 workers for each of 14 kinds, a bulk create
// ran dozens at once, which is what made the operator's memory peak, not its cache. The
// work is CPU-bound on a local API server, so a few per core keep the same throughput.
var actionSlots = make(chan struct{}, ActionSlots())

// ActionSlots is the number of Helm actions that may run at once: two per usable core, at
// least 4.
func ActionSlots() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

func acquireAction() func() {
	actionSlots <- struct{}{}
	return func() { <-actionSlots }
}

func (p *prefixedActionClient) Install(name, namespace string, chrt *chart.Chart, vals map[string]any, opts ...helmclient.InstallOption) (*release.Release, error) {
	p.current, p.missing = nil, ""
	rn := p.kind.ReleaseName(name)
	valsJSON := installValues(chrt, vals, opts)
	return withConflictHold(releaseKey(namespace, rn), actionDigest("install", chrt, vals), func() (rel *release.Release, err error) {
		defer acquireAction()()
		end := p.span(tracing.HelmInstall, rn)
		defer func() { end(err) }()
		appliedObjects.Delete(releaseKey(namespace, rn)) // only what this install applies
		rel, err = p.ActionInterface.Install(rn, namespace, chrt, vals, opts...)
		if err == nil {
			seedDryRun(rel, chrt, valsJSON)
			seedReconciled(rel)
		} else {
			appliedObjects.Delete(releaseKey(namespace, rn))
		}
		return rel, err
	})
}

// Upgrade recovers a release left pending by an operator that died during an install or
// upgrade (Helm would refuse every later upgrade), then retries once.
//
// A dry-run upgrade (how helm-operator-plugins tells whether anything changed, on every
// reconcile) is answered from memory when it has the same inputs as the last one that
// rendered the deployed manifest (see unchangedReleases).
func (p *prefixedActionClient) Upgrade(name, namespace string, chrt *chart.Chart, vals map[string]any, opts ...helmclient.UpgradeOption) (*release.Release, error) {
	cur := p.current
	if cur != nil && (cur.Name != p.kind.ReleaseName(name) || cur.Namespace != namespace) {
		cur = nil
	}
	settings := upgradeSettings(opts)
	digest := dryRunDigest(cur, chrt, vals, settings)
	if rel := unchangedDryRun(cur, chrt, vals, digest); rel != nil {
		return rel, nil
	}
	if settings == nil || !settings.DryRun {
		p.current, p.missing = nil, ""
	}
	rn := p.kind.ReleaseName(name)
	action := "upgrade"
	if settings != nil && settings.DryRun {
		action = "dry-run"
	}
	return withConflictHold(releaseKey(namespace, rn), actionDigest(action, chrt, vals), func() (rel *release.Release, err error) {
		defer acquireAction()()
		end := p.span(action, rn)
		defer func() { end(err) }()
		applies := settings == nil || !settings.DryRun
		if applies {
			appliedObjects.Delete(releaseKey(namespace, rn)) // only what this upgrade applies
		}
		rel, err = p.ActionInterface.Upgrade(rn, namespace, chrt, vals, opts...)
		if digest != "" && err == nil {
			rememberDryRun(cur, rel, digest)
		}
		if err != nil && p.recover != nil && strings.Contains(err.Error(), errPending) {
			if rerr := p.recover(rn); rerr != nil {
				return rel, fmt.Errorf("%w (recovering the interrupted release: %v)", err, rerr)
			}
			rel, err = p.ActionInterface.Upgrade(rn, namespace, chrt, vals, opts...)
		}
		if applies {
			if err == nil {
				seedReconciled(rel)
			} else {
				appliedObjects.Delete(releaseKey(namespace, rn))
			}
		}
		return rel, err
	})
}

func (p *prefixedActionClient) Uninstall(name string, opts ...helmclient.UninstallOption) (*release.UninstallReleaseResponse, error) {
	if p.current != nil && p.current.Name == p.kind.ReleaseName(name) {
		unchangedReleases.Delete(releaseKey(p.current.Namespace, p.current.Name))
		reconciledReleases.Delete(releaseKey(p.current.Namespace, p.current.Name))
	}
	p.current, p.missing = nil, ""
	conflictHolds.Delete(releaseKey(p.namespace, p.kind.ReleaseName(name)))
	appliedObjects.Delete(releaseKey(p.namespace, p.kind.ReleaseName(name)))
	reconciledReleases.Delete(releaseKey(p.namespace, p.kind.ReleaseName(name)))
	if p.taken != "" && p.taken == p.kind.ReleaseName(name) {
		// Another resource's (the Get of this reconcile said so): nothing of this one to
		// uninstall.
		return nil, driver.ErrReleaseNotFound
	}
	end := p.span(tracing.HelmUninstall, p.kind.ReleaseName(name))
	resp, err := p.ActionInterface.Uninstall(p.kind.ReleaseName(name), opts...)
	end(err)
	return resp, err
}

// Reconcile is Helm's drift repair of the deployed release, run by helm-operator-plugins on
// every reconcile that changes nothing; it is skipped when the release's objects are as it
// left them last time (see reconciledReleases).
// cacheReadTimeout bounds the cache reads of the drift repair's shortcut (they only wait
// when an informer has not synced yet); on a timeout the repair runs the long way.
const cacheReadTimeout = 10 * time.Second

func (p *prefixedActionClient) Reconcile(rel *release.Release) error {
	if p.cache == nil || rel == nil {
		return p.ActionInterface.Reconcile(rel)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cacheReadTimeout)
	defer cancel()
	return reconcileIfTouched(ctx, p.cache, rel, func() error { return p.ActionInterface.Reconcile(rel) })
}
