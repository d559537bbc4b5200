package clevercloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

var credCounter atomic.Int64

// uniqueCreds returns OAuth1 credentials no other test uses (limiters are shared
// per credential set).
func uniqueCreds() Credentials {
	n := credCounter.Add(1)
	return Credentials{
		ConsumerKey:    fmt.Sprintf("ck-%d", n),
		ConsumerSecret: fmt.Sprintf("cs-secret-%d", n),
		Token:          fmt.Sprintf("tok-%d", n),
		Secret:         fmt.Sprintf("ts-secret-%d", n),
	}
}

// mustClient builds a fast test client: no rate limit, tiny backoffs, unique
// credentials unless cfg sets some.
func mustClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	if cfg.Credentials == (Credentials{}) {
		cfg.Credentials = uniqueCreds()
	}
	if cfg.RateLimit == 0 {
		cfg.RateLimit = -1
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 5 * time.Millisecond
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not an integer: %q", s)
	}
	return n
}

type recorded struct {
	method, path, accept, contentType, userAgent, auth string
	body                                               string
}

// recorder serves one canned answer and records the requests.
type recorder struct {
	mu       sync.Mutex
	reqs     []recorded
	status   int
	body     string
	header   http.Header
	attempts atomic.Int64
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.attempts.Add(1)
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, recorded{
		method: r.Method, path: r.URL.EscapedPath(), accept: r.Header.Get("Accept"),
		contentType: r.Header.Get("Content-Type"), userAgent: r.Header.Get("User-Agent"),
		auth: r.Header.Get("Authorization"), body: string(b),
	})
	rec.mu.Unlock()
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	if rec.status != 0 {
		w.WriteHeader(rec.status)
	}
	_, _ = io.WriteString(w, rec.body)
}

const addonJSON = `{"id":"addon_1","name":"kubernetes::PostgreSql::u1","realId":"postgresql_1","region":"par",
 "provider":{"id":"postgresql-addon","name":"PostgreSQL","regions":["par"],"plans":[]},
 "plan":{"id":"plan_1","name":"DEV","slug":"dev","price":0,"price_id":null,"features":[],"zones":["par"]},
 "creationDate":1700000000000,"configKeys":["POSTGRESQL_ADDON_HOST"],"unknownField":42}`

func strPtr(s string) *string { return &s }

var wantAddon = &Addon{
	ID: "addon_1", Name: strPtr("kubernetes::PostgreSql::u1"), RealID: "postgresql_1", Region: "par",
	Provider:     Provider{ID: "postgresql-addon", Name: "PostgreSQL", Regions: []string{"par"}, Plans: []Plan{}},
	Plan:         Plan{ID: "plan_1", Name: "DEV", Slug: "dev", Features: []PlanFeature{}, Zones: []string{"par"}},
	CreationDate: 1700000000000, ConfigKeys: []string{"POSTGRESQL_ADDON_HOST"},
}

