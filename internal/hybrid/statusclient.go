package hybrid

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/statusmerge"
)

// StatusClient wraps the Helm reconciler's client: its status writes go through the status
// merge (Status), its finalizer writes carry the engine's (Update), and its Get of a deleted
// resource recreated under the same name answers NotFound (Get).
type StatusClient struct {
	client.Client
	kind     *kinds.Kind
	now      func() time.Time
	recorder record.EventRecorder
	board    *statusmerge.Board
}

// WithHandoff makes the status writes carry the engine's first publications (rule 4 of
// internal/statusmerge).
func (c *StatusClient) WithHandoff(b *statusmerge.Board) *StatusClient {
	c.board = b
	return c
}

// WithRecorder makes the wrapper record a Warning event when Ready turns to SecretConflict or
// RenderFailed (reasons derived from Helm's conditions, which the engine does not see), or
// changes message, as the engine does for its own reasons.
func (c *StatusClient) WithRecorder(r record.EventRecorder) *StatusClient {
	c.recorder = r
	return c
}

// NewStatusClient wraps c.
func NewStatusClient(c client.Client, kind *kinds.Kind) *StatusClient {
	return &StatusClient{Client: c, kind: kind, now: time.Now}
}

// Update adds, when Helm's reconciler adds its uninstall finalizer to a resource that does not
// carry the engine's finalizer yet, the engine's finalizer in the same write (one write to the
// resource instead of two). Once that write succeeded (an optimistic one: the resource had no
// engine finalizer, so no operator had created anything for it), the engine is told the
// resource is new (statusmerge.MarkNew, settled by the write's outcome), as if it had added the
// finalizer itself.
//
// A new resource whose source Secret does not exist yet gets no write from the Helm side at
// all: the engine puts both finalizers on it in its first pass, and until it has written the
// source Secret (after that write) the pause handler holds the Helm reconcile, which installs
// nothing, so the uninstall finalizer is on the resource before any release exists. Both sides
// writing the finalizers of every new resource at the same moment made one of the two writes
// fail on a conflict for about two resources in three (issue #17: 0.6–0.73 refused writes per
// resource to Ready in A1), each one more request to a control plane busy with the creates.
func (c *StatusClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if c.kind == nil || obj.GetDeletionTimestamp() != nil || !controllerutil.ContainsFinalizer(obj, kinds.HelmUninstallFinalizer) ||
		controllerutil.ContainsFinalizer(obj, c.kind.Finalizer()) {
		return c.Client.Update(ctx, obj, opts...)
	}
	if c.leftToEngine(ctx, obj) {
		return nil
	}
	controllerutil.AddFinalizer(obj, c.kind.Finalizer())
	settle := statusmerge.MarkNew(obj.GetUID())
	err := c.Client.Update(ctx, obj, opts...)
	settle(err == nil)
	return err
}

// leftToEngine says whether the finalizer write to obj (which lacks the engine's finalizer) is
// left to the engine: obj is only being given Helm's finalizer and its source Secret is not in
// the cache, so the pause handler (which reads the same cache) holds this Helm reconcile.
func (c *StatusClient) leftToEngine(ctx context.Context, obj client.Object) bool {
	if len(obj.GetFinalizers()) != 1 {
		return false // other finalizers than Helm's: not the fresh resource this is about
	}
	missing, _ := sourceSecretMissing(ctx, c.Client, c.kind, obj)
	return missing
}

// Get answers NotFound when obj is a resource being deleted (it carries its UID and a
// deletion timestamp) and its name now holds another object: the one obj was is gone.
// helm-operator-plugins, after uninstalling a deleted resource's release, waits (up to 30 s)
// for the resource's name to disappear from the cache; a resource recreated under the same
// name at once (a restore, kubectl replace) would hold that worker, and the new resource's
// Helm reconcile, for the whole wait.
func (c *StatusClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	uid, deleting := obj.GetUID(), obj.GetDeletionTimestamp() != nil
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if deleting && uid != "" && obj.GetUID() != uid {
		return apierrors.NewNotFound(schema.GroupResource{Group: obj.GetObjectKind().GroupVersionKind().Group, Resource: obj.GetObjectKind().GroupVersionKind().Kind}, key.Name)
	}
	return nil
}

// Status returns Helm's status writer, rewritten as the status merge rules
// (internal/statusmerge).
func (c *StatusClient) Status() client.SubResourceWriter {
	return &statusmerge.Helm{SubResourceWriter: c.Client.Status(), Cache: c.Client, Board: c.board, Recorder: c.recorder, Now: c.now}
}
