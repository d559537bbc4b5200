package hybrid

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"github.com/operator-framework/helm-operator-plugins/pkg/values"
	"github.com/operator-framework/helm-operator-plugins/pkg/watches"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/logging"
	"github.com/clever-operator/clever-operator/internal/status"
)

func TestSettingsFor(t *testing.T) {
	defaults := Options{DefaultReconcilePeriod: 7 * time.Minute, DefaultMaxConcurrentReconciles: 3}
	cases := []struct {
		name string
		w    watches.Watch
		o    Options
		want settings
	}{
		{"operator defaults", watches.Watch{}, Options{}, settings{period: DefaultReconcilePeriod, workers: DefaultMaxConcurrentReconciles}},
		{"flag defaults", watches.Watch{}, defaults, settings{period: 7 * time.Minute, workers: 3}},
		{"watchDependentResources unset means watch", watches.Watch{}, defaults, settings{period: 7 * time.Minute, workers: 3, skipDependentWatches: false}},
		{"watchDependentResources true means watch", watches.Watch{WatchDependentResources: ptr.To(true)}, defaults, settings{period: 7 * time.Minute, workers: 3, skipDependentWatches: false}},
		{"watchDependentResources false means skip", watches.Watch{WatchDependentResources: ptr.To(false)}, defaults, settings{period: 7 * time.Minute, workers: 3, skipDependentWatches: true}},
		{"per-watch period and workers win", watches.Watch{ReconcilePeriod: &metav1.Duration{Duration: time.Hour}, MaxConcurrentReconciles: ptr.To(9)}, defaults, settings{period: time.Hour, workers: 9}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := settingsFor(c.w, c.o); got != c.want {
				t.Fatalf("settingsFor = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestReleaseNamePrefixAndLimit(t *testing.T) {
	k, _ := kinds.KindFor(kinds.Kinds[0].GVK)
	if got := k.ReleaseName("db"); got != "postgresql-db" {
		t.Fatalf("ReleaseName(db) = %q", got)
	}
	long := "a-very-long-resource-name-that-goes-on-and-on-and-on-x"
	a, b := k.ReleaseName(long), k.ReleaseName(long+"y")
	if len(a) > 53 || len(b) > 53 {
		t.Fatalf("release names too long: %d, %d", len(a), len(b))
	}
	if a == b {
		t.Fatalf("distinct long names collide: %q", a)
	}
}

func TestMergeEngineStatusKeepsEngineFieldsAndDropsManifest(t *testing.T) {
	helmWrite := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{
			"conditions":      []any{map[string]any{"type": "Deployed", "status": "True", "reason": "InstallSuccessful"}},
			"deployedRelease": map[string]any{"name": "postgresql-db", "manifest": "kind: Secret\ndata:\n  PASSWORD: c2VjcmV0\n"},
		},
	}}
	live := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{
			"addon":              "addon_1",
			"observedGeneration": int64(3),
			"conditions":         []any{map[string]any{"type": status.TypeAddonReady, "status": "True", "reason": status.ReasonProvisioned, "message": "ok"}},
		},
	}}
	sc := NewStatusClient(getOnly{live: live}, nil)
	sc.fix(context.Background(), helmWrite, helmPausedIn(helmWrite))
	if v, _, _ := unstructured.NestedString(helmWrite.Object, "status", "addon"); v != "addon_1" {
		t.Fatalf("status.addon = %q", v)
	}
	if v, _, _ := unstructured.NestedInt64(helmWrite.Object, "status", "observedGeneration"); v != 3 {
		t.Fatalf("observedGeneration = %d", v)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(helmWrite.Object, "status", "deployedRelease", "manifest"); found {
		t.Fatal("manifest kept")
	}
	ready, _ := status.Find(status.Conditions(helmWrite), status.TypeReady)
	if ready.Status != "True" || ready.Reason != status.ReasonProvisioned {
		t.Fatalf("Ready = %+v", ready)
	}
}

func TestMergeEngineStatusDropsWhatTheEngineRemoved(t *testing.T) {
	// The Helm side read the resource while it was in a Network Group; the engine has since
	// removed the membership and its condition: the Helm side's write must not bring them back.
	helmWrite := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{
			"networkGroups": []any{map[string]any{"ref": "a", "id": "ng_1", "member": "redis_1"}},
			"conditions": []any{
				map[string]any{"type": "Deployed", "status": "True", "reason": "UpgradeSuccessful"},
				map[string]any{"type": status.TypeNetworkGroups, "status": "True", "reason": status.ReasonNetworkGroupsJoined},
			},
		},
	}}
	live := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{
			"addon":      "addon_1",
			"conditions": []any{map[string]any{"type": status.TypeAddonReady, "status": "True", "reason": status.ReasonProvisioned}},
		},
	}}
	MergeEngineStatus(helmWrite, live)
	if _, found, _ := unstructured.NestedFieldNoCopy(helmWrite.Object, "status", "networkGroups"); found {
		t.Error("status.networkGroups the engine removed came back")
	}
	if _, ok := status.Find(status.Conditions(helmWrite), status.TypeNetworkGroups); ok {
		t.Error("the NetworkGroups condition the engine removed came back")
	}
	if _, ok := status.Find(status.Conditions(helmWrite), "Deployed"); !ok {
		t.Error("the Helm side's own condition was dropped")
	}
}

