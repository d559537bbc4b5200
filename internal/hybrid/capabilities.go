package hybrid

import (
	"context"
	"sync"
	"time"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/kube"
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

	// reachedAt is when kube-apiserver last answered a reachability check (see reachable).
	reachMu   sync.Mutex
	reachedAt time.Time
}

// reachableTTL is how long a reachability check that succeeded answers for every Helm action
// of the kind (each kind has its own cachingCapabilities).
const reachableTTL = 10 * time.Second

// reachableClient is Helm's Kubernetes client with its reachability check shared between
// action configurations (see cachingCapabilities.reachable). It embeds the concrete client,
// so the optional interfaces Helm asserts (kube.InterfaceExt, InterfaceThreeWayMerge,
// InterfaceDeletionPropagation, ...) are still implemented.
type reachableClient struct {
	*kube.Client
	shared *cachingCapabilities
}

func (c *reachableClient) IsReachable() error { return c.shared.reachable(c.Client) }

// Create is Helm's, noting what it created (noteApplied: the install then remembers its
// objects as repaired).
func (c *reachableClient) Create(resources kube.ResourceList) (*kube.Result, error) {
	res, err := c.Client.Create(resources)
	if err == nil {
		noteApplied(resources)
	}
	return res, err
}

// Update is Helm's, noting the objects it leaves as the target manifest says (noteApplied:
// the upgrade then remembers them as repaired).
func (c *reachableClient) Update(original, target kube.ResourceList, force bool) (*kube.Result, error) {
	res, err := c.Client.Update(original, target, force)
	if err == nil {
		noteApplied(target)
	}
	return res, err
}

// reachable answers Helm's check that the cluster is reachable, which every action (the Get
// and the dry-run upgrade of each reconcile included) makes first: on Helm's own client it
// builds a new clientset and sends GET /version each time. A success is reused for
// reachableTTL; a failure is not (the next action checks again and reports Helm's error).
func (c *cachingCapabilities) reachable(kc *kube.Client) error {
	c.reachMu.Lock()
	defer c.reachMu.Unlock()
	if !c.reachedAt.IsZero() && time.Since(c.reachedAt) < reachableTTL {
		return nil
	}
	if err := kc.IsReachable(); err != nil {
		return err
	}
	c.reachedAt = time.Now()
	return nil
}

func (c *cachingCapabilities) ActionConfigFor(ctx context.Context, obj client.Object) (*action.Configuration, error) {
	cfg, err := c.ActionConfigGetter.ActionConfigFor(ctx, obj)
	if err != nil {
		return nil, err
	}
	if caps := c.get(cfg); caps != nil {
		cfg.Capabilities = caps
	}
	if kc, ok := cfg.KubeClient.(*kube.Client); ok {
		cfg.KubeClient = &reachableClient{Client: kc, shared: c}
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

// The optional interfaces Helm's actions assert on their Kubernetes client.
var (
	_ kube.InterfaceExt                 = (*reachableClient)(nil)
	_ kube.InterfaceThreeWayMerge       = (*reachableClient)(nil)
	_ kube.InterfaceDeletionPropagation = (*reachableClient)(nil)
	_ kube.InterfaceResources           = (*reachableClient)(nil)
	_ kube.InterfaceLogs                = (*reachableClient)(nil)
)