func TestEndpoints(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name      string
		call      func(*Client) (any, error)
		status    int
		respBody  string
		method    string
		path      string
		reqBody   string // "" = no body expected
		want      any
		wantCType string
	}{
		{
			name: "Self", call: func(c *Client) (any, error) { return c.Self(ctx) },
			respBody: `{"id":"user_1","email":"a@b.c","admin":false,"creationDate":5}`,
			method:   "GET", path: "/v2/self",
			want: &Self{ID: "user_1", Email: "a@b.c", CreationDate: 5},
		},
		{
			name: "ListProviders", call: func(c *Client) (any, error) { return c.ListProviders(ctx) },
			respBody: `[{"id":"postgresql-addon","plans":[{"id":"plan_1","slug":"dev","price":1.5,"features":[{"name":"n","type":"t","value":"v","computable_value":"cv"}],"zones":[]}]}]`,
			method:   "GET", path: "/v2/products/addonproviders",
			want: []Provider{{ID: "postgresql-addon", Plans: []Plan{{ID: "plan_1", Slug: "dev", Price: 1.5,
				Features: []PlanFeature{{Name: "n", Type: "t", Value: "v", ComputableValue: strPtr("cv")}}, Zones: []string{}}}}},
		},
		{
			name: "GetAddon", call: func(c *Client) (any, error) { return c.GetAddon(ctx, "orga_1", "addon_1") },
			respBody: addonJSON, method: "GET", path: "/v2/organisations/orga_1/addons/addon_1", want: wantAddon,
		},
		{
			name: "GetAddon escapes ids", call: func(c *Client) (any, error) { return c.GetAddon(ctx, "orga/1", "addon 1?x") },
			respBody: addonJSON, method: "GET", path: "/v2/organisations/orga%2F1/addons/addon%201%3Fx", want: wantAddon,
		},
		{
			name: "ListAddons", call: func(c *Client) (any, error) { return c.ListAddons(ctx, "user_1") },
			respBody: "[" + addonJSON + "]", method: "GET", path: "/v2/organisations/user_1/addons", want: []Addon{*wantAddon},
		},
		{
			name: "CreateAddon",
			call: func(c *Client) (any, error) {
				return c.CreateAddon(ctx, "orga_1", CreateOpts{Name: "kubernetes::PostgreSql::u1", Region: "par",
					ProviderID: "postgresql-addon", Plan: "plan_1", Options: Options{Version: "15", Encryption: "false"}})
			},
			respBody: addonJSON, method: "POST", path: "/v2/organisations/orga_1/addons",
			reqBody:   `{"name":"kubernetes::PostgreSql::u1","region":"par","providerId":"postgresql-addon","plan":"plan_1","options":{"version":"15","encryption":"false"}}`,
			wantCType: "application/json", want: wantAddon,
		},
		{
			name: "CreateAddon empty options",
			call: func(c *Client) (any, error) {
				return c.CreateAddon(ctx, "orga_1", CreateOpts{Name: "n", Region: "par", ProviderID: "kv", Plan: "plan_k"})
			},
			status: http.StatusCreated, respBody: addonJSON, method: "POST", path: "/v2/organisations/orga_1/addons",
			reqBody:   `{"name":"n","region":"par","providerId":"kv","plan":"plan_k","options":{}}`,
			wantCType: "application/json", want: wantAddon,
		},
		{
			name: "DeleteAddon", call: func(c *Client) (any, error) { return nil, c.DeleteAddon(ctx, "orga_1", "addon_1") },
			respBody: `this body is ignored`, method: "DELETE", path: "/v2/organisations/orga_1/addons/addon_1", want: nil,
		},
		{
			name: "GetAddonEnv", call: func(c *Client) (any, error) { return c.GetAddonEnv(ctx, "orga_1", "addon_1") },
			respBody: `[{"name":"POSTGRESQL_ADDON_HOST","value":"h"},{"name":"POSTGRESQL_ADDON_PASSWORD","value":"p"}]`,
			method:   "GET", path: "/v2/organisations/orga_1/addons/addon_1/env",
			want: []Variable{{Name: "POSTGRESQL_ADDON_HOST", Value: "h"}, {Name: "POSTGRESQL_ADDON_PASSWORD", Value: "p"}},
		},
		{
			name: "GetConfigProviderEnv", call: func(c *Client) (any, error) { return c.GetConfigProviderEnv(ctx, "config_1") },
			respBody: `[{"name":"A","value":"1"}]`, method: "GET", path: "/v4/addon-providers/config-provider/addons/config_1/env",
			want: []Variable{{Name: "A", Value: "1"}},
		},
		{
			name: "PutConfigProviderEnv",
			call: func(c *Client) (any, error) {
				return c.PutConfigProviderEnv(ctx, "config_1", []Variable{{Name: "A", Value: "1"}, {Name: "B", Value: "x\"y"}})
			},
			respBody: `[{"name":"A","value":"1"},{"name":"B","value":"x\"y"}]`,
			method:   "PUT", path: "/v4/addon-providers/config-provider/addons/config_1/env",
			reqBody:   `[{"name":"A","value":"1"},{"name":"B","value":"x\"y"}]`,
			wantCType: "application/json",
			want:      []Variable{{Name: "A", Value: "1"}, {Name: "B", Value: "x\"y"}},
		},
		{
			name:     "PutConfigProviderEnv nil sends []",
			call:     func(c *Client) (any, error) { return c.PutConfigProviderEnv(ctx, "config_1", nil) },
			respBody: `[]`, method: "PUT", path: "/v4/addon-providers/config-provider/addons/config_1/env",
			reqBody: `[]`, wantCType: "application/json", want: []Variable{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{status: tc.status, body: tc.respBody}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			c := mustClient(t, Config{Endpoint: srv.URL + "/", UserAgent: "ua-test"})
			got, err := tc.call(c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("result:\n got %#v\nwant %#v", got, tc.want)
			}
			if len(rec.reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(rec.reqs))
			}
			r := rec.reqs[0]
			if r.method != tc.method || r.path != tc.path {
				t.Errorf("request %s %s, want %s %s", r.method, r.path, tc.method, tc.path)
			}
			if r.accept != "application/json" {
				t.Errorf("Accept = %q", r.accept)
			}
			if r.contentType != tc.wantCType {
				t.Errorf("Content-Type = %q, want %q", r.contentType, tc.wantCType)
			}
			if r.body != tc.reqBody {
				t.Errorf("body = %s, want %s", r.body, tc.reqBody)
			}
			if r.userAgent != "ua-test" {
				t.Errorf("User-Agent = %q", r.userAgent)
			}
			if !strings.HasPrefix(r.auth, "OAuth ") {
				t.Errorf("Authorization = %q", r.auth)
			}
		})
	}
}