// getOnly is a client whose Get returns a fixed live object (the cache, in production).
type getOnly struct {
	client.Client
	live *unstructured.Unstructured
}

func (g getOnly) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	obj.(*unstructured.Unstructured).Object = g.live.DeepCopy().Object
	return nil
}

func TestCappedLoggerHidesReleaseDiffs(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 10})
	l := logging.Capped(base, logging.MaxHelmVerbosity)
	if l.V(4).Enabled() {
		t.Fatal("V(4) enabled: helm-operator-plugins would print release diffs with credentials")
	}
	if !l.V(3).Enabled() || !l.WithName("x").WithValues("k", "v").V(3).Enabled() {
		t.Fatal("V(3) must stay enabled")
	}
	l.WithValues("a", 1).V(5).Info("hidden")
	l.V(1).Info("shown")
	if len(lines) != 1 {
		t.Fatalf("logged %v", lines)
	}
}

func TestWithOverrides(t *testing.T) {
	base := values.TranslatorFunc(func(context.Context, *unstructured.Unstructured) (chartutil.Values, error) {
		return chartutil.Values{"secretName": "db-secrets", "credentials": map[string]any{"A": "1"}}, nil
	})
	tr := withOverrides(base, map[string]string{"credentials.EXTRA": "x", "secretName": "other"})
	vals, err := tr.Translate(context.Background(), &unstructured.Unstructured{})
	if err != nil {
		t.Fatal(err)
	}
	if vals["secretName"] != "other" || vals["credentials"].(map[string]any)["EXTRA"] != "x" || vals["credentials"].(map[string]any)["A"] != "1" {
		t.Fatalf("values = %v", vals)
	}
	if withOverrides(base, nil) == nil {
		t.Fatal("nil overrides must keep the translator")
	}
}

func TestFailPendingRelease(t *testing.T) {
	store := storage.Init(driver.NewMemory())
	deployed := &release.Release{Name: "postgresql-db", Version: 1, Info: &release.Info{Status: release.StatusSuperseded}}
	pending := &release.Release{Name: "postgresql-db", Version: 2, Info: &release.Info{Status: release.StatusPendingUpgrade}}
	for _, r := range []*release.Release{deployed, pending} {
		if err := store.Create(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := failPendingRelease(store, "postgresql-db"); err != nil {
		t.Fatal(err)
	}
	last, err := store.Last("postgresql-db")
	if err != nil {
		t.Fatal(err)
	}
	if last.Version != 2 || last.Info.Status != release.StatusFailed {
		t.Fatalf("last = v%d %s, want v2 failed", last.Version, last.Info.Status)
	}
	// A settled release is left alone.
	if err := failPendingRelease(store, "postgresql-db"); err != nil {
		t.Fatal(err)
	}
	if first, _ := store.Get("postgresql-db", 1); first.Info.Status != release.StatusSuperseded {
		t.Fatalf("v1 changed to %s", first.Info.Status)
	}
}

// countingActions records how many installs and upgrades run at once.
type countingActions struct {
	helmclient.ActionInterface
	mu        sync.Mutex
	cur, peak int
}

func (c *countingActions) run() (*release.Release, error) {
	c.mu.Lock()
	c.cur++
	c.peak = max(c.peak, c.cur)
	c.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	c.mu.Lock()
	c.cur--
	c.mu.Unlock()
	return &release.Release{}, nil
}

func (c *countingActions) Install(string, string, *chart.Chart, map[string]any, ...helmclient.InstallOption) (*release.Release, error) {
	return c.run()
}

func (c *countingActions) Upgrade(string, string, *chart.Chart, map[string]any, ...helmclient.UpgradeOption) (*release.Release, error) {
	return c.run()
}

func TestHelmActionsBoundedAcrossKinds(t *testing.T) {
	inner := &countingActions{}
	var wg sync.WaitGroup
	n := 3 * ActionSlots()
	for i := range n {
		kind := &kinds.Kinds[i%len(kinds.Kinds)]
		p := &prefixedActionClient{ActionInterface: inner, kind: kind}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_, _ = p.Install("x", "ns", nil, nil)
			} else {
				_, _ = p.Upgrade("x", "ns", nil, nil)
			}
		}()
	}
	wg.Wait()
	if inner.peak != ActionSlots() {
		t.Fatalf("%d actions at once, want the bound %d (from %d callers)", inner.peak, ActionSlots(), n)
	}
}

