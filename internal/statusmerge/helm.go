package statusmerge

import (
	"context"
	"maps"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/status"
)

// Helm is the Helm reconciler's status writer (rule 3 of the package doc): each of its
// writes is rewritten before it is sent, or not sent at all.
type Helm struct {
	client.SubResourceWriter
	// Cache reads the resource as both sides last wrote it (the engine's part comes from it).
	Cache client.Reader
	// Board, when set, holds the engine's first publications (rule 4).
	Board *Board
	// Recorder, when set, records a Warning when a write first shows a Helm failure
	// (SecretConflict, RenderFailed: reasons the engine does not see).
	Recorder record.EventRecorder
	// Now is the clock of the conditions (nil: time.Now).
	Now func() time.Time
}

func (h *Helm) now() time.Time { return now(h.Now) }

// Update sends Helm's status write u rewritten. The handoff is taken first: its wait (for the
// engine's pass to fill it) must come before the cache read the write is merged with.
func (h *Helm) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return h.SubResourceWriter.Update(ctx, obj, opts...)
	}
	plain, paused := len(opts) == 0, helmPaused(u)
	var taken *Taken
	if plain && !paused && u.GetDeletionTimestamp() == nil {
		taken = h.Board.Take(ctx, u.GetUID(), u.GetGeneration())
	}
	live := h.rewrite(ctx, u, paused)
	if plain && paused && waitingForEngine(u) {
		return nil // the engine's first report, a moment later, says all this write would
	}
	// After the cache read: the engine claims a handoff before a write of its own, so one
	// still unclaimed is not older than live.
	if taken.Apply(u) {
		status.ApplyReady(u, h.now())
	}
	h.announce(live, u)
	if live != nil && plain {
		if NewerResourceVersion(live.GetResourceVersion(), u.GetResourceVersion()) {
			u.SetResourceVersion(live.GetResourceVersion()) // rebased: the engine wrote since Helm read
		}
		if live.GetResourceVersion() == u.GetResourceVersion() && (sameStatus(live, u) || paused && sameStatus(live, withoutNewUnknowns(u, live))) {
			taken.Done(u.GetResourceVersion())
			return nil
		}
		if engineBehind(live, u) {
			// Only Ready's generation would move, and the engine's write for this generation,
			// due or already sent, carries it: sending this one too is a write, or a refused
			// one when the engine's landed first.
			taken.Done("")
			return nil
		}
	}
	err := h.SubResourceWriter.Update(ctx, obj, opts...)
	if err != nil {
		taken.Done("")
	} else {
		taken.Done(u.GetResourceVersion())
	}
	return err
}

// Patch sends Helm's status patch rewritten (helm-operator-plugins v0.9.1 does not patch).
func (h *Helm) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		h.announce(h.rewrite(ctx, u, helmPaused(u)), u)
	}
	return h.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// rewrite applies rule 3 to u and returns the cache's copy it merged from (nil when it could
// not be read). paused is Helm's own Paused=True, internal (waiting for provisioning or for
// the add-on's deletion): dropped from u, but a resource that was Ready stays Ready.
func (h *Helm) rewrite(ctx context.Context, u *unstructured.Unstructured, paused bool) *unstructured.Unstructured {
	unstructured.RemoveNestedField(u.Object, "status", "deployedRelease", "manifest")
	conds, _ := status.Remove(status.Conditions(u), status.TypePaused)
	status.SetConditions(u, conds)
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(u.GroupVersionKind())
	if err := h.Cache.Get(ctx, client.ObjectKeyFromObject(u), live); err != nil {
		live = nil
	} else {
		Merge(u, live)
	}
	status.ApplyReadyPaused(u, h.now(), paused)
	return live
}

// announce records the Warning of a Helm failure u shows and live did not.
func (h *Helm) announce(live, u *unstructured.Unstructured) {
	if h.Recorder == nil || live == nil {
		return
	}
	if ready, shown := status.HelmFailureShown(live, u); shown {
		h.Recorder.Event(u, corev1.EventTypeWarning, ready.Reason, ready.Message)
	}
}

// helmPaused says whether Helm's status u carries its own Paused=True.
func helmPaused(u *unstructured.Unstructured) bool {
	p, _ := status.Find(status.Conditions(u), status.TypePaused)
	return p.Status == string(metav1.ConditionTrue)
}

// waitingForEngine: the engine has not reported on u yet (no AddonReady) and u is not being
// deleted. A paused Helm write then only sets Helm's conditions to Unknown and Ready to
// Provisioning, which the engine's first write derives anyway.
func waitingForEngine(u *unstructured.Unstructured) bool {
	_, reported := status.Find(status.Conditions(u), status.TypeAddonReady)
	return !reported && u.GetDeletionTimestamp() == nil
}

// engineBehind: the engine has not recorded u's generation in live (status.observedGeneration
// is the engine's), and u differs from live only in the observedGeneration of Ready and
// Stalled, which every write derives from the resource's generation.
func engineBehind(live, u *unstructured.Unstructured) bool {
	og, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
	return og < u.GetGeneration() && sameStatus(withoutReadyGeneration(live), withoutReadyGeneration(u))
}

// withoutReadyGeneration is u's status without the observedGeneration of Ready and Stalled:
// the maps that changes are copied, the rest shared (nothing writes to it).
func withoutReadyGeneration(u *unstructured.Unstructured) *unstructured.Unstructured {
	st, _ := u.Object["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	kept := make([]any, len(conds))
	for i, c := range conds {
		m, ok := c.(map[string]any)
		if t := conditionType(c); ok && (t == status.TypeReady || t == status.TypeStalled) {
			m = maps.Clone(m)
			delete(m, "observedGeneration")
			c = m
		}
		kept[i] = c
	}
	out := maps.Clone(st)
	if out != nil {
		out["conditions"] = kept
	}
	return &unstructured.Unstructured{Object: map[string]any{"status": out}}
}

// withoutNewUnknowns is u without the Unknown conditions live does not have: what a paused
// Helm write adds to a resource it never rendered, which says nothing the engine's status
// does not.
func withoutNewUnknowns(u, live *unstructured.Unstructured) *unstructured.Unstructured {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	liveConds := status.Conditions(live)
	kept := make([]any, 0, len(raw))
	for _, c := range raw {
		if m, ok := c.(map[string]any); ok && m["status"] == string(metav1.ConditionUnknown) {
			if _, had := status.Find(liveConds, conditionType(c)); !had {
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

// sameStatus compares two statuses, conditions in any order (a list-map keyed by type, which
// Helm's updater rebuilds in its own order).
func sameStatus(a, b *unstructured.Unstructured) bool {
	norm := func(u *unstructured.Unstructured) any {
		st, ok := u.Object["status"].(map[string]any)
		conds, isList := st["conditions"].([]any)
		if !ok || !isList {
			return u.Object["status"]
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
