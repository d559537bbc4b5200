package hybrid

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/clever-operator/clever-operator/internal/handoff"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// engineConditions are the condition types the engine owns.
var engineConditions = status.EngineConditions

// StatusClient wraps the Helm reconciler's client. On each of its status writes it drops the
// rendered manifest (it contains the credentials), replaces Helm's Paused condition by the
// engine's, keeps the engine's fields and conditions from the cache, and recomputes Ready.
type StatusClient struct {
	client.Client
	kind     *kinds.Kind
	now      func() time.Time
	recorder record.EventRecorder
	handoff  *handoff.Board
}

// WithHandoff makes the wrapper's status writes carry the status the engine handed off for
// the resource (handoff.Board): the engine's pass that first publishes a resource's
// credentials leaves its status write to this one, which follows the rendering.
func (c *StatusClient) WithHandoff(h *handoff.Board) *StatusClient {
	c.handoff = h
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
// resource is new (handoff.MarkNew, settled by the write's outcome), as if it had added the
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
	settle := handoff.MarkNew(obj.GetUID())
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

// Status returns the wrapped status writer.
func (c *StatusClient) Status() client.SubResourceWriter {
	return &statusWriter{SubResourceWriter: c.Client.Status(), c: c}
}

type statusWriter struct {
	client.SubResourceWriter
	c *StatusClient
}

// Update writes the fixed status, unless it is the status the resource already has (as the
// cache holds it, at the same resourceVersion): helm-operator-plugins writes status on every
// reconcile because the manifest it puts in status.deployedRelease is always missing (fix
// drops it), which made each no-op Helm reconcile one more request to the API server.
//
// When the cache holds a newer version of the resource than the one Helm's reconcile started
// from (typically: the engine wrote status in the meantime), the write is rebased on it: fix
// has already taken the engine's fields and conditions from that version, and the rest of the
// status is Helm's own, so nothing is lost. Without it, every engine write during a Helm
// reconcile made Helm's write fail on a conflict and the whole reconcile (dry-run included)
// run again: one more status write per resource.
func (w *statusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		// The handoff first: its wait (for the engine's pass to fill it) must come before the
		// live read that the write is merged with and rebased on, or that copy is stale.
		helmPaused := helmPausedIn(u)
		var handed *handoff.Taken
		if len(opts) == 0 && !helmPaused && u.GetDeletionTimestamp() == nil {
			handed = w.c.handoff.Take(ctx, u.GetUID(), u.GetGeneration())
		}
		live := w.c.fix(ctx, u, helmPaused)
		if len(opts) == 0 && helmPaused && waitingForEngine(u) {
			return nil
		}
		// After the live read: the engine claims a handoff before it writes a status of its
		// own, so one not claimed yet cannot be older than what live holds.
		if handed.Apply(u) {
			status.ApplyReadyPaused(u, w.c.now(), false)
		}
		w.c.announce(live, u)
		if live != nil && len(opts) == 0 {
			if handoff.NewerResourceVersion(live.GetResourceVersion(), u.GetResourceVersion()) {
				u.SetResourceVersion(live.GetResourceVersion())
			}
			if live.GetResourceVersion() == u.GetResourceVersion() && (sameStatus(live, u) || helmPaused && sameStatus(live, withoutNewUnknowns(u, live))) {
				handed.Done(u.GetResourceVersion())
				return nil
			}
		}
		err := w.SubResourceWriter.Update(ctx, obj, opts...)
		if err != nil {
			handed.Done("")
		} else {
			handed.Done(u.GetResourceVersion())
		}
		return err
	}
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

// withoutNewUnknowns is u without the conditions that live does not have and that u would add
// as Unknown. A paused Helm reconcile (the add-on is not provisioned yet, or the user paused
// the resource) sets its own conditions to Unknown; on a resource it has never rendered, that
// write says nothing the engine's status does not (Ready is derived from the engine's
// conditions while the add-on is not ready, and is compared with the rest), so it is not
// sent: one status write fewer per new resource while its add-on is being provisioned, each
// one more request and one more watch event to every controller during a burst of creates
// (issue #17).
func withoutNewUnknowns(u, live *unstructured.Unstructured) *unstructured.Unstructured {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	liveConds := status.Conditions(live)
	kept := make([]any, 0, len(raw))
	for _, c := range raw {
		m, ok := c.(map[string]any)
		if ok && m["status"] == string(metav1.ConditionUnknown) {
			t, _ := m["type"].(string)
			if _, had := status.Find(liveConds, t); !had {
				continue
			}
		}
		kept = append(kept, c)
	}
	if len(kept) == len(raw) {
		return u
	}
	out := u.DeepCopy()
	_ = unstructured.SetNestedSlice(out.Object, kept, "status", "conditions")
	return out
}

// sameStatus compares two statuses, conditions in any order: status.conditions is a list-map
// keyed by type, and Helm's updater rebuilds it in its own order, so a write that only
// reorders it changes nothing.
func sameStatus(a, b *unstructured.Unstructured) bool {
	norm := func(u *unstructured.Unstructured) any {
		st, ok := u.Object["status"].(map[string]any)
		if !ok {
			return u.Object["status"]
		}
		conds, ok := st["conditions"].([]any)
		if !ok {
			return st
		}
		out := make(map[string]any, len(st))
		for k, v := range st {
			out[k] = v
		}
		sorted := append([]any(nil), conds...)
		sort.SliceStable(sorted, func(i, j int) bool { return conditionType(sorted[i]) < conditionType(sorted[j]) })
		out["conditions"] = sorted
		return out
	}
	return equality.Semantic.DeepEqual(norm(a), norm(b))
}

func conditionType(c any) string {
	m, _ := c.(map[string]any)
	t, _ := m["type"].(string)
	return t
}

// waitingForEngine: a resource the engine has not reported on yet (no AddonReady) and that is
// not being deleted. While the Helm side is paused for it (no source Secret yet), its status
// write would only set Helm's conditions to Unknown and Ready to False/Provisioning, which the
// engine's first write (a moment later, with AddonReady) derives anyway: it is not sent, which
// saves a write per new resource and the conflict it often met (the engine adds its finalizer
// at the same moment).
func waitingForEngine(u *unstructured.Unstructured) bool {
	_, reported := status.Find(status.Conditions(u), status.TypeAddonReady)
	return !reported && u.GetDeletionTimestamp() == nil
}

func (w *statusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		live := w.c.fix(ctx, u, helmPausedIn(u))
		w.c.announce(live, u)
	}
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// announce records a Warning event when the status about to be written, u, shows a Helm
// failure that live (the cache's copy) did not (status.HelmFailureShown).
func (c *StatusClient) announce(live, u *unstructured.Unstructured) {
	if c.recorder == nil || live == nil {
		return
	}
	if ready, shown := status.HelmFailureShown(live, u); shown {
		c.recorder.Event(u, corev1.EventTypeWarning, ready.Reason, ready.Message)
	}
}

// fix rewrites the status the Helm reconciler is about to write and returns the live
// resource it merged from (nil when it could not be read). helmPaused is helmPausedIn(u) as
// Helm wrote it: Helm's Paused condition is internal (waiting for provisioning or for the
// add-on's deletion) and dropped, then the engine's own (the user-facing one), if any, merged
// back.
func (c *StatusClient) fix(ctx context.Context, u *unstructured.Unstructured, helmPaused bool) *unstructured.Unstructured {
	unstructured.RemoveNestedField(u.Object, "status", "deployedRelease", "manifest")
	conds, _ := status.Remove(status.Conditions(u), status.TypePaused)
	status.SetConditions(u, conds)
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(u.GroupVersionKind())
	found := c.Client.Get(ctx, client.ObjectKeyFromObject(u), live) == nil
	if found {
		MergeEngineStatus(u, live)
	}
	// Paused (by the user, or while the add-on is not provisioned yet or being deleted), Helm
	// marks its conditions Unknown and renders nothing: the Secret it rendered stays, so a
	// resource that was Ready stays Ready even if the engine has not recorded the pause yet.
	status.ApplyReadyPaused(u, c.now(), helmPaused)
	if !found {
		return nil
	}
	return live
}

// helmPausedIn says whether the Helm reconciler's status u carries its own Paused=True.
func helmPausedIn(u *unstructured.Unstructured) bool {
	hp, _ := status.Find(status.Conditions(u), status.TypePaused)
	return hp.Status == string(metav1.ConditionTrue)
}

// MergeEngineStatus copies the engine-owned status fields and conditions from live into u.
func MergeEngineStatus(u, live *unstructured.Unstructured) {
	for _, f := range engineOwned {
		if v, found, _ := unstructured.NestedFieldCopy(live.Object, "status", f); found {
			_ = unstructured.SetNestedField(u.Object, v, "status", f)
		} else {
			unstructured.RemoveNestedField(u.Object, "status", f) // the engine removed it
		}
	}
	conds := status.Conditions(u)
	liveConds := status.Conditions(live)
	for _, t := range engineConditions {
		lc, ok := status.Find(liveConds, t)
		if !ok {
			// The engine removed it (NetworkGroups once no group is asked for, ...): a copy
			// the Helm side read before must not bring it back.
			conds, _ = status.Remove(conds, t)
			continue
		}
		replaced := false
		for i := range conds {
			if conds[i].Type == t {
				conds[i] = lc
				replaced = true
			}
		}
		if !replaced {
			conds = append(conds, lc)
		}
	}
	status.SetConditions(u, conds)
}
