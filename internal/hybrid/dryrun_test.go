package hybrid

import (
	"errors"
	"testing"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

// releaseActions is an in-memory Helm: one release, rendered as "manifest of <values>".
type releaseActions struct {
	helmclient.ActionInterface
	rel               *release.Release
	gets, renders     int
	upgrades, deletes int
	installFails      bool
}

func (a *releaseActions) Install(name, ns string, _ *chart.Chart, vals map[string]any, _ ...helmclient.InstallOption) (*release.Release, error) {
	a.renders++
	if a.installFails {
		return nil, errors.New("install failed")
	}
	a.rel = &release.Release{Name: name, Namespace: ns, Version: 1, Manifest: "kind: Secret\npassword: " + vals["password"].(string), Info: &release.Info{Status: release.StatusDeployed}}
	return a.rel, nil
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
func reconcile(t *testing.T, inner *releaseActions, kind *kinds.Kind, chrt *chart.Chart, vals map[string]any, opts ...helmclient.UpgradeOption) {
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
	kind := &kinds.Kinds[0]
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
	kind := &kinds.Kinds[1]
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

// Install records its release as rendered: the first reconcile after it (same chart and
// values) does not render the chart again; other values, install options or a chart that
// reads install-only data render as before.
func TestInstallSeedsTheDryRun(t *testing.T) {
	kind := &kinds.Kinds[2]
	chrt := &chart.Chart{Metadata: &chart.Metadata{Name: "clever-addon", Version: "0.1.0"}}
	one := map[string]any{"password": "one"}
	for _, c := range []struct {
		what        string
		chrt        *chart.Chart
		opts        []helmclient.InstallOption
		vals        map[string]any
		fail        bool
		wantRenders int
	}{
		{what: "same chart and values", chrt: chrt, vals: one, wantRenders: 0},
		{what: "other values", chrt: chrt, vals: map[string]any{"password": "two"}, wantRenders: 2},
		{what: "an install option", chrt: chrt, vals: one, opts: []helmclient.InstallOption{func(i *action.Install) error { i.DisableHooks = true; return nil }}, wantRenders: 1},
		{what: "a chart reading .Release.IsInstall", vals: one, wantRenders: 1, chrt: &chart.Chart{Metadata: &chart.Metadata{Name: "x", Version: "1"},
			Templates: []*chart.File{{Name: "templates/s.yaml", Data: []byte("{{ if .Release.IsInstall }}a: b{{ end }}")}}}},
		{what: "a failed install", chrt: chrt, vals: one, fail: true, wantRenders: 1},
	} {
		t.Run(c.what, func(t *testing.T) {
			inner := &releaseActions{installFails: c.fail}
			p := &prefixedActionClient{ActionInterface: inner, kind: kind}
			unchangedReleases.Delete(releaseKey("ns", kind.ReleaseName("db")))
			if _, err := p.Install("db", "ns", c.chrt, one, c.opts...); (err != nil) != c.fail {
				t.Fatalf("install: %v", err)
			}
			if c.fail {
				// The release exists all the same (e.g. written by an earlier try).
				inner.rel = &release.Release{Name: kind.ReleaseName("db"), Namespace: "ns", Version: 1,
					Manifest: "kind: Secret\npassword: one", Info: &release.Info{Status: release.StatusDeployed}}
			}
			r := inner.renders
			reconcile(t, inner, kind, c.chrt, c.vals)
			if got := inner.renders - r; got != c.wantRenders {
				t.Fatalf("first reconcile after the install rendered %d times; want %d", got, c.wantRenders)
			}
		})
	}
}

func TestRendersAlikeOnUpgrade(t *testing.T) {
	tpl := func(s string) *chart.Chart {
		return &chart.Chart{Metadata: &chart.Metadata{Name: "x", Version: "1"}, Templates: []*chart.File{{Name: "templates/a.yaml", Data: []byte(s)}}}
	}
	for s, want := range map[string]bool{
		"a: {{ .Values.a }}":                              true,
		"{{- /* no lookup, no .Capabilities */ -}}\na: b": true,
		"{{/* .Release.Revision */}}a: b":                 true,
		"rev: {{ .Release.Revision }}":                    false,
		"{{ if .Release.IsUpgrade }}a: b{{ end }}":        false,
		"v: {{ .Capabilities.KubeVersion }}":              false,
		`{{ $s := lookup "v1" "Secret" "ns" "n" }}`:       false,
	} {
		if got := rendersAlikeOnUpgrade(tpl(s)); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
	// A dependency's templates count.
	parent := tpl("a: b")
	parent.AddDependency(tpl("rev: {{ .Release.Revision }}"))
	if rendersAlikeOnUpgrade(parent) {
		t.Error("a dependency reading .Release.Revision was not seen")
	}
}
