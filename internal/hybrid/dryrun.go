package hybrid

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"regexp"
	"sync"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
)

// unchangedReleases remembers, per release, the inputs of the last dry-run upgrade that
// rendered exactly the deployed manifest. helm-operator-plugins runs that dry-run on every
// reconcile (each status event of the resource and each reconcilePeriod) only to learn
// whether the release must be upgraded; with the same deployed revision, chart and values
// the answer cannot change, and rendering it again was more than half the Helm side's CPU.
// Only a digest is kept: no values (credentials) are held here.
var unchangedReleases sync.Map // namespace/release name -> digest string

// dryRunDigest identifies a dry-run upgrade of the deployed release cur to chrt with vals, u
// being what the upgrade's options set (see upgradeSettings): "" when it is not a dry-run,
// the options are not the plain ones (an upgrade annotation such as force is set), the
// release is not deployed, or the values cannot be encoded; such a dry-run is not remembered.
func dryRunDigest(cur *release.Release, chrt *chart.Chart, vals map[string]any, u *action.Upgrade) string {
	if cur == nil || cur.Info == nil || cur.Info.Status != release.StatusDeployed || chrt == nil || chrt.Metadata == nil || u == nil || !u.DryRun {
		return ""
	}
	// Plain means: nothing but the dry-run itself and the history limit.
	if !reflect.DeepEqual(u, &action.Upgrade{DryRun: u.DryRun, DryRunOption: u.DryRunOption, MaxHistory: u.MaxHistory}) {
		return ""
	}
	b, err := json.Marshal(vals) // map keys are sorted: the same values give the same bytes
	if err != nil {
		return ""
	}
	return digestOf(cur, chrt, b)
}

// digestOf is the digest of a dry-run upgrade of cur to chrt with values encoded as valsJSON.
func digestOf(cur *release.Release, chrt *chart.Chart, valsJSON []byte) string {
	h := sha256.New()
	_, _ = h.Write([]byte(cur.Namespace + "\x00" + cur.Name + "\x00" + chrt.Metadata.Name + "\x00" + chrt.Metadata.Version + "\x00"))
	_, _ = h.Write([]byte{byte(cur.Version >> 24), byte(cur.Version >> 16), byte(cur.Version >> 8), byte(cur.Version)})
	_, _ = h.Write([]byte(cur.Manifest))
	_, _ = h.Write(valsJSON)
	return hex.EncodeToString(h.Sum(nil))
}

func releaseKey(namespace, name string) string { return namespace + "/" + name }

// unchangedDryRun returns what the dry-run would return when its digest matches the
// remembered one: a release with the deployed manifest (all the caller compares).
func unchangedDryRun(cur *release.Release, chrt *chart.Chart, vals map[string]any, digest string) *release.Release {
	if digest == "" {
		return nil
	}
	if v, ok := unchangedReleases.Load(releaseKey(cur.Namespace, cur.Name)); !ok || v.(string) != digest {
		return nil
	}
	return &release.Release{
		Name: cur.Name, Namespace: cur.Namespace, Version: cur.Version + 1, Chart: chrt, Config: vals,
		Manifest: cur.Manifest, Info: &release.Info{Status: release.StatusPendingUpgrade, Description: "Dry run complete"},
	}
}

// rememberDryRun records a dry-run that rendered the deployed manifest, and forgets the
// release's entry otherwise.
func rememberDryRun(cur, out *release.Release, digest string) {
	if cur == nil {
		return
	}
	if digest != "" && out != nil && out.Manifest == cur.Manifest {
		unchangedReleases.Store(releaseKey(cur.Namespace, cur.Name), digest)
		return
	}
	unchangedReleases.Delete(releaseKey(cur.Namespace, cur.Name))
}

// installValues returns the encoded values of an install whose release may be remembered
// as rendered (seedDryRun): nil when the install has options (an install annotation), the
// chart may render differently on an upgrade, or the values cannot be encoded.
func installValues(chrt *chart.Chart, vals map[string]any, opts []helmclient.InstallOption) []byte {
	if len(opts) > 0 || chrt == nil || chrt.Metadata == nil || !rendersAlikeOnUpgrade(chrt) {
		return nil
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return nil
	}
	return b
}

// seedDryRun records a fresh install as the last dry-run of its release: a dry-run upgrade
// of the installed revision with the same chart and values renders what the install
// rendered (same templates, values, post-renderers; the chart reads nothing that differs
// between an install and an upgrade, see rendersAlikeOnUpgrade). Without it the first
// reconcile after each install (woken by the resource's status writes) rendered the chart
// again only to find the same manifest: at 5,000 resources created at once, 5,000 renders
// while the installs of the others still queue for the same action slots.
func seedDryRun(rel *release.Release, chrt *chart.Chart, valsJSON []byte) {
	if rel == nil || valsJSON == nil || rel.Info == nil || rel.Info.Status != release.StatusDeployed {
		return
	}
	unchangedReleases.Store(releaseKey(rel.Namespace, rel.Name), digestOf(rel, chrt, valsJSON))
}

// alikeCharts caches rendersAlikeOnUpgrade per chart (the watches' charts are loaded once).
var alikeCharts sync.Map // *chart.Chart -> bool

// installOnly are what a template can read that differs between an install and an upgrade
// of the same values: the release's revision and install/upgrade flags, and the cluster
// (.Capabilities, lookup: an upgrade may run later, against another cluster state).
var installOnly = []string{".Release.IsInstall", ".Release.IsUpgrade", ".Release.Revision", ".Capabilities", "lookup"}

// templateComment is a template comment ({{/* ... */}}, with or without trims): what it says
// is not rendered.
var templateComment = regexp.MustCompile(`(?s)\{\{-?\s*/\*.*?\*/\s*-?\}\}`)

// rendersAlikeOnUpgrade says whether no template of chrt (or of its dependencies) mentions
// anything of installOnly: the chart then renders the same manifest on an install and on a
// later upgrade with the same values.
func rendersAlikeOnUpgrade(chrt *chart.Chart) bool {
	if v, ok := alikeCharts.Load(chrt); ok {
		return v.(bool)
	}
	alike := true
	var walk func(c *chart.Chart)
	walk = func(c *chart.Chart) {
		for _, t := range c.Templates {
			code := templateComment.ReplaceAll(t.Data, nil)
			for _, s := range installOnly {
				if bytes.Contains(code, []byte(s)) {
					alike = false
				}
			}
		}
		for _, d := range c.Dependencies() {
			walk(d)
		}
	}
	walk(chrt)
	alikeCharts.Store(chrt, alike)
	return alike
}

// upgradeSettings applies the options to an empty upgrade to read what they set (nil when
// one fails).
func upgradeSettings(opts []helmclient.UpgradeOption) *action.Upgrade {
	u := &action.Upgrade{}
	for _, o := range opts {
		if err := o(u); err != nil {
			return nil
		}
	}
	return u
}
