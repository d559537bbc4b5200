package fakeapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/catalog"
)

var testCred = Credential{
	ConsumerKey:    "test-consumer-key",
	ConsumerSecret: "test consumer/secret+&=",
	Token:          "test-token",
	Secret:         "test-token-secret~!",
}

const testOwner = "orga_11111111-2222-3333-4444-555555555555"

// fakeClock is a controllable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// ---- an OAuth1 signer written independently of pkg/fakeapi/oauth, following
// clever-cloud-api.md §4.2 (oauth10a 2.0.2) ----

func rfc3986(s string) string {
	e := url.QueryEscape(s)
	e = strings.ReplaceAll(e, "+", "%20")
	e = strings.ReplaceAll(e, "*", "%2A")
	return strings.ReplaceAll(e, "%7E", "~")
}

func oauthHeader(method, fullURL string, c Credential, ts time.Time, nonce string) string {
	base, query, _ := strings.Cut(fullURL, "?")
	params := map[string]string{
		"oauth_consumer_key":     c.ConsumerKey,
		"oauth_nonce":            nonce,
		"oauth_signature_method": "HMAC-SHA512",
		"oauth_timestamp":        strconv.FormatInt(ts.Unix(), 10),
		"oauth_version":          "1.0",
		"oauth_token":            c.Token,
	}
	var items []string
	for k, v := range params {
		items = append(items, k+"="+rfc3986(v))
	}
	if query != "" {
		for _, kv := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			items = append(items, k+"="+rfc3986(v))
		}
	}
	sort.Strings(items)
	baseString := rfc3986(method) + "&" + rfc3986(base) + "&" + rfc3986(strings.Join(items, "&"))
	mac := hmac.New(sha512.New, []byte(rfc3986(c.ConsumerSecret)+"&"+rfc3986(c.Secret)))
	mac.Write([]byte(baseString))
	params["oauth_signature"] = base64.StdEncoding.EncodeToString(mac.Sum(nil))
	var hdr []string
	for k, v := range params {
		hdr = append(hdr, k+`="`+v+`"`) // raw values, like oauth10a
	}
	sort.Strings(hdr)
	return "OAuth " + strings.Join(hdr, ", ")
}

// ---- a small HTTP client for the tests ----

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// errBody checks that r is a well-formed error answer and returns it.
func (r resp) errBody(t *testing.T, status int) ErrorBody {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q, want application/json", ct)
	}
	var m map[string]any
	r.decode(t, &m)
	for _, k := range []string{"id", "message", "type"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("error body %s lacks %q", r.body, k)
		}
	}
	var e ErrorBody
	r.decode(t, &e)
	if e.Type != "error" || e.Message == "" {
		t.Fatalf("bad error body %s", r.body)
	}
	return e
}

type client struct {
	t      *testing.T
	base   string
	auth   string // "oauth", "bearer:<token>", "plaintext", "" = none
	cred   Credential
	now    func() time.Time
	mutate func(*http.Request) // after signing
}

func (c *client) do(method, path string, body any) resp {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		case []byte:
			rd = bytes.NewReader(b)
		default:
			data, err := json.Marshal(b)
			if err != nil {
				c.t.Fatal(err)
			}
			rd = bytes.NewReader(data)
		}
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	switch {
	case c.auth == "oauth":
		req.Header.Set("Authorization", oauthHeader(method, c.base+path, c.cred, now(), "nonce-"+strconv.FormatInt(time.Now().UnixNano(), 36)))
	case c.auth == "plaintext":
		req.Header.Set("Authorization", `OAuth oauth_consumer_key="`+c.cred.ConsumerKey+`", oauth_token="`+c.cred.Token+
			`", oauth_signature_method="PLAINTEXT", oauth_signature="`+rfc3986(rfc3986(c.cred.ConsumerSecret)+"&"+rfc3986(c.cred.Secret))+`"`)
	case strings.HasPrefix(c.auth, "bearer:"):
		req.Header.Set("Authorization", "Bearer "+strings.TrimPrefix(c.auth, "bearer:"))
	}
	if c.mutate != nil {
		c.mutate(req)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: data}
}

// newTest starts a server; opts.Credentials defaults to testCred.
func newTest(t *testing.T, opts Options) (*Server, *client) {
	t.Helper()
	if opts.Credentials == nil {
		opts.Credentials = []Credential{testCred}
	}
	s, ts := NewTestServer(opts)
	t.Cleanup(ts.Close)
	return s, &client{t: t, base: ts.URL, auth: "oauth", cred: testCred, now: opts.Now}
}

func (c *client) create(t *testing.T, owner string, body any) Addon {
	t.Helper()
	r := c.do("POST", "/v2/organisations/"+owner+"/addons", body)
	if r.status != http.StatusOK {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var a Addon
	r.decode(t, &a)
	return a
}

func createBody(s *Server, provider, slug, region string) map[string]any {
	return map[string]any{
		"name":       "kubernetes::Test::" + provider + "-" + slug,
		"region":     region,
		"providerId": provider,
		"plan":       s.PlanID(provider, slug),
		"options":    map[string]any{},
	}
}

func keySet(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func wantKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := keySet(m); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s keys = %v, want %v", what, got, want)
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// Test-only helpers on the wire types (the client has its own).

func failedStep(m Migration) (MigrationStep, bool) {
	for _, s := range m.Steps {
		if s.Status == MigrationFailed {
			return s, true
		}
	}
	return MigrationStep{}, false
}

func migrationDone(m Migration) bool {
	return m.Status != MigrationRunning && m.Status != MigrationRecovering
}

func migrationSucceeded(m Migration) bool { return m.Status == MigrationOK }

func infoVersions(p ProviderInfo) []string {
	out := make([]string, 0, len(p.Dedicated))
	for v := range p.Dedicated {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return catalog.CompareVersions(out[i], out[j]) < 0 })
	return out
}

func hasVersion(p ProviderInfo, v string) bool { _, ok := p.Dedicated[v]; return ok }

// newTestHosts starts the API host and the bridge host over one state;
// opts.Credentials defaults to testCred. api signs with OAuth1, bridge sends
// no credentials until its auth is set ("bearer:<token>").
func newTestHosts(t *testing.T, opts Options) (*Server, *client, *client) {
	t.Helper()
	if opts.Credentials == nil {
		opts.Credentials = []Credential{testCred}
	}
	s, api, bridge := NewTestServers(opts)
	t.Cleanup(api.Close)
	t.Cleanup(bridge.Close)
	return s, &client{t: t, base: api.URL, auth: "oauth", cred: testCred, now: opts.Now},
		&client{t: t, base: bridge.URL, cred: testCred, now: opts.Now}
}

// wantMessage checks a 200 JSON message answer ({id, message, type: "success"}).
func (r resp) wantMessage(t *testing.T) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q", ct)
	}
	var m map[string]any
	r.decode(t, &m)
	wantKeys(t, "message body", m, "id", "message", "type")
	if m["type"] != "success" || m["message"] == "" {
		t.Fatalf("message body %s", r.body)
	}
}
