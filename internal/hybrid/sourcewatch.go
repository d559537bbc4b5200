package hybrid

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/operator-framework/helm-operator-plugins/pkg/reconciler"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

// sourceWatch wakes the Helm side of a resource when the cache sees its source Secret created
// or changed. The engine writes the source Secret, then the resource's status, and that status
// write wakes the Helm side too; but the Helm reconcile reads the source Secret from the
// cache, whose Secret informer may not have seen the write yet when the resource's informer
// has: the reconcile is then held (no source Secret: PauseHandler) or renders the credentials
// it had, and nothing else wakes it until the reconcile period (30 minutes): the resource
// stays Ready=False/Rendering, or its Secret keeps rotated-out credentials. Two operator
// instances splitting 100 resources met it once. Only the resource's own kind is woken, and
// with a watches.yaml selector only a resource it selects (another instance renders the
// others).
func sourceWatch(c cache.Cache, reader client.Reader, kind *kinds.Kind, gvk schema.GroupVersionKind, sel *metav1.LabelSelector) (reconciler.ControllerSetupFunc, error) {
	owners, err := sourceOwners(reader, kind, gvk, sel)
	if err != nil {
		return nil, err
	}
	return func(cs reconciler.ControllerSetup) error {
		return cs.Watch(source.Kind[client.Object](c, &corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(owners),
			predicate.NewPredicateFuncs(kind.IsSourceSecret), createsAndUpdates))
	}, nil
}

// createsAndUpdates: a source Secret's deletion is the engine's to repair (it writes it again).
var createsAndUpdates = predicate.Funcs{
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// sourceOwners maps a source Secret to the resource that controls it, when that resource is
// of kind gvk and (with a selector) is selected by it, as reader holds it.
func sourceOwners(reader client.Reader, kind *kinds.Kind, gvk schema.GroupVersionKind, sel *metav1.LabelSelector) (handler.MapFunc, error) {
	match := labels.Everything()
	if sel != nil {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return nil, fmt.Errorf("selector of %s: %w", gvk.Kind, err)
		}
		match = s
	}
	return func(ctx context.Context, o client.Object) []crreconcile.Request {
		ref := metav1.GetControllerOf(o)
		if ref == nil || ref.Kind != gvk.Kind {
			return nil
		}
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != gvk.Group {
			return nil
		}
		key := types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}
		if o.GetName() != kind.SourceSecretName(ref.Name) {
			return nil
		}
		if !match.Empty() {
			owner := &unstructured.Unstructured{}
			owner.SetGroupVersionKind(gvk)
			if err := reader.Get(ctx, key, owner); err != nil || owner.GetUID() != ref.UID || !match.Matches(labels.Set(owner.GetLabels())) {
				return nil
			}
		}
		return []crreconcile.Request{{NamespacedName: key}}
	}, nil
}
