package clevercloud

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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

// The circuit's state is exported: clevercloud_api_circuit_open (credential sets whose circuit
// is open now) and clevercloud_api_circuit_opens_total (openings), without any label, so
// nothing derived from the credentials reaches the metrics.
func TestCircuitMetrics(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"id":-500,"message":"down","type":"error"}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":"user_1"}`))
	}))
	defer srv.Close()
	// A clock far from every other test's (their circuits opened in 2023 or today): at this
	// time only this test's circuit can be open, whatever the package's other tests left.
	now := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.now = func() time.Time { return now }
	const token = "circuit-metrics-bearer-token-0b7d1e"
	c, err := New(Config{Endpoint: srv.URL, Credentials: Credentials{BearerToken: token}, MaxRetries: -1,
		CircuitThreshold: 2, CircuitCooldown: time.Minute, RateLimit: -1, Now: func() time.Time { return now }, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	expect := func(step string, open, opens float64) {
		t.Helper()
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range families {
			for _, mt := range f.GetMetric() {
				if strings.HasPrefix(f.GetName(), "clevercloud_api_circuit_") && len(mt.GetLabel()) != 0 {
					t.Fatalf("%s has labels %v", f.GetName(), mt.GetLabel())
				}
				switch f.GetName() {
				case "clevercloud_api_circuit_open":
					got[f.GetName()] = mt.GetGauge().GetValue()
				case "clevercloud_api_circuit_opens_total":
					got[f.GetName()] = mt.GetCounter().GetValue()
				}
			}
			if strings.Contains(f.String(), token) {
				t.Fatalf("%s holds the token", f.GetName())
			}
		}
		want := map[string]float64{"clevercloud_api_circuit_open": open, "clevercloud_api_circuit_opens_total": opens}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: metrics %v, want %v", step, got, want)
		}
	}
	expect("at start", 0, 0)
	if _, err := c.Self(ctx); err == nil || errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("1st call: %v", err)
	}
	expect("one failure, under the threshold", 0, 0)
	_, _ = c.Self(ctx)
	expect("the threshold reached", 1, 1)
	if _, err := c.Self(ctx); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("3rd call: want circuit open, got %v", err)
	}
	expect("a refused call is no new opening", 1, 1)
	now = now.Add(61 * time.Second)
	expect("after the cooldown", 0, 1)
	_, _ = c.Self(ctx)
	expect("a failed probe opens it again", 1, 2)
	failing.Store(false)
	now = now.Add(121 * time.Second)
	if _, err := c.Self(ctx); err != nil {
		t.Fatalf("after the second cooldown: %v", err)
	}
	expect("recovered", 0, 2)
}
