package hybrid

import (
	"context"
	"errors"
	"testing"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

const memoManifest = `---
# Source: clever-addon/templates/secret.yaml
apiVersion: v1
kind: Secret
metadata:
  name: db-secrets
stringData:
  PASSWORD: one
---
# Source: clever-addon/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: db-info
data:
  HOST: h
`

type repairCounter struct {
	releaseActions
	repairs int
	fail    error
}

func (r *repairCounter) Reconcile(*release.Release) error {
	r.repairs++
	return r.fail
}

func TestDriftRepairSkippedWhileTheObjectsAreUntouched(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-secrets", Namespace: "ns"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "db-info", Namespace: "ns"}},
	).Build()
	kind := &kinds.Kinds[2]
	inner := &repairCounter{}
	rel := &release.Release{Name: kind.ReleaseName("db"), Namespace: "ns", Version: 1, Manifest: memoManifest,
		Info: &release.Info{Status: release.StatusDeployed}}
	step := func(what string, rel *release.Release, wantRepair bool) {
		t.Helper()
		before := inner.repairs
		p := &prefixedActionClient{ActionInterface: inner, kind: kind, cache: c}
		if err := p.Reconcile(rel); !errors.Is(err, inner.fail) {
			t.Fatalf("%s: %v", what, err)
		}
		if got := inner.repairs > before; got != wantRepair {
			t.Fatalf("%s: repaired=%v, want %v", what, got, wantRepair)
		}
	}
	step("first time", rel, true)
	step("untouched", rel, false)
	step("still untouched", rel, false)

	sec := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "db-secrets"}, sec); err != nil {
		t.Fatal(err)
	}
	sec.StringData = map[string]string{"PASSWORD": "edited by hand"}
	if err := c.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	step("Secret edited", rel, true)
	step("after the repair", rel, false)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "db-info", Namespace: "ns"}}
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	step("ConfigMap deleted", rel, true)
	step("ConfigMap still missing (the fake repair does not recreate it)", rel, true)
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "db-info", Namespace: "ns"}}); err != nil {
		t.Fatal(err)
	}
	step("ConfigMap back", rel, true)
	step("then untouched", rel, false)

	next := *rel
	next.Version = 2
	step("a new revision", &next, true)
	step("the new revision untouched", &next, false)

	other := next
	other.Manifest = memoManifest + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n"
	step("a manifest with another kind", &other, true)
	step("is always repaired", &other, true)

	inner.fail = errors.New("patch refused")
	step("a failed repair", &next, true)
	inner.fail = nil
	step("is not remembered", &next, true)

	p := &prefixedActionClient{ActionInterface: inner, kind: kind, cache: c, current: &next}
	if _, err := p.Uninstall("db"); err != nil {
		t.Fatal(err)
	}
	if _, ok := reconciledReleases.Load(releaseKey("ns", kind.ReleaseName("db"))); ok {
		t.Fatal("uninstalled release still remembered")
	}
}

// applyingActions installs and upgrades as Helm's client does, as far as the memo sees it:
// the objects it applies are noted (noteApplied) with the uid and resourceVersion given.
type applyingActions struct {
	repairCounter
	applied []*resource.Info
	fail    error
}

func (a *applyingActions) apply(name, ns string, version int) (*release.Release, error) {
	if a.applied != nil {
		noteApplied(a.applied)
	}
	if a.fail != nil {
		return nil, a.fail
	}
	return &release.Release{Name: name, Namespace: ns, Version: version, Manifest: memoManifest, Info: &release.Info{Status: release.StatusDeployed}}, nil
}

func (a *applyingActions) Install(name, ns string, _ *chart.Chart, _ map[string]any, _ ...helmclient.InstallOption) (*release.Release, error) {
	return a.apply(name, ns, 1)
}

func (a *applyingActions) Upgrade(name, ns string, _ *chart.Chart, _ map[string]any, opts ...helmclient.UpgradeOption) (*release.Release, error) {
	return a.apply(name, ns, 2)
}

// appliedInfo is an object as Helm's client leaves it after applying it: refreshed with
// kube-apiserver's answer, carrying its release's annotations.
func appliedInfo(kind, name, release, uid, rv string) *resource.Info {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetUID(types.UID(uid))
	u.SetResourceVersion(rv)
	u.SetAnnotations(map[string]string{helmReleaseNameAnnotation: release, helmReleaseNamespaceAnnotation: "ns"})
	return &resource.Info{Name: name, Namespace: "ns", Object: u,
		Mapping: &meta.RESTMapping{GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: kind}}}
}

