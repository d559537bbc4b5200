package hybrid

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
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
	h := sha256.New()
	_, _ = h.Write([]byte(cur.Namespace + "\x00" + cur.Name + "\x00" + chrt.Metadata.Name + "\x00" + chrt.Metadata.Version + "\x00"))
	_, _ = h.Write([]byte{byte(cur.Version >> 24), byte(cur.Version >> 16), byte(cur.Version >> 8), byte(cur.Version)})
	_, _ = h.Write([]byte(cur.Manifest))
	_, _ = h.Write(b)
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
