package statusmerge

import (
	"cmp"
	"context"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Board carries the status of the engine's pass that first publishes a resource's credentials
// to the Helm side's status write after the install (rule 4). One Board is shared by one
// kind's engine and Helm side; an engine without one writes its status itself. A handoff is
// opened by the pass before it writes the source Secret (which wakes the Helm side) and
// filled at its commit (Open, Fill); carried by the Helm side's next write of the same
// generation (Take, Apply, Done), or dropped if still open after Wait ("missed": the pass
// writes itself); seen by the engine's passes as written until their cache holds that write
// (Pending), and theirs to write after Deadline ("engine"; DueIn brings the pass forward) or
// once one of them claimed it for a write of its own (Claim, Settle: the Helm side no longer
// applies it). It is forgotten 4 deadlines after its opening (at the next Open), or when the
// engine drops its resource; a restart loses it: the next pass is then a full one.
type Board struct {
	// Wait is how long the Helm side waits for an open handoff to be filled (default 2 s);
	// Deadline when the engine writes one the Helm side has not carried (default 15 s).
	Wait, Deadline time.Duration
	// Observe, when set, is told who wrote each handoff: "helm", "engine" or "missed".
	Observe func(outcome string)
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time

	mu sync.Mutex
	m  map[types.UID]*handoff
}

type handoff struct {
	filled      chan struct{} // closed when filled, or when dropped while open
	changes     []func(*unstructured.Unstructured)
	generation  int64 // of the pass that made the changes
	ok, claimed bool  // filled; claimed by an engine write
	opened, due time.Time
	written     string // resourceVersion of the Helm write that carried it
}

// New returns a Board with the default waits.
func New() *Board { return &Board{Wait: 2 * time.Second, Deadline: 15 * time.Second} }

func (b *Board) now() time.Time { return now(b.Now) }

func (b *Board) deadline() time.Duration { return cmp.Or(b.Deadline, 15*time.Second) }

// now is f's time, or time.Now's when f is nil (the clocks tests move).
func now(f func() time.Time) time.Time {
	if f != nil {
		return f()
	}
	return time.Now()
}

func (b *Board) observe(outcome string) {
	if b.Observe != nil {
		b.Observe(outcome)
	}
}

// remove forgets uid's handoff, releasing a Helm side waiting for it. Under b.mu.
func (b *Board) remove(uid types.UID) {
	if ho, ok := b.m[uid]; ok && !ho.ok {
		close(ho.filled)
	}
	delete(b.m, uid)
}

// Open starts a handoff for uid (before the source Secret is written); false when one is
// held. It forgets the handoffs past their lifetime.
func (b *Board) Open(uid types.UID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	for id, ho := range b.m {
		if now.Sub(ho.opened) > 4*b.deadline() {
			b.remove(id)
		}
	}
	if _, held := b.m[uid]; held {
		return false
	}
	if b.m == nil {
		b.m = map[types.UID]*handoff{}
	}
	b.m[uid] = &handoff{filled: make(chan struct{}), opened: now}
	return true
}

// Fill hands the pass's status changes (made on generation) over; false when the handoff is
// gone (the Helm side wrote while it was open): the pass writes them itself.
func (b *Board) Fill(uid types.UID, generation int64, changes []func(*unstructured.Unstructured)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	ho, held := b.m[uid]
	if !held || ho.ok {
		return false
	}
	ho.changes, ho.generation, ho.ok, ho.due = changes, generation, true, b.now().Add(b.deadline())
	close(ho.filled)
	return true
}

// Drop forgets uid's handoff: a pass that opened one and writes itself, or a resource the
// engine no longer handles.
func (b *Board) Drop(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.remove(uid)
}

// Claim is the engine's, before each status write of its own: a filled handoff not carried
// yet is now the engine's to write.
func (b *Board) Claim(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ho, held := b.m[uid]; held && ho.ok && ho.written == "" {
		ho.claimed = true
	}
}

// Settle is the engine's, after its status write succeeded: the handoff it held was written.
func (b *Board) Settle(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ho, held := b.m[uid]; held && ho.ok {
		if ho.written == "" {
			b.observe("engine")
		}
		b.remove(uid)
	}
}

// Pending is what an engine pass over uid finds at its start, cached being the resourceVersion
// of its copy: the handed-off changes, and whether they are now the pass's own to write (due:
// past the deadline, or claimed by a pass whose write failed); a due one is taken out in the
// same step. nil when no filled handoff is held, or the cache holds the Helm write of it.
func (b *Board) Pending(uid types.UID, cached string) (changes []func(*unstructured.Unstructured), due bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ho, held := b.m[uid]
	switch {
	case !held || !ho.ok:
		return nil, false
	case ho.written != "" && !NewerResourceVersion(ho.written, cached):
		b.remove(uid)
		return nil, false
	case ho.written != "" || !ho.claimed && b.now().Before(ho.due):
		return ho.changes, false
	}
	b.remove(uid)
	b.observe("engine")
	return ho.changes, true
}

// DueIn is how long until uid's handoff is due for the engine (a second past its deadline),
// when one not carried by the Helm side is held.
func (b *Board) DueIn(uid types.UID) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ho, held := b.m[uid]
	if !held || !ho.ok || ho.written != "" {
		return 0, false
	}
	return max(ho.due.Sub(b.now()), 0) + time.Second, true
}

// Len is the number of handoffs held (tests).
func (b *Board) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

// Taken is a handoff the Helm side took for one status write; its methods do nothing on nil.
type Taken struct {
	b       *Board
	uid     types.UID
	ho      *handoff
	applied bool
}

// Take is the Helm side's, before its status write for uid at generation: the engine's
// handoff, waiting up to Wait for one being filled. nil: nothing to carry.
func (b *Board) Take(ctx context.Context, uid types.UID, generation int64) *Taken {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	ho, held := b.m[uid]
	b.mu.Unlock()
	if !held {
		return nil
	}
	wait, cancel := context.WithTimeout(ctx, cmp.Or(b.Wait, 2*time.Second))
	defer cancel()
	select {
	case <-ho.filled:
	case <-wait.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.m[uid] != ho:
		return nil
	case !ho.ok: // still open: this write goes without it, and the pass writes its own
		b.remove(uid)
		b.observe("missed")
		return nil
	case ho.written != "" || ho.claimed || ho.generation != generation:
		return nil
	}
	return &Taken{b: b, uid: uid, ho: ho}
}

// Apply applies the handed-off changes to u, the status about to be written, unless the
// engine has claimed them since Take; call it after the read u is merged from.
func (t *Taken) Apply(u *unstructured.Unstructured) bool {
	if t == nil {
		return false
	}
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	if t.b.m[t.uid] != t.ho || t.ho.claimed || t.ho.written != "" {
		return false
	}
	for _, c := range t.ho.changes {
		c(u)
	}
	t.applied = true
	return true
}

// Done ends the write with the resourceVersion it produced ("": it failed, and the handoff
// stays for the next write, or the engine's deadline).
func (t *Taken) Done(writtenRV string) {
	if t == nil || writtenRV == "" || !t.applied {
		return
	}
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	if t.b.m[t.uid] == t.ho && t.ho.written == "" {
		t.ho.written = writtenRV
		t.b.observe("helm")
	}
}

// NewerResourceVersion says whether resourceVersion a is known to be newer than b: the API
// server's are etcd revisions (integers); when either is not one, nothing is assumed.
func NewerResourceVersion(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}
