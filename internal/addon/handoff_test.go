package addon

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// handoffHarness is the engine's harness with a StatusHandoff on a clock the test moves.
func handoffHarness(t *testing.T, api *fakeAPI, mutate func(*unstructured.Unstructured)) (*harness, *unstructured.Unstructured, *time.Time) {
	t.Helper()
	k, u := testResource(t, mutate)
	h := newHarness(t, k, api, u)
	clock := time.Now()
	h.r.Handoff = NewStatusHandoff()
	h.r.Handoff.now = func() time.Time { return clock }
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
	live.SetAnnotations(map[string]string{AnnotationPaused: "true"})
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
		{"paused", func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{AnnotationPaused: "true"}) }, false},
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

// TestHandoffStates walks StatusHandoff's states: a Helm write while it is open goes without
// it and the engine writes itself; a failed Helm write leaves it for the next; a write's
// resourceVersion keeps it as written until the engine's copy has caught up.
func TestHandoffStates(t *testing.T) {
	ctx := context.Background()
	change := func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "x", "status", "addon") }
	changes := []func(*unstructured.Unstructured){change}
	clock := time.Unix(1000, 0)
	var outcomes []string
	h := &StatusHandoff{Wait: 20 * time.Millisecond, Deadline: 10 * time.Second, now: func() time.Time { return clock },
		Observe: func(o string) { outcomes = append(outcomes, o) }}
	const uid = types.UID("u")
	u := &unstructured.Unstructured{Object: map[string]any{}}

	if h.Take(ctx, uid, 1) != nil {
		t.Fatal("nothing handed off, yet changes")
	}
	// Open, not filled: the Helm write waits Wait, goes without; the fill is refused.
	if !h.open(uid) || h.open(uid) {
		t.Fatal("open: first true, second false")
	}
	if h.Take(ctx, uid, 1) != nil {
		t.Fatal("an open handoff was taken before it was filled")
	}
	if h.fill(uid, 1, changes) || h.Len() != 0 {
		t.Fatal("filled after a Helm write went out without it")
	}
	// Filled while the Helm side waits: taken.
	h.open(uid)
	go func() { time.Sleep(5 * time.Millisecond); h.fill(uid, 1, changes) }()
	h.Wait = time.Second
	handed := h.Take(ctx, uid, 1)
	if !handed.Apply(u) {
		t.Fatal("a handoff filled during the wait was not taken")
	}
	// In flight: another Take gets nothing; pending says not due even past the deadline.
	if h.Take(ctx, uid, 1) != nil {
		t.Fatal("taken twice while in flight")
	}
	clock = clock.Add(time.Minute)
	if c, due := h.pending(uid, "5"); c == nil || due {
		t.Fatalf("in flight: pending %v due %v", c != nil, due)
	}
	handed.Done("") // the write failed
	handed = h.Take(ctx, uid, 1)
	if !handed.Apply(u) {
		t.Fatal("a failed write's handoff was not offered again")
	}
	clock = time.Unix(1000, 0)
	handed.Done("7")
	if c, due := h.pending(uid, "6"); c == nil || due {
		t.Fatal("written at 7, cache at 6: seen as written, not due")
	}
	if h.Take(ctx, uid, 1) != nil {
		t.Fatal("a written handoff was taken again")
	}
	// Written, and the cache still behind it past the deadline (a burst): still seen as
	// written (a full pass would call Clever Cloud), and no pass is brought forward for it.
	clock = clock.Add(2 * h.Deadline)
	if c, due := h.pending(uid, "6"); c == nil || due {
		t.Fatal("written at 7, cache at 6, past the deadline: forgotten")
	}
	if _, ok := h.dueIn(uid); ok {
		t.Fatal("a written handoff brings the engine's pass forward")
	}
	if c, _ := h.pending(uid, "7"); c != nil || h.Len() != 0 {
		t.Fatal("cache at the written version: forgotten")
	}
	// Cancelled and dropped handoffs release a waiting Helm side at once.
	h.open(uid)
	h.cancel(uid)
	if h.Take(ctx, uid, 1) != nil || h.Len() != 0 {
		t.Fatal("cancelled")
	}
	if got := strings.Join(outcomes, ","); got != "missed,helm" {
		t.Fatalf("outcomes observed %q, want missed,helm", got)
	}
	var nilH *StatusHandoff
	if handed := nilH.Take(ctx, uid, 1); handed != nil || handed.Apply(u) {
		t.Fatal("a nil handoff takes nothing")
	}
	handed.Done("1") // nil: no-op
}