func TestBearer(t *testing.T) {
	rec := &recorder{body: `{"id":"user_1"}`}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL, Credentials: Credentials{BearerToken: " api_tok_123\n", ConsumerKey: "ignored"}})
	if _, err := c.Self(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.reqs[0].auth; got != "Bearer api_tok_123" {
		t.Fatalf("Authorization = %q", got)
	}

	c2, err := New(Config{Credentials: Credentials{BearerToken: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if c2.Endpoint() != DefaultBearerEndpoint {
		t.Fatalf("bearer default endpoint = %q", c2.Endpoint())
	}
}

func TestCredentials(t *testing.T) {
	full := Credentials{ConsumerKey: "ck", ConsumerSecret: "S3CRETcs", Token: "tk", Secret: "S3CRETts"}
	cases := []struct {
		name     string
		creds    Credentials
		mode     string
		errParts []string // substrings of the error; nil = valid
	}{
		{"oauth1", full, ModeOAuth1, nil},
		{"bearer", Credentials{BearerToken: "S3CRETbearer"}, ModeBearer, nil},
		{"bearer wins", Credentials{BearerToken: "S3CRETbearer", ConsumerKey: "ck"}, ModeBearer, nil},
		{"none", Credentials{}, "", []string{"none set"}},
		{"whitespace only", Credentials{BearerToken: "  \n"}, "", []string{"none set"}},
		{"missing two", Credentials{ConsumerKey: "ck", Token: "tk"}, "", []string{"ConsumerSecret", "Secret"}},
		{"missing key", Credentials{ConsumerSecret: "S3CRETcs", Token: "tk", Secret: "S3CRETts"}, "", []string{"missing ConsumerKey"}},
		{"bearer with space", Credentials{BearerToken: "S3CRET bearer"}, ModeBearer, []string{"BearerToken"}},
		{"control char", Credentials{ConsumerKey: "ck", ConsumerSecret: "S3CRET\x01cs", Token: "tk", Secret: "S3CRETts"}, ModeOAuth1, []string{"ConsumerSecret"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.creds.Mode(); got != tc.mode {
				t.Errorf("Mode() = %q, want %q", got, tc.mode)
			}
			err := tc.creds.Validate()
			if tc.errParts == nil {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate() = nil, want error")
			}
			msg := err.Error()
			for _, p := range tc.errParts {
				if !strings.Contains(msg, p) {
					t.Errorf("error %q does not mention %q", msg, p)
				}
			}
			if strings.Contains(msg, "S3CRET") || strings.Contains(msg, "\n") {
				t.Errorf("error leaks a value or is multi-line: %q", msg)
			}
			if _, nerr := New(Config{Credentials: tc.creds}); nerr == nil {
				t.Error("New accepted invalid credentials")
			}
		})
	}
}

func TestNewEndpointValidation(t *testing.T) {
	for _, ep := range []string{"ftp://x", "api.clever-cloud.com", "http://", "://bad", "https://user:S3CRETpw@h", "https://h/?q=1", "/relative"} {
		_, err := New(Config{Endpoint: ep, Credentials: uniqueCreds()})
		if err == nil {
			t.Errorf("New accepted endpoint %q", ep)
			continue
		}
		if strings.Contains(err.Error(), "S3CRETpw") {
			t.Errorf("endpoint error leaks password: %v", err)
		}
	}
	c, err := New(Config{Endpoint: "http://127.0.0.1:8080/prefix/", Credentials: uniqueCreds()})
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint() != "http://127.0.0.1:8080/prefix" {
		t.Fatalf("Endpoint() = %q", c.Endpoint())
	}
}

func TestEmptyIDsRejected(t *testing.T) {
	rec := &recorder{body: `{}`}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL})
	ctx := context.Background()
	errs := []error{
		c.DeleteAddon(ctx, "orga_1", ""),
		func() error { _, err := c.GetAddon(ctx, "", "addon_1"); return err }(),
		func() error { _, err := c.GetConfigProviderEnv(ctx, ""); return err }(),
		func() error { _, err := c.CreateAddon(ctx, "", CreateOpts{}); return err }(),
	}
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "empty") {
			t.Errorf("call %d: err = %v, want empty-id error", i, err)
		}
	}
	if n := rec.attempts.Load(); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

