package hybrid

import (
	"testing"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/clever-operator/clever-operator/internal/addon"
)

// releaseActions is an in-memory Helm: one release, rendered as "manifest of <values>".
type releaseActions struct {
	helmclient.ActionInterface
	rel               *release.Release
	gets, renders     int
	upgrades, deletes int
}

func (a *releaseActions) Get(string, ...helmclient.GetOption) (*release.Release, error) {
	a.gets++
	cp := *a.rel
	return &cp, nil
}

func (a *releaseActions) Upgrade(name, ns string, _ *chart.Chart, vals map[string]any, opts ...helmclient.UpgradeOption) (*release.Release, error) {
	a.renders++
	manifest := "kind: Secret\npassword: " + vals["password"].(string)
	if upgradeSettings(opts).DryRun {
		return &release.Release{Name: name, Namespace: ns, Manifest: manifest}, nil
	}
	a.upgrades++
	a.rel = &release.Release{Name: name, Namespace: ns, Version: a.rel.Version + 1, Manifest: manifest, Info: &release.Info{Status: release.StatusDeployed}}
	return a.rel, nil
}

func (a *releaseActions) Uninstall(string, ...helmclient.UninstallOption) (*release.UninstallReleaseResponse, error) {
	a.deletes++
	return &release.UninstallReleaseResponse{}, nil
}

func dryRun(u *action.Upgrade) error { u.DryRun, u.DryRunOption = true, "server"; return nil }

// reconcile does what helm-operator-plugins does on each reconcile with a fresh action
// client: read the release (twice), dry-run an upgrade, upgrade when the manifest differs.
func reconcile(t *testing.T, inner *releaseActions, kind *addon.Kind, chrt *chart.Chart, vals map[string]any, opts ...helmclient.UpgradeOption) {
	t.Helper()
	p := &prefixedActionClient{ActionInterface: inner, kind: kind}
	first, err := p.Get("db")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := p.Get("db")
	if err != nil || cur.Manifest != first.Manifest {
		t.Fatalf("second read: %v", err)
	}
	spec, err := p.Upgrade("db", "ns", chrt, vals, append([]helmclient.UpgradeOption{func(u *action.Upgrade) error { u.MaxHistory = 2; return nil }}, append(opts, dryRun)...)...)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Manifest != cur.Manifest {
		if _, err := p.Upgrade("db", "ns", chrt, vals); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUnchangedDryRunIsAnsweredFromMemory(t *testing.T) {
	kind := &addon.Kinds[0]
	chrt := &chart.Chart{Metadata: &chart.Metadata{Name: "clever-addon", Version: "0.1.0"}}
	inner := &releaseActions{rel: &release.Release{Name: kind.ReleaseName("db"), Namespace: "ns", Version: 1,
		Manifest: "kind: Secret\npassword: one", Info: &release.Info{Status: release.StatusDeployed}}}
	step := func(what string, vals map[string]any, wantGets, wantRenders, wantUpgrades int, opts ...helmclient.UpgradeOption) {
		t.Helper()
		g, r, u := inner.gets, inner.renders, inner.upgrades
		reconcile(t, inner, kind, chrt, vals, opts...)
		if inner.gets-g != wantGets || inner.renders-r != wantRenders || inner.upgrades-u != wantUpgrades {
			t.Fatalf("%s: %d reads, %d renders, %d upgrades; want %d, %d, %d", what,
				inner.gets-g, inner.renders-r, inner.upgrades-u, wantGets, wantRenders, wantUpgrades)
		}
	}
	one := map[string]any{"password": "one"}
	step("first reconcile", one, 1, 1, 0)
	step("same inputs", one, 1, 0, 0)
	step("same inputs again", one, 1, 0, 0)
	step("an upgrade annotation (force) is never answered from memory", one, 1, 1, 0,
		func(u *action.Upgrade) error { u.Force = true; return nil })
	two := map[string]any{"password": "two"}
	step("new values render and upgrade", two, 1, 2, 1)
	step("the new revision is rendered once", two, 1, 1, 0)
	step("then answered from memory", two, 1, 0, 0)
	step("back to the old values: rendered and upgraded", one, 1, 2, 1)

	// Another chart version (an operator upgrade) renders again.
	chrt = &chart.Chart{Metadata: &chart.Metadata{Name: "clever-addon", Version: "0.2.0"}}
	step("new chart", one, 1, 1, 0)
	step("new chart, same inputs", one, 1, 0, 0)

	// A release that is not deployed (failed, pending) is always rendered.
	inner.rel.Info.Status = release.StatusFailed
	step("failed release", one, 1, 1, 0)
	inner.rel.Info.Status = release.StatusDeployed

	// Uninstalling forgets the release.
	p := &prefixedActionClient{ActionInterface: inner, kind: kind}
	if _, err := p.Get("db"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Uninstall("db"); err != nil {
		t.Fatal(err)
	}
	if _, ok := unchangedReleases.Load(releaseKey("ns", kind.ReleaseName("db"))); ok {
		t.Fatal("uninstalled release still remembered")
	}
	step("after uninstall", one, 1, 1, 0)
}

func TestReleaseIsReadAgainAfterAWrite(t *testing.T) {
	kind := &addon.Kinds[1]
	inner := &releaseActions{rel: &release.Release{Name: kind.ReleaseName("db"), Namespace: "ns", Version: 1,
		Manifest: "kind: Secret\npassword: one", Info: &release.Info{Status: release.StatusDeployed}}}
	p := &prefixedActionClient{ActionInterface: inner, kind: kind}
	chrt := &chart.Chart{Metadata: &chart.Metadata{Name: "clever-addon", Version: "0.1.0"}}
	if _, err := p.Get("db"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Upgrade("db", "ns", chrt, map[string]any{"password": "two"}); err != nil {
		t.Fatal(err)
	}
	rel, err := p.Get("db")
	if err != nil {
		t.Fatal(err)
	}
	if inner.gets != 2 || rel.Version != 2 {
		t.Fatalf("after an upgrade: %d reads, revision %d; want 2 reads, revision 2", inner.gets, rel.Version)
	}
}
