package handoff

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Resources whose engine finalizer the Helm side's client adds with its own
// (internal/hybrid.StatusClient): like the ones the engine puts it on, no operator had worked
// on them, and the engine's next pass over one is its first pass. The mark is taken before
// that write and settled by its outcome, so the engine never trusts a write that failed (an
// earlier engine pass may have added the finalizer and created the add-on) and never misses
// one that succeeded (its live read may see the finalizer before the mark is settled).
var (
	newMu    sync.Mutex
	newMarks = map[types.UID]*newMark{}
)

type newMark struct {
	done      chan struct{}
	confirmed bool
}

// MarkNew records that a write about to add the engine's finalizer to a resource that has
// none may make it new; settle must be called with the write's outcome.
func MarkNew(uid types.UID) (settle func(written bool)) {
	m := &newMark{done: make(chan struct{})}
	newMu.Lock()
	newMarks[uid] = m
	newMu.Unlock()
	return func(written bool) {
		newMu.Lock()
		m.confirmed = written
		if !written && newMarks[uid] == m {
			delete(newMarks, uid)
		}
		newMu.Unlock()
		close(m.done)
	}
}

// TakeNew says (once) whether uid was marked new by a write that succeeded, waiting for a
// write in flight to settle.
func TakeNew(ctx context.Context, uid types.UID) bool {
	newMu.Lock()
	m := newMarks[uid]
	newMu.Unlock()
	if m == nil {
		return false
	}
	select {
	case <-m.done:
	case <-ctx.Done():
		return false
	case <-time.After(10 * time.Second):
		return false
	}
	newMu.Lock()
	defer newMu.Unlock()
	if newMarks[uid] != m {
		return false
	}
	delete(newMarks, uid)
	return m.confirmed
}

func DropNew(uid types.UID) {
	newMu.Lock()
	delete(newMarks, uid)
	newMu.Unlock()
}

// KeepNew marks uid new again (confirmed): a pass that put the finalizer on it ended before
// any call, so the next pass is still its first (TakeNew).
func KeepNew(uid types.UID) {
	m := &newMark{done: make(chan struct{}), confirmed: true}
	close(m.done)
	newMu.Lock()
	newMarks[uid] = m
	newMu.Unlock()
}
