package hybrid

import (
	"context"
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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/logging"
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
