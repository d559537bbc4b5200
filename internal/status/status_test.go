package status

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestReady(t *testing.T) {
	addonOK := Condition{Type: TypeAddonReady, Status: "True", Reason: ReasonProvisioned, Message: "add-on x is provisioned"}
	cases := []struct {
		name        string
		conds       []Condition
		deleting    bool
		wantStatus  string
		wantReason  string
		wantStalled bool
	}{
		{"nothing yet", nil, false, "False", ReasonProvisioning, false},
		{"engine provisioning", []Condition{{Type: TypeAddonReady, Status: "False", Reason: ReasonProvisioning}}, false, "False", ReasonProvisioning, false},
		{"engine terminal", []Condition{{Type: TypeAddonReady, Status: "False", Reason: ReasonPlanNotFound}}, false, "False", ReasonPlanNotFound, true},
		{"engine transient", []Condition{{Type: TypeAddonReady, Status: "False", Reason: ReasonAPIUnavailable}}, false, "False", ReasonAPIUnavailable, false},
		{"provisioned, helm not yet", []Condition{addonOK}, false, "False", ReasonRendering, false},
		{"provisioned and deployed", []Condition{addonOK, {Type: TypeDeployed, Status: "True"}}, false, "True", ReasonProvisioned, false},
		{"helm irreconcilable", []Condition{addonOK, {Type: TypeIrreconcilable, Status: "True", Message: "x"}}, false, "False", ReasonRendering, false},
		{"secret conflict", []Condition{addonOK, {Type: TypeDeployed, Status: "True"}, {Type: TypeReleaseFailed, Status: "True",
			Message: `Secret "db-secrets" in namespace "n" exists and cannot be imported into the current release: invalid ownership metadata`}}, false, "False", ReasonSecretConflict, true},
		{"other release failure", []Condition{addonOK, {Type: TypeReleaseFailed, Status: "True", Message: "boom"}}, false, "False", ReasonRenderFailed, true},
		{"paused after Ready: Helm's Unknown keeps Ready", []Condition{addonOK, {Type: TypePaused, Status: "True"}, {Type: TypeDeployed, Status: "Unknown"},
			{Type: TypeReady, Status: "True", Reason: ReasonProvisioned}}, false, "True", ReasonProvisioned, false},
		{"paused before the first render", []Condition{addonOK, {Type: TypePaused, Status: "True"}, {Type: TypeDeployed, Status: "Unknown"},
			{Type: TypeReady, Status: "False", Reason: ReasonRendering}}, false, "False", ReasonRendering, false},
		{"deleting", []Condition{addonOK, {Type: TypeDeployed, Status: "True"}}, true, "False", ReasonDeleting, false},
		{"network group joining", []Condition{addonOK, {Type: TypeDeployed, Status: "True"}, {Type: TypeNetworkGroups, Status: "False", Reason: ReasonNetworkGroupJoining}}, false, "False", ReasonNetworkGroupJoining, false},
		{"network groups not supported", []Condition{addonOK, {Type: TypeDeployed, Status: "True"}, {Type: TypeNetworkGroups, Status: "False", Reason: ReasonNetworkGroupsNotSupported}}, false, "False", ReasonNetworkGroupsNotSupported, true},
		{"network group not allowed", []Condition{addonOK, {Type: TypeDeployed, Status: "True"}, {Type: TypeNetworkGroups, Status: "False", Reason: ReasonBindingNotAllowed}}, false, "False", ReasonBindingNotAllowed, true},
		{"network groups joined", []Condition{addonOK, {Type: TypeDeployed, Status: "True"}, {Type: TypeNetworkGroups, Status: "True", Reason: ReasonNetworkGroupsJoined}}, false, "True", ReasonProvisioned, false},
		{"delete failed", []Condition{{Type: TypeAddonReady, Status: "False", Reason: ReasonDeleteFailed}}, true, "False", ReasonDeleteFailed, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, stalled := Ready(c.conds, c.deleting, 2)
			if got.Status != c.wantStatus || got.Reason != c.wantReason || stalled != c.wantStalled {
				t.Fatalf("Ready = %s/%s stalled=%v, want %s/%s stalled=%v", got.Status, got.Reason, stalled, c.wantStatus, c.wantReason, c.wantStalled)
			}
			if got.ObservedGeneration != 2 {
				t.Fatalf("observedGeneration = %d", got.ObservedGeneration)
			}
		})
	}
}

