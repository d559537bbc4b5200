package clevercloud

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestCircuitOpensAfterRepeatedFailuresAndRecovers(t *testing.T) {
	var hits atomic.Int32
	var failing atomic.Bool
	failing.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"id":-500,"message":"down","type":"error"}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":"user_1"}`))
	}))
	defer srv.Close()
	now := time.Unix(1_700_000_000, 0)
	c, err := New(Config{Endpoint: srv.URL, Credentials: Credentials{BearerToken: "circuit-test-" + t.Name()},
		MaxRetries: -1, CircuitThreshold: 3, CircuitCooldown: time.Minute, RateLimit: -1, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := c.Self(ctx); !IsRetryable(err) || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, err := c.Self(ctx); !errors.Is(err, ErrCircuitOpen) || !IsThrottled(err) || !IsRetryable(err) {
		t.Fatalf("4th call: want circuit open, got %v", err)
	}
	// The refusal says how long the circuit stays open (the whole cooldown here, then less).
	now = now.Add(20 * time.Second)
	if _, err := c.Self(ctx); RetryDelay(err) != 40*time.Second {
		t.Fatalf("RetryDelay = %s, want 40s (%v)", RetryDelay(err), err)
	}
	if n := hits.Load(); n != 3 {
		t.Fatalf("server saw %d requests, want 3 (the open circuit sends nothing)", n)
	}
	failing.Store(false)
	now = now.Add(61 * time.Second)
	if _, err := c.Self(ctx); err != nil {
		t.Fatalf("after the cooldown: %v", err)
	}
	if _, err := c.Self(ctx); err != nil {
		t.Fatalf("closed again: %v", err)
	}
	// A client with other credentials has its own circuit.
	other, _ := New(Config{Endpoint: srv.URL, Credentials: Credentials{BearerToken: "other-" + t.Name()}, RateLimit: -1})
	if _, err := other.Self(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestIsThrottled(t *testing.T) {
	if !IsThrottled(&APIError{StatusCode: 429}) || IsThrottled(&APIError{StatusCode: 500}) || !IsThrottled(&RequestError{Err: ErrCircuitOpen}) {
		t.Fatal("IsThrottled misclassifies")
	}
}

func TestCircuitCooldownGrowsOnlyOnFailedProbesAndHonoursRetryAfter(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	unavailable := &APIError{StatusCode: http.StatusServiceUnavailable}
	c := &circuit{threshold: 2, base: 30 * time.Second}
	c.record(unavailable, now)
	if open := c.openFor(now); open != 0 {
		t.Fatalf("one failure under the threshold opened the circuit for %s", open)
	}
	c.record(unavailable, now)
	if open := c.openFor(now); open != 30*time.Second {
		t.Fatalf("open for %s after the threshold, want 30s", open)
	}
	// Requests sent before it opened fail while it is open: no longer, no doubling.
	for range 5 {
		c.record(unavailable, now.Add(time.Second))
	}
	if open := c.openFor(now); open != 30*time.Second {
		t.Fatalf("in-flight failures moved the circuit to %s, want 30s", open)
	}
	// The probe after the cooldown fails: the cooldown doubles.
	now = now.Add(30 * time.Second)
	c.record(unavailable, now)
	if open := c.openFor(now); open != time.Minute {
		t.Fatalf("open for %s after a failed probe, want 1m", open)
	}
	// A 429 that says when to come back opens it no longer than that, and the cooldown keeps
	// its doubling for failures that do not say.
	now = now.Add(time.Minute)
	c.record(&APIError{StatusCode: http.StatusTooManyRequests, RetryAfter: 2 * time.Second}, now)
	if open := c.openFor(now); open != 2*time.Second {
		t.Fatalf("open for %s after a 429 with Retry-After 2s, want 2s", open)
	}
	now = now.Add(2 * time.Second)
	c.record(unavailable, now)
	if open := c.openFor(now); open != 4*time.Minute {
		t.Fatalf("open for %s after the next failed probe, want 4m", open)
	}
	// A success closes it and resets the cooldown.
	now = now.Add(4 * time.Minute)
	c.record(nil, now)
	c.record(unavailable, now)
	c.record(unavailable, now)
	if open := c.openFor(now); open != 30*time.Second {
		t.Fatalf("open for %s after recovering and failing again, want 30s", open)
	}
}
