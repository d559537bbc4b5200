// Package patch is the reconcile kernel every controller of the operator writes through, in
// the style of Cluster API's patch.Helper: a pass takes a snapshot of its resource when it
// starts, changes a working copy (recording each status change when another writer shares the
// status), and commits once at the end; a write that conflicts is replayed on a copy read live.
// Metadata the passes write (finalizers, annotations) goes through the functions of meta.go.
//
// It is the one place that writes a custom resource's status outside the Helm side.
package patch

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Helper is one pass over a resource: Base, the snapshot taken at the start (its
// resourceVersion is the commit's optimistic lock), Obj, the working copy the pass changes,
// and Changes, the status changes it recorded through Set, in order.
type Helper[T client.Object] struct {
	Base, Obj T
	Changes   []func(T)
}

// New snapshots obj: the pass works on obj.
func New[T client.Object](obj T) *Helper[T] {
	return &Helper[T]{Base: obj.DeepCopyObject().(T), Obj: obj}
}

// Set applies a status change to the working copy and records it for a replay.
func (h *Helper[T]) Set(change func(T)) {
	change(h.Obj)
	h.Changes = append(h.Changes, change)
}

// Options shape a commit. Every field may be left empty.
type Options[T client.Object] struct {
	// Reader reads the resource live after a conflict (default: the commit's client).
	Reader client.Reader
	// Owned: the pass owns the whole status (no other writer): a replay copies the working
	// copy's status onto the live resource. Otherwise a replay applies the overlay and the
	// recorded changes only, so another writer's fields stay.
	Owned bool
	// Overlay are changes of an earlier pass not written yet: a replay applies them first.
	Overlay []func(T)
	// Writing runs before each write; Wrote after the write succeeded, with what was stored
	// before and what is stored now.
	Writing func()
	Wrote   func(cur, next T)
}

// Commit writes the working copy's status when it differs from the snapshot's, with the
// snapshot's resourceVersion as an optimistic lock. On a conflict it reads the resource live
// and replays the pass on it: the working copy's whole status when the pass owns it
// (Options.Owned), else the overlay and the recorded changes (another writer's fields stay).
// It reports whether it wrote; a resource that is gone is not an error. On success Obj holds what
// the API server stored.
func (h *Helper[T]) Commit(ctx context.Context, c client.Client, opt Options[T]) (wrote bool, err error) {
	reader := opt.Reader
	if reader == nil {
		reader = c
	}
	first := true
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, next := h.Base, h.Obj.DeepCopyObject().(T)
		if !first {
			cur = fresh(h.Base)
			if err := reader.Get(ctx, client.ObjectKeyFromObject(h.Obj), cur); err != nil {
				return err
			}
			next = h.replay(cur, opt)
		}
		first = false
		if equality.Semantic.DeepEqual(statusOf(cur), statusOf(next)) {
			return nil
		}
		if opt.Writing != nil {
			opt.Writing()
		}
		if err := c.Status().Update(ctx, next); err != nil {
			return err
		}
		wrote = true
		if opt.Wrote != nil {
			opt.Wrote(cur, next)
		}
		setObject(h.Obj, next)
		return nil
	})
	if apierrors.IsNotFound(err) {
		return wrote, nil
	}
	return wrote, err
}

// replay applies the pass to a copy of the live resource cur.
func (h *Helper[T]) replay(cur T, opt Options[T]) T {
	next := cur.DeepCopyObject().(T)
	if opt.Owned {
		setStatus(next, statusOf(h.Obj))
		return next
	}
	for _, change := range opt.Overlay {
		change(next)
	}
	for _, change := range h.Changes {
		change(next)
	}
	return next
}

// fresh is an empty object of obj's type (and kind, for an unstructured one) to read into.
func fresh[T client.Object](obj T) T {
	if u, ok := any(obj).(*unstructured.Unstructured); ok {
		n := &unstructured.Unstructured{}
		n.SetGroupVersionKind(u.GroupVersionKind())
		return any(n).(T)
	}
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
}

// statusOf is obj's status: the "status" field of an unstructured object, the Status field of
// a typed one.
func statusOf(obj client.Object) any {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object["status"]
	}
	if f := reflect.ValueOf(obj).Elem().FieldByName("Status"); f.IsValid() {
		return f.Interface()
	}
	return nil
}

// setStatus sets obj's status to a deep copy of st (from statusOf of an object of its type).
func setStatus(obj client.Object, st any) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if m, ok := st.(map[string]any); ok {
			u.Object["status"] = runtimeDeepCopy(m)
		} else {
			delete(u.Object, "status")
		}
		return
	}
	src := reflect.New(reflect.TypeOf(st))
	src.Elem().Set(reflect.ValueOf(st))
	if dc := src.MethodByName("DeepCopy"); dc.IsValid() {
		src = dc.Call(nil)[0]
	}
	reflect.ValueOf(obj).Elem().FieldByName("Status").Set(src.Elem())
}

// setObject makes obj hold what next holds.
func setObject(obj, next client.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.Object = next.(*unstructured.Unstructured).Object
		return
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(next).Elem())
}

func runtimeDeepCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}