func TestSetKeepsTransitionTimeUnlessStatusChanges(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	conds, changed := Set(nil, Condition{Type: TypeReady, Status: "False", Reason: "A"}, t0)
	if !changed || conds[0].LastTransitionTime != "2026-01-01T00:00:00Z" {
		t.Fatalf("first set: %+v %v", conds, changed)
	}
	conds, changed = Set(conds, Condition{Type: TypeReady, Status: "False", Reason: "B"}, t0.Add(time.Hour))
	if !changed || conds[0].LastTransitionTime != "2026-01-01T00:00:00Z" {
		t.Fatalf("reason change must keep the time: %+v", conds[0])
	}
	conds, changed = Set(conds, Condition{Type: TypeReady, Status: "False", Reason: "B"}, t0.Add(2*time.Hour))
	if changed {
		t.Fatal("identical condition reported as a change")
	}
	conds, _ = Set(conds, Condition{Type: TypeReady, Status: "True", Reason: "B"}, t0.Add(3*time.Hour))
	if conds[0].LastTransitionTime != "2026-01-01T03:00:00Z" {
		t.Fatalf("status change must move the time: %+v", conds[0])
	}
}

func TestApplyReadyRoundTripAndStalled(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGeneration(4)
	SetConditions(u, []Condition{{Type: TypeAddonReady, Status: "False", Reason: ReasonInvalidSpec, Message: "bad"}})
	if !ApplyReady(u, time.Now()) {
		t.Fatal("ApplyReady reported no change")
	}
	st, _ := Find(Conditions(u), TypeStalled)
	if st.Status != "True" || st.Reason != ReasonInvalidSpec {
		t.Fatalf("Stalled = %+v", st)
	}
	if ApplyReady(u, time.Now()) {
		t.Fatal("second ApplyReady changed something")
	}
	SetConditions(u, []Condition{{Type: TypeAddonReady, Status: "True", Reason: ReasonProvisioned}, {Type: TypeDeployed, Status: "True"}, st})
	ApplyReady(u, time.Now())
	if _, ok := Find(Conditions(u), TypeStalled); ok {
		t.Fatal("Stalled kept after recovery")
	}
	r, _ := Find(Conditions(u), TypeReady)
	if r.Status != "True" || r.ObservedGeneration != 4 {
		t.Fatalf("Ready = %+v", r)
	}
}

// The Helm side writes first after a pause (conditions Unknown) before the engine has recorded
// the user's Paused condition: a Ready resource stays Ready, and no Paused condition is shown.
func TestApplyReadyPausedByHelmSide(t *testing.T) {
	addonOK := Condition{Type: TypeAddonReady, Status: "True", Reason: ReasonProvisioned}
	for _, c := range []struct {
		name       string
		prev       string
		helmPaused bool
		want       string
	}{
		{"Ready, Helm paused", "True", true, "True/" + ReasonProvisioned},
		{"Ready, Helm not paused", "True", false, "False/" + ReasonRendering},
		{"never rendered, Helm paused", "False", true, "False/" + ReasonRendering},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			SetConditions(u, []Condition{addonOK, {Type: TypeDeployed, Status: "Unknown"}, {Type: TypeReady, Status: c.prev, Reason: ReasonProvisioned}})
			ApplyReadyPaused(u, time.Now(), c.helmPaused)
			r, _ := Find(Conditions(u), TypeReady)
			if got := r.Status + "/" + r.Reason; got != c.want {
				t.Fatalf("Ready = %s, want %s", got, c.want)
			}
			if _, ok := Find(Conditions(u), TypePaused); ok {
				t.Fatal("a Paused condition was written")
			}
		})
	}
}
