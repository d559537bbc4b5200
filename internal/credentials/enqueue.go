package credentials

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Enqueuer wakes the engine's controllers for the add-on resources that use some credentials:
// one channel source per kind (the engine watches it), fed from the manager's cache.
type Enqueuer struct {
	// Reader lists the add-on resources (the manager's cache).
	Reader client.Reader
	// DefaultName is the default ClusterCleverCredentials (resources with no credentialsRef).
	DefaultName string
	Log         logr.Logger

	kinds []schema.GroupVersionKind
	chans map[schema.GroupVersionKind]chan event.TypedGenericEvent[*unstructured.Unstructured]
}

// Source returns the source the engine of kind gvk watches (one per kind; call before the
// manager starts).
func (e *Enqueuer) Source(gvk schema.GroupVersionKind) source.Source {
	if e.chans == nil {
		e.chans = map[schema.GroupVersionKind]chan event.TypedGenericEvent[*unstructured.Unstructured]{}
	}
	ch := make(chan event.TypedGenericEvent[*unstructured.Unstructured], 64)
	e.chans[gvk] = ch
	e.kinds = append(e.kinds, gvk)
	return source.Channel(ch, &handler.TypedEnqueueRequestForObject[*unstructured.Unstructured]{})
}

// Users wakes the resources that use the credentials object kind namespace/name (for the
// default ClusterCleverCredentials, also every resource that names none).
func (e *Enqueuer) Users(ctx context.Context, kind, namespace, name string) {
	if e == nil {
		return
	}
	isDefault := kind == KindClusterCleverCredentials && name == e.DefaultName && name != ""
	e.enqueue(ctx, namespace, func(u *unstructured.Unstructured) bool {
		ref, ok := CredentialsRefOf(u)
		if !ok {
			return isDefault
		}
		return ref.Kind == kind && ref.Name == name
	})
}

// Namespace wakes the resources of a namespace that name no credentials object (they use
// its override Secret, which changed).
func (e *Enqueuer) Namespace(ctx context.Context, namespace string) {
	if e == nil {
		return
	}
	e.enqueue(ctx, namespace, func(u *unstructured.Unstructured) bool {
		_, ok := CredentialsRefOf(u)
		return !ok
	})
}

// All wakes every resource of a namespace (its labels changed: the ClusterCleverCredentials
// selecting it may have changed).
func (e *Enqueuer) All(ctx context.Context, namespace string) {
	if e == nil {
		return
	}
	e.enqueue(ctx, namespace, func(*unstructured.Unstructured) bool { return true })
}

// enqueue lists every kind (in namespace, "" = all) and sends the matching resources to
// their engine, without blocking the caller.
func (e *Enqueuer) enqueue(ctx context.Context, namespace string, match func(*unstructured.Unstructured) bool) {
	var opts []client.ListOption
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	for _, gvk := range e.kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := e.Reader.List(ctx, list, opts...); err != nil {
			e.Log.Error(err, "listing resources to wake after a credentials change", "kind", gvk.Kind)
			continue
		}
		var wake []*unstructured.Unstructured
		for i := range list.Items {
			if match(&list.Items[i]) {
				wake = append(wake, &list.Items[i])
			}
		}
		if len(wake) == 0 {
			continue
		}
		ch := e.chans[gvk]
		go func() {
			for _, u := range wake {
				select {
				case ch <- event.TypedGenericEvent[*unstructured.Unstructured]{Object: u}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
}
