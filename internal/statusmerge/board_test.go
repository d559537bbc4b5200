package statusmerge

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Give opens and fills a handoff in one step, as a pass does around its source Secret write.
func (b *Board) Give(uid types.UID, generation int64, changes []func(*unstructured.Unstructured)) bool {
	return b.Open(uid) && b.Fill(uid, generation, changes)
}

// TestHandoffStates walks a handoff's life: a Helm write while it is open goes without it and
// the engine writes itself; a failed Helm write leaves it for the next; a write's
// resourceVersion keeps it as written until the engine's copy has caught up.
func TestHandoffStates(t *testing.T) {
	ctx := context.Background()
	changes := []func(*unstructured.Unstructured){func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "x", "status", "addon")
	}}
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
	handed.Done("") // the write failed
	if c, due := h.Pending(uid, "5"); c == nil || due {
		t.Fatalf("a failed Helm write, before the deadline: pending %v due %v", c != nil, due)
	}
	handed = h.Take(ctx, uid, 1)
	if !handed.Apply(u) {
		t.Fatal("a failed write's handoff was not offered again")
	}
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
	// Dropped while open: a waiting Helm side is released at once.
	h.Open(uid)
	h.Wait = time.Minute
	go func() { time.Sleep(5 * time.Millisecond); h.Drop(uid) }()
	start := time.Now()
	if h.Take(ctx, uid, 1) != nil || h.Len() != 0 || time.Since(start) > 10*time.Second {
		t.Fatal("dropped")
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

	// Due: pending takes it out; a Take after that gets nothing.
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

// TestHandoffLifetime: handoffs no pass comes back for (the resource was deleted or
// relabelled away, a pass died between open and fill, or one the Helm side wrote is followed
// by no engine pass soon) are forgotten past their lifetime (4 deadlines from their opening)
// at the next opening, not held for ever; a written one is kept until then, so engine passes
// whose cache lags still see it.
func TestHandoffLifetime(t *testing.T) {
	clock := time.Unix(1000, 0)
	h := &Board{Wait: 10 * time.Millisecond, Deadline: time.Second, Now: func() time.Time { return clock }}
	none := []func(*unstructured.Unstructured){}
	h.Give("gone", 1, none)
	h.Open("open") // a pass that died between open and fill
	h.Give("written", 1, none)
	handed := h.Take(context.Background(), "written", 1)
	if !handed.Apply(&unstructured.Unstructured{Object: map[string]any{}}) {
		t.Fatal("not taken")
	}
	handed.Done("3")
	clock = clock.Add(3 * time.Second)
	h.Give("later", 1, none)
	if h.Len() != 4 {
		t.Fatalf("held %d within their lifetime, want 4", h.Len())
	}
	clock = clock.Add(2 * time.Second) // 5 s: the first three are past their 4 s
	h.Give("last", 1, none)
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, later := h.m["later"]; len(h.m) != 2 || !later {
		t.Fatalf("held %d past the lifetime, want later and last", len(h.m))
	}
}
