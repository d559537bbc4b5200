package clevercloud

import (
	"crypto/sha256"
	"encoding/hex"
	"runtime"
	"sync"
	"weak"

	"golang.org/x/time/rate"
)

// Client-side rate limiting is per credential set: every Client built for the same
// endpoint and credentials shares one token bucket, wherever it was created (the
// operator may build a client per reconcile or per namespace).
//
// The registry only holds weak pointers: a limiter no client uses any more is
// garbage-collected and its entry removed, so rotated credentials do not accumulate.
var limiters = struct {
	sync.Mutex
	m map[string]weak.Pointer[rate.Limiter]
}{m: map[string]weak.Pointer[rate.Limiter]{}}

// limiterKey hashes endpoint and credentials so no credential is kept as a map key.
func limiterKey(endpoint string, c Credentials) string {
	n := c.normalized()
	h := sha256.New()
	for _, part := range []string{endpoint, n.ConsumerKey, n.Token, n.BearerToken} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// sharedLimiter returns the limiter of key, creating it if needed. An existing
// limiter takes the given limit and burst (the most recent configuration wins).
func sharedLimiter(key string, limit rate.Limit, burst int) *rate.Limiter {
	limiters.Lock()
	defer limiters.Unlock()
	if wp, ok := limiters.m[key]; ok {
		if l := wp.Value(); l != nil {
			if l.Limit() != limit {
				l.SetLimit(limit)
			}
			if l.Burst() != burst {
				l.SetBurst(burst)
			}
			return l
		}
	}
	l := rate.NewLimiter(limit, burst)
	limiters.m[key] = weak.Make(l)
	runtime.AddCleanup(l, func(k string) {
		limiters.Lock()
		defer limiters.Unlock()
		if wp, ok := limiters.m[k]; ok && wp.Value() == nil {
			delete(limiters.m, k)
		}
	}, key)
	return l
}
