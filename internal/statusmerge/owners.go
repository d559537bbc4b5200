// Package statusmerge is the merge of the two writers of an add-on resource's status, the
// engine (internal/addon) and the Helm reconciler (internal/hybrid), with its rules written
// once here (docs/design.md, "Status"):
//
//  1. Ownership. Helm owns conditions of its own and deployedRelease (it rebuilds status as
//     {conditions, deployedRelease}); the engine owns every other field of the kinds' status
//     types (EngineFields, derived from kinds.Status) and the conditions of EngineConditions. Ready
//     and Stalled belong to neither: both are derived from all the conditions
//     (status.ApplyReady) on every write of either side, so neither goes stale.
//  2. The engine writes once per pass, only on change, through internal/patch; a conflict is
//     replayed on a live copy with the pass's recorded changes, so Helm's part stays.
//  3. Every Helm status write is rewritten (Helm.Update): the rendered manifest is dropped
//     (it holds the credentials), Helm's internal Paused condition is dropped, the engine's
//     fields and conditions are copied from the cache's copy (a field or condition the engine
//     removed is removed), Ready and Stalled are derived. The write is rebased on the cache's
//     copy when that is newer (no conflict, no second Helm reconcile), and not sent when it
//     changes nothing (conditions compared in any order), nor while the Helm side is paused
//     and would only add Unknown conditions to a resource it never rendered.
//  4. First publication (Board): the engine's pass that first publishes a resource's
//     credentials leaves its status to the Helm side's write after the install, which carries
//     both: one status write per new resource instead of two. It is an economy only; the
//     engine writes the status itself whenever the Helm side has not.
//  5. New resources (MarkNew): when the Helm side's client puts the engine's finalizer on a
//     resource with its own, the engine's next pass is told it is that resource's first.
package statusmerge

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// HelmFields are the status fields the Helm reconciler writes.
var HelmFields = []string{"conditions", "deployedRelease"}

// EngineFields are the status fields the engine writes: every field of kinds.Status (the
// union of the add-on kinds' status types) but Helm's own, so a field added to the types (and
// to kinds.Status, which a test requires) needs nothing else.
var EngineFields = engineFields()

// EngineConditions are the condition types the engine owns.
var EngineConditions = []string{status.TypeAddonReady, status.TypePaused, status.TypeMigrating, status.TypeThrottled,
	status.TypeDrifted, status.TypeSynced, status.TypeVersionUpdate, status.TypeBackupStale, status.TypeNetworkGroups}

// Merge copies the engine's fields and conditions from live into u, the status the Helm
// side is about to write; what live lacks (the engine removed it) is removed from u.
func Merge(u, live *unstructured.Unstructured) {
	for _, f := range EngineFields {
		if v, found, _ := unstructured.NestedFieldCopy(live.Object, "status", f); found {
			_ = unstructured.SetNestedField(u.Object, v, "status", f)
		} else {
			unstructured.RemoveNestedField(u.Object, "status", f)
		}
	}
	conds, liveConds := status.Conditions(u), status.Conditions(live)
	for _, t := range EngineConditions {
		lc, ok := status.Find(liveConds, t)
		i := slices.IndexFunc(conds, func(c status.Condition) bool { return c.Type == t })
		switch {
		case !ok:
			conds, _ = status.Remove(conds, t)
		case i >= 0:
			conds[i] = lc // in place: Helm's order is kept
		default:
			conds = append(conds, lc)
		}
	}
	status.SetConditions(u, conds)
}

// engineFields are the JSON names of kinds.Status's fields but HelmFields.
func engineFields() []string {
	var out []string
	for _, f := range kinds.StatusFields {
		if !slices.Contains(HelmFields, f) {
			out = append(out, f)
		}
	}
	return out
}
