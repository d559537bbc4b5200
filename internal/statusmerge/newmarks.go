package statusmerge

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// newMarks are the resources whose engine finalizer the Helm side's client added with its own
// (rule 5): as for one the engine put it on, no operator had worked on them, and the engine's
// next pass is their first. A mark is taken before that write and settled by its outcome, so
// the engine never trusts a write that failed and never misses one that succeeded.
var newMarks sync.Map // types.UID -> *newMark

type newMark struct {
	done chan struct{} // closed once settled
	ok   bool          // the write succeeded
}

// MarkNew marks uid before a write that adds the engine's finalizer; settle with its outcome.
func MarkNew(uid types.UID) (settle func(written bool)) {
	m := &newMark{done: make(chan struct{})}
	newMarks.Store(uid, m)
	return func(written bool) {
		m.ok = written
		if !written {
			newMarks.CompareAndDelete(uid, m)
		}
		close(m.done)
	}
}

// TakeNew says (once) whether uid was marked new by a write that succeeded, waiting for a
// write in flight to settle.
func TakeNew(ctx context.Context, uid types.UID) bool {
	v, ok := newMarks.Load(uid)
	if !ok {
		return false
	}
	m := v.(*newMark)
	select {
	case <-m.done:
	case <-ctx.Done():
		return false
	case <-time.After(10 * time.Second):
		return false
	}
	return newMarks.CompareAndDelete(uid, m) && m.ok
}

// DropNew forgets uid's mark.
func DropNew(uid types.UID) { newMarks.Delete(uid) }

// KeepNew marks uid new again: a pass that put the finalizer on ended before any call, so
// the next pass is still its first.
func KeepNew(uid types.UID) {
	m := &newMark{done: make(chan struct{}), ok: true}
	close(m.done)
	newMarks.Store(uid, m)
}