// countingStatus counts the status writes that reach the API server.
type countingStatus struct {
	client.SubResourceWriter
	updates int
}

func (c *countingStatus) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	c.updates++
	return nil
}

// helmRewrite is what helm-operator-plugins' status updater sends for a resource whose status
// it read from the cache: the conditions as its own type (type, status, reason, message,
// lastTransitionTime; any other field lost), its deployedRelease with the manifest, and
// nothing else.
func helmRewrite(t *testing.T, cached *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	type helmCondition struct {
		Type               string `json:"type"`
		Status             string `json:"status"`
		Reason             string `json:"reason,omitempty"`
		Message            string `json:"message,omitempty"`
		LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	}
	var st struct {
		Conditions      []helmCondition   `json:"conditions"`
		DeployedRelease map[string]string `json:"deployedRelease,omitempty"`
	}
	raw, _, _ := unstructured.NestedMap(cached.Object, "status")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st); err != nil {
		t.Fatal(err)
	}
	st.DeployedRelease = map[string]string{"name": "postgresql-db", "manifest": "kind: Secret\n"}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		t.Fatal(err)
	}
	u := cached.DeepCopy()
	u.Object["status"] = out
	return u
}

func TestHelmStatusWriteThatChangesNothingIsNotSent(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
		"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "7", "generation": int64(3)},
		"status": map[string]any{
			"addon": "addon_1", "observedGeneration": int64(3),
			"conditions": []any{
				map[string]any{"type": status.TypeAddonReady, "status": "True", "reason": status.ReasonProvisioned, "message": "ok", "lastTransitionTime": "2026-11-24T09:00:00Z", "observedGeneration": int64(3)},
				map[string]any{"type": "Deployed", "status": "True", "reason": "InstallSuccessful", "lastTransitionTime": "2026-11-24T09:00:01Z"},
			},
		},
	}}
	// The first Helm write after the engine's: Ready is computed, the manifest dropped. Then
	// the API server stores it and the cache decodes it.
	sc := NewStatusClient(getOnly{live: live}, nil)
	sc.now = func() time.Time { return time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC) }
	first := helmRewrite(t, live)
	sc.fix(context.Background(), first, helmPausedIn(first))
	b, err := first.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	stored := &unstructured.Unstructured{}
	if err := stored.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}

	w := &countingStatus{}
	later := NewStatusClient(getOnly{live: stored}, nil)
	later.now = func() time.Time { return time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC) } // an hour on
	sw := &statusWriter{SubResourceWriter: w, c: later}
	if err := sw.Update(context.Background(), helmRewrite(t, stored)); err != nil {
		t.Fatal(err)
	}
	if w.updates != 0 {
		t.Fatalf("a status write that changes nothing was sent (%d)", w.updates)
	}
	// A change (a Helm condition), or a stale resourceVersion, is sent.
	changed := helmRewrite(t, stored)
	changed.Object["status"].(map[string]any)["conditions"].([]any)[1].(map[string]any)["reason"] = "UpgradeSuccessful"
	if err := sw.Update(context.Background(), changed); err != nil || w.updates != 1 {
		t.Fatalf("a changed status was not sent (%d, %v)", w.updates, err)
	}
	// A write from a reconcile that started before the engine's last write (an older
	// resourceVersion) is rebased on the cached version: not sent when it changes nothing,
	// sent at the cached version otherwise (no conflict, no second reconcile).
	stale := helmRewrite(t, stored)
	stale.SetResourceVersion("6")
	if err := sw.Update(context.Background(), stale); err != nil || w.updates != 1 {
		t.Fatalf("a stale write that changes nothing was sent (%d, %v)", w.updates, err)
	}
	staleChanged := helmRewrite(t, stored)
	staleChanged.SetResourceVersion("6")
	staleChanged.Object["status"].(map[string]any)["conditions"].([]any)[1].(map[string]any)["reason"] = "UpgradeSuccessful"
	if err := sw.Update(context.Background(), staleChanged); err != nil || w.updates != 2 || staleChanged.GetResourceVersion() != "7" {
		t.Fatalf("a stale changed write was not sent at the cached version (%d, %v, rv %s)", w.updates, err, staleChanged.GetResourceVersion())
	}
	// A cached copy older than the write (the cache lags) is never used as a base.
	ahead := helmRewrite(t, stored)
	ahead.SetResourceVersion("8")
	if err := sw.Update(context.Background(), ahead); err != nil || w.updates != 3 || ahead.GetResourceVersion() != "8" {
		t.Fatalf("a write ahead of the cache was not sent as is (%d, %v)", w.updates, err)
	}
}