func TestErrorParsing(t *testing.T) {
	long := strings.Repeat("x", 1000)
	cases := []struct {
		name                             string
		status                           int
		body                             string
		header                           map[string]string
		wantID                           int64
		wantMsg, wantType                string
		notFound, unauth, bad, retryable bool
		wantRetryAfter                   time.Duration
		wantInError                      string
	}{
		{name: "404 json", status: 404, body: `{"id":4004,"message":"Not Found","type":"error"}`, wantID: 4004, wantMsg: "Not Found", wantType: "error",
			notFound: true, wantInError: "clever cloud API: GET /v2/organisations/{ownerId}/addons/{addonId}: 404 Not Found: Not Found (id 4004)"},
		{name: "503 negative id", status: 503, body: `{"id":-500,"message":"Error from provider: no capacity","type":"error"}`, wantID: -500,
			wantMsg: "Error from provider: no capacity", wantType: "error", retryable: true, wantInError: "(id -500)"},
		{name: "401", status: 401, body: `{"id":1,"message":"Unauthorized","type":"error"}`, wantID: 1, wantMsg: "Unauthorized", wantType: "error", unauth: true},
		{name: "403", status: 403, body: `{"id":2,"message":"Forbidden","type":"error"}`, wantID: 2, wantMsg: "Forbidden", wantType: "error", unauth: true},
		{name: "400 fields", status: 400, body: `{"id":557,"message":"invalid","type":"error","fields":{"plan":"unknown"}}`, wantID: 557, wantMsg: "invalid", wantType: "error", bad: true},
		{name: "422", status: 422, body: `{"id":3,"message":"nope","type":"error"}`, wantID: 3, wantMsg: "nope", wantType: "error", bad: true},
		{name: "v4 error shape", status: 404, body: `{"apiRequestId":"r1","code":"resource-not-found","error":"Addon not found"}`,
			wantMsg: "Addon not found", wantType: "resource-not-found", notFound: true},
		{name: "non-JSON html", status: 502, body: "<html>\n<body>Bad   Gateway</body></html>", wantMsg: "<html> <body>Bad Gateway</body></html>", retryable: true},
		{name: "non-JSON long truncated", status: 500, body: long, wantMsg: long[:197] + "…", retryable: true},
		{name: "JSON without error fields", status: 500, body: `{"foo":"bar"}`, wantMsg: `{"foo":"bar"}`, retryable: true},
		{name: "empty body", status: 404, body: "", notFound: true, wantInError: "404 Not Found"},
		{name: "429 retry-after seconds", status: 429, body: `{"id":9,"message":"slow down","type":"error"}`, header: map[string]string{"Retry-After": "7"},
			wantID: 9, wantMsg: "slow down", wantType: "error", retryable: true, wantRetryAfter: 7 * time.Second},
		{name: "429 retry-after date", status: 429, body: ``, header: map[string]string{"Retry-After": "Tue, 14 Nov 2023 22:13:40 GMT"},
			retryable: true, wantRetryAfter: 20 * time.Second},
		{name: "409 not retryable", status: 409, body: `{"id":5,"message":"conflict","type":"error"}`, wantID: 5, wantMsg: "conflict", wantType: "error"},
	}
	// 2023-11-14T22:13:20Z = 1700000000
	now := func() time.Time { return time.Unix(1700000000, 0) }
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := mustClient(t, Config{Endpoint: srv.URL, MaxRetries: -1, Now: now})
			_, err := c.GetAddon(context.Background(), "orga_1", "addon_1")
			if err == nil {
				t.Fatal("no error")
			}
			wrapped := fmt.Errorf("reconcile: %w", err)
			var ae *APIError
			if !errors.As(wrapped, &ae) {
				t.Fatalf("errors.As(*APIError) failed on %v", err)
			}
			if ae.StatusCode != tc.status || ae.Method != "GET" || ae.Route != RouteAddon {
				t.Errorf("status/method/route = %d %s %s", ae.StatusCode, ae.Method, ae.Route)
			}
			if ae.ID != tc.wantID || ae.Message != tc.wantMsg || ae.Type != tc.wantType {
				t.Errorf("id/message/type = %d %q %q, want %d %q %q", ae.ID, ae.Message, ae.Type, tc.wantID, tc.wantMsg, tc.wantType)
			}
			if len(ae.Message) > maxJSONMessage {
				t.Errorf("message too long: %d", len(ae.Message))
			}
			if ae.RetryAfter != tc.wantRetryAfter {
				t.Errorf("RetryAfter = %v, want %v", ae.RetryAfter, tc.wantRetryAfter)
			}
			if IsNotFound(wrapped) != tc.notFound || IsUnauthorized(wrapped) != tc.unauth ||
				IsBadRequest(wrapped) != tc.bad || IsRetryable(wrapped) != tc.retryable {
				t.Errorf("IsNotFound=%v IsUnauthorized=%v IsBadRequest=%v IsRetryable=%v",
					IsNotFound(wrapped), IsUnauthorized(wrapped), IsBadRequest(wrapped), IsRetryable(wrapped))
			}
			if tc.wantInError != "" && !strings.Contains(err.Error(), tc.wantInError) {
				t.Errorf("Error() = %q, want it to contain %q", err.Error(), tc.wantInError)
			}
			if tc.name == "400 fields" && ae.Fields["plan"] != "unknown" {
				t.Errorf("Fields = %v", ae.Fields)
			}
		})
	}
}

func TestIsRetryableClassification(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{context.Canceled, false},
		{fmt.Errorf("x: %w", ctx.Err()), false},
		{&RequestError{Op: "sending request", Err: context.DeadlineExceeded}, true},
		{&RequestError{Op: "sending request", Err: &net.OpError{Op: "dial", Err: errors.New("refused")}}, true},
		{&RequestError{Op: "reading response", Err: io.ErrUnexpectedEOF}, true},
		{&RequestError{Op: "decoding response", Err: &decodeError{msg: "bad"}}, false},
		{&RequestError{Op: "waiting for rate limiter", Err: errRateLimiterWait}, true},
		{errors.New("other"), false},
	}
	for i, tc := range cases {
		if got := IsRetryable(tc.err); got != tc.want {
			t.Errorf("%d: IsRetryable(%v) = %v, want %v", i, tc.err, got, tc.want)
		}
	}
}

