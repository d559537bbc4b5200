package kube

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// RequestRecorder records the arrival time and the credential set of every API request that
// reaches the fake (the /admin endpoints excluded), faulted or not. It never keeps a
// credential: requests are attributed to the index of the credential set whose consumer key
// they carry.
type RequestRecorder struct {
	keys map[string]int // consumer key -> index in Harness.Creds

	mu    sync.Mutex
	times []time.Time
	by    []int // credential set index per request (-1: unknown)
}

func newRequestRecorder(creds []fakeapi.Credential) *RequestRecorder {
	r := &RequestRecorder{keys: map[string]int{}}
	for i, c := range creds {
		r.keys[c.ConsumerKey] = i
	}
	return r
}

func (r *RequestRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasPrefix(req.URL.Path, "/admin") {
			who := r.client(req.Header.Get("Authorization"))
			r.mu.Lock()
			r.times = append(r.times, time.Now())
			r.by = append(r.by, who)
			r.mu.Unlock()
		}
		next.ServeHTTP(w, req)
	})
}

// client finds the credential set of an OAuth1 Authorization header (-1 if none matches).
func (r *RequestRecorder) client(auth string) int {
	const p = `oauth_consumer_key="`
	i := strings.Index(auth, p)
	if i < 0 {
		return -1
	}
	rest := auth[i+len(p):]
	j := strings.IndexByte(rest, '"')
	if j < 0 {
		return -1
	}
	key, err := url.QueryUnescape(rest[:j])
	if err != nil {
		return -1
	}
	if idx, ok := r.keys[key]; ok {
		return idx
	}
	return -1
}

// Reset forgets every recorded request.
func (r *RequestRecorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.times, r.by = nil, nil
}

// Total returns the number of requests recorded since from.
func (r *RequestRecorder) Total(from time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, t := range r.times {
		if !t.Before(from) {
			n++
		}
	}
	return n
}

// ByClient returns the number of requests per credential set index (-1: unknown) since from.
func (r *RequestRecorder) ByClient(from time.Time) map[int]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[int]int{}
	for i, t := range r.times {
		if !t.Before(from) {
			out[r.by[i]]++
		}
	}
	return out
}

// MaxInWindow returns the largest number of requests that arrived within any sliding window
// of the given length since from, and when that window started.
func (r *RequestRecorder) MaxInWindow(window time.Duration, from time.Time) (int, time.Time) {
	r.mu.Lock()
	ts := make([]time.Time, 0, len(r.times))
	for _, t := range r.times {
		if !t.Before(from) {
			ts = append(ts, t)
		}
	}
	r.mu.Unlock()
	slices.SortFunc(ts, time.Time.Compare)
	best, at, lo := 0, time.Time{}, 0
	for hi, t := range ts {
		for t.Sub(ts[lo]) >= window {
			lo++
		}
		if n := hi - lo + 1; n > best {
			best, at = n, ts[lo]
		}
	}
	return best, at
}

// PerSecond returns the number of requests in each whole second since from (index 0 is the
// second starting at from).
func (r *RequestRecorder) PerSecond(from time.Time) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, t := range r.times {
		if t.Before(from) {
			continue
		}
		s := int(t.Sub(from) / time.Second)
		for len(out) <= s {
			out = append(out, 0)
		}
		out[s]++
	}
	return out
}
