package addon

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/statusmerge"
)

// handoffHarness is the engine's harness with a statusmerge.Board on a clock the test moves.
func handoffHarness(t *testing.T, api *fakeAPI, mutate func(*unstructured.Unstructured)) (*harness, *unstructured.Unstructured, *time.Time) {
	t.Helper()
	k, u := testResource(t, mutate)
	h := newHarness(t, k, api, u)
	clock := time.Now()
	h.r.Handoff = statusmerge.New()
	h.r.Handoff.Now = func() time.Time { return clock }
	h.r.Handoff.Wait = 20 * time.Millisecond
	return h, u, &clock
}

// passResult runs one engine pass over the stored resource and returns its result.
func (h *harness) passResult(t *testing.T, u *unstructured.Unstructured) (time.Duration, *unstructured.Unstructured) {
	t.Helper()
	live := h.get(t, u)
	res, err := h.r.reconcileObject(context.Background(), live)
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	return res.RequeueAfter, h.get(t, u)
}

func (h *harness) get(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(u.GroupVersionKind())
	if err := h.cl.Get(context.Background(), client.ObjectKeyFromObject(u), live); err != nil {
		t.Fatal(err)
	}
	return live
}

// helmWrite is what the Helm side's status write does with a handoff: its own condition, the
// engine's handed-off changes on top, one write. It returns whether it carried any.
func (h *harness) helmWrite(t *testing.T, u *unstructured.Unstructured) bool {
	t.Helper()
	live := h.get(t, u)
	setCondition(live, status.TypeDeployed, metav1.ConditionTrue, "InstallSuccessful", "", time.Now())
	handed := h.r.Handoff.Take(context.Background(), live.GetUID(), live.GetGeneration())
	carried := handed.Apply(live)
	status.ApplyReady(live, time.Now())
	if err := h.cl.Status().Update(context.Background(), live); err != nil {
		handed.Done("")
		t.Fatal(err)
	}
	handed.Done(live.GetResourceVersion())
	return carried
}

var handoffEnv = []clevercloud.Variable{{Name: "AZIMUTT_URL", Value: "https://az"}}

// TestFirstPublicationLeavesItsStatusToTheHelmWrite: the pass that creates and publishes a new
// resource writes no status; the Helm side's write after the install carries it, Ready at
// once; the engine's next pass sees it published and calls nothing.
func TestFirstPublicationLeavesItsStatusToTheHelmWrite(t *testing.T) {
	api := &fakeAPI{env: handoffEnv}
	h, u, _ := handoffHarness(t, api, nil)
	after, live := h.passResult(t, u)
	if h.statusWrites != 0 || h.r.Handoff.Len() != 1 {
		t.Fatalf("status writes %d, handoffs %d: want the status handed off", h.statusWrites, h.r.Handoff.Len())
	}
	if _, ok := status.Find(status.Conditions(live), status.TypeAddonReady); ok {
		t.Fatal("AddonReady written by the engine")
	}
	if max := h.r.Handoff.Deadline + 2*time.Second; after <= 0 || after > max {
		t.Fatalf("requeued after %s: want the engine back by the deadline (%s)", after, max)
	}
	if !h.helmWrite(t, u) {
		t.Fatal("the Helm side found nothing handed off")
	}
	live = h.get(t, u)
	if got := ready(live); got != "True/"+status.ReasonProvisioned {
		t.Fatalf("AddonReady %s after the Helm write", got)
	}
	if r, _ := status.Find(status.Conditions(live), status.TypeReady); r.Status != "True" {
		t.Fatalf("Ready %+v", r)
	}
	if id, _, _ := unstructured.NestedString(live.Object, "status", "addon"); id != "addon_new" {
		t.Fatalf("status.addon %q", id)
	}
	h.statusWrites, api.calls = 0, nil
	h.passResult(t, u)
	if h.statusWrites != 0 || len(api.calls) != 0 || h.r.Handoff.Len() != 0 {
		t.Fatalf("next pass: status writes %d, calls %v, handoffs %d", h.statusWrites, api.calls, h.r.Handoff.Len())
	}
}

