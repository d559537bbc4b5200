package patch

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// AddFinalizer puts finalizer, and then the others, on obj, in one write, unless obj has
// finalizer already or is being deleted. When obj has no finalizer the write is an update;
// otherwise a JSON patch that tests the finalizers it read, so that other writers' status
// writes (which change the resourceVersion, not the finalizers) do not make it fail. The first
// attempt writes from obj as given (usually the cache's copy, still as created); after a
// conflict the resource is read live through reader. On return obj holds what the API server
// stored (or the live copy, when another writer put finalizer on meanwhile).
func AddFinalizer[T client.Object](ctx context.Context, c client.Client, reader client.Reader, obj T, finalizer string, others ...string) (added bool, err error) {
	if controllerutil.ContainsFinalizer(obj, finalizer) {
		return false, nil
	}
	retriable := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsInvalid(err) }
	cachedFirst := obj.GetResourceVersion() != ""
	err = retry.OnError(retry.DefaultRetry, retriable, func() error {
		live := obj.DeepCopyObject().(T)
		if cachedFirst {
			cachedFirst = false
		} else {
			live = fresh(obj)
			if err := reader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
				return err
			}
		}
		before := live.GetFinalizers()
		if live.GetDeletionTimestamp() != nil {
			obj.SetFinalizers(before)
			return nil
		}
		if !controllerutil.AddFinalizer(live, finalizer) {
			setObject(obj, live) // added meanwhile: the pass starts from the live copy
			return nil
		}
		for _, f := range others {
			controllerutil.AddFinalizer(live, f)
		}
		if len(before) == 0 {
			if err := c.Update(ctx, live); err != nil {
				return err
			}
		} else {
			body, _ := json.Marshal([]map[string]any{
				{"op": "test", "path": "/metadata/finalizers", "value": before},
				{"op": "replace", "path": "/metadata/finalizers", "value": live.GetFinalizers()},
			})
			if err := c.Patch(ctx, live, client.RawPatch(types.JSONPatchType, body)); err != nil {
				return err
			}
		}
		added = true
		setObject(obj, live)
		return nil
	})
	return added, err
}

// RemoveFinalizer drops finalizer from obj with a JSON patch that tests it is still at its
// index, so it never races other writers. A resource that is gone is not an error.
func RemoveFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	for i, f := range obj.GetFinalizers() {
		if f != finalizer {
			continue
		}
		body, _ := json.Marshal([]map[string]any{
			{"op": "test", "path": fmt.Sprintf("/metadata/finalizers/%d", i), "value": f},
			{"op": "remove", "path": fmt.Sprintf("/metadata/finalizers/%d", i)},
		})
		return client.IgnoreNotFound(c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, body)))
	}
	return nil
}

// Annotate sets one annotation on obj with a merge patch that carries obj's uid: it never
// lands on another resource of the same name. obj is not changed.
func Annotate(ctx context.Context, c client.Client, obj client.Object, key, value string) error {
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{key: value},
		"uid":         string(obj.GetUID()),
	}})
	target := fresh(obj)
	target.SetNamespace(obj.GetNamespace())
	target.SetName(obj.GetName())
	return c.Patch(ctx, target, client.RawPatch(types.MergePatchType, body))
}
