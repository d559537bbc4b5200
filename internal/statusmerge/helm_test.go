package statusmerge

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/status"
)

// recordingStatus records the status writes that reach the API server, giving each a new
// resourceVersion, or fails them.
type recordingStatus struct {
	client.SubResourceWriter
	fail    error
	written []*unstructured.Unstructured
}

func (r *recordingStatus) Update(_ context.Context, obj client.Object, _ ...client.SubResourceUpdateOption) error {
	if r.fail != nil {
		return r.fail
	}
	obj.SetResourceVersion("8")
	r.written = append(r.written, obj.(*unstructured.Unstructured).DeepCopy())
	return nil
}

// TestHelmStatusWriteCarriesTheHandedOffStatus: the Helm side's write after the install of a
// new resource carries what the engine handed off (its fields and AddonReady), with Ready
// derived from both: one write. A failed write leaves the handoff for the next; a paused
// Helm write does not take it.
func TestHelmStatusWriteCarriesTheHandedOffStatus(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
		"metadata": map[string]any{"name": "db", "namespace": "ns", "uid": "uid-h", "resourceVersion": "7", "generation": int64(1)},
	}}
	engine := []func(*unstructured.Unstructured){func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "addon_1", "status", "addon")
		conds, _ := status.Set(status.Conditions(u), status.Condition{Type: status.TypeAddonReady, Status: "True", Reason: status.ReasonProvisioned, Message: "ok", ObservedGeneration: 1}, time.Now())
		status.SetConditions(u, conds)
	}}
	helm := func() *unstructured.Unstructured {
		u := live.DeepCopy()
		conds, _ := status.Set(nil, status.Condition{Type: status.TypeDeployed, Status: string(metav1.ConditionTrue), Reason: "InstallSuccessful"}, time.Now())
		status.SetConditions(u, conds)
		return u
	}
	h := New()
	h.Wait = 10 * time.Millisecond
	if !h.Give("uid-h", 1, engine) {
		t.Fatal("give")
	}
	w := &recordingStatus{fail: errors.New("conflict")}
	sw := &Helm{SubResourceWriter: w, Cache: getOnly{live: live}, Board: h}
	if err := sw.Update(context.Background(), helm()); err == nil {
		t.Fatal("the failing write succeeded")
	}
	w.fail = nil
	if err := sw.Update(context.Background(), helm()); err != nil {
		t.Fatal(err)
	}
	if len(w.written) != 1 {
		t.Fatalf("writes %d", len(w.written))
	}
	got := w.written[0]
	if id, _, _ := unstructured.NestedString(got.Object, "status", "addon"); id != "addon_1" {
		t.Fatalf("status.addon %q: the handoff was not carried after a failed write", id)
	}
	if r, _ := status.Find(status.Conditions(got), status.TypeReady); r.Status != "True" {
		t.Fatalf("Ready %+v: want True from AddonReady and Deployed in one write", r)
	}
	// A second Helm write does not carry it again.
	if err := sw.Update(context.Background(), helm()); err != nil {
		t.Fatal(err)
	}
	if id, _, _ := unstructured.NestedString(w.written[len(w.written)-1].Object, "status", "addon"); id != "" {
		t.Fatal("a handoff already written was carried again")
	}

	// A Helm write of another generation (the spec was edited meanwhile): not carried, left
	// for the engine's pass over that generation.
	hg := New()
	hg.Wait = 10 * time.Millisecond
	live.SetUID("uid-g")
	hg.Give("uid-g", 1, engine)
	wg := &recordingStatus{}
	swg := &Helm{SubResourceWriter: wg, Cache: getOnly{live: live}, Board: hg}
	edited := helm()
	edited.SetGeneration(2)
	if err := swg.Update(context.Background(), edited); err != nil {
		t.Fatal(err)
	}
	if id, _, _ := unstructured.NestedString(wg.written[0].Object, "status", "addon"); id != "" || hg.Len() != 1 {
		t.Fatalf("generation 2 write carried generation 1's handoff (addon %q, held %d)", id, hg.Len())
	}

	// Paused (Helm's own Paused condition): the handoff stays for a write that renders.
	h2 := New()
	live.SetUID("uid-p")
	h2.Give("uid-p", 1, engine)
	w2 := &recordingStatus{}
	sw2 := &Helm{SubResourceWriter: w2, Cache: getOnly{live: live}, Board: h2}
	paused := helm()
	conds, _ := status.Set(status.Conditions(paused), status.Condition{Type: status.TypePaused, Status: "True", Reason: "x"}, time.Now())
	status.SetConditions(paused, conds)
	_ = sw2.Update(context.Background(), paused)
	if h2.Len() != 1 {
		t.Fatal("a paused Helm write took the handoff")
	}
	for _, u := range w2.written {
		if id, _, _ := unstructured.NestedString(u.Object, "status", "addon"); id != "" {
			t.Fatal("a paused Helm write carried the handoff")
		}
	}
}

// TestHelmFailureOnAHandedOffStatusIsAnnounced: when the Helm write that carries the engine's
// first publication shows a Helm failure (a foreign Secret in the way: SecretConflict), the
// Warning event is recorded: the failure is derived with the engine's AddonReady, which only
// the handoff brings.
func TestHelmFailureOnAHandedOffStatusIsAnnounced(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "api.clever-cloud.com/v1", "kind": "Redis",
		"metadata": map[string]any{"name": "r", "namespace": "ns", "uid": "uid-c", "resourceVersion": "3", "generation": int64(1)},
	}}
	h := New()
	h.Give("uid-c", 1, []func(*unstructured.Unstructured){func(u *unstructured.Unstructured) {
		conds, _ := status.Set(status.Conditions(u), status.Condition{Type: status.TypeAddonReady, Status: "True", Reason: status.ReasonProvisioned, Message: "ok", ObservedGeneration: 1}, time.Now())
		status.SetConditions(u, conds)
	}})
	rec := record.NewFakeRecorder(10)
	w := &recordingStatus{}
	sw := &Helm{SubResourceWriter: w, Cache: getOnly{live: live}, Board: h, Recorder: rec}
	u := live.DeepCopy()
	conds, _ := status.Set(nil, status.Condition{Type: status.TypeReleaseFailed, Status: "True", Reason: "InstallError",
		Message: `Secret "r-secrets" in namespace "ns" exists and cannot be imported into the current release: invalid ownership metadata`}, time.Now())
	status.SetConditions(u, conds)
	if err := sw.Update(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if r, _ := status.Find(status.Conditions(w.written[0]), status.TypeReady); r.Reason != status.ReasonSecretConflict {
		t.Fatalf("Ready %+v, want SecretConflict", r)
	}
	select {
	case e := <-rec.Events:
		if !strings.HasPrefix(e, "Warning "+status.ReasonSecretConflict) {
			t.Fatalf("event %q", e)
		}
	default:
		t.Fatal("no Warning event for the conflict")
	}
}