func TestInstallAndUpgradeRememberTheObjectsTheyApplied(t *testing.T) {
	ctx := context.Background()
	kind := &kinds.Kinds[3]
	rn := kind.ReleaseName("db")
	c := fake.NewClientBuilder().WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-secrets", Namespace: "ns", UID: "s1"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "db-info", Namespace: "ns", UID: "c1"}},
	).Build()
	rvOf := func(obj client.Object, name string) string {
		t.Helper()
		if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: name}, obj); err != nil {
			t.Fatal(err)
		}
		return obj.GetResourceVersion()
	}
	secretRV, cmRV := rvOf(&corev1.Secret{}, "db-secrets"), rvOf(&corev1.ConfigMap{}, "db-info")
	both := []*resource.Info{appliedInfo("Secret", "db-secrets", rn, "s1", secretRV), appliedInfo("ConfigMap", "db-info", rn, "c1", cmRV)}
	dryRun := func(u *action.Upgrade) error { u.DryRun = true; return nil }

	for _, tc := range []struct {
		name       string
		applied    []*resource.Info
		fail       error
		upgrade    []helmclient.UpgradeOption // nil: install
		wantRepair bool
	}{
		{name: "install, the cache at what it applied", applied: both, wantRepair: false},
		{name: "upgrade, the cache at what it applied", applied: both, upgrade: []helmclient.UpgradeOption{}, wantRepair: false},
		{name: "written since (the cache holds another version)", applied: []*resource.Info{
			appliedInfo("Secret", "db-secrets", rn, "s1", "stale"), both[1]}, wantRepair: true},
		{name: "another object under the name (another uid)", applied: []*resource.Info{
			appliedInfo("Secret", "db-secrets", rn, "other", secretRV), both[1]}, wantRepair: true},
		{name: "not every object of the manifest applied", applied: both[:1], wantRepair: true},
		{name: "another release's objects", applied: []*resource.Info{
			appliedInfo("Secret", "db-secrets", "redis-db", "s1", secretRV), appliedInfo("ConfigMap", "db-info", "redis-db", "c1", cmRV)}, wantRepair: true},
		{name: "a failed install", applied: both, fail: errors.New("refused"), wantRepair: true},
		{name: "a dry-run upgrade", applied: nil, upgrade: []helmclient.UpgradeOption{dryRun}, wantRepair: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reconciledReleases.Delete(releaseKey("ns", rn))
			appliedObjects.Delete(releaseKey("ns", rn))
			if tc.upgrade != nil && len(tc.upgrade) > 0 {
				noteApplied(both) // applied by an earlier action: a dry-run applies nothing, remembers nothing
			}
			inner := &applyingActions{applied: tc.applied, fail: tc.fail}
			p := &prefixedActionClient{ActionInterface: inner, kind: kind, cache: c}
			var rel *release.Release
			var err error
			if tc.upgrade == nil {
				rel, err = p.Install("db", "ns", &chart.Chart{Metadata: &chart.Metadata{Name: "c"}}, map[string]any{})
			} else {
				rel, err = p.Upgrade("db", "ns", &chart.Chart{Metadata: &chart.Metadata{Name: "c"}}, map[string]any{}, tc.upgrade...)
			}
			if (err != nil) != (tc.fail != nil) {
				t.Fatalf("action: %v", err)
			}
			if rel == nil {
				rel = &release.Release{Name: rn, Namespace: "ns", Version: 1, Manifest: memoManifest, Info: &release.Info{Status: release.StatusDeployed}}
			}
			if err := p.Reconcile(rel); err != nil {
				t.Fatal(err)
			}
			if got := inner.repairs > 0; got != tc.wantRepair {
				t.Fatalf("repaired=%v, want %v", got, tc.wantRepair)
			}
			if _, ok := appliedObjects.Load(releaseKey("ns", rn)); ok && tc.upgrade == nil {
				t.Fatal("the applied objects outlive the install")
			}
		})
	}

	// Remembered by an install, then edited: the next reconcile repairs.
	reconciledReleases.Delete(releaseKey("ns", rn))
	inner := &applyingActions{applied: both}
	p := &prefixedActionClient{ActionInterface: inner, kind: kind, cache: c}
	rel, err := p.Install("db", "ns", &chart.Chart{Metadata: &chart.Metadata{Name: "c"}}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{}
	rvOf(sec, "db-secrets")
	sec.StringData = map[string]string{"PASSWORD": "edited by hand"}
	if err := c.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	if err := p.Reconcile(rel); err != nil || inner.repairs != 1 {
		t.Fatalf("after an edit: %v, %d repairs; want 1", err, inner.repairs)
	}
}
