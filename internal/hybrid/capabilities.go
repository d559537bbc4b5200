package hybrid

import (
	"context"
	"sync"
	"time"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// capabilitiesTTL is how long the cluster's capabilities (version, API versions) are reused
// by the Helm side before they are read again.
const capabilitiesTTL = 10 * time.Minute

// cachingCapabilities hands out action configurations whose Capabilities are filled from a
// shared cache. Without it, Helm invalidates the discovery cache and reads the whole API
// discovery again on every install and (dry-run) upgrade, i.e. on every Helm reconcile; the
// chart uses no capability, so reading them every 10 minutes is plenty.
type cachingCapabilities struct {
	helmclient.ActionConfigGetter

	mu   sync.Mutex
	caps *chartutil.Capabilities
	at   time.Time
}

func (c *cachingCapabilities) ActionConfigFor(ctx context.Context, obj client.Object) (*action.Configuration, error) {
	cfg, err := c.ActionConfigGetter.ActionConfigFor(ctx, obj)
	if err != nil {
		return nil, err
	}
	if caps := c.get(cfg); caps != nil {
		cfg.Capabilities = caps
	}
	return cfg, nil
}

// get returns the cached capabilities, reading them when absent or older than the TTL. On
// failure it returns nil and Helm reads them itself (and reports the error).
func (c *cachingCapabilities) get(cfg *action.Configuration) *chartutil.Capabilities {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.caps != nil && time.Since(c.at) < capabilitiesTTL {
		return c.caps
	}
	dc, err := cfg.RESTClientGetter.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	dc.Invalidate()
	kv, err := dc.ServerVersion()
	if err != nil {
		return nil
	}
	versions, err := action.GetVersionSet(dc)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil
	}
	c.caps = &chartutil.Capabilities{
		APIVersions: versions,
		KubeVersion: chartutil.KubeVersion{Version: kv.GitVersion, Major: kv.Major, Minor: kv.Minor},
		HelmVersion: chartutil.DefaultCapabilities.HelmVersion,
	}
	c.at = time.Now()
	return c.caps
}
