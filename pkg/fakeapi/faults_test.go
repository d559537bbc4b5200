package fakeapi

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

const routeGetAddon = "GET /v2/organisations/{ownerId}/addons/{addonId}"

func TestFaultLatency(t *testing.T) {
	_, c := newTest(t, Options{Faults: Faults{Latency: 150 * time.Millisecond, Jitter: 50 * time.Millisecond}})
	start := time.Now()
	if r := c.do("GET", "/v2/self", nil); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
		t.Fatalf("latency %v, want >= 150ms", d)
	}
	// Admin endpoints are not delayed.
	start = time.Now()
	c.do("GET", "/admin/healthz", nil)
	if d := time.Since(start); d >= 150*time.Millisecond {
		t.Fatalf("admin delayed by %v", d)
	}
}

func TestFaultErrorRate(t *testing.T) {
	s, c := newTest(t, Options{Faults: Faults{ErrorRate: map[string]float64{"*": 1}}})
	for range 5 {
		e := c.do("GET", "/v2/products/addonproviders", nil).errBody(t, http.StatusServiceUnavailable)
		if e.ID != -500 || e.Message != "Error from provider: injected fault" {
			t.Fatalf("%+v", e)
		}
	}
	// Per route: only that route fails; a route entry overrides "*".
	s.SetFaults(Faults{ErrorRate: map[string]float64{routeGetAddon: 1}})
	a := c.create(t, testOwner, createBody(s, "kv", "alpha", "par"))
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil).errBody(t, 503)
	if r := c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID+"/env", nil); r.status != 200 {
		t.Fatalf("other route failed: %d", r.status)
	}
	s.SetFaults(Faults{ErrorRate: map[string]float64{"*": 1, routeGetAddon: 0}})
	if r := c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil); r.status != 200 {
		t.Fatalf("route override 0: %d", r.status)
	}
	// A 0.5 rate fails some, not all (Seed 0: random; 200 draws).
	s.SetFaults(Faults{ErrorRate: map[string]float64{"*": 0.5}})
	s.ResetCounts()
	for range 200 {
		c.do("GET", "/v2/self", nil)
	}
	st := s.CountsByStatus()["GET /v2/self"]
	if st[503] < 50 || st[200] < 50 || st[503]+st[200] != 200 {
		t.Fatalf("0.5 error rate gave %v", st)
	}
	// Faulted requests are counted; auth is checked before the error rate.
	s.SetFaults(Faults{ErrorRate: map[string]float64{"*": 1}})
	c.auth = ""
	c.do("GET", "/v2/self", nil).errBody(t, 401)
}

func TestFaultRateLimit(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now, Faults: Faults{RateLimitBurst: 3, RateLimitWindow: 10 * time.Second, RetryAfter: 1500 * time.Millisecond}})
	for i := range 3 {
		if r := c.do("GET", "/v2/self", nil); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	r := c.do("GET", "/v2/self", nil)
	if e := r.errBody(t, http.StatusTooManyRequests); !strings.Contains(e.Message, "rate limit") {
		t.Fatalf("%+v", e)
	}
	if ra := r.header.Get("Retry-After"); ra != "2" {
		t.Fatalf("Retry-After = %q, want 2 (1.5s rounded up)", ra)
	}
	// Without RetryAfter the header says when the window frees a slot.
	s.SetFaults(Faults{RateLimitBurst: 1, RateLimitWindow: 10 * time.Second})
	c.do("GET", "/v2/self", nil)
	clock.Add(3 * time.Second)
	r = c.do("GET", "/v2/self", nil)
	if r.status != 429 || r.header.Get("Retry-After") != "7" {
		t.Fatalf("%d Retry-After=%q", r.status, r.header.Get("Retry-After"))
	}
	clock.Add(7 * time.Second)
	if r := c.do("GET", "/v2/self", nil); r.status != 200 {
		t.Fatalf("after window: %d", r.status)
	}
	if n := s.Counts()["GET /v2/self"]; n != 7 {
		t.Fatalf("count = %d, want 7 (rate-limited requests are counted)", n)
	}
	if st := s.CountsByStatus()["GET /v2/self"]; st[429] != 2 || st[200] != 5 {
		t.Fatalf("by status = %v", st)
	}
}

func TestFaultOutage(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now})
	s.SetFaults(Faults{OutageUntil: clock.Now().Add(time.Minute)})
	e := c.do("GET", "/v2/products/addonproviders", nil).errBody(t, 503)
	if !strings.Contains(e.Message, "outage") {
		t.Fatalf("%+v", e)
	}
	c.auth = "" // the outage answers before authentication
	c.do("GET", "/v2/self", nil).errBody(t, 503)
	if r := c.do("GET", "/admin/healthz", nil); r.status != 200 {
		t.Fatalf("admin during outage: %d", r.status)
	}
	c.auth = "oauth"
	clock.Add(time.Minute)
	if r := c.do("GET", "/v2/self", nil); r.status != 200 {
		t.Fatalf("after outage: %d %s", r.status, r.body)
	}
}

func TestCounters(t *testing.T) {
	s, c := newTest(t, Options{})
	a := c.create(t, testOwner, createBody(s, "metabase", "base", "par"))
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil)
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/addon_nope", nil)
	s.SetFaults(Faults{ErrorRate: map[string]float64{"*": 1}})
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil)
	s.SetFaults(Faults{})
	c.do("GET", "/admin/counts", nil)
	c.do("GET", "/admin/addons", nil)
	want := map[string]int{"POST /v2/organisations/{ownerId}/addons": 1, routeGetAddon: 3}
	got := s.Counts()
	if len(got) != len(want) {
		t.Fatalf("counts = %v, want %v (admin must not be counted)", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("counts = %v, want %v", got, want)
		}
	}
	if st := s.CountsByStatus()[routeGetAddon]; st[200] != 1 || st[404] != 1 || st[503] != 1 {
		t.Fatalf("by status = %v", st)
	}
	s.ResetCounts()
	if len(s.Counts()) != 0 || len(s.CountsByStatus()) != 0 {
		t.Fatal("reset")
	}
}
