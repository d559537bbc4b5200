package status

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Change is a change of a resource's conditions, decoded: it returns conds changed and
// reports whether anything changed. obj is the resource they are of (its generation,
// annotations, deletion); a Change never reads obj's own conditions. The engine's pass
// decodes its conditions once, changes them with Changes, records them to replay on a live
// copy (Update), and encodes them once at its commit.
type Change func(conds []Condition, obj *unstructured.Unstructured) ([]Condition, bool)

// Apply applies changes to conds in order; it reports whether any changed something.
func Apply(conds []Condition, obj *unstructured.Unstructured, changes ...Change) ([]Condition, bool) {
	var changed bool
	for _, c := range changes {
		var ch bool
		conds, ch = c(conds, obj)
		changed = changed || ch
	}
	return conds, changed
}

// Update returns one change of an unstructured resource that applies changes to its
// conditions (decoded once, encoded once when something changed); nil when there are none.
func Update(changes []Change) func(*unstructured.Unstructured) {
	if len(changes) == 0 {
		return nil
	}
	return func(u *unstructured.Unstructured) {
		if conds, changed := Apply(Conditions(u), u, changes...); changed {
			SetConditions(u, conds)
		}
	}
}

// Setting is the Change that sets a condition of type t (status.Set: lastTransitionTime kept
// when its status is unchanged; observedGeneration the resource's), at now().
func Setting(t string, s metav1.ConditionStatus, reason, msg string, now func() time.Time) Change {
	return func(conds []Condition, obj *unstructured.Unstructured) ([]Condition, bool) {
		return Set(conds, Condition{Type: t, Status: string(s), Reason: reason, Message: msg, ObservedGeneration: obj.GetGeneration()}, now())
	}
}

// Removing is the Change that drops the conditions of types ts.
func Removing(ts ...string) Change {
	return func(conds []Condition, _ *unstructured.Unstructured) ([]Condition, bool) {
		n := len(conds)
		conds = slices.DeleteFunc(conds, func(c Condition) bool { return slices.Contains(ts, c.Type) })
		return conds, len(conds) != n
	}
}

// Deriving is the Change that recomputes Ready and Stalled from the other conditions
// (ApplyReady), at now().
func Deriving(now func() time.Time) Change {
	return func(conds []Condition, obj *unstructured.Unstructured) ([]Condition, bool) {
		return Derive(conds, obj, now(), false)
	}
}