// TestPausedHelmWriteBeforeTheEngineIsNotSent: while the Helm side waits for the engine (no
// AddonReady yet), its status write (Unknown conditions) is not sent; once the engine has
// reported, or when the resource is being deleted, it is.
func TestPausedHelmWriteBeforeTheEngineIsNotSent(t *testing.T) {
	paused := func(engine bool, deleting bool) *unstructured.Unstructured {
		conds := []any{map[string]any{"type": status.TypePaused, "status": "True", "reason": "ReconcilePauseAnnotationTrue"},
			map[string]any{"type": "Deployed", "status": "Unknown"}}
		if engine {
			conds = append(conds, map[string]any{"type": status.TypeAddonReady, "status": "False", "reason": status.ReasonProvisioning, "message": "waiting"})
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
			"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "7", "generation": int64(1)},
			"status":   map[string]any{"conditions": conds},
		}}
		if deleting {
			now := metav1.Now()
			u.SetDeletionTimestamp(&now)
		}
		return u
	}
	cases := []struct {
		name             string
		engine, deleting bool
		sent             int
	}{
		{"engine has not reported: not sent", false, false, 0},
		{"engine has reported: sent", true, false, 1},
		{"being deleted: sent", false, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			live := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
				"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "7", "generation": int64(1)},
				"status":   map[string]any{"observedGeneration": int64(0)},
			}}
			if c.engine {
				live.Object["status"] = paused(true, false).Object["status"]
			}
			if n := statusWritesSent(t, live, paused(c.engine, c.deleting)); n != c.sent {
				t.Fatalf("sent %d, want %d", n, c.sent)
			}
		})
	}
}

// TestPausedHelmWriteThatOnlyAddsUnknownsIsNotSent: once the engine has reported an add-on
// still being provisioned, a paused Helm write that would only add Helm's conditions as
// Unknown to a resource it never rendered is not sent (Ready comes from the engine's
// conditions); a paused write that changes a condition the resource has, or an unpaused one,
// is.
func TestPausedHelmWriteThatOnlyAddsUnknownsIsNotSent(t *testing.T) {
	obj := func(conds ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
			"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "7", "generation": int64(1)},
			"status":   map[string]any{"addon": "addon_1", "conditions": conds},
		}}
	}
	cond := func(t, st, reason string) map[string]any {
		return map[string]any{"type": t, "status": st, "reason": reason, "message": "m", "lastTransitionTime": "2026-11-28T09:00:00Z", "observedGeneration": int64(1)}
	}
	provisioning := []any{cond(status.TypeAddonReady, "False", status.ReasonProvisioning), cond(status.TypeReady, "False", status.ReasonProvisioning)}
	rendered := []any{cond(status.TypeAddonReady, "True", status.ReasonProvisioned), cond("Deployed", "True", "InstallSuccessful"), cond(status.TypeReady, "True", status.ReasonProvisioned)}
	helmPaused := []any{cond(status.TypePaused, "True", "ReconcilePauseAnnotationTrue"), cond("Deployed", "Unknown", ""), cond("Initialized", "Unknown", ""), cond("ReleaseFailed", "Unknown", ""), cond("Irreconcilable", "Unknown", "")}
	helmRunning := []any{cond(status.TypePaused, "False", ""), cond("Initialized", "True", ""), cond("Deployed", "False", "")}
	cases := []struct {
		name       string
		live, sent []any
		want       int
	}{
		{"provisioning, never rendered, paused: not sent", provisioning, helmPaused, 0},
		{"rendered once, now paused (Deployed True to Unknown): sent", rendered, helmPaused, 1},
		{"provisioning, not paused (Initialized True): sent", provisioning, helmRunning, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			live := obj(c.live...)
			sent := append([]any(nil), c.sent...)
			for _, lc := range c.live { // Helm's write carries the engine's conditions as it read them
				if !slices.ContainsFunc(c.sent, func(x any) bool { return x.(map[string]any)["type"] == lc.(map[string]any)["type"] }) {
					sent = append(sent, lc)
				}
			}
			if n := statusWritesSent(t, live, obj(sent...)); n != c.want {
				t.Fatalf("sent %d, want %d", n, c.want)
			}
		})
	}
}

