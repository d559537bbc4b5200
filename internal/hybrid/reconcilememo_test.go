package hybrid

import (
	"context"
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/clever-operator/clever-operator/internal/addon"
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
	kind := &addon.Kinds[2]
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
