package kube

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Watch is a reader of the add-on resources of one namespace (every kind) answered from
// watches: an informer cache, listed once and kept up to date by kube-apiserver's watch events.
// WaitReady and WaitGone poll by listing every resource of every kind; polled against
// kube-apiserver, at thousands of resources each poll is a LIST of every object (5,000 objects
// a second at P6's 5,000 point), which costs kube-apiserver and the caller more with each
// resource added: the measurement would grow faster than what it measures. Polled against a
// Watch, a poll costs nothing outside the caller's process, and kube-apiserver sends each
// change once, as it does to the operator's own informers.
type Watch struct {
	cache.Cache
	stop context.CancelFunc
}

// NewWatch starts the watches of namespace ns and waits until they have listed it once
// (within timeout). Stop ends them.
func NewWatch(ctx context.Context, cfg *rest.Config, ns string, timeout time.Duration) (*Watch, error) {
	kinds, err := Kinds()
	if err != nil {
		return nil, err
	}
	c, err := cache.New(cfg, cache.Options{
		DefaultNamespaces:            map[string]cache.Config{ns: {}},
		DefaultUnsafeDisableDeepCopy: ptr.To(true), // read only: count Ready conditions
	})
	if err != nil {
		return nil, err
	}
	wctx, stop := context.WithCancel(ctx)
	for _, gvk := range kinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if _, err := c.GetInformer(wctx, u); err != nil {
			stop()
			return nil, fmt.Errorf("watching %s: %w", gvk.Kind, err)
		}
	}
	go func() { _ = c.Start(wctx) }()
	sctx, cancel := context.WithTimeout(wctx, timeout)
	defer cancel()
	if !c.WaitForCacheSync(sctx) {
		stop()
		return nil, fmt.Errorf("watches of namespace %s not synced after %s", ns, timeout)
	}
	return &Watch{Cache: c, stop: stop}, nil
}

// Stop ends the watches.
func (w *Watch) Stop() { w.stop() }

var _ client.Reader = (*Watch)(nil)
