package queue

import (
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Jitter spreads periodic work: d plus up to a tenth of d (one second when d is not positive).
func Jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Second
	}
	return d + time.Duration(rand.Int64N(int64(d/10)+1))
}

// DefaultPassTimeout bounds one pass of the engine and of the standalone controllers (and a
// credentials check): enough for a pass's few calls with the client's retries against a slow
// Clever Cloud, but not for a stuck endpoint's 30 s × 5 attempts per call.
const DefaultPassTimeout = 60 * time.Second

// TenantRetry is how soon a pass over its tenant's share of workers is tried again (plus up
// to as much again of jitter).
const TenantRetry = time.Second

// TenantJitter is a pass's delay when its tenant holds its share of workers: TenantRetry
// plus up to as much again.
func TenantJitter() time.Duration {
	return TenantRetry + time.Duration(rand.Int64N(int64(TenantRetry)+1))
}

// TenantSlots counts the passes each tenant has in flight (the engine's and the standalone
// controllers' share of workers). The zero value is ready.
type TenantSlots struct {
	mu   sync.Mutex
	held map[string]int
}

// Acquire takes one of key's share slots; false when key holds share already.
func (t *TenantSlots) Acquire(key string, share int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held[key] >= share {
		return false
	}
	if t.held == nil {
		t.held = map[string]int{}
	}
	t.held[key]++
	return true
}

// Release gives back a slot Acquire took.
func (t *TenantSlots) Release(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held[key]--; t.held[key] <= 0 {
		delete(t.held, key)
	}
}

// InFlight is how many passes key holds.
func (t *TenantSlots) InFlight(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held[key]
}

// GrowingDelay is how long to wait before looking again at something that has not settled
// for waited: half of that, between lo and hi.
func GrowingDelay(waited, lo, hi time.Duration) time.Duration {
	return min(max(waited/2, lo), hi)
}

// NamespaceTerminating says whether err is the API server refusing to create an object in a
// namespace being deleted.
func NamespaceTerminating(err error) bool {
	return err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}

// DefaultResyncPeriod is how often a Ready add-on is read again when --resync-period is not set.
const DefaultResyncPeriod = 10 * time.Minute
