package handoff

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// TestHandoffStates walks Board's states: a Helm write while it is open goes without
// it and the engine writes itself; a failed Helm write leaves it for the next; a write's
// resourceVersion keeps it as written until the engine's copy has caught up.
func TestHandoffStates(t *testing.T) {
	ctx := context.Background()
	change := func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "x", "status", "addon") }
	changes := []func(*unstructured.Unstructured){change}
	clock := time.Unix(1000, 0)
	var outcomes []string
	h := &Board{Wait: 20 * time.Millisecond, Deadline: 10 * time.Second, Now: func() time.Time { return clock },
		Observe: func(o string) { outcomes = append(outcomes, o) }}
	const uid = types.UID("u")
	u := &unstructured.Unstructured{Object: map[string]any{}}

	if h.Take(ctx, uid, 1) != nil {
		t.Fatal("nothing handed off, yet changes")
	}
	// Open, not filled: the Helm write waits Wait, goes without; the fill is refused.
	if !h.Open(uid) || h.Open(uid) {
		t.Fatal("open: first true, second false")
	}
	if h.Take(ctx, uid, 1) != nil {
		t.Fatal("an open handoff was taken before it was filled")
	}
	if h.Fill(uid, 1, changes) || h.Len() != 0 {
		t.Fatal("filled after a Helm write went out without it")
	}
	// Filled while the Helm side waits: taken.
	h.Open(uid)
	go func() { time.Sleep(5 * time.Millisecond); h.Fill(uid, 1, changes) }()
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
	if c, due := h.Pending(uid, "5"); c == nil || due {
		t.Fatalf("in flight: pending %v due %v", c != nil, due)
	}
	handed.Done("") // the write failed
	handed = h.Take(ctx, uid, 1)
	if !handed.Apply(u) {
		t.Fatal("a failed write's handoff was not offered again")
	}
	clock = time.Unix(1000, 0)
	handed.Done("7")
	if c, due := h.Pending(uid, "6"); c == nil || due {
		t.Fatal("written at 7, cache at 6: seen as written, not due")
	}
	if h.Take(ctx, uid, 1) != nil {
		t.Fatal("a written handoff was taken again")
	}
	// Written, and the cache still behind it past the deadline (a burst): still seen as
	// written (a full pass would call Clever Cloud), and no pass is brought forward for it.
	clock = clock.Add(2 * h.Deadline)
	if c, due := h.Pending(uid, "6"); c == nil || due {
		t.Fatal("written at 7, cache at 6, past the deadline: forgotten")
	}
	if _, ok := h.DueIn(uid); ok {
		t.Fatal("a written handoff brings the engine's pass forward")
	}
	if c, _ := h.Pending(uid, "7"); c != nil || h.Len() != 0 {
		t.Fatal("cache at the written version: forgotten")
	}
	// Cancelled and dropped handoffs release a waiting Helm side at once.
	h.Open(uid)
	h.Cancel(uid)
	if h.Take(ctx, uid, 1) != nil || h.Len() != 0 {
		t.Fatal("cancelled")
	}
	if got := strings.Join(outcomes, ","); got != "missed,helm" {
		t.Fatalf("outcomes observed %q, want missed,helm", got)
	}
	var nilH *Board
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
	h := &Board{Wait: 10 * time.Millisecond, Deadline: 10 * time.Second, Now: func() time.Time { return clock },
		Observe: func(o string) { outcomes = append(outcomes, o) }}
	u := &unstructured.Unstructured{Object: map[string]any{}}

	// Claimed before the Helm side takes it: not taken.
	h.Give("a", 1, changes)
	h.Claim("a")
	if h.Take(ctx, "a", 1) != nil {
		t.Fatal("a claimed handoff was taken")
	}
	// The engine's write failed: the next pass writes it at once, before the deadline.
	if c, due := h.Pending("a", "1"); c == nil || !due || h.Len() != 0 {
		t.Fatalf("claimed, write failed: pending %v due %v held %d", c != nil, due, h.Len())
	}

	// Taken, then claimed before the Helm side applies it: not applied.
	h.Give("b", 1, changes)
	handed := h.Take(ctx, "b", 1)
	h.Claim("b")
	if handed.Apply(u) {
		t.Fatal("a handoff claimed after Take was applied")
	}
	if _, found, _ := unstructured.NestedString(u.Object, "status", "addon"); found {
		t.Fatal("claimed changes reached the Helm write")
	}
	handed.Done("9") // the Helm write went out without it
	h.Settle("b")    // the engine's write carried it
	if h.Len() != 0 {
		t.Fatal("settled, still held")
	}

	// Due and not in flight: pending takes it out; a Take after that gets nothing.
	h.Give("c", 1, changes)
	clock = clock.Add(h.Deadline)
	if c, due := h.Pending("c", "1"); c == nil || !due {
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
	h.Settle("d")
	if got := strings.Join(outcomes, ","); got != "engine,engine,engine,helm" {
		t.Fatalf("outcomes %q, want engine (a), engine (b), engine (c), helm (d)", got)
	}
}

// TestHandoffOfAnotherGeneration: the Helm side does not apply a handoff made on another
// generation (the spec was edited meanwhile: the engine's pass for it writes the status).
func TestHandoffOfAnotherGeneration(t *testing.T) {
	h := &Board{Wait: 10 * time.Millisecond}
	h.Give("g", 1, []func(*unstructured.Unstructured){func(*unstructured.Unstructured) {}})
	if h.Take(context.Background(), "g", 2) != nil {
		t.Fatal("a handoff of generation 1 taken by a write of generation 2")
	}
	if h.Len() != 1 {
		t.Fatal("the handoff was lost: the engine must still find it")
	}
}

// waitHeld waits up to 10 s for h to hold exactly the handoffs of uids.
func waitHeld(t *testing.T, h *Board, why string, uids ...types.UID) {
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
	h := &Board{Wait: 10 * time.Millisecond, Deadline: 250 * time.Millisecond}
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
	h := &Board{Wait: 10 * time.Millisecond, Deadline: 500 * time.Millisecond}
	none := []func(*unstructured.Unstructured){}
	h.Give("gone", 1, none)
	h.Open("open") // a pass that died between open and fill
	h.Give("writing", 1, none)
	handed := h.Take(context.Background(), "writing", 1)
	if handed == nil {
		t.Fatal("not taken")
	}
	h.Give("again", 1, none)
	h.Drop("again")
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
