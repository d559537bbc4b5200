package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

func TestAdminEndpoints(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now})
	admin := *c
	admin.auth = "" // admin needs no auth

	var health map[string]string
	admin.do("GET", "/admin/healthz", nil).decode(t, &health)
	if health["status"] != "ok" {
		t.Fatalf("healthz %v", health)
	}

	a := c.create(t, testOwner, createBody(s, "postgresql-addon", "xs_sml", "par"))
	var counts map[string]int
	admin.do("GET", "/admin/counts", nil).decode(t, &counts)
	if counts["POST /v2/organisations/{ownerId}/addons"] != 1 || len(counts) != 1 {
		t.Fatalf("counts %v", counts)
	}
	var byStatus map[string]map[string]int
	admin.do("GET", "/admin/counts/status", nil).decode(t, &byStatus)
	if byStatus["POST /v2/organisations/{ownerId}/addons"]["200"] != 1 {
		t.Fatalf("by status %v", byStatus)
	}
	if r := admin.do("DELETE", "/admin/counts", nil); r.status != http.StatusNoContent || len(s.Counts()) != 0 {
		t.Fatalf("reset: %d %v", r.status, s.Counts())
	}

	// Faults: durations as Go strings; outageFor is relative to the clock.
	r := admin.do("PUT", "/admin/faults", `{"latency":"250ms","jitter":"10ms","errorRate":{"*":0.25},"rateLimitBurst":5,"rateLimitWindow":"2s","retryAfter":"3s","outageFor":"60s"}`)
	if r.status != 200 {
		t.Fatalf("PUT faults: %d %s", r.status, r.body)
	}
	f := s.Faults()
	if f.Latency != 250*time.Millisecond || f.Jitter != 10*time.Millisecond || f.ErrorRate["*"] != 0.25 || f.RateLimitBurst != 5 ||
		f.RateLimitWindow != 2*time.Second || f.RetryAfter != 3*time.Second || !f.OutageUntil.Equal(clock.Now().Add(time.Minute)) {
		t.Fatalf("faults %+v", f)
	}
	var fj map[string]any
	admin.do("GET", "/admin/faults", nil).decode(t, &fj)
	if fj["latency"] != "250ms" || fj["outageUntil"] != "2026-03-01T12:01:00Z" || fj["rateLimitBurst"] != 5.0 {
		t.Fatalf("GET faults %v", fj)
	}
	for _, bad := range []string{`{"latency":"soon"}`, `{"errorRate":{"*":2}}`, `{"latency":"-1s"}`, `{"rateLimitBurst":-1}`, `nope`} {
		admin.do("PUT", "/admin/faults", bad).errBody(t, 400)
	}
	if r := admin.do("DELETE", "/admin/faults", nil); r.status != 204 || s.Faults().Latency != 0 {
		t.Fatal("DELETE faults")
	}
	admin.do("PUT", "/admin/faults", `{"outageUntil":"2026-03-01T12:00:30Z"}`)
	if !s.Faults().OutageUntil.Equal(clock.Now().Add(30 * time.Second)) {
		t.Fatalf("outageUntil %v", s.Faults().OutageUntil)
	}
	s.SetFaults(Faults{})

	// State.
	var all map[string][]Addon
	admin.do("GET", "/admin/addons", nil).decode(t, &all)
	if len(all[testOwner]) != 1 || all[testOwner][0].ID != a.ID {
		t.Fatalf("addons %v", all)
	}
	var env []Variable
	admin.do("GET", "/admin/addons/"+a.ID+"/env", nil).decode(t, &env)
	if len(env) != 7 {
		t.Fatalf("admin env %v", env)
	}
	r = admin.do("PUT", "/admin/addons/"+a.RealID+"/env", []Variable{{Name: "POSTGRESQL_ADDON_PASSWORD", Value: "new"}})
	if r.status != 200 {
		t.Fatalf("PUT env: %d %s", r.status, r.body)
	}
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID+"/env", nil).decode(t, &env)
	if len(env) != 1 || env[0].Value != "new" {
		t.Fatalf("env after rotation %v", env)
	}
	admin.do("PUT", "/admin/addons/addon_nope/env", `[]`).errBody(t, 404)
	admin.do("PUT", "/admin/addons/"+a.ID+"/env", `{}`).errBody(t, 400)
	if r := admin.do("DELETE", "/admin/addons/"+a.ID, nil); r.status != 204 {
		t.Fatalf("admin delete: %d", r.status)
	}
	admin.do("DELETE", "/admin/addons/"+a.ID, nil).errBody(t, 404)
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil).errBody(t, 404)
	admin.do("GET", "/admin/nope", nil).errBody(t, 404)

	// Only the API calls made by c are counted.
	if got := s.Counts(); len(got) != 2 {
		t.Fatalf("counts %v", got)
	}
}

func TestConcurrentCreates(t *testing.T) {
	s, c := newTest(t, Options{Faults: Faults{Jitter: 5 * time.Millisecond}})
	const n = 200
	ids := make(chan string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := createBody(s, "postgresql-addon", "dev", "par")
			body["name"] = fmt.Sprintf("kubernetes::PostgreSql::%d", i)
			r := c.do("POST", "/v2/organisations/"+testOwner+"/addons", body)
			if r.status != 200 {
				t.Errorf("create %d: %d %s", i, r.status, r.body)
				return
			}
			var a Addon
			r.decode(t, &a)
			ids <- a.ID
			c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID+"/env", nil)
		})
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		seen[id] = true
	}
	if len(seen) != n || len(s.Addons(testOwner)) != n {
		t.Fatalf("%d distinct ids, %d stored, want %d", len(seen), len(s.Addons(testOwner)), n)
	}
	if got := s.Counts()["POST /v2/organisations/{ownerId}/addons"]; got != n {
		t.Fatalf("create count %d", got)
	}
}

func TestSeedDeterminism(t *testing.T) {
	run := func(seed int64) (string, []Addon, [][]Variable) {
		clock := newFakeClock()
		s, c := newTest(t, Options{Seed: seed, Now: clock.Now})
		var addons []Addon
		var envs [][]Variable
		for _, kind := range []string{"postgresql-addon", "cellar-addon", "es-addon"} {
			a := c.create(t, testOwner, createBody(s, kind, s.catalog.ByID[kind].Provider.Plans[0].Slug, "par"))
			addons = append(addons, a)
			envs = append(envs, s.Env(a.ID))
		}
		return s.Self().ID, addons, envs
	}
	self1, a1, e1 := run(42)
	self2, a2, e2 := run(42)
	self3, a3, _ := run(43)
	j := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	if self1 != self2 || j(a1) != j(a2) || j(e1) != j(e2) {
		t.Fatalf("same seed, different results:\n%s\n%s", j(a1), j(a2))
	}
	if self1 == self3 || a1[0].ID == a3[0].ID {
		t.Fatal("different seeds gave the same ids")
	}
	_, b1, _ := run(0)
	_, b2, _ := run(0)
	if b1[0].ID == b2[0].ID {
		t.Fatal("seed 0 must be random")
	}
}