// TestHelmWriteThatOnlyReordersConditionsIsNotSent: conditions are a list-map keyed by type;
// Helm's updater rebuilds them in its own order, which is no change.
func TestHelmWriteThatOnlyReordersConditionsIsNotSent(t *testing.T) {
	conds := []any{
		map[string]any{"type": status.TypeAddonReady, "status": "True", "reason": status.ReasonProvisioned, "message": "ok", "lastTransitionTime": "2026-11-24T09:00:00Z", "observedGeneration": int64(1)},
		map[string]any{"type": "Deployed", "status": "True", "reason": "InstallSuccessful", "message": "release was successfully installed", "lastTransitionTime": "2026-11-24T09:00:01Z"},
		map[string]any{"type": status.TypeReady, "status": "True", "reason": status.ReasonProvisioned, "message": "ok", "lastTransitionTime": "2026-11-24T09:00:01Z", "observedGeneration": int64(1)},
	}
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
		"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "7", "generation": int64(1)},
		"status":   map[string]any{"addon": "addon_1", "observedGeneration": int64(1), "conditions": conds},
	}}
	reordered := live.DeepCopy()
	reordered.Object["status"].(map[string]any)["conditions"] = []any{conds[1], conds[0], conds[2]}
	if statusWritesSent(t, live, reordered) != 0 {
		t.Fatalf("a write that only reorders the conditions was sent")
	}
}

// statusWritesSent passes Helm's status write u through the status wrapper over a cache holding
// live, and counts the writes that reach the API server.
func statusWritesSent(t *testing.T, live, u *unstructured.Unstructured) int {
	t.Helper()
	w := &countingStatus{}
	sw := &statusWriter{SubResourceWriter: w, c: NewStatusClient(getOnly{live: live}, nil)}
	if err := sw.Update(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return w.updates
}

// updateRecorder records the resource updates that reach the API server; it holds a source
// Secret when source is set.
type updateRecorder struct {
	client.Client
	fail    error
	source  bool
	updated []*unstructured.Unstructured
}

func (r *updateRecorder) Update(_ context.Context, obj client.Object, _ ...client.UpdateOption) error {
	if r.fail != nil {
		return r.fail
	}
	r.updated = append(r.updated, obj.(*unstructured.Unstructured).DeepCopy())
	return nil
}

func (r *updateRecorder) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok && r.source {
		return nil
	}
	return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
}

// TestHelmFinalizerWriteCarriesTheEngines: Helm adding its uninstall finalizer to a new
// resource leaves the write to the engine while the pause handler holds it (no source Secret),
// and otherwise adds the engine's finalizer in the same write; never on a resource being
// deleted.
func TestHelmFinalizerWriteCarriesTheEngines(t *testing.T) {
	kind, _ := kinds.KindFor(kinds.Kinds[0].GVK)
	cases := []struct {
		name       string
		finalizers []string
		deleting   bool
		source     bool
		want       int // finalizers sent; -1: no write
	}{
		{"new resource, no source Secret: left to the engine", []string{kinds.HelmUninstallFinalizer}, false, false, -1},
		{"new resource with a source Secret: both in one write", []string{kinds.HelmUninstallFinalizer}, false, true, 2},
		{"another finalizer: both in one write", []string{"example.com/keep", kinds.HelmUninstallFinalizer}, false, false, 3},
		{"engine's already there", []string{kind.Finalizer(), kinds.HelmUninstallFinalizer}, false, false, 2},
		{"being deleted: untouched", []string{kinds.HelmUninstallFinalizer}, true, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(kind.GVK)
			u.SetName("db")
			u.SetUID("uid-helm")
			u.SetFinalizers(c.finalizers)
			if c.deleting {
				now := metav1.Now()
				u.SetDeletionTimestamp(&now)
			}
			rec := &updateRecorder{source: c.source}
			if err := NewStatusClient(rec, kind).Update(context.Background(), u); err != nil {
				t.Fatal(err)
			}
			if c.want < 0 {
				if len(rec.updated) != 0 {
					t.Fatalf("sent %v; want no write", rec.updated)
				}
				if !controllerutil.ContainsFinalizer(u, kinds.HelmUninstallFinalizer) || controllerutil.ContainsFinalizer(u, kind.Finalizer()) {
					t.Fatalf("finalizers in memory %v", u.GetFinalizers())
				}
				return
			}
			if len(rec.updated) != 1 || len(rec.updated[0].GetFinalizers()) != c.want {
				t.Fatalf("sent %v", rec.updated)
			}
		})
	}
}
