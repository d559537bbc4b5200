package status

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestUpdate: changes of decoded conditions, replayed on an object, keep the conditions they
// do not touch (Helm's) and encode nothing when nothing changed.
func TestUpdate(t *testing.T) {
	then := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGeneration(3)
	SetConditions(u, []Condition{
		{Type: TypeDeployed, Status: "True", Reason: "InstallSuccessful", LastTransitionTime: then.Format(time.RFC3339)},
		{Type: TypeThrottled, Status: "True", Reason: TypeThrottled},
	})
	if Update(nil) != nil {
		t.Fatal("no change: no update")
	}
	at := func() time.Time { return then.Add(time.Hour) }
	Update([]Change{Setting(TypeAddonReady, metav1.ConditionTrue, ReasonProvisioned, "ok", at), Removing(TypeThrottled, TypeSynced), Deriving(at)})(u)
	conds := Conditions(u)
	if d, ok := Find(conds, TypeDeployed); !ok || d.LastTransitionTime != then.Format(time.RFC3339) {
		t.Fatalf("Helm's condition changed: %+v", d)
	}
	if a, _ := Find(conds, TypeAddonReady); a.Status != "True" || a.ObservedGeneration != 3 {
		t.Fatalf("AddonReady %+v", a)
	}
	if r, _ := Find(conds, TypeReady); r.Status != "True" || r.Reason != ReasonProvisioned {
		t.Fatalf("Ready not derived: %+v", r)
	}
	if _, ok := Find(conds, TypeThrottled); ok {
		t.Fatal("Throttled not removed")
	}
	before := u.DeepCopy()
	u.Object["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["unknown"] = "kept"
	Update([]Change{Removing(TypeSynced), Setting(TypeAddonReady, metav1.ConditionTrue, ReasonProvisioned, "ok", at)})(u)
	if c := u.Object["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any); c["unknown"] != "kept" {
		t.Fatal("changes that changed nothing re-encoded the conditions")
	}
	if got, changed := Apply(Conditions(before), before, Deriving(at)); changed || len(got) != len(Conditions(before)) {
		t.Fatal("deriving derived conditions again changed them")
	}
}
