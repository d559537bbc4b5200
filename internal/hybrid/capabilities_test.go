package hybrid

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

type configGetterFunc func(context.Context, client.Object) (*action.Configuration, error)

func (f configGetterFunc) ActionConfigFor(ctx context.Context, o client.Object) (*action.Configuration, error) {
	return f(ctx, o)
}

var _ helmclient.ActionConfigGetter = configGetterFunc(nil)

// The action configurations handed to helm-operator-plugins carry the shared check.
func TestActionConfigSharesReachability(t *testing.T) {
	kc := kube.New(genericclioptions.NewConfigFlags(false))
	c := &cachingCapabilities{ActionConfigGetter: configGetterFunc(func(context.Context, client.Object) (*action.Configuration, error) {
		return &action.Configuration{KubeClient: kc}, nil
	})}
	c.reachedAt = time.Now() // a recent success: no check is made (the config points nowhere)
	c.caps = &chartutil.Capabilities{}
	c.at = time.Now()
	cfg, err := c.ActionConfigFor(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rc, ok := cfg.KubeClient.(*reachableClient)
	if !ok || rc.Client != kc {
		t.Fatalf("KubeClient is %T; want Helm's client wrapped in *reachableClient", cfg.KubeClient)
	}
	if err := cfg.KubeClient.IsReachable(); err != nil {
		t.Fatalf("IsReachable after a recent success: %v", err)
	}
}

// Every Helm action checks that the cluster is reachable (GET /version, on a clientset built
// for the purpose); the action configurations share one recent success instead.
func TestReachabilityCheckShared(t *testing.T) {
	var versions, failing atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		versions.Add(1)
		if failing.Load() == 1 {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"major":"1","minor":"35","gitVersion":"v1.35.4"}`))
	}))
	defer srv.Close()
	newClient := func() *kube.Client {
		cf := genericclioptions.NewConfigFlags(false)
		cf.APIServer = &srv.URL
		return kube.New(cf)
	}
	shared := &cachingCapabilities{}

	// A failure is not reused: each action checks again and gets Helm's error.
	failing.Store(1)
	for i := range 2 {
		if err := (&reachableClient{Client: newClient(), shared: shared}).IsReachable(); err == nil {
			t.Fatalf("check %d: unreachable cluster reported reachable", i)
		}
	}
	if n := versions.Load(); n < 2 {
		t.Fatalf("%d GET /version for two checks of an unreachable cluster; want each to ask", n)
	}

	// A success answers the next checks, from other action configurations too.
	failing.Store(0)
	versions.Store(0)
	for i := range 5 {
		if err := (&reachableClient{Client: newClient(), shared: shared}).IsReachable(); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
	}
	if n := versions.Load(); n != 1 {
		t.Fatalf("%d GET /version for 5 actions; want 1", n)
	}
}
