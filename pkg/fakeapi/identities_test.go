package fakeapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestIdentitiesAnswerPerToken(t *testing.T) {
	const alice, bob = "alice-token-1f2e", "bob-token-9a8b"
	s := New(Options{BearerTokens: []string{alice, bob}, BearerOnAPIHost: true, Seed: 3,
		Identities: map[string]Identity{alice: {ID: "user_alice", Name: "Alice", Organisations: []string{"orga_a1"}}}})
	srv := httptest.NewServer(s)
	defer srv.Close()
	get := func(token, path string, out any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	var self Self
	get(alice, "/v2/self", &self)
	if self.ID != "user_alice" || self.Name != "Alice" {
		t.Errorf("alice's self = %s %q", self.ID, self.Name)
	}
	var orgs []Organisation
	get(alice, "/v2/organisations", &orgs)
	if len(orgs) != 2 || orgs[0].ID != "user_alice" || orgs[1].ID != "orga_a1" {
		t.Errorf("alice's organisations = %+v", orgs)
	}
	get(bob, "/v2/self", &self)
	if self.ID != s.Self().ID {
		t.Errorf("bob (no identity) is %s, want the server's user %s", self.ID, s.Self().ID)
	}
	if n := s.CountsForToken(alice)["GET /v2/self"]; n != 1 {
		t.Errorf("alice's GET /v2/self count = %d, want 1", n)
	}
	if n := s.CountsForToken(bob)["GET /v2/organisations"]; n != 0 {
		t.Errorf("bob's GET /v2/organisations count = %d, want 0", n)
	}
	s.ResetCounts()
	if len(s.CountsForToken(alice)) != 0 {
		t.Error("ResetCounts kept the per-token counts")
	}
}
