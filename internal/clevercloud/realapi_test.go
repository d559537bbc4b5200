package clevercloud

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// pathRecorder answers every request with status and body and records method, path and
// Authorization header.
type pathRecorder struct {
	mu     sync.Mutex
	status int
	body   string
	calls  []string
	auth   []string
}

func (p *pathRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.calls = append(p.calls, r.Method+" "+r.URL.Path)
	p.auth = append(p.auth, r.Header.Get("Authorization"))
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(p.status)
	_, _ = w.Write([]byte(p.body))
}

func TestEndpointVersionSuffixIsTheSameBase(t *testing.T) {
	for _, suffix := range []string{"/v2", "/v4", "/", "", "/v2/"} {
		rec := &pathRecorder{status: 200, body: `{"id":"user_1"}`}
		srv := httptest.NewServer(rec)
		c := mustClient(t, Config{Endpoint: srv.URL + suffix})
		if _, err := c.Self(context.Background()); err != nil {
			t.Fatalf("%q: %v", suffix, err)
		}
		if rec.calls[0] != "GET /v2/self" {
			t.Errorf("endpoint %q: called %q, want GET /v2/self", suffix, rec.calls[0])
		}
		if c.Endpoint() != srv.URL {
			t.Errorf("endpoint %q: Endpoint() = %q", suffix, c.Endpoint())
		}
		srv.Close()
	}
}

func TestTokenAndSecretSignWithPublishedConsumer(t *testing.T) {
	rec := &pathRecorder{status: 200, body: `{"id":"user_1"}`}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	creds := Credentials{Token: "tok-published", Secret: "S3CRET-published"}
	if err := creds.Validate(); err != nil {
		t.Fatal(err)
	}
	if creds.Mode() != ModeOAuth1 || !creds.UsesPublishedConsumer() {
		t.Fatalf("Mode() = %q, UsesPublishedConsumer() = %v", creds.Mode(), creds.UsesPublishedConsumer())
	}
	c := mustClient(t, Config{Endpoint: srv.URL, Credentials: creds})
	if _, err := c.Self(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rec.auth[0], `oauth_consumer_key="`+CleverToolsConsumerKey+`"`) || !strings.Contains(rec.auth[0], `oauth_token="tok-published"`) {
		t.Errorf("Authorization = %q", rec.auth[0])
	}
	// Explicit consumer values win; half a pair is refused.
	own := Credentials{Token: "t", Secret: "s", ConsumerKey: "own-key", ConsumerSecret: "own-secret"}
	if own.UsesPublishedConsumer() {
		t.Error("explicit pair reported as published")
	}
	if err := (Credentials{Token: "t", Secret: "s", ConsumerKey: "own-key"}).Validate(); err == nil || !strings.Contains(err.Error(), "ConsumerSecret") {
		t.Errorf("half a pair: %v", err)
	}
}

// The real API answers DELETE of an add-on, and a migration abort, with 200 and a JSON
// message (clever-client.js; CONTRACT.md point 4): any 2xx is success, whatever the body.
func TestAny2xxIsSuccess(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
	}{
		{200, `{"id":200,"message":"The addon has been deleted","type":"success"}`},
		{202, `{"message":"accepted"}`},
		{204, ``},
		{200, `not json at all`},
		{200, strings.Repeat("x", 200<<10)}, // larger than what is read of a discarded body
	} {
		rec := &pathRecorder{status: tc.status, body: tc.body}
		srv := httptest.NewServer(rec)
		c := mustClient(t, Config{Endpoint: srv.URL})
		if err := c.DeleteAddon(context.Background(), "orga_1", "addon_1"); err != nil {
			t.Errorf("DELETE answered %d %.30q: %v", tc.status, tc.body, err)
		}
		if err := c.AbortMigration(context.Background(), "orga_1", "addon_1", "mig_1"); err != nil {
			t.Errorf("abort answered %d %.30q: %v", tc.status, tc.body, err)
		}
		if err := c.RenewCellarCredentials(context.Background(), "orga_1", "cellar_1"); err != nil {
			t.Errorf("renew answered %d %.30q: %v", tc.status, tc.body, err)
		}
		srv.Close()
	}
}

func TestOrganisations(t *testing.T) {
	rec := &pathRecorder{status: 200, body: `[{"id":"user_1","name":"Jane"},{"id":"orga_1","name":"Acme","role":"ADMIN","addons":[]}]`}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL + "/v2"})
	orgs, err := c.Organisations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(orgs) != 2 || orgs[1].ID != "orga_1" || orgs[1].Name != "Acme" || rec.calls[0] != "GET /v2/organisations" {
		t.Errorf("orgs = %+v, calls = %q", orgs, rec.calls)
	}
}
