package operator

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/credentials"
)

// overrideSecrets serves the per-namespace credentials Secrets (credentials.OverrideSecretNames)
// from one informer per name, each watching only the Secrets of that name (field selector).
// Resolving a namespace's credentials then costs no API request, and an edit of such a
// Secret is seen at once. Only these Secrets are held, not every Secret of the cluster.
type overrideSecrets struct {
	byName map[string]cache.Cache
}

// cacheRunnable makes the manager start a cache with its own and wait for its sync before
// starting the controllers.
type cacheRunnable struct{ cache.Cache }

func (c cacheRunnable) GetCache() cache.Cache { return c.Cache }

func newOverrideSecrets(mgr ctrl.Manager, namespaces []string) (*overrideSecrets, error) {
	o := &overrideSecrets{byName: map[string]cache.Cache{}}
	for _, name := range credentials.OverrideSecretNames {
		c, err := cache.New(mgr.GetConfig(), cache.Options{
			HTTPClient:        mgr.GetHTTPClient(),
			Scheme:            mgr.GetScheme(),
			Mapper:            mgr.GetRESTMapper(),
			DefaultNamespaces: namespaceConfig(namespaces),
			DefaultTransform:  cache.TransformStripManagedFields(),
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Secret{}: {Field: fields.OneTermEqualSelector("metadata.name", name)},
			},
		})
		if err != nil {
			return nil, fmt.Errorf("cache of the %s Secrets: %w", name, err)
		}
		// Register the informer now so it starts (and syncs) with the manager.
		if _, err := c.GetInformer(context.Background(), &corev1.Secret{}); err != nil {
			return nil, fmt.Errorf("cache of the %s Secrets: %w", name, err)
		}
		if err := mgr.Add(cacheRunnable{c}); err != nil {
			return nil, err
		}
		o.byName[name] = c
	}
	return o, nil
}

// Get reads one of the override Secrets from its cache.
func (o *overrideSecrets) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c, ok := o.byName[key.Name]
	if !ok {
		return fmt.Errorf("secret %s is not a per-namespace credentials Secret", key.Name)
	}
	return c.Get(ctx, key, obj, opts...)
}

// list returns every override Secret held by the caches (nil receiver: none).
func (o *overrideSecrets) list(ctx context.Context) []corev1.Secret {
	if o == nil {
		return nil
	}
	var out []corev1.Secret
	for _, name := range credentials.OverrideSecretNames {
		c, ok := o.byName[name]
		if !ok {
			continue
		}
		var l corev1.SecretList
		if err := c.List(ctx, &l); err == nil {
			out = append(out, l.Items...)
		}
	}
	return out
}

// onChange calls fn (which must not block) whenever an override Secret is added or changed.
func (o *overrideSecrets) onChange(ctx context.Context, fn func()) error {
	if o == nil {
		return nil
	}
	for _, name := range credentials.OverrideSecretNames {
		c, ok := o.byName[name]
		if !ok {
			continue
		}
		inf, err := c.GetInformer(ctx, &corev1.Secret{})
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { fn() },
			UpdateFunc: func(any, any) { fn() },
		}); err != nil {
			return err
		}
	}
	return nil
}

// List is not used.
func (o *overrideSecrets) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("listing override Secrets is not supported")
}

// onNamespaceChange calls fn with the namespace of an override Secret created, changed or
// deleted after the start (fn must not block): a revoked or fixed override takes effect at
// once, not at the next retry.
func (o *overrideSecrets) onNamespaceChange(ctx context.Context, fn func(namespace string)) error {
	if o == nil {
		return nil
	}
	nsOf := func(obj any) string {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if s, ok := obj.(*corev1.Secret); ok {
			return s.Namespace
		}
		return ""
	}
	for _, name := range credentials.OverrideSecretNames {
		c, ok := o.byName[name]
		if !ok {
			continue
		}
		inf, err := c.GetInformer(ctx, &corev1.Secret{})
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, initial bool) {
				if !initial {
					fn(nsOf(obj))
				}
			},
			UpdateFunc: func(_, obj any) { fn(nsOf(obj)) },
			DeleteFunc: func(obj any) { fn(nsOf(obj)) },
		}); err != nil {
			return err
		}
	}
	return nil
}