// TestHandoffClaimedByTheEngine: a handoff the engine claims (it is about to write a status
// of its own, newer) is no longer applied by the Helm side, even one taken before the claim;
// a claim whose write failed leaves it due for the engine's next pass at once; a due handoff
// is taken out in the same step as pending says so (the Helm side cannot take it too); each
// handoff's outcome is counted once.
func TestHandoffClaimedByTheEngine(t *testing.T) {
	ctx := context.Background()
	changes := []func(*unstructured.Unstructured){func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "old", "status", "addon")
	}}
	clock := time.Unix(1000, 0)
	var outcomes []string
	h := &StatusHandoff{Wait: 10 * time.Millisecond, Deadline: 10 * time.Second, now: func() time.Time { return clock },
		Observe: func(o string) { outcomes = append(outcomes, o) }}
	u := &unstructured.Unstructured{Object: map[string]any{}}

	// Claimed before the Helm side takes it: not taken.
	h.Give("a", 1, changes)
	h.claim("a")
	if h.Take(ctx, "a", 1) != nil {
		t.Fatal("a claimed handoff was taken")
	}
	// The engine's write failed: the next pass writes it at once, before the deadline.
	if c, due := h.pending("a", "1"); c == nil || !due || h.Len() != 0 {
		t.Fatalf("claimed, write failed: pending %v due %v held %d", c != nil, due, h.Len())
	}

	// Taken, then claimed before the Helm side applies it: not applied.
	h.Give("b", 1, changes)
	handed := h.Take(ctx, "b", 1)
	h.claim("b")
	if handed.Apply(u) {
		t.Fatal("a handoff claimed after Take was applied")
	}
	if _, found, _ := unstructured.NestedString(u.Object, "status", "addon"); found {
		t.Fatal("claimed changes reached the Helm write")
	}
	handed.Done("9") // the Helm write went out without it
	h.settle("b")    // the engine's write carried it
	if h.Len() != 0 {
		t.Fatal("settled, still held")
	}

	// Due and not in flight: pending takes it out; a Take after that gets nothing.
	h.Give("c", 1, changes)
	clock = clock.Add(h.Deadline)
	if c, due := h.pending("c", "1"); c == nil || !due {
		t.Fatal("past the deadline: not due")
	}
	if h.Take(ctx, "c", 1) != nil {
		t.Fatal("a handoff the engine took as due was taken by the Helm side too")
	}

	// Applied by the Helm side and written by the engine too (it conflicted, read live,
	// wrote): counted once.
	h.Give("d", 1, changes)
	handed = h.Take(ctx, "d", 1)
	handed.Apply(u)
	handed.Done("12")
	h.settle("d")
	if got := strings.Join(outcomes, ","); got != "engine,engine,engine,helm" {
		t.Fatalf("outcomes %q, want engine (a), engine (b), engine (c), helm (d)", got)
	}
}

// TestHandoffOfAnotherGeneration: the Helm side does not apply a handoff made on another
// generation (the spec was edited meanwhile: the engine's pass for it writes the status).
func TestHandoffOfAnotherGeneration(t *testing.T) {
	h := &StatusHandoff{Wait: 10 * time.Millisecond}
	h.Give("g", 1, []func(*unstructured.Unstructured){func(*unstructured.Unstructured) {}})
	if h.Take(context.Background(), "g", 2) != nil {
		t.Fatal("a handoff of generation 1 taken by a write of generation 2")
	}
	if h.Len() != 1 {
		t.Fatal("the handoff was lost: the engine must still find it")
	}
}

// waitHeld waits up to 10 s for h to hold exactly the handoffs of uids.
func waitHeld(t *testing.T, h *StatusHandoff, why string, uids ...types.UID) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.Lock()
		held := len(h.m) == len(uids)
		for _, uid := range uids {
			_, ok := h.m[uid]
			held = held && ok
		}
		n := len(h.m)
		h.mu.Unlock()
		if held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d held 10 s on, want %v", why, n, uids)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHandoffWrittenIsForgottenInTime: a handoff the Helm side wrote is forgotten after its
// lifetime even if no engine pass comes (the next may be a resync period away): its changes
// are not held for ever.
func TestHandoffWrittenIsForgottenInTime(t *testing.T) {
	t.Parallel()
	h := &StatusHandoff{Wait: 10 * time.Millisecond, Deadline: 250 * time.Millisecond}
	h.Give("w", 1, []func(*unstructured.Unstructured){func(*unstructured.Unstructured) {}})
	handed := h.Take(context.Background(), "w", 1)
	if !handed.Apply(&unstructured.Unstructured{Object: map[string]any{}}) {
		t.Fatal("not taken")
	}
	handed.Done("3")
	if h.Len() != 1 {
		t.Fatal("a written handoff forgotten at once: engine passes whose cache lags would not see it")
	}
	waitHeld(t, h, "a written handoff past its 1 s lifetime")
}

// TestHandoffLifetime: handoffs no pass comes back for (the resource was deleted, and the
// Reconcile that found it gone knows no UID; or a pass died between open and fill) are
// forgotten at the end of their lifetime, not held for ever; one a Helm write is carrying is
// kept until that write has ended; the timer of one forgotten earlier does nothing to a
// later handoff of the same resource.
func TestHandoffLifetime(t *testing.T) {
	t.Parallel()
	h := &StatusHandoff{Wait: 10 * time.Millisecond, Deadline: 500 * time.Millisecond}
	none := []func(*unstructured.Unstructured){}
	h.Give("gone", 1, none)
	h.open("open") // a pass that died between open and fill
	h.Give("writing", 1, none)
	handed := h.Take(context.Background(), "writing", 1)
	if handed == nil {
		t.Fatal("not taken")
	}
	h.Give("again", 1, none)
	h.drop("again")
	if h.Len() != 3 {
		t.Fatalf("held %d before their lifetime (2 s), want 3", h.Len())
	}
	time.Sleep(1200 * time.Millisecond)
	h.Give("again", 1, none) // the same resource, handed off anew: held until 3.2 s
	waitHeld(t, h, "past the lifetime, a Helm write under way", "writing", "again")
	time.Sleep(h.Deadline) // "writing"'s timer fired at 2 s at the latest: it was pushed back
	h.mu.Lock()
	_, kept := h.m["writing"]
	h.mu.Unlock()
	if !kept {
		t.Fatal("a handoff a Helm write is carrying was forgotten")
	}
	handed.Done("")
	waitHeld(t, h, "past the lifetime, the Helm write ended")
}