// TestHandoffNotWrittenByHelmIsWrittenByTheEngine: before the deadline a pass sees the
// handed-off status as written (no call, no write); after it, the engine writes it.
func TestHandoffNotWrittenByHelmIsWrittenByTheEngine(t *testing.T) {
	api := &fakeAPI{env: handoffEnv}
	h, u, clock := handoffHarness(t, api, nil)
	h.passResult(t, u)
	api.calls = nil
	*clock = clock.Add(5 * time.Second)
	after, _ := h.passResult(t, u)
	if h.statusWrites != 0 || len(api.calls) != 0 || h.r.Handoff.Len() != 1 {
		t.Fatalf("pass before the deadline: status writes %d, calls %v, handoffs %d", h.statusWrites, api.calls, h.r.Handoff.Len())
	}
	if want := h.r.Handoff.Deadline - 5*time.Second + time.Second; after != want {
		t.Fatalf("a pass seeing the handoff requeued after %s, want %s (its deadline)", after, want)
	}
	var outcomes []string
	h.r.Handoff.Observe = func(o string) { outcomes = append(outcomes, o) }
	*clock = clock.Add(h.r.Handoff.Deadline)
	_, live := h.passResult(t, u)
	if len(outcomes) != 1 || outcomes[0] != "engine" {
		t.Fatalf("outcomes %v, want [engine]", outcomes)
	}
	if h.statusWrites != 1 || len(api.calls) != 0 || h.r.Handoff.Len() != 0 {
		t.Fatalf("pass at the deadline: status writes %d, calls %v, handoffs %d", h.statusWrites, api.calls, h.r.Handoff.Len())
	}
	if got := ready(live); got != "True/"+status.ReasonProvisioned {
		t.Fatalf("AddonReady %s", got)
	}
	if h.helmWrite(t, u) {
		t.Fatal("a handoff written by the engine was carried again")
	}
}

// TestEngineWriteClaimsTheHandoff: a pass that writes a status of its own while a handoff is
// held (here: the user pauses the resource before the Helm side wrote) writes the handed-off
// status with it, and from before that write the Helm side no longer applies it (it would
// bring older changes back on top of the engine's newer status).
func TestEngineWriteClaimsTheHandoff(t *testing.T) {
	api := &fakeAPI{env: handoffEnv}
	h, u, _ := handoffHarness(t, api, nil)
	h.passResult(t, u)
	var outcomes []string
	h.r.Handoff.Observe = func(o string) { outcomes = append(outcomes, o) }
	live := h.get(t, u)
	live.SetAnnotations(map[string]string{kinds.AnnotationPaused: "true"})
	if err := h.cl.Update(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	taken := 0
	h.cl.beforeStatus = func() {
		if h.r.Handoff.Take(context.Background(), u.GetUID(), live.GetGeneration()) != nil {
			taken++
		}
	}
	h.statusWrites, api.calls = 0, nil
	_, got := h.passResult(t, u)
	if taken != 0 {
		t.Fatal("the Helm side took a handoff during the engine's own status write")
	}
	if h.statusWrites != 1 || len(api.calls) != 0 || h.r.Handoff.Len() != 0 {
		t.Fatalf("status writes %d, calls %v, handoffs held %d", h.statusWrites, api.calls, h.r.Handoff.Len())
	}
	if ready(got) != "True/"+status.ReasonProvisioned {
		t.Fatalf("AddonReady %s: the handed-off status was not written with the pass's", ready(got))
	}
	if p, _ := status.Find(status.Conditions(got), status.TypePaused); p.Status != "True" {
		t.Fatalf("Paused %+v", p)
	}
	if len(outcomes) != 1 || outcomes[0] != "engine" {
		t.Fatalf("outcomes %v", outcomes)
	}
}

// TestHandoffOnlyForAFirstPublication: a pass whose resource already has a source Secret, or
// that Helm has deployed, or that is paused, writes its own status.
func TestHandoffOnlyForAFirstPublication(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*unstructured.Unstructured)
		source bool
	}{
		{"source Secret there", nil, true},
		{"deployed", func(u *unstructured.Unstructured) {
			setCondition(u, status.TypeDeployed, metav1.ConditionTrue, "InstallSuccessful", "", time.Now())
		}, false},
		{"paused", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{kinds.AnnotationPaused: "true"})
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, u, _ := handoffHarness(t, &fakeAPI{env: handoffEnv}, c.mutate)
			if c.source {
				src := &corev1.Secret{}
				src.Namespace, src.Name = u.GetNamespace(), h.r.Kind.SourceSecretName(u.GetName())
				src.Labels = map[string]string{kinds.LabelManagedBy: kinds.ManagedByValue}
				if err := h.cl.Create(context.Background(), src); err != nil {
					t.Fatal(err)
				}
			}
			h.passResult(t, u)
			if h.statusWrites != 1 || h.r.Handoff.Len() != 0 {
				t.Fatalf("status writes %d, handoffs %d: want the engine's own write", h.statusWrites, h.r.Handoff.Len())
			}
		})
	}
}