// flaky answers the first n requests with status/body, then 200 with ok.
func flaky(n int64, status int, body string, header map[string]string, ok string, count *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if count.Add(1) <= n {
			for k, v := range header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
			return
		}
		_, _ = io.WriteString(w, ok)
	}
}

const provider503 = `{"id":-500,"message":"Error from provider: […]","type":"error"}`

func TestRetryOn503ThenSuccess(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(flaky(2, 503, provider503, nil, addonJSON, &count))
	defer srv.Close()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	c := mustClient(t, Config{Endpoint: srv.URL, Metrics: m})
	a, err := c.GetAddon(context.Background(), "orga_1", "addon_1")
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != "addon_1" || count.Load() != 3 {
		t.Fatalf("id=%s attempts=%d, want 3", a.ID, count.Load())
	}
	if got := testutil.ToFloat64(m.retries.WithLabelValues("GET", RouteAddon)); got != 2 {
		t.Errorf("retries metric = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("GET", RouteAddon, "503")); got != 2 {
		t.Errorf("503 requests metric = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("GET", RouteAddon, "200")); got != 1 {
		t.Errorf("200 requests metric = %v, want 1", got)
	}
}

func TestRetriesExhausted(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(flaky(100, 503, provider503, nil, "", &count))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL, MaxRetries: 3})
	err := c.DeleteAddon(context.Background(), "orga_1", "addon_1")
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 503 || ae.ID != -500 {
		t.Fatalf("err = %v", err)
	}
	if count.Load() != 4 {
		t.Fatalf("attempts = %d, want 4 (1 + MaxRetries)", count.Load())
	}

	count.Store(0)
	c0 := mustClient(t, Config{Endpoint: srv.URL, MaxRetries: -1})
	_ = c0.DeleteAddon(context.Background(), "orga_1", "addon_1")
	if count.Load() != 1 {
		t.Fatalf("MaxRetries<0: attempts = %d, want 1", count.Load())
	}
}

func TestNoRetryOn4xx(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(flaky(100, 404, `{"id":4004,"message":"Not Found","type":"error"}`, nil, "", &count))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL})
	err := c.DeleteAddon(context.Background(), "orga_1", "addon_1")
	if !IsNotFound(err) || count.Load() != 1 {
		t.Fatalf("err=%v attempts=%d", err, count.Load())
	}
}

func TestPutRetried(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(flaky(1, 502, "bad gateway", nil, `[]`, &count))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL})
	if _, err := c.PutConfigProviderEnv(context.Background(), "config_1", []Variable{{Name: "A", Value: "1"}}); err != nil {
		t.Fatal(err)
	}
	if count.Load() != 2 {
		t.Fatalf("attempts = %d, want 2", count.Load())
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(flaky(1, 429, `{"id":429,"message":"Too many requests","type":"error"}`, map[string]string{"Retry-After": "1"}, `{"id":"user_1"}`, &count))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL})
	start := time.Now()
	if _, err := c.Self(context.Background()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Fatalf("retried after %v, want >= ~1s (Retry-After: 1)", el)
	}
	if count.Load() != 2 {
		t.Fatalf("attempts = %d", count.Load())
	}
}

func TestRetryAfterCapped(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(flaky(1, 503, provider503, map[string]string{"Retry-After": "3600"}, `{"id":"user_1"}`, &count))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL, MaxRetryAfter: 50 * time.Millisecond})
	start := time.Now()
	if _, err := c.Self(context.Background()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 45*time.Millisecond || el > 2*time.Second {
		t.Fatalf("took %v, want about the 50ms cap", el)
	}
}

func TestRetryAfterBeyondDeadlineGivesUp(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(flaky(100, 429, ``, map[string]string{"Retry-After": "30"}, ``, &count))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Self(ctx)
	if el := time.Since(start); el > 300*time.Millisecond {
		t.Fatalf("waited %v although Retry-After exceeds the deadline", el)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 429 || ae.RetryAfter != 30*time.Second || count.Load() != 1 {
		t.Fatalf("err=%v attempts=%d", err, count.Load())
	}
}

func TestCreateNotRetriedOn5xx(t *testing.T) {
	for _, status := range []int{500, 503} {
		var count atomic.Int64
		srv := httptest.NewServer(flaky(100, status, provider503, nil, addonJSON, &count))
		c := mustClient(t, Config{Endpoint: srv.URL})
		_, err := c.CreateAddon(context.Background(), "orga_1", CreateOpts{Name: "n"})
		srv.Close()
		var ae *APIError
		if !errors.As(err, &ae) || ae.StatusCode != status {
			t.Fatalf("err = %v", err)
		}
		if count.Load() != 1 {
			t.Fatalf("status %d: attempts = %d, want exactly 1", status, count.Load())
		}
		if !IsRetryable(err) {
			t.Errorf("a 5xx create error should still be reported retryable to the caller")
		}
	}
}

func TestCreateNotRetriedOnTimeout(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		_, _ = io.Copy(io.Discard, r.Body) // lets the server notice the client going away
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL, Timeout: 100 * time.Millisecond})
	_, err := c.CreateAddon(context.Background(), "orga_1", CreateOpts{Name: "n"})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if count.Load() != 1 {
		t.Fatalf("attempts = %d, want 1", count.Load())
	}
}

