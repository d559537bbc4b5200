package fakeapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

const otherOwner = "orga_99999999-2222-3333-4444-555555555555"

func TestOwnerFaultStatusIsScopedToTheOwner(t *testing.T) {
	s, c := newTest(t, Options{})
	s.SetFaults(Faults{Owners: map[string]OwnerFault{testOwner: {Status: 403}}})
	e := c.do("GET", "/v2/organisations/"+testOwner+"/addons", nil).errBody(t, http.StatusForbidden)
	if e.Message != "You don't have access to this organisation" {
		t.Fatalf("%+v", e)
	}
	if r := c.do("GET", "/v2/organisations/"+otherOwner+"/addons", nil); r.status != 200 {
		t.Fatalf("other owner: %d %s", r.status, r.body)
	}
	// Authentication comes first: an unauthenticated request is 401, not the owner's 403.
	c.auth = ""
	c.do("GET", "/v2/organisations/"+testOwner+"/addons", nil).errBody(t, http.StatusUnauthorized)
	c.auth = "oauth"

	s.SetFaults(Faults{Owners: map[string]OwnerFault{testOwner: {Status: 429, RetryAfter: 1500 * time.Millisecond}}})
	r := c.do("GET", "/v2/organisations/"+testOwner+"/addons", nil)
	r.errBody(t, http.StatusTooManyRequests)
	if r.header.Get("Retry-After") != "2" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	counts := s.CountsByOwner()
	if counts[testOwner] != 3 || counts[otherOwner] != 1 {
		t.Fatalf("by owner %v", counts)
	}
	s.ResetCounts()
	if len(s.CountsByOwner()) != 0 {
		t.Fatal("ResetCounts keeps owner counts")
	}
}

func TestOwnerFaultMalformedJSONAndExtraEnv(t *testing.T) {
	s, c := newTest(t, Options{})
	a := c.create(t, testOwner, createBody(s, "kv", "alpha", "par"))
	huge := strings.Repeat("é", 1000)
	s.SetFaults(Faults{Owners: map[string]OwnerFault{testOwner: {ExtraEnv: []Variable{{Name: "HUGE", Value: huge}}}}})
	var env []Variable
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID+"/env", nil).decode(t, &env)
	if len(env) != len(s.Env(a.ID))+1 || env[len(env)-1].Value != huge {
		t.Fatalf("extra env not appended: %d variables", len(env))
	}
	s.SetFaults(Faults{Owners: map[string]OwnerFault{testOwner: {MalformedJSON: true}}})
	for _, path := range []string{"/addons", "/addons/" + a.ID, "/addons/" + a.ID + "/env"} {
		r := c.do("GET", "/v2/organisations/"+testOwner+path, nil)
		if r.status != 200 || json.Valid(r.body) {
			t.Fatalf("%s: %d, valid JSON %v", path, r.status, json.Valid(r.body))
		}
	}
}

func TestHiddenProvidersAndRevokedTokens(t *testing.T) {
	s, c, b := newTestHosts(t, Options{BearerTokens: []string{"bt"}})
	bridgeURL := b.base
	s.SetFaults(Faults{HiddenProviders: []string{"kv"}})
	var ps []Provider
	c.do("GET", "/v2/products/addonproviders", nil).decode(t, &ps)
	for _, p := range ps {
		if p.ID == "kv" {
			t.Fatal("hidden provider listed")
		}
	}
	c.do("GET", "/v2/products/addonproviders/kv", nil).errBody(t, http.StatusNotFound)
	c.do("POST", "/v2/organisations/"+testOwner+"/addons", createBody(s, "kv", "alpha", "par")).errBody(t, http.StatusBadRequest)

	s.SetFaults(Faults{RevokedTokens: []string{testCred.Token, "bt"}})
	if e := c.do("GET", "/v2/self", nil).errBody(t, http.StatusUnauthorized); e.Message != "token revoked" {
		t.Fatalf("%+v", e)
	}
	bridge := &client{t: t, base: bridgeURL, auth: "bearer:bt"}
	if e := bridge.do("GET", "/v2/self", nil).errBody(t, http.StatusUnauthorized); e.Message != "token revoked" {
		t.Fatalf("%+v", e)
	}
	s.SetFaults(Faults{})
	if r := c.do("GET", "/v2/self", nil); r.status != 200 {
		t.Fatalf("after restore: %d", r.status)
	}
	if r := bridge.do("GET", "/v2/self", nil); r.status != 200 {
		t.Fatalf("bearer after restore: %d", r.status)
	}
}
