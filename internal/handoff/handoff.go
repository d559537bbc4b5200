// Package handoff lets the engine hand the status of a resource's first publication to the
// Helm side, whose status write then carries both (Board; docs/design.md).
package handoff

import (
	"context"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Board carries the status of the engine's pass that publishes a resource's
// credentials for the first time to the Helm side, whose status write (after it has rendered
// the Secret, a moment later) then holds both: one status write per new resource instead of
// two (in a burst of creates each status update
// costs kube-apiserver CPU and one more watch event to every controller).
//
// It is only an economy, never the only way the status lands:
//   - the engine opens a handoff before it writes the source Secret (which wakes the Helm
//     side), so the Helm side's write cannot come before it; the Helm side waits up to Wait
//     for the pass to end and fill it, else writes without it and the pass writes its own;
//   - the engine pass that handed its status off runs again after Deadline; a handoff still
//     there (the Helm side has not written, or its write failed) is then written by the engine;
//   - an engine pass meanwhile sees the handed-off status as written (plan reads it); one that
//     writes status claims the handoff first, so the Helm side no longer applies it on top of
//     that newer status (its write, if already under way, then conflicts with the engine's);
//   - the Helm side applies it only to the generation the engine's pass worked on: after a
//     spec edit, the engine's pass for the new generation writes it;
//   - a restart loses it: the next pass is a full one, as for any resource without status;
//   - each is forgotten after its lifetime (4 × Deadline from its opening; later while a Helm
//     write is carrying it) by a timer armed when it is opened: one left behind (its resource
//     deleted, or no longer this operator's), or written by the Helm side and not followed by
//     an engine pass soon (the next may be a resync period away), is not held for ever; one
//     forgotten before its status was written only costs the next pass being a full one.
//
// One Board is shared by one kind's engine and Helm side (internal/operator); an
// engine without one (unit tests, the engine alone) writes its status itself.
type Board struct {
	// Wait is how long the Helm side waits for an open handoff to be filled (default 2 s).
	Wait time.Duration
	// Deadline is when the engine writes a handoff the Helm side has not (default 15 s).
	Deadline time.Duration
	// Observe, when set, is told who wrote each handoff: "helm", "engine" (at the deadline,
	// or with a status of its own) or "missed" (the Helm side wrote while it was open; the
	// engine wrote at once).
	Observe func(outcome string)
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time

	mu sync.Mutex
	m  map[types.UID]*handoff
}

type handoff struct {
	uid        types.UID
	filled     chan struct{} // closed by fill, or by remove while open
	changes    []func(*unstructured.Unstructured)
	generation int64       // the resource's generation the pass worked on
	ok         bool        // filled with changes (not cancelled)
	missed     bool        // the Helm side wrote while it was open: the engine writes itself
	inFlight   bool        // a Helm write took it
	claimed    bool        // the engine writes it: the Helm side no longer applies it
	counted    bool        // its outcome was observed
	due        time.Time   // after due, the engine writes it
	expiry     *time.Timer // forgets it at the end of its lifetime
	// written is the resourceVersion of the Helm side's write that carried it: kept until the
	// engine's cache has caught up with it, so a pass in between still sees it as written.
	written string
}

func (h *Board) observe(ho *handoff, outcome string) {
	if ho.counted {
		return
	}
	ho.counted = true
	if h.Observe != nil {
		h.Observe(outcome)
	}
}

// New returns a handoff with the default waits.
func New() *Board {
	return &Board{Wait: 2 * time.Second, Deadline: 15 * time.Second, Now: time.Now}
}

func (h *Board) clock() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Board) deadline() time.Duration {
	if h.Deadline > 0 {
		return h.Deadline
	}
	return 15 * time.Second
}

// lifetime bounds how long a handoff is held at all (opened, filled, written and not yet seen
// in the engine's cache), from its opening: past it, nothing that holds one is still going on,
// but for a Helm write carrying it (it is looked at again a deadline later, until that write
// has called Done, which every write does).
func (h *Board) lifetime() time.Duration { return 4 * h.deadline() }

// open starts a handoff for uid (before the source Secret is written). It replaces none: a
// resource with one already open or pending is not handed off again (false).
func (h *Board) Open(uid types.UID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[types.UID]*handoff{}
	}
	if _, ok := h.m[uid]; ok {
		return false
	}
	ho := &handoff{uid: uid, filled: make(chan struct{})}
	ho.expiry = time.AfterFunc(h.lifetime(), func() { h.expire(ho) })
	h.m[uid] = ho
	return true
}

// expire is ho's timer, at the end of its lifetime: ho is forgotten, unless a Helm write is
// carrying it (its outcome is still to come: looked at again a deadline later).
func (h *Board) expire(ho *handoff) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m[ho.uid] != ho {
		return
	}
	if ho.inFlight {
		ho.expiry.Reset(h.deadline())
		return
	}
	h.remove(ho)
}

// remove forgets ho, releasing a Helm side that waits for it.
func (h *Board) remove(ho *handoff) {
	ho.expiry.Stop()
	if !ho.ok {
		select {
		case <-ho.filled:
		default:
			close(ho.filled)
		}
	}
	if h.m[ho.uid] == ho {
		delete(h.m, ho.uid)
	}
}