func TestCreateRetriedOn429(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(flaky(1, 429, ``, nil, addonJSON, &count))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL})
	a, err := c.CreateAddon(context.Background(), "orga_1", CreateOpts{Name: "n"})
	if err != nil || a.ID != "addon_1" || count.Load() != 2 {
		t.Fatalf("err=%v attempts=%d", err, count.Load())
	}
}

func TestCreateRetriedOnConnectionRefused(t *testing.T) {
	// Reserve a port, close it: the first attempts are refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	var dials atomic.Int64
	var count atomic.Int64
	srv := httptest.NewServer(flaky(0, 0, "", nil, addonJSON, &count))
	defer srv.Close()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return (&net.Dialer{}).DialContext(ctx, network, addr) // refused
		}
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	c := mustClient(t, Config{Endpoint: "http://api.invalid", HTTPClient: &http.Client{Transport: tr}})
	a, err := c.CreateAddon(context.Background(), "orga_1", CreateOpts{Name: "n"})
	if err != nil || a.ID != "addon_1" {
		t.Fatalf("err = %v", err)
	}
	if dials.Load() != 2 || count.Load() != 1 {
		t.Fatalf("dials=%d served=%d, want 2 and 1", dials.Load(), count.Load())
	}
}

func TestNetworkErrorRetriedForGet(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if count.Add(1) == 1 {
			// Drop the connection without answering.
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
			return
		}
		_, _ = io.WriteString(w, `{"id":"user_1"}`)
	}))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL})
	if _, err := c.Self(context.Background()); err != nil {
		t.Fatal(err)
	}
	if count.Load() != 2 {
		t.Fatalf("attempts = %d", count.Load())
	}
}

func TestContextCancellationStopsRetries(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(flaky(1000, 503, provider503, nil, "", &count))
	defer srv.Close()
	// No circuit: with full jitter, 8 failures can fit in the 120 ms and open it, which ends
	// the retries before the cancellation this test is about (the circuit has its own tests).
	c := mustClient(t, Config{Endpoint: srv.URL, MaxRetries: 1000, MinBackoff: 50 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, CircuitThreshold: -1})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(120*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.GetAddon(ctx, "orga_1", "addon_1")
	if el := time.Since(start); el > time.Second {
		t.Fatalf("returned after %v", el)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled in chain", err)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 503 {
		t.Fatalf("last API error not kept: %v", err)
	}
	if IsRetryable(err) {
		t.Fatal("canceled call reported retryable")
	}
	// A request already on the wire when the context was canceled may still reach the
	// server: let it land, then check that no new attempt follows.
	time.Sleep(50 * time.Millisecond)
	n := count.Load()
	time.Sleep(150 * time.Millisecond)
	if count.Load() != n || n > 30 {
		t.Fatalf("attempts = %d then %d", n, count.Load())
	}
}

func TestPerAttemptTimeout(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if count.Add(1) == 1 {
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
			return
		}
		_, _ = io.WriteString(w, `[]`)
	}))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL, Timeout: 100 * time.Millisecond})
	start := time.Now()
	if _, err := c.ListProviders(context.Background()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 100*time.Millisecond || el > 2*time.Second {
		t.Fatalf("took %v", el)
	}
	if count.Load() != 2 {
		t.Fatalf("attempts = %d, want 2", count.Load())
	}

	// With no retry left the timeout surfaces as a retryable error.
	count.Store(0)
	c1 := mustClient(t, Config{Endpoint: srv.URL, Timeout: 100 * time.Millisecond, MaxRetries: -1})
	_, err := c1.ListProviders(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) || !IsRetryable(err) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), srv.URL) {
		t.Errorf("error contains the raw URL: %v", err)
	}
}

func TestRateLimiterSharedPerCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"id":"user_1"}`)
	}))
	defer srv.Close()
	creds := uniqueCreds()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	cfg := Config{Endpoint: srv.URL, Credentials: creds, RateLimit: 5, RateBurst: 1, Metrics: m}
	c1 := mustClient(t, cfg)
	c2 := mustClient(t, cfg)
	if c1.limiter != c2.limiter {
		t.Fatal("clients with the same credentials do not share a limiter")
	}
	ctx := context.Background()
	start := time.Now()
	for i := range 6 {
		c := c1
		if i%2 == 1 {
			c = c2
		}
		if _, err := c.Self(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// burst 1 + 5 more tokens at 5/s = 1s.
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Fatalf("6 calls at 5/s burst 1 took %v, want >= ~1s", el)
	}
	if n := testutil.CollectAndCount(m.limiterWait); n != 1 {
		t.Errorf("limiter wait histogram series = %d", n)
	}

	// Different credentials: independent limiter.
	other := mustClient(t, Config{Endpoint: srv.URL, Credentials: uniqueCreds(), RateLimit: 5, RateBurst: 1})
	if other.limiter == c1.limiter {
		t.Fatal("different credentials share a limiter")
	}
	// Bearer with the same endpoint: independent too.
	b := mustClient(t, Config{Endpoint: srv.URL, Credentials: Credentials{BearerToken: "tok-unique-limiter"}, RateLimit: 5, RateBurst: 1})
	if b.limiter == c1.limiter {
		t.Fatal("bearer client shares the OAuth1 limiter")
	}
	start = time.Now()
	if _, err := other.Self(ctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 150*time.Millisecond {
		t.Fatalf("first call on other credentials waited %v", el)
	}
}

func TestRateLimiterRespectsDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"id":"user_1"}`)
	}))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL, RateLimit: 0.1, RateBurst: 1})
	if _, err := c.Self(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Self(ctx)
	if err == nil || !IsRetryable(err) || !strings.Contains(err.Error(), "rate limiter") {
		t.Fatalf("err = %v", err)
	}
}

func TestMetrics(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		if r.Method == http.MethodDelete {
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"id":4004,"message":"Not Found","type":"error"}`)
			return
		}
		_, _ = io.WriteString(w, addonJSON)
	}))
	defer srv.Close()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	if m2 := NewMetrics(reg); m2.requests != m.requests || m2.limiterWait != m.limiterWait {
		t.Fatal("second NewMetrics on the same registry did not reuse the collectors")
	}
	c := mustClient(t, Config{Endpoint: srv.URL, Metrics: m})
	ctx := context.Background()
	_, _ = c.GetAddon(ctx, "orga_1", "addon_1")
	_, _ = c.GetAddon(ctx, "orga_2", "addon_2")
	_ = c.DeleteAddon(ctx, "orga_1", "addon_1")

	// transport error: closed server
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	cd := mustClient(t, Config{Endpoint: dead.URL, Metrics: m, MaxRetries: -1})
	_, _ = cd.Self(ctx)

	want := `
# HELP clevercloud_api_requests_total HTTP requests (attempts) sent to the Clever Cloud API, by method, route template and status code ("error" for transport errors).
# TYPE clevercloud_api_requests_total counter
clevercloud_api_requests_total{code="200",method="GET",route="/v2/organisations/{ownerId}/addons/{addonId}"} 2
clevercloud_api_requests_total{code="404",method="DELETE",route="/v2/organisations/{ownerId}/addons/{addonId}"} 1
clevercloud_api_requests_total{code="error",method="GET",route="/v2/self"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "clevercloud_api_requests_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(m.duration); n != 3 {
		t.Errorf("duration series = %d, want 3", n)
	}
	if n := testutil.CollectAndCount(m.retries); n != 0 {
		t.Errorf("retry series = %d, want 0", n)
	}
	// nil Metrics is fine.
	c2 := mustClient(t, Config{Endpoint: srv.URL})
	if _, err := c2.GetAddon(ctx, "o", "a"); err != nil {
		t.Fatal(err)
	}
	_ = NewMetrics(nil)
}

func TestSecretsNeverInErrors(t *testing.T) {
	creds := Credentials{ConsumerKey: "ck-leak-check", ConsumerSecret: "cs-SUPERSECRET", Token: "tok-SUPERSECRET", Secret: "ts-SUPERSECRET"}
	const envValue = "pg-PASSWORD-VALUE"
	cases := []struct {
		name   string
		status int
		body   string
		call   func(*Client) error
	}{
		{"500 echoing credentials", 500, "oops: consumer=cs-SUPERSECRET token=tok-SUPERSECRET secret=ts-SUPERSECRET key=ck-leak-check",
			func(c *Client) error { _, err := c.Self(context.Background()); return err }},
		{"500 JSON echoing credentials", 500, `{"id":1,"message":"bad token tok-SUPERSECRET","type":"error","fields":{"x":"ts-SUPERSECRET"}}`,
			func(c *Client) error { _, err := c.Self(context.Background()); return err }},
		{"env malformed JSON", 200, `[{"name":"PASSWORD","value":"` + envValue + `"`,
			func(c *Client) error { _, err := c.GetAddonEnv(context.Background(), "o", "a"); return err }},
		{"env syntax error", 200, `[{"name":"PASSWORD","value":"` + envValue + `"} x]`,
			func(c *Client) error { _, err := c.GetAddonEnv(context.Background(), "o", "a"); return err }},
		{"env wrong type", 200, `[{"name":"PASSWORD","value":12345678901234}]`,
			func(c *Client) error { _, err := c.GetConfigProviderEnv(context.Background(), "r"); return err }},
		{"env object instead of list", 200, `{"PASSWORD":"` + envValue + `"}`,
			func(c *Client) error { _, err := c.GetConfigProviderEnv(context.Background(), "r"); return err }},
		{"env non-JSON error body", 502, `<html>` + envValue + `</html>`,
			func(c *Client) error { _, err := c.GetAddonEnv(context.Background(), "o", "a"); return err }},
		{"put env echoed in 400", 400, `{"id":7,"message":"invalid value ` + envValue + `","type":"error"}`,
			func(c *Client) error {
				_, err := c.PutConfigProviderEnv(context.Background(), "r", []Variable{{Name: "P", Value: envValue}})
				return err
			}},
		{"put env echoed in non-JSON 500", 500, `failed to store ` + envValue,
			func(c *Client) error {
				_, err := c.PutConfigProviderEnv(context.Background(), "r", []Variable{{Name: "P", Value: envValue}})
				return err
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := mustClient(t, Config{Endpoint: srv.URL, Credentials: creds, MaxRetries: -1})
			err := tc.call(c)
			if err == nil {
				t.Fatal("no error")
			}
			msg := fmt.Sprintf("%v %+v %#v", err, err, err)
			for _, s := range []string{"SUPERSECRET", "ck-leak-check", envValue, "12345678901234"} {
				if strings.Contains(msg, s) {
					t.Errorf("error leaks %q: %s", s, err)
				}
			}
			var ae *APIError
			if errors.As(err, &ae) {
				for _, v := range ae.Fields {
					if strings.Contains(v, "SUPERSECRET") {
						t.Errorf("Fields leak: %v", ae.Fields)
					}
				}
			}
			if tc.status == 200 && !strings.Contains(err.Error(), "decoding response") {
				t.Errorf("decode error does not say \"decoding response\": %v", err)
			}
			if tc.status == 200 && IsRetryable(err) {
				t.Errorf("decode error reported retryable")
			}
		})
	}
}

func TestDecodeErrorNonSensitive(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"id": 12}`)
	}))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL})
	_, err := c.GetAddon(context.Background(), "o", "a")
	var re *RequestError
	if !errors.As(err, &re) || re.Op != "decoding response" || re.Route != RouteAddon {
		t.Fatalf("err = %v", err)
	}
}

func TestNoRedirectFollowed(t *testing.T) {
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, `{"id":"user_1"}`)
	}))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/v2/self", http.StatusFound)
	}))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL})
	_, err := c.Self(context.Background())
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusFound || hits.Load() != 0 {
		t.Fatalf("err=%v hits=%d", err, hits.Load())
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Unix(1700000000, 0)
	cases := map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"-3":                            0,
		"2":                             2 * time.Second,
		"junk":                          0,
		"Tue, 14 Nov 2023 22:13:30 GMT": 10 * time.Second,
		"Tue, 14 Nov 2023 22:13:00 GMT": 0, // in the past
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	c := mustClient(t, Config{Endpoint: "http://127.0.0.1:1", MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	for attempt := range 40 {
		ceiling := min(time.Second, 100*time.Millisecond<<min(attempt, 20))
		for range 50 {
			if d := c.backoff(attempt); d < 0 || d > ceiling {
				t.Fatalf("backoff(%d) = %v, want in [0, %v]", attempt, d, ceiling)
			}
		}
	}
}

func TestJSONContractRoundTrip(t *testing.T) {
	// The request body of PUT is exactly [{"name":..,"value":..}].
	b, _ := json.Marshal([]Variable{{Name: "a", Value: "b"}})
	if string(b) != `[{"name":"a","value":"b"}]` {
		t.Fatalf("got %s", b)
	}
}

func TestLimiterRegistryReleasesUnusedLimiters(t *testing.T) {
	creds := uniqueCreds()
	key := limiterKey("http://127.0.0.1:1", creds)
	func() {
		c := mustClient(t, Config{Endpoint: "http://127.0.0.1:1", Credentials: creds, RateLimit: 3, RateBurst: 2})
		if c.limiter.Limit() != 3 || c.limiter.Burst() != 2 {
			t.Fatalf("limit/burst = %v/%d", c.limiter.Limit(), c.limiter.Burst())
		}
		// The latest configuration for the same credentials wins.
		c2 := mustClient(t, Config{Endpoint: "http://127.0.0.1:1", Credentials: creds, RateLimit: 7, RateBurst: 4})
		if c2.limiter != c.limiter || c.limiter.Limit() != 7 || c.limiter.Burst() != 4 {
			t.Fatalf("shared limiter not updated")
		}
	}()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		limiters.Lock()
		_, present := limiters.m[key]
		limiters.Unlock()
		if !present {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("limiter entry of unused credentials was not removed")
}