// fill hands the pass's status changes (made on generation) over. false: the Helm side
// already wrote while the handoff was open (or it is gone), and the caller writes them itself.
func (h *Board) Fill(uid types.UID, generation int64, changes []func(*unstructured.Unstructured)) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ho, ok := h.m[uid]
	if !ok || ho.ok {
		return false
	}
	if ho.missed {
		h.remove(ho)
		h.observe(ho, "missed")
		return false
	}
	ho.changes, ho.generation, ho.ok, ho.due = changes, generation, true, h.clock().Add(h.deadline())
	close(ho.filled)
	return true
}

// cancel closes an open handoff that the pass will not fill (it wrote its status itself).
func (h *Board) Cancel(uid types.UID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ho, ok := h.m[uid]; ok && !ho.ok {
		h.remove(ho)
	}
}

// drop forgets uid's handoff (the resource is being deleted, or no longer this operator's).
func (h *Board) Drop(uid types.UID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ho, ok := h.m[uid]; ok {
		h.remove(ho)
	}
}

// claim is the engine's, before a status write of its own for uid: a filled handoff not
// written yet is now the engine's to write (the Helm side no longer applies it).
func (h *Board) Claim(uid types.UID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ho, ok := h.m[uid]; ok && ho.ok && ho.written == "" {
		ho.claimed = true
	}
}

// settle is the engine's, after its status write for uid succeeded: a handoff it held was
// written with it.
func (h *Board) Settle(uid types.UID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ho, ok := h.m[uid]
	if !ok || !ho.ok {
		return
	}
	if ho.written == "" {
		h.observe(ho, "engine")
	}
	h.remove(ho)
}

// pending is what an engine pass over uid finds at its start: the handed-off changes, and
// whether they are now the pass's own to write (due: past the deadline, or claimed by an
// earlier pass whose write failed, and no Helm write under way); a due handoff is taken out
// in the same step, so the Helm side cannot take it too. Nothing (nil) when no filled
// handoff is there.
// cached is the resourceVersion of the engine's copy of the resource: a handoff the Helm side
// wrote is forgotten once that copy is at least as new as the write.
func (h *Board) Pending(uid types.UID, cached string) (changes []func(*unstructured.Unstructured), due bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ho, ok := h.m[uid]
	if !ok || !ho.ok {
		return nil, false
	}
	if ho.written != "" {
		if !NewerResourceVersion(ho.written, cached) {
			h.remove(ho)
			return nil, false
		}
		return ho.changes, false
	}
	if ho.inFlight || !ho.claimed && h.clock().Before(ho.due) {
		return ho.changes, false
	}
	h.remove(ho)
	h.observe(ho, "engine")
	return ho.changes, true
}

// NewerResourceVersion says whether resourceVersion a is known to be newer than b. Resource
// versions are opaque, but the API server's are etcd revisions (integers): when either is not
// one, nothing is assumed.
func NewerResourceVersion(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}

// Taken is a handoff the Helm side took for one status write (Board.Take). Its
// methods do nothing on nil (nothing was handed off).
type Taken struct {
	h       *Board
	ho      *handoff
	applied bool
}

// Apply applies the engine's changes to u, the status about to be written, unless the engine
// has claimed them since Take (it writes a newer status itself); it says whether it did. Call
// it after reading the live status u is merged from.
func (t *Taken) Apply(u *unstructured.Unstructured) bool {
	if t == nil {
		return false
	}
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	if t.ho.claimed {
		return false
	}
	for _, c := range t.ho.changes {
		c(u)
	}
	t.applied = true
	return true
}

// Done ends the write with the resourceVersion it produced ("": it failed, and the handoff is
// left for the next write, or the engine's deadline).
func (t *Taken) Done(writtenRV string) {
	if t == nil {
		return
	}
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	t.ho.inFlight = false
	if writtenRV != "" && t.applied {
		t.ho.written = writtenRV
		t.h.observe(t.ho, "helm")
	}
}

// Take is the Helm side's, before the status write for uid at generation: what the engine
// handed off for it, waiting up to Wait for a handoff being filled. nil: nothing to carry
// (none, still open after the wait, already carried or being carried, claimed by the engine,
// or made on another generation).
func (h *Board) Take(ctx context.Context, uid types.UID, generation int64) *Taken {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	ho, ok := h.m[uid]
	h.mu.Unlock()
	if !ok {
		return nil
	}
	wait := h.Wait
	if wait <= 0 {
		wait = 2 * time.Second
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ho.filled:
	case <-t.C:
	case <-ctx.Done():
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m[uid] != ho {
		return nil
	}
	if !ho.ok {
		// Still open: this write goes out without the engine's status, which the engine
		// then writes itself when its pass ends.
		ho.missed = true
		return nil
	}
	if ho.inFlight || ho.written != "" || ho.claimed || ho.generation != generation {
		return nil
	}
	ho.inFlight = true
	return &Taken{h: h, ho: ho}
}

// Len is the number of handoffs held (tests).
func (h *Board) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m)
}

// dueIn is how long until uid's handoff is due for the engine (a second past its deadline),
// when one not written by the Helm side is held.
func (h *Board) DueIn(uid types.UID) (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ho, ok := h.m[uid]
	if !ok || !ho.ok || ho.written != "" {
		return 0, false
	}
	return max(ho.due.Sub(h.clock()), 0) + time.Second, true
}

// Give opens and fills a handoff for uid in one step: what a pass does around its source
// Secret write, for callers outside a pass (the Helm side's tests). false: one is held.
func (h *Board) Give(uid types.UID, generation int64, changes []func(*unstructured.Unstructured)) bool {
	return h.Open(uid) && h.Fill(uid, generation, changes)
}
