package clevercloud_test

// Integration tests: the real client (this package) against the real fake
// server (pkg/fakeapi) over real HTTP. Every test starts its own fake, so the
// per-credential client-side rate limiters (keyed by endpoint) never interfere.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

const (
	itOwner        = "orga_0f1e2d3c-4b5a-4697-8877-665544332211"
	itPGDevPlanID  = "plan_d2ada71a-aa8e-4ead-8cb9-28314664437e"
	itProvisioning = 200 * time.Millisecond
)

// Route keys of the fake (ServeMux patterns) built from the client's route
// templates: if the two ever disagree, the count assertions fail.
var (
	keySelf      = http.MethodGet + " " + clevercloud.RouteSelf
	keyProviders = http.MethodGet + " " + clevercloud.RouteProviders
	keyCreate    = http.MethodPost + " " + clevercloud.RouteAddons
	keyGetAddon  = http.MethodGet + " " + clevercloud.RouteAddon
)

// itProviders is the seeded catalogue: provider id -> realId prefix.
var itProviders = []struct{ id, prefix string }{
	{"postgresql-addon", "postgresql_"},
	{"redis-addon", "redis_"},
	{"mysql-addon", "mysql_"},
	{"mongodb-addon", "mongodb_"},
	{"addon-pulsar", "pulsar_"},
	{"config-provider", "config_"},
	{"es-addon", "es_"},
	{"kv", "kv_"},
	{"metabase", "metabase_"},
	{"keycloak", "keycloak_"},
	{"addon-matomo", "matomo_"},
	{"otoroshi", "otoroshi_"},
	{"azimutt", "azimutt_"},
	{"cellar-addon", "cellar_"},
	{"fs-bucket", "bucket_"}, // no typed kind: the generic Addon's
}

var itCredSeq atomic.Int64

// itCredential returns a credential set no other test uses. The secrets hold
// characters that OAuth1 must percent-encode in the signing key.
func itCredential() fakeapi.Credential {
	n := itCredSeq.Add(1)
	return fakeapi.Credential{
		ConsumerKey:    fmt.Sprintf("it-consumer-key-%d", n),
		ConsumerSecret: fmt.Sprintf("it consumer/SECRET+&=%d", n),
		Token:          fmt.Sprintf("it-token-%d", n),
		Secret:         fmt.Sprintf("it-token-SECRET~!%d", n),
	}
}

func clientCreds(c fakeapi.Credential) clevercloud.Credentials {
	return clevercloud.Credentials{
		ConsumerKey: c.ConsumerKey, ConsumerSecret: c.ConsumerSecret,
		Token: c.Token, Secret: c.Secret,
	}
}

// startFake starts a fake accepting one fresh OAuth1 credential set (unless
// opts already lists credentials or bearer tokens) and returns it, its URL and
// that credential set.
func startFake(t *testing.T, opts fakeapi.Options) (*fakeapi.Server, string, fakeapi.Credential) {
	t.Helper()
	var cred fakeapi.Credential
	if len(opts.Credentials) == 0 && len(opts.BearerTokens) == 0 {
		cred = itCredential()
		opts.Credentials = []fakeapi.Credential{cred}
	} else if len(opts.Credentials) > 0 {
		cred = opts.Credentials[0]
	}
	fake, srv := fakeapi.NewTestServer(opts)
	t.Cleanup(srv.Close)
	return fake, srv.URL, cred
}

// newITClient builds a client for the fake: no client-side rate limit, small
// backoffs, 5s per-attempt timeout; mutate adjusts the config.
func newITClient(t *testing.T, endpoint string, creds clevercloud.Credentials, mutate func(*clevercloud.Config)) *clevercloud.Client {
	t.Helper()
	cfg := clevercloud.Config{
		Endpoint:    endpoint,
		Credentials: creds,
		Timeout:     5 * time.Second,
		MaxRetries:  3,
		MinBackoff:  10 * time.Millisecond,
		MaxBackoff:  200 * time.Millisecond,
		RateLimit:   -1,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := clevercloud.New(cfg)
	if err != nil {
		t.Fatalf("clevercloud.New: %v", err)
	}
	return c
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// asAPIError returns the *APIError err wraps, failing the test otherwise.
func asAPIError(t *testing.T, err error) *clevercloud.APIError {
	t.Helper()
	var ae *clevercloud.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an *APIError", err, err)
	}
	return ae
}

// assertNoSecrets fails when the error text contains any of the values, or
// shows that the client had to redact one (the fake must never echo them).
func assertNoSecrets(t *testing.T, err error, values ...string) {
	t.Helper()
	msg := err.Error()
	if strings.Contains(msg, "[REDACTED]") {
		t.Errorf("error %q: the server echoed a credential", msg)
	}
	for _, v := range values {
		if v != "" && strings.Contains(msg, v) {
			t.Errorf("error %q contains secret value %q", msg, v)
		}
	}
}

func statusCount(fake *fakeapi.Server, key string, code int) int {
	return fake.CountsByStatus()[key][code]
}

func providerByID(ps []clevercloud.Provider, id string) *clevercloud.Provider {
	for i := range ps {
		if ps[i].ID == id {
			return &ps[i]
		}
	}
	return nil
}

func varNames(vs []clevercloud.Variable) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Name)
	}
	slices.Sort(out)
	return out
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// ---- 1. OAuth1 HMAC-SHA512 happy path over the whole surface ----

func TestFakeIntegrationOAuth1Lifecycle(t *testing.T) {
	fake, url, cred := startFake(t, fakeapi.Options{ProvisioningDelay: itProvisioning})
	c := newITClient(t, url, clientCreds(cred), nil)
	ctx := ctxFor(t, 10*time.Second)

	var providers []clevercloud.Provider
	created := map[string]*clevercloud.Addon{} // by provider id
	var pg *clevercloud.Addon                  // the add-on the rest of the lifecycle uses
	var pgCreatedAt time.Time                  // before its POST was sent

	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"Self", func(t *testing.T) {
			self, err := c.Self(ctx)
			if err != nil {
				t.Fatalf("Self: %v", err)
			}
			want := fake.Self()
			if !strings.HasPrefix(self.ID, "user_") || self.ID != want.ID {
				t.Errorf("Self.ID = %q, want %q (user_ prefix)", self.ID, want.ID)
			}
			if self.Email != want.Email || self.Name != want.Name || self.CreationDate == 0 {
				t.Errorf("Self = %+v, want %+v", self, want)
			}
		}},
		{"ListProviders", func(t *testing.T) {
			var err error
			providers, err = c.ListProviders(ctx)
			if err != nil {
				t.Fatalf("ListProviders: %v", err)
			}
			if len(providers) != len(itProviders) {
				t.Errorf("got %d providers, want %d", len(providers), len(itProviders))
			}
			for _, want := range itProviders {
				p := providerByID(providers, want.id)
				if p == nil {
					t.Errorf("provider %q missing", want.id)
					continue
				}
				if len(p.Plans) == 0 || len(p.Regions) == 0 {
					t.Errorf("provider %q has %d plans and %d regions", p.ID, len(p.Plans), len(p.Regions))
				}
				for _, pl := range p.Plans {
					if !strings.HasPrefix(pl.ID, "plan_") || pl.Slug == "" || len(pl.Zones) == 0 {
						t.Errorf("provider %q: bad plan %+v", p.ID, pl)
					}
				}
			}
			if p := providerByID(providers, "cellar-addon"); p == nil {
				t.Fatal("cellar-addon missing")
			}
			pgp := providerByID(providers, "postgresql-addon")
			if pgp == nil {
				t.Fatal("postgresql-addon missing")
			}
			var devID string
			for _, pl := range pgp.Plans {
				if pl.Slug == "dev" {
					devID = pl.ID
				}
			}
			if devID != itPGDevPlanID {
				t.Errorf("postgresql dev plan id = %q, want %q", devID, itPGDevPlanID)
			}
			if got := fake.PlanID("postgresql-addon", "dev"); got != itPGDevPlanID {
				t.Errorf("fake.PlanID(postgresql-addon, dev) = %q", got)
			}
		}},
		{"CreateAddon", func(t *testing.T) {
			if providers == nil {
				t.Fatal("no providers (ListProviders failed)")
			}
			for _, tc := range itProviders {
				t.Run(tc.id, func(t *testing.T) {
					p := providerByID(providers, tc.id)
					if p == nil {
						t.Fatalf("provider %q missing", tc.id)
					}
					plan := p.Plans[0]
					name := "it " + tc.id + " / été #1 \"quoted\""
					opts := clevercloud.CreateOpts{Name: name, Region: plan.Zones[0], ProviderID: tc.id, Plan: plan.ID}
					if tc.id == "postgresql-addon" {
						opts.Plan = itPGDevPlanID
						opts.Region = "par"
						opts.Options.Version = "16"
						pgCreatedAt = time.Now()
					}
					a, err := c.CreateAddon(ctx, itOwner, opts)
					if err != nil {
						t.Fatalf("CreateAddon: %v", err)
					}
					if !strings.HasPrefix(a.ID, "addon_") || len(a.ID) <= len("addon_") {
						t.Errorf("ID = %q, want addon_ prefix", a.ID)
					}
					if !strings.HasPrefix(a.RealID, tc.prefix) || len(a.RealID) <= len(tc.prefix) {
						t.Errorf("RealID = %q, want prefix %q", a.RealID, tc.prefix)
					}
					if a.AddonName() != name {
						t.Errorf("Name = %q, want %q verbatim", a.AddonName(), name)
					}
					if a.Provider.ID != tc.id || a.Plan.ID != opts.Plan || a.Region != opts.Region || a.CreationDate == 0 {
						t.Errorf("addon = %+v, want provider %s plan %s region %s", a, tc.id, opts.Plan, opts.Region)
					}
					switch tc.id {
					case "postgresql-addon":
						if len(a.ConfigKeys) == 0 {
							t.Error("postgresql add-on has no configKeys")
						}
						if a.Plan.Slug != "dev" {
							t.Errorf("plan slug = %q, want dev", a.Plan.Slug)
						}
						pg = a
					case "config-provider":
						if len(a.ConfigKeys) != 0 {
							t.Errorf("new config provider has configKeys %v", a.ConfigKeys)
						}
					}
					created[tc.id] = a
				})
			}
		}},
		{"GetAddonEnv/empty during provisioning delay", func(t *testing.T) {
			if pg == nil {
				t.Fatal("no postgresql add-on")
			}
			env, err := c.GetAddonEnv(ctx, itOwner, pg.ID)
			if err != nil {
				t.Fatalf("GetAddonEnv: %v", err)
			}
			if since := time.Since(pgCreatedAt); since >= itProvisioning {
				t.Skipf("too slow to observe the provisioning delay (%v since create)", since)
			}
			if env == nil || len(env) != 0 {
				t.Errorf("env during provisioning = %v, want [] (non-nil)", env)
			}
		}},
		{"GetAddon/by id", func(t *testing.T) {
			if len(created) != len(itProviders) {
				t.Fatalf("only %d add-ons created", len(created))
			}
			for id, want := range created {
				got, err := c.GetAddon(ctx, itOwner, want.ID)
				if err != nil {
					t.Fatalf("GetAddon(%s): %v", id, err)
				}
				if got.ID != want.ID || got.RealID != want.RealID || got.AddonName() != want.AddonName() ||
					got.Plan.ID != want.Plan.ID || !slices.Equal(got.ConfigKeys, want.ConfigKeys) {
					t.Errorf("GetAddon(%s) = %+v, want %+v", id, got, want)
				}
			}
		}},
		{"GetAddon/by realId", func(t *testing.T) {
			got, err := c.GetAddon(ctx, itOwner, pg.RealID)
			if err != nil {
				t.Fatalf("GetAddon(realId): %v", err)
			}
			if got.ID != pg.ID {
				t.Errorf("GetAddon(realId).ID = %q, want %q", got.ID, pg.ID)
			}
		}},
		{"GetAddon/other owner is 404", func(t *testing.T) {
			_, err := c.GetAddon(ctx, "orga_someone-else", pg.ID)
			if !clevercloud.IsNotFound(err) {
				t.Errorf("GetAddon(other owner) err = %v, want 404", err)
			}
		}},
		{"ListAddons", func(t *testing.T) {
			list, err := c.ListAddons(ctx, itOwner)
			if err != nil {
				t.Fatalf("ListAddons: %v", err)
			}
			if len(list) != len(created) {
				t.Errorf("ListAddons returned %d add-ons, want %d", len(list), len(created))
			}
			if !slices.ContainsFunc(list, func(a clevercloud.Addon) bool { return a.ID == pg.ID && a.RealID == pg.RealID }) {
				t.Errorf("ListAddons does not contain %s", pg.ID)
			}
			other, err := c.ListAddons(ctx, "orga_empty")
			if err != nil || other == nil || len(other) != 0 {
				t.Errorf("ListAddons(empty owner) = %v, %v; want [] (non-nil), nil", other, err)
			}
		}},
		{"GetAddonEnv/keys equal configKeys after provisioning delay", func(t *testing.T) {
			time.Sleep(time.Until(pgCreatedAt.Add(itProvisioning + 50*time.Millisecond)))
			env, err := c.GetAddonEnv(ctx, itOwner, pg.ID)
			if err != nil {
				t.Fatalf("GetAddonEnv: %v", err)
			}
			if got, want := varNames(env), sortedCopy(pg.ConfigKeys); !slices.Equal(got, want) {
				t.Errorf("env keys = %v, want configKeys %v", got, want)
			}
			for _, v := range env {
				if v.Value == "" {
					t.Errorf("variable %s is empty", v.Name)
				}
				if v.Name == "POSTGRESQL_ADDON_VERSION" && v.Value != "16" {
					t.Errorf("POSTGRESQL_ADDON_VERSION = %q, want the requested 16", v.Value)
				}
			}
			if !slices.Equal(env, fromFakeVars(fake.Env(pg.ID))) {
				t.Error("API env differs from the fake's stored env")
			}
		}},
		{"ConfigProvider/PUT replaces the whole list", func(t *testing.T) {
			cp := created["config-provider"]
			if cp == nil {
				t.Fatal("no config provider")
			}
			env, err := c.GetConfigProviderEnv(ctx, cp.RealID)
			if err != nil || env == nil || len(env) != 0 {
				t.Fatalf("initial config env = %v, %v; want [], nil", env, err)
			}
			ab := []clevercloud.Variable{{Name: "B", Value: "b-value"}, {Name: "A", Value: "a value with spaces"}}
			got, err := c.PutConfigProviderEnv(ctx, cp.RealID, ab)
			if err != nil {
				t.Fatalf("PUT {A,B}: %v", err)
			}
			if names := varNames(got); !slices.Equal(names, []string{"A", "B"}) {
				t.Errorf("PUT {A,B} answered %v", got)
			}
			if env, err = c.GetConfigProviderEnv(ctx, cp.RealID); err != nil || !slices.Equal(varNames(env), []string{"A", "B"}) {
				t.Errorf("GET after PUT {A,B} = %v, %v", env, err)
			}
			got, err = c.PutConfigProviderEnv(ctx, cp.RealID, []clevercloud.Variable{{Name: "C", Value: "c-value"}})
			if err != nil {
				t.Fatalf("PUT {C}: %v", err)
			}
			want := []clevercloud.Variable{{Name: "C", Value: "c-value"}}
			if !slices.Equal(got, want) {
				t.Errorf("PUT {C} answered %v, want %v", got, want)
			}
			env, err = c.GetConfigProviderEnv(ctx, cp.RealID)
			if err != nil || !slices.Equal(env, want) {
				t.Errorf("GET after PUT {C} = %v, %v; want only C", env, err)
			}
			a, err := c.GetAddon(ctx, itOwner, cp.ID)
			if err != nil || !slices.Equal(a.ConfigKeys, []string{"C"}) {
				t.Errorf("config provider configKeys after PUT {C}: %v (err %v), want [C]", a, err)
			}
			// The v4 route is only for config providers.
			if _, err := c.GetConfigProviderEnv(ctx, pg.RealID); !clevercloud.IsNotFound(err) {
				t.Errorf("GetConfigProviderEnv(postgresql realId) err = %v, want 404", err)
			}
			// PUT nil sends [] and empties the list.
			if got, err := c.PutConfigProviderEnv(ctx, cp.RealID, nil); err != nil || got == nil || len(got) != 0 {
				t.Errorf("PUT nil = %v, %v; want [], nil", got, err)
			}
		}},
		{"DeleteAddon", func(t *testing.T) {
			if err := c.DeleteAddon(ctx, itOwner, pg.ID); err != nil {
				t.Fatalf("DeleteAddon: %v", err)
			}
			_, err := c.GetAddon(ctx, itOwner, pg.ID)
			if !clevercloud.IsNotFound(err) {
				t.Errorf("GetAddon after delete err = %v, want IsNotFound", err)
			}
			if _, err := c.GetAddonEnv(ctx, itOwner, pg.ID); !clevercloud.IsNotFound(err) {
				t.Errorf("GetAddonEnv after delete err = %v, want IsNotFound", err)
			}
			err = c.DeleteAddon(ctx, itOwner, pg.ID)
			if !clevercloud.IsNotFound(err) {
				t.Errorf("second DeleteAddon err = %v, want IsNotFound", err)
			}
			if ae := asAPIError(t, err); ae.Route != clevercloud.RouteAddon || ae.Method != http.MethodDelete || strings.Contains(ae.Error(), pg.ID) {
				t.Errorf("APIError = %+v (%q): want route template, no id", ae, ae.Error())
			}
			list, err := c.ListAddons(ctx, itOwner)
			if err != nil || slices.ContainsFunc(list, func(a clevercloud.Addon) bool { return a.ID == pg.ID }) || len(list) != len(created)-1 {
				t.Errorf("ListAddons after delete = %d add-ons, err %v", len(list), err)
			}
		}},
		{"no auth failure, fault or retry", func(t *testing.T) {
			for key, byCode := range fake.CountsByStatus() {
				for code, n := range byCode {
					if code >= 500 || code == 401 || code == 429 {
						t.Errorf("%s: %d answers with status %d", key, n, code)
					}
				}
			}
			if n := fake.Counts()[keyCreate]; n != len(itProviders) {
				t.Errorf("%d POSTs for %d creates", n, len(itProviders))
			}
		}},
	}
	for _, st := range steps {
		if !t.Run(st.name, st.run) && pg == nil {
			return // later steps need the add-on
		}
	}
}

// ---- 2. bearer mode ----

// The real API serves bearer tokens on the bridge host only
// (api-bridge.clever-cloud.com, clever-tools' AUTH_BRIDGE_HOST): the fake's
// bridge accepts only bearer tokens, its API host only OAuth1.
func TestFakeIntegrationBearer(t *testing.T) {
	const good = "it-bearer-GOOD-token-0123456789"
	oauth := itCredential()
	fake, api, bridge := fakeapi.NewTestServers(fakeapi.Options{BearerTokens: []string{good}, Credentials: []fakeapi.Credential{oauth}})
	t.Cleanup(api.Close)
	t.Cleanup(bridge.Close)
	ctx := ctxFor(t, 10*time.Second)

	cases := []struct {
		name    string
		host    string
		creds   clevercloud.Credentials
		wantErr bool
	}{
		{"valid token on the bridge", bridge.URL, clevercloud.Credentials{BearerToken: good}, false},
		{"valid token with surrounding whitespace", bridge.URL, clevercloud.Credentials{BearerToken: " " + good + "\n"}, false},
		{"bearer wins over OAuth1 fields", bridge.URL, clevercloud.Credentials{BearerToken: good, ConsumerKey: "x", ConsumerSecret: "y", Token: "z", Secret: "w"}, false},
		{"wrong token", bridge.URL, clevercloud.Credentials{BearerToken: "it-bearer-WRONG-token-9876543210"}, true},
		{"valid token on the API host", api.URL, clevercloud.Credentials{BearerToken: good}, true},
		{"valid OAuth1 on the bridge", bridge.URL, clientCreds(oauth), true},
		{"valid OAuth1 on the API host", api.URL, clientCreds(oauth), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake.ResetCounts()
			c := newITClient(t, tc.host, tc.creds, nil)
			self, err := c.Self(ctx)
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("Self: %v", err)
				}
				if self.ID != fake.Self().ID {
					t.Errorf("Self.ID = %q, want %q", self.ID, fake.Self().ID)
				}
				return
			}
			if !clevercloud.IsUnauthorized(err) || clevercloud.IsRetryable(err) {
				t.Fatalf("err = %v, want unauthorized, not retryable", err)
			}
			if ae := asAPIError(t, err); ae.StatusCode != http.StatusUnauthorized {
				t.Errorf("status = %d, want 401", ae.StatusCode)
			}
			assertNoSecrets(t, err, good, tc.creds.BearerToken, tc.creds.ConsumerSecret, tc.creds.Secret)
			if n := fake.Counts()[keySelf]; n != 1 {
				t.Errorf("fake saw %d requests, want 1 (401 is not retried)", n)
			}
		})
	}
}

// ---- 3 and 4. OAuth1 rejections: signature, unknown token, stale timestamp ----

func TestFakeIntegrationOAuth1Rejected(t *testing.T) {
	fake, url, cred := startFake(t, fakeapi.Options{})
	good := clientCreds(cred)
	ctx := ctxFor(t, 10*time.Second)

	cases := []struct {
		name     string
		mutate   func(c *clevercloud.Credentials)
		now      func() time.Time
		endpoint func(string) string // nil = the fake's URL
		wantMsg  string              // "" = must succeed
	}{
		{name: "control: valid credentials"},
		{name: "control: clock 2m behind is within the skew", now: func() time.Time { return time.Now().Add(-2 * time.Minute) }},
		// RFC 5849 §3.4.1.2: the host of the base string URI is lowercase; the
		// client sends the Host header as configured.
		{name: "control: upper-case endpoint host", endpoint: func(u string) string { return strings.Replace(u, "127.0.0.1", "LocalHost", 1) }},
		{name: "control: upper-case endpoint scheme", endpoint: func(u string) string { return strings.Replace(u, "http://", "HTTP://", 1) }},
		{name: "wrong consumer secret", mutate: func(c *clevercloud.Credentials) { c.ConsumerSecret = "WRONG-consumer-secret" }, wantMsg: "bad signature"},
		{name: "wrong token secret", mutate: func(c *clevercloud.Credentials) { c.Secret = "WRONG-token-secret" }, wantMsg: "bad signature"},
		{name: "unknown token", mutate: func(c *clevercloud.Credentials) { c.Token = "unknown-token-xyz" }, wantMsg: "unknown consumer key or token"},
		{name: "unknown consumer key", mutate: func(c *clevercloud.Credentials) { c.ConsumerKey = "unknown-consumer-xyz" }, wantMsg: "unknown consumer key or token"},
		{name: "stale timestamp (clock 1h behind)", now: func() time.Time { return time.Now().Add(-time.Hour) }, wantMsg: "stale timestamp"},
		{name: "stale timestamp (clock 1h ahead)", now: func() time.Time { return time.Now().Add(time.Hour) }, wantMsg: "stale timestamp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			creds := good
			if tc.mutate != nil {
				tc.mutate(&creds)
			}
			endpoint := url
			if tc.endpoint != nil {
				endpoint = tc.endpoint(url)
			}
			c := newITClient(t, endpoint, creds, func(cfg *clevercloud.Config) { cfg.Now = tc.now })
			fake.ResetCounts()
			_, err := c.Self(ctx)
			if tc.wantMsg == "" {
				if err != nil {
					t.Fatalf("Self: %v", err)
				}
				return
			}
			if !clevercloud.IsUnauthorized(err) || clevercloud.IsRetryable(err) {
				t.Fatalf("err = %v, want unauthorized and not retryable", err)
			}
			ae := asAPIError(t, err)
			if ae.StatusCode != http.StatusUnauthorized || !strings.Contains(ae.Message, tc.wantMsg) {
				t.Errorf("got %d %q, want 401 mentioning %q", ae.StatusCode, ae.Message, tc.wantMsg)
			}
			if n, n401 := fake.Counts()[keySelf], statusCount(fake, keySelf, 401); n != 1 || n401 != 1 {
				t.Errorf("fake saw %d requests (%d 401s), want exactly 1 (MaxRetries 3 but 401 is not retried)", n, n401)
			}
			assertNoSecrets(t, err, good.ConsumerSecret, good.Secret, creds.ConsumerSecret, creds.Secret)
		})
	}
}

// ---- 5. bad requests ----

func TestFakeIntegrationBadRequests(t *testing.T) {
	fake, url, cred := startFake(t, fakeapi.Options{})
	c := newITClient(t, url, clientCreds(cred), nil)
	ctx := ctxFor(t, 10*time.Second)

	pgOpts := func(mut func(*clevercloud.CreateOpts)) clevercloud.CreateOpts {
		o := clevercloud.CreateOpts{Name: "bad", Region: "par", ProviderID: "postgresql-addon", Plan: itPGDevPlanID}
		mut(&o)
		return o
	}
	cases := []struct {
		name      string
		owner     string
		opts      clevercloud.CreateOpts
		notFound  bool     // 404 instead of 400
		wantMsg   []string // substrings of APIError.Message
		wantField string   // key of APIError.Fields
	}{
		{name: "plan slug instead of plan id", owner: itOwner,
			opts:    pgOpts(func(o *clevercloud.CreateOpts) { o.Plan = "dev" }),
			wantMsg: []string{`plan "dev"`, "not a plan id", "postgresql-addon"}, wantField: "plan"},
		{name: "plan id of another provider", owner: itOwner,
			opts:    pgOpts(func(o *clevercloud.CreateOpts) { o.ProviderID = "mysql-addon" }),
			wantMsg: []string{"plan", "mysql-addon"}, wantField: "plan"},
		{name: "unknown provider", owner: itOwner,
			opts:    pgOpts(func(o *clevercloud.CreateOpts) { o.ProviderID = "nosuch-addon" }),
			wantMsg: []string{"unknown provider", "nosuch-addon"}, wantField: "providerId"},
		{name: "region unknown to the provider", owner: itOwner,
			opts:    pgOpts(func(o *clevercloud.CreateOpts) { o.Region = "moon" }),
			wantMsg: []string{"region", "moon"}, wantField: "region"},
		{name: "region not in the plan's zones", owner: itOwner,
			opts:    pgOpts(func(o *clevercloud.CreateOpts) { o.Region = "sgp" }),
			wantMsg: []string{"region", "sgp"}, wantField: "region"},
		{name: "missing fields", owner: itOwner,
			opts:    clevercloud.CreateOpts{Name: "x"},
			wantMsg: []string{"missing required field(s)", "plan", "providerId", "region"}, wantField: "providerId"},
		{name: "unknown owner", owner: "nobody",
			opts: pgOpts(func(*clevercloud.CreateOpts) {}), notFound: true, wantMsg: []string{"organisation not found"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake.ResetCounts()
			a, err := c.CreateAddon(ctx, tc.owner, tc.opts)
			if err == nil {
				t.Fatalf("CreateAddon succeeded: %+v", a)
			}
			if clevercloud.IsRetryable(err) || clevercloud.IsUnauthorized(err) {
				t.Errorf("err %v classified retryable/unauthorized", err)
			}
			ae := asAPIError(t, err)
			if tc.notFound {
				if !clevercloud.IsNotFound(err) || clevercloud.IsBadRequest(err) || ae.StatusCode != 404 {
					t.Errorf("err = %v, want 404 IsNotFound", err)
				}
			} else if !clevercloud.IsBadRequest(err) || clevercloud.IsNotFound(err) || ae.StatusCode != 400 {
				t.Errorf("err = %v, want 400 IsBadRequest", err)
			}
			for _, s := range tc.wantMsg {
				if !strings.Contains(ae.Message, s) {
					t.Errorf("message %q does not mention %q", ae.Message, s)
				}
			}
			if tc.wantField != "" && ae.Fields[tc.wantField] == "" {
				t.Errorf("Fields = %v, want a reason for %q", ae.Fields, tc.wantField)
			}
			if n := fake.Counts()[keyCreate]; n != 1 {
				t.Errorf("fake saw %d POSTs, want 1", n)
			}
		})
	}
	t.Run("unknown owner on reads", func(t *testing.T) {
		if _, err := c.ListAddons(ctx, "nobody"); !clevercloud.IsNotFound(err) {
			t.Errorf("ListAddons(nobody) err = %v, want 404", err)
		}
		if _, err := c.GetAddon(ctx, "nobody", "addon_x"); !clevercloud.IsNotFound(err) {
			t.Errorf("GetAddon(nobody) err = %v, want 404", err)
		}
		if err := c.DeleteAddon(ctx, "nobody", "addon_x"); !clevercloud.IsNotFound(err) {
			t.Errorf("DeleteAddon(nobody) err = %v, want 404", err)
		}
	})
	t.Run("ids needing escaping are signed correctly (404, not 401)", func(t *testing.T) {
		for _, id := range []string{"a b", "x/y", "a+b", "é", "a%2Fb", "a;b=c", "a?b", "a#b", "~!*'()", "addon_../../self"} {
			if _, err := c.GetAddon(ctx, itOwner, id); !clevercloud.IsNotFound(err) {
				t.Errorf("GetAddon(%q) err = %v, want 404", id, err)
			}
			if err := c.DeleteAddon(ctx, itOwner, id); !clevercloud.IsNotFound(err) {
				t.Errorf("DeleteAddon(%q) err = %v, want 404", id, err)
			}
			if _, err := c.PutConfigProviderEnv(ctx, id, nil); !clevercloud.IsNotFound(err) {
				t.Errorf("PutConfigProviderEnv(%q) err = %v, want 404", id, err)
			}
		}
		if n := fake.CountsByStatus()[fakeapi.RouteUnmatched]; len(n) != 0 {
			t.Errorf("requests escaped their route: %v", n)
		}
	})
	t.Run("nothing was created", func(t *testing.T) {
		if all := fake.AllAddons(); len(all) != 0 {
			t.Errorf("fake holds add-ons after rejected creates: %v", all)
		}
	})
}

// ---- 6. fault modes ----

func TestFakeIntegrationFaults(t *testing.T) {
	pgCreate := clevercloud.CreateOpts{Name: "faulty", Region: "par", ProviderID: "postgresql-addon", Plan: itPGDevPlanID}

	cases := []struct {
		name string
		opts fakeapi.Options
		run  func(t *testing.T, fake *fakeapi.Server, url string, creds clevercloud.Credentials)
	}{
		{name: "error rate 1.0 on GET addon: retried MaxRetries times", run: func(t *testing.T, fake *fakeapi.Server, url string, creds clevercloud.Credentials) {
			const maxRetries = 3
			c := newITClient(t, url, creds, func(cfg *clevercloud.Config) { cfg.MaxRetries = maxRetries })
			ctx := ctxFor(t, 10*time.Second)
			a, err := c.CreateAddon(ctx, itOwner, pgCreate)
			if err != nil {
				t.Fatalf("CreateAddon: %v", err)
			}
			fake.SetFaults(fakeapi.Faults{ErrorRate: map[string]float64{keyGetAddon: 1}})
			fake.ResetCounts()
			_, err = c.GetAddon(ctx, itOwner, a.ID)
			if err == nil {
				t.Fatal("GetAddon succeeded under a 100% error rate")
			}
			if !clevercloud.IsRetryable(err) || clevercloud.IsNotFound(err) {
				t.Errorf("err = %v, want retryable", err)
			}
			ae := asAPIError(t, err)
			if ae.ID != -500 || ae.StatusCode != http.StatusServiceUnavailable || !strings.Contains(ae.Message, "injected fault") {
				t.Errorf("APIError = %+v, want 503 id -500", ae)
			}
			if n, n503 := fake.Counts()[keyGetAddon], statusCount(fake, keyGetAddon, 503); n != maxRetries+1 || n503 != n {
				t.Errorf("fake saw %d GETs (%d 503s), want %d", n, n503, maxRetries+1)
			}
			// A route's own error rate leaves the other routes alone.
			if list, err := c.ListAddons(ctx, itOwner); err != nil || len(list) != 1 {
				t.Errorf("ListAddons = %d, %v; want 1 add-on, no error", len(list), err)
			}
		}},
		{name: "error rate 1.0 on POST create: exactly one request", run: func(t *testing.T, fake *fakeapi.Server, url string, creds clevercloud.Credentials) {
			c := newITClient(t, url, creds, func(cfg *clevercloud.Config) { cfg.MaxRetries = 4 })
			fake.SetFaults(fakeapi.Faults{ErrorRate: map[string]float64{keyCreate: 1}})
			_, err := c.CreateAddon(ctxFor(t, 10*time.Second), itOwner, pgCreate)
			if err == nil {
				t.Fatal("CreateAddon succeeded under a 100% error rate")
			}
			if ae := asAPIError(t, err); ae.ID != -500 || ae.StatusCode != 503 {
				t.Errorf("APIError = %+v, want 503 id -500", ae)
			}
			if !clevercloud.IsRetryable(err) {
				t.Errorf("err = %v: a 503 is retryable by the caller", err)
			}
			if n := fake.Counts()[keyCreate]; n != 1 {
				t.Errorf("fake saw %d POSTs, want exactly 1 (creates are never blindly retried)", n)
			}
			if got := fake.Addons(itOwner); len(got) != 0 {
				t.Errorf("fake created %d add-ons", len(got))
			}
		}},
		{name: "429 with Retry-After is waited for",
			opts: fakeapi.Options{Faults: fakeapi.Faults{RateLimitBurst: 1, RateLimitWindow: 2 * time.Second, RetryAfter: time.Second}},
			run: func(t *testing.T, fake *fakeapi.Server, url string, creds clevercloud.Credentials) {
				c := newITClient(t, url, creds, func(cfg *clevercloud.Config) { cfg.MaxRetries = 4 })
				ctx := ctxFor(t, 10*time.Second)
				if _, err := c.Self(ctx); err != nil {
					t.Fatalf("first Self: %v", err)
				}
				start := time.Now()
				if _, err := c.Self(ctx); err != nil {
					t.Fatalf("second Self: %v", err)
				}
				if elapsed := time.Since(start); elapsed < 900*time.Millisecond {
					t.Errorf("second Self took %v, want >= ~1s (Retry-After: 1)", elapsed)
				}
				if n429, n200 := statusCount(fake, keySelf, 429), statusCount(fake, keySelf, 200); n429 < 1 || n200 != 2 {
					t.Errorf("fake answered %d 429s and %d 200s, want >= 1 and 2", n429, n200)
				}
				// Without retries the 429 surfaces with its Retry-After.
				noRetry := newITClient(t, url, creds, func(cfg *clevercloud.Config) { cfg.MaxRetries = -1 })
				_, err := noRetry.Self(ctx)
				if !clevercloud.IsRetryable(err) {
					t.Fatalf("err = %v, want a retryable 429", err)
				}
				if ae := asAPIError(t, err); ae.StatusCode != http.StatusTooManyRequests || ae.RetryAfter != time.Second {
					t.Errorf("APIError = %+v, want 429 with RetryAfter 1s", ae)
				}
			}},
		{name: "429 on create is retried and creates once",
			opts: fakeapi.Options{Faults: fakeapi.Faults{RateLimitBurst: 1, RateLimitWindow: time.Second, RetryAfter: time.Second}},
			run: func(t *testing.T, fake *fakeapi.Server, url string, creds clevercloud.Credentials) {
				c := newITClient(t, url, creds, func(cfg *clevercloud.Config) { cfg.MaxRetries = 4 })
				ctx := ctxFor(t, 10*time.Second)
				if _, err := c.Self(ctx); err != nil { // uses the only slot
					t.Fatalf("Self: %v", err)
				}
				if _, err := c.CreateAddon(ctx, itOwner, pgCreate); err != nil {
					t.Fatalf("CreateAddon: %v", err)
				}
				if n429, n200 := statusCount(fake, keyCreate, 429), statusCount(fake, keyCreate, 200); n429 < 1 || n200 != 1 {
					t.Errorf("POST answers: %d 429s, %d 200s; want >= 1 and exactly 1", n429, n200)
				}
				if got := fake.Addons(itOwner); len(got) != 1 {
					t.Errorf("fake holds %d add-ons, want 1", len(got))
				}
			}},
		{name: "latency and per-attempt timeout",
			opts: fakeapi.Options{Faults: fakeapi.Faults{Latency: 300 * time.Millisecond}},
			run: func(t *testing.T, fake *fakeapi.Server, url string, creds clevercloud.Credentials) {
				ctx := ctxFor(t, 10*time.Second)
				slow := newITClient(t, url, creds, nil)
				start := time.Now()
				if _, err := slow.Self(ctx); err != nil {
					t.Fatalf("Self: %v", err)
				}
				if elapsed := time.Since(start); elapsed < 300*time.Millisecond {
					t.Errorf("Self took %v, want >= 300ms", elapsed)
				}

				impatient := newITClient(t, url, creds, func(cfg *clevercloud.Config) {
					cfg.Timeout = 100 * time.Millisecond
					cfg.MaxRetries = -1 // no retry (0 would mean the default)
				})
				fake.ResetCounts()
				start = time.Now()
				_, err := impatient.Self(ctx)
				elapsed := time.Since(start)
				if err == nil {
					t.Fatal("Self succeeded despite a 100ms timeout and 300ms latency")
				}
				if !clevercloud.IsRetryable(err) || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("err = %v, want a retryable timeout", err)
				}
				var re *clevercloud.RequestError
				if !errors.As(err, &re) || re.Route != clevercloud.RouteSelf || re.Method != http.MethodGet {
					t.Errorf("err = %#v, want a *RequestError for GET %s", err, clevercloud.RouteSelf)
				}
				if strings.Contains(err.Error(), url) {
					t.Errorf("error %q contains the URL", err)
				}
				if elapsed < 100*time.Millisecond || elapsed >= 300*time.Millisecond {
					t.Errorf("timed-out Self took %v, want in [100ms, 300ms)", elapsed)
				}
				if n := fake.Counts()[keySelf]; n != 1 {
					t.Errorf("fake saw %d requests, want 1", n)
				}

				// Timeouts are retried for GETs...
				retrying := newITClient(t, url, creds, func(cfg *clevercloud.Config) {
					cfg.Timeout = 100 * time.Millisecond
					cfg.MaxRetries = 2
				})
				fake.ResetCounts()
				if _, err := retrying.GetAddon(ctx, itOwner, "addon_x"); !clevercloud.IsRetryable(err) {
					t.Errorf("GetAddon err = %v, want retryable timeout", err)
				}
				if n := fake.Counts()[keyGetAddon]; n != 3 {
					t.Errorf("fake saw %d GETs, want 3 (1 + 2 retries)", n)
				}
				// ...never for creates.
				if _, err := retrying.CreateAddon(ctx, itOwner, pgCreate); !clevercloud.IsRetryable(err) {
					t.Errorf("CreateAddon err = %v, want retryable timeout", err)
				}
				if n := fake.Counts()[keyCreate]; n != 1 {
					t.Errorf("fake saw %d POSTs, want 1 (a timed-out create is not retried)", n)
				}
			}},
		{name: "outage then recovery", run: func(t *testing.T, fake *fakeapi.Server, url string, creds clevercloud.Credentials) {
			c := newITClient(t, url, creds, func(cfg *clevercloud.Config) {
				cfg.MaxRetries = 30
				cfg.MinBackoff = 50 * time.Millisecond
				cfg.MaxBackoff = time.Second
				// Retries alone ride the outage out here; the circuit breaker, which would
				// stop them, is tested in circuit_test.go.
				cfg.CircuitThreshold = -1
			})
			start := time.Now()
			until := start.Add(1500 * time.Millisecond)
			fake.SetFaults(fakeapi.Faults{OutageUntil: until})
			if _, err := c.Self(ctxFor(t, 10*time.Second)); err != nil {
				t.Fatalf("Self did not recover after the outage: %v", err)
			}
			if !time.Now().After(until) {
				t.Errorf("Self succeeded at %v, before the outage ended (%v)", time.Now(), until)
			}
			if n503, n200 := statusCount(fake, keySelf, 503), statusCount(fake, keySelf, 200); n503 < 3 || n200 != 1 {
				t.Errorf("fake answered %d 503s and %d 200s, want several (>= 3) and 1", n503, n200)
			}
		}},
		{name: "error rate 0.5 with a fixed seed: retries make 20 GETs succeed",
			opts: fakeapi.Options{Seed: 20240229, Faults: fakeapi.Faults{ErrorRate: map[string]float64{"*": 0.5}}},
			run: func(t *testing.T, fake *fakeapi.Server, url string, creds clevercloud.Credentials) {
				c := newITClient(t, url, creds, func(cfg *clevercloud.Config) { cfg.MaxRetries = 10 })
				ctx := ctxFor(t, 10*time.Second)
				for i := range 20 {
					if _, err := c.Self(ctx); err != nil {
						t.Fatalf("GET #%d: %v", i, err)
					}
				}
				n, n503, n200 := fake.Counts()[keySelf], statusCount(fake, keySelf, 503), statusCount(fake, keySelf, 200)
				if n200 != 20 || n503 < 1 || n != n200+n503 {
					t.Errorf("fake saw %d requests: %d 200s, %d 503s; want 20 200s, some 503s", n, n200, n503)
				}
				t.Logf("%d injected 503s absorbed by retries", n503)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake, url, cred := startFake(t, tc.opts)
			tc.run(t, fake, url, clientCreds(cred))
		})
	}
}

// ---- 7. client-side rate limiter ----

func TestFakeIntegrationClientRateLimit(t *testing.T) {
	fake, url, cred := startFake(t, fakeapi.Options{})
	reg := prometheus.NewRegistry()
	c := newITClient(t, url, clientCreds(cred), func(cfg *clevercloud.Config) {
		cfg.RateLimit = 20
		cfg.RateBurst = 1
		cfg.Metrics = clevercloud.NewMetrics(reg)
	})
	ctx := ctxFor(t, 10*time.Second)
	const calls = 21
	start := time.Now()
	for i := range calls {
		if _, err := c.Self(ctx); err != nil {
			t.Fatalf("Self #%d: %v", i, err)
		}
	}
	if elapsed := time.Since(start); elapsed < 900*time.Millisecond {
		t.Errorf("%d calls at 20/s burst 1 took %v, want >= ~1s", calls, elapsed)
	}
	if n := fake.Counts()[keySelf]; n != calls {
		t.Errorf("fake saw %d requests, want %d", n, calls)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	var found bool
	for _, mf := range mfs {
		if mf.GetName() != "clevercloud_api_rate_limiter_wait_seconds" {
			continue
		}
		found = true
		h := mf.GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != calls || h.GetSampleSum() < 0.8 {
			t.Errorf("limiter wait histogram: %d samples, %.3fs total; want %d and >= ~1s", h.GetSampleCount(), h.GetSampleSum(), calls)
		}
	}
	if !found {
		t.Error("clevercloud_api_rate_limiter_wait_seconds not exported")
	}
}

// ---- 8. metrics ----

func TestFakeIntegrationMetrics(t *testing.T) {
	fake, url, cred := startFake(t, fakeapi.Options{})
	reg := prometheus.NewRegistry()
	c := newITClient(t, url, clientCreds(cred), func(cfg *clevercloud.Config) { cfg.Metrics = clevercloud.NewMetrics(reg) })
	// A second NewMetrics on the same registry must not panic and must share the series.
	c2 := newITClient(t, url, clientCreds(cred), func(cfg *clevercloud.Config) {
		cfg.Metrics = clevercloud.NewMetrics(reg)
		cfg.MaxRetries = 2
	})
	ctx := ctxFor(t, 10*time.Second)

	pg, err := c.CreateAddon(ctx, itOwner, clevercloud.CreateOpts{Name: "m", Region: "par", ProviderID: "postgresql-addon", Plan: itPGDevPlanID})
	if err != nil {
		t.Fatalf("CreateAddon: %v", err)
	}
	cp, err := c.CreateAddon(ctx, itOwner, clevercloud.CreateOpts{Name: "cp", Region: "par", ProviderID: "config-provider", Plan: fake.PlanID("config-provider", "std")})
	if err != nil {
		t.Fatalf("CreateAddon(config-provider): %v", err)
	}
	mustOK := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err = c.Self(ctx)
	mustOK("Self", err)
	_, err = c.ListProviders(ctx)
	mustOK("ListProviders", err)
	_, err = c.GetAddon(ctx, itOwner, pg.ID)
	mustOK("GetAddon(id)", err)
	_, err = c2.GetAddon(ctx, itOwner, pg.RealID)
	mustOK("GetAddon(realId)", err)
	_, err = c.ListAddons(ctx, itOwner)
	mustOK("ListAddons", err)
	_, err = c.GetAddonEnv(ctx, itOwner, pg.ID)
	mustOK("GetAddonEnv", err)
	_, err = c.PutConfigProviderEnv(ctx, cp.RealID, []clevercloud.Variable{{Name: "K", Value: "v"}})
	mustOK("PutConfigProviderEnv", err)
	_, err = c.GetConfigProviderEnv(ctx, cp.RealID)
	mustOK("GetConfigProviderEnv", err)
	mustOK("DeleteAddon", c.DeleteAddon(ctx, itOwner, pg.ID))
	if _, err := c.GetAddon(ctx, itOwner, pg.ID); !clevercloud.IsNotFound(err) {
		t.Fatalf("GetAddon after delete: %v", err)
	}
	fake.SetFaults(fakeapi.Faults{ErrorRate: map[string]float64{keyGetAddon: 1}})
	if _, err := c2.GetAddon(ctx, itOwner, cp.ID); !clevercloud.IsRetryable(err) {
		t.Fatalf("faulted GetAddon: %v", err)
	}
	fake.SetFaults(fakeapi.Faults{})

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	templates := []string{clevercloud.RouteSelf, clevercloud.RouteProviders, clevercloud.RouteAddons,
		clevercloud.RouteAddon, clevercloud.RouteAddonEnv, clevercloud.RouteConfigProviderEnv}
	forbidden := []string{"addon_", pg.ID, pg.RealID, cp.ID, cp.RealID, itOwner, "postgresql_", "config_", url}
	requests := map[string]float64{} // "METHOD route code" -> count
	retries := map[string]float64{}  // "METHOD route" -> count
	seen := map[string]bool{}
	for _, mf := range mfs {
		seen[mf.GetName()] = true
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
				for _, bad := range forbidden {
					if strings.Contains(lp.GetValue(), bad) {
						t.Errorf("%s: label %s=%q contains %q", mf.GetName(), lp.GetName(), lp.GetValue(), bad)
					}
				}
			}
			if r, ok := labels["route"]; ok && !slices.Contains(templates, r) {
				t.Errorf("%s: route label %q is not a route template", mf.GetName(), r)
			}
			switch mf.GetName() {
			case "clevercloud_api_requests_total":
				requests[labels["method"]+" "+labels["route"]+" "+labels["code"]] = m.GetCounter().GetValue()
			case "clevercloud_api_retries_total":
				retries[labels["method"]+" "+labels["route"]] = m.GetCounter().GetValue()
			}
		}
	}
	for _, name := range []string{"clevercloud_api_requests_total", "clevercloud_api_request_duration_seconds",
		"clevercloud_api_retries_total", "clevercloud_api_rate_limiter_wait_seconds"} {
		if !seen[name] {
			t.Errorf("metric %s not exported", name)
		}
	}
	want := map[string]float64{
		"GET " + clevercloud.RouteSelf + " 200":              1,
		"GET " + clevercloud.RouteProviders + " 200":         1,
		"POST " + clevercloud.RouteAddons + " 200":           2,
		"GET " + clevercloud.RouteAddons + " 200":            1,
		"GET " + clevercloud.RouteAddon + " 200":             2, // by id (c) and by realId (c2): shared series
		"GET " + clevercloud.RouteAddon + " 404":             1,
		"GET " + clevercloud.RouteAddon + " 503":             3, // 1 + 2 retries
		"DELETE " + clevercloud.RouteAddon + " 200":          1,
		"GET " + clevercloud.RouteAddonEnv + " 200":          1,
		"PUT " + clevercloud.RouteConfigProviderEnv + " 200": 1,
		"GET " + clevercloud.RouteConfigProviderEnv + " 200": 1,
	}
	for k, v := range want {
		if requests[k] != v {
			t.Errorf("clevercloud_api_requests_total{%s} = %v, want %v", k, requests[k], v)
		}
	}
	if len(requests) != len(want) {
		t.Errorf("requests_total has %d series, want %d: %v", len(requests), len(want), requests)
	}
	if got := retries["GET "+clevercloud.RouteAddon]; got != 2 || len(retries) != 1 {
		t.Errorf("retries_total = %v, want only GET %s = 2", retries, clevercloud.RouteAddon)
	}
}

// fromFakeVars converts the fake's variables to the client's.
func fromFakeVars(in []fakeapi.Variable) []clevercloud.Variable {
	if in == nil {
		return nil
	}
	out := make([]clevercloud.Variable, len(in))
	for i, v := range in {
		out[i] = clevercloud.Variable{Name: v.Name, Value: v.Value}
	}
	return out
}

// ---- the real API of today (issue #13), client against fake ----

// Both copies of clever-tools' consumer pair (the client's and the fake's,
// each copied from clever-tools src/config/config.js) agree, and a token +
// secret without a consumer is accepted end to end.
func TestFakeIntegrationTokenAndSecretOnly(t *testing.T) {
	if clevercloud.CleverToolsConsumerKey != fakeapi.CleverToolsConsumerKey || clevercloud.CleverToolsConsumerSecret != fakeapi.CleverToolsConsumerSecret {
		t.Fatal("the client's and the fake's copies of clever-tools' consumer pair differ")
	}
	user := fakeapi.Credential{Token: "it-user-token", Secret: "it user secret/&="}
	fake, url, _ := startFake(t, fakeapi.Options{Credentials: []fakeapi.Credential{user}})
	ctx := ctxFor(t, 10*time.Second)
	c := newITClient(t, url, clevercloud.Credentials{Token: user.Token, Secret: user.Secret}, nil)
	self, err := c.Self(ctx)
	if err != nil || self.ID != fake.Self().ID {
		t.Fatalf("Self with token + secret only: %v, %v", self, err)
	}
	orgs, err := c.Organisations(ctx)
	if err != nil || len(orgs) == 0 || orgs[0].ID != self.ID {
		t.Fatalf("Organisations = %+v, %v; want the personal entry first", orgs, err)
	}
	// Another consumer with the same token is refused.
	other := newITClient(t, url, clevercloud.Credentials{ConsumerKey: "k", ConsumerSecret: "s", Token: user.Token, Secret: user.Secret}, nil)
	if _, err := other.Self(ctx); !clevercloud.IsUnauthorized(err) {
		t.Fatalf("own consumer against a token-only fake: %v, want 401", err)
	}
}

func TestFakeIntegrationOperatorsAtV4(t *testing.T) {
	fake, url, cred := startFake(t, fakeapi.Options{})
	ctx := ctxFor(t, 20*time.Second)
	c := newITClient(t, url, clientCreds(cred), nil)
	kinds := []struct{ provider, slug, segment string }{
		{"keycloak", "base", "addon-keycloak"}, {"metabase", "base", "addon-metabase"},
		{"addon-matomo", "beta", "addon-matomo"}, {"otoroshi", "base", "addon-otoroshi"},
	}
	for _, k := range kinds {
		t.Run(k.provider, func(t *testing.T) {
			a, err := c.CreateAddon(ctx, itOwner, clevercloud.CreateOpts{Name: "it-" + k.provider, Region: "par", ProviderID: k.provider, Plan: fake.PlanID(k.provider, k.slug)})
			if err != nil {
				t.Fatal(err)
			}
			env, err := c.GetAddonEnv(ctx, itOwner, a.ID)
			if err != nil || len(env) != 0 || len(a.ConfigKeys) != 0 {
				t.Fatalf("v2 env = %v (%v), configKeys %v; want both empty", env, err, a.ConfigKeys)
			}
			info, err := c.GetOperator(ctx, k.segment, a.RealID)
			if err != nil {
				t.Fatal(err)
			}
			served, _ := fake.OperatorAddon(a.RealID)
			if info.ResourceID != a.RealID || info.AddonID != a.ID || info.AccessURL == "" || info.AccessURL != served["accessUrl"] {
				t.Fatalf("info = %+v", info)
			}
			hasCreds := k.provider == "keycloak" || k.provider == "otoroshi"
			if (info.InitialCredentials != nil) != hasCreds || (hasCreds && info.InitialCredentials.Password == "") {
				t.Fatalf("initialCredentials = %+v", info.InitialCredentials)
			}
			if (info.API != nil) != (k.provider == "otoroshi") {
				t.Fatalf("api = %+v", info.API)
			}
			if _, err := c.GetOperator(ctx, k.segment, a.ID); !clevercloud.IsNotFound(err) {
				t.Fatalf("GetOperator by addon_ id: %v, want 404", err)
			}
			if err := c.RebootOperator(ctx, k.segment, a.RealID); err != nil {
				t.Fatal(err)
			}
			if err := c.RebuildOperator(ctx, k.segment, a.RealID); err != nil {
				t.Fatal(err)
			}
			if calls := fake.OperatorCalls(a.RealID); calls["reboot"] != 1 || calls["rebuild"] != 1 {
				t.Fatalf("OperatorCalls = %v", calls)
			}
			vc, err := c.CheckOperatorVersion(ctx, k.segment, a.RealID)
			if k.provider == "addon-matomo" {
				if !clevercloud.IsNotFound(err) {
					t.Fatalf("Matomo version check: %v, want 404 (no such endpoint)", err)
				}
				return
			}
			if err != nil || vc.Installed != info.Version || vc.Latest == "" {
				t.Fatalf("version check = %+v, %v", vc, err)
			}
			target := info.AvailableVersions[0]
			up, err := c.UpdateOperatorVersion(ctx, k.segment, a.RealID, target)
			if err != nil || up.Version != target {
				t.Fatalf("update to %s = %+v, %v", target, up, err)
			}
			if _, err := c.UpdateOperatorVersion(ctx, k.segment, a.RealID, "0.0.0-nope"); err == nil {
				t.Fatal("update to an unknown version succeeded")
			}
		})
	}
}

func TestFakeIntegrationDeleteWhileProvisioning(t *testing.T) {
	const delay = 600 * time.Millisecond
	fake, url, cred := startFake(t, fakeapi.Options{ProvisioningDelay: delay})
	ctx := ctxFor(t, 10*time.Second)
	c := newITClient(t, url, clientCreds(cred), func(cfg *clevercloud.Config) { cfg.MaxRetries = -1 })
	a, err := c.CreateAddon(ctx, itOwner, clevercloud.CreateOpts{Name: "it-provisioning", Region: "par", ProviderID: "redis-addon", Plan: fake.PlanID("redis-addon", "s_mono")})
	if err != nil {
		t.Fatal(err)
	}
	err = c.DeleteAddon(ctx, itOwner, a.ID)
	if ae := asAPIError(t, err); ae.StatusCode != http.StatusConflict || clevercloud.IsNotFound(err) {
		t.Fatalf("delete while provisioning: %v, want 409 (and not a 404)", err)
	}
	if len(fake.Addons(itOwner)) != 1 {
		t.Fatal("the refused delete removed the add-on")
	}
	time.Sleep(delay)
	if err := c.DeleteAddon(ctx, itOwner, a.ID); err != nil {
		t.Fatalf("delete once provisioned (200 + JSON): %v", err)
	}
	if len(fake.Addons(itOwner)) != 0 {
		t.Fatal("add-on still there")
	}
}

func TestFakeIntegrationSlowCreate(t *testing.T) {
	fake, url, cred := startFake(t, fakeapi.Options{CreateDelay: 1500 * time.Millisecond})
	ctx := ctxFor(t, 10*time.Second)
	c := newITClient(t, url, clientCreds(cred), func(cfg *clevercloud.Config) { cfg.Timeout = 300 * time.Millisecond })
	name := "it-slow-create"
	_, err := c.CreateAddon(ctx, itOwner, clevercloud.CreateOpts{Name: name, Region: "par", ProviderID: "redis-addon", Plan: fake.PlanID("redis-addon", "s_mono")})
	if err == nil {
		t.Fatal("create answered within the client timeout")
	}
	list, err := c.ListAddons(ctx, itOwner)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].AddonName() != name {
		t.Fatalf("after a timed-out create the list is %+v; want the add-on, found by name", list)
	}
	if n := fake.CountsFor(itOwner)["POST /v2/organisations/{ownerId}/addons"]; n != 1 {
		t.Fatalf("%d creates reached the fake, want 1 (a create is never retried blindly)", n)
	}
}

func TestFakeIntegrationPrivatePlansAndOptions(t *testing.T) {
	fake, url, cred := startFake(t, fakeapi.Options{})
	ctx := ctxFor(t, 10*time.Second)
	c := newITClient(t, url, clientCreds(cred), nil)
	planID := fake.AddPrivatePlan(itOwner, "es-addon", "xl_private")
	public, err := c.ListProviders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := c.ListProvidersForOwner(ctx, itOwner)
	if err != nil {
		t.Fatal(err)
	}
	has := func(ps []clevercloud.Provider) bool {
		for _, p := range ps {
			for _, pl := range p.Plans {
				if pl.ID == planID {
					return true
				}
			}
		}
		return false
	}
	if has(public) || !has(mine) {
		t.Fatalf("private plan listed publicly: %v, for the owner: %v", has(public), has(mine))
	}
	a, err := c.CreateAddon(ctx, itOwner, clevercloud.CreateOpts{Name: "it-es", Region: "par", ProviderID: "es-addon", Plan: planID,
		Options: clevercloud.Options{Version: "8", Kibana: "true", APM: "true"}})
	if err != nil {
		t.Fatal(err)
	}
	got := fake.CreateOptions(a.ID)
	if got["kibana"] != "true" || got["apm"] != "true" || got["version"] != "8" || got["services"] != nil {
		t.Fatalf("options that reached the API = %v; want flat kibana/apm keys", got)
	}
}

// The price systems (#18 §5): the client's routes, query and decoding against the fake, which
// writes slug_id in upper case and prices per hour.
func TestFakeIntegrationPriceSystems(t *testing.T) {
	fake, url, cred := startFake(t, fakeapi.Options{})
	ctx := ctxFor(t, 20*time.Second)
	c := newITClient(t, url, clientCreds(cred), nil)
	fake.SetOrgPriceFactor(itOwner, 0.5)

	var xs fakeapi.Plan
	for _, p := range fake.Providers() {
		if p.ID == "postgresql-addon" {
			for _, pl := range p.Plans {
				if pl.Slug == "xs_sml" {
					xs = pl
				}
			}
		}
	}
	if xs.PriceID == nil {
		t.Fatal("no xs_sml plan with a price_id in the fake's catalogue")
	}
	find := func(ps *clevercloud.PriceSystem) *clevercloud.RuntimePrice {
		for i := range ps.Runtime {
			if strings.EqualFold(ps.Runtime[i].SlugID, *xs.PriceID) {
				return &ps.Runtime[i]
			}
		}
		return nil
	}
	org, err := c.GetOrgPriceSystem(ctx, itOwner, "par")
	if err != nil {
		t.Fatal(err)
	}
	rp := find(org)
	if org.ZoneID != "par" || org.Currency != "EUR" || rp == nil || rp.TimeUnit != "PT1H" {
		t.Fatalf("organisation price system: %+v", org)
	}
	if got, want := rp.Price*720, float64(xs.Price)*0.5; got < want-0.001 || got > want+0.001 {
		t.Fatalf("organisation hourly price × 720 = %v; want %v", got, want)
	}
	list, err := c.GetListPriceSystem(ctx, "par", "EUR")
	if err != nil {
		t.Fatal(err)
	}
	if rp := find(list); rp == nil || rp.Price*720 < float64(xs.Price)-0.001 || rp.Price*720 > float64(xs.Price)+0.001 {
		t.Fatalf("list price: %+v", rp)
	}
	if usd, err := c.GetListPriceSystem(ctx, "par", "USD"); err != nil || usd.Currency != "USD" {
		t.Fatalf("USD: %+v, %v", usd, err)
	}

	// No price system of its own: 404, which the operator reads as "use the list price".
	fake.SetOrgPriceFactor(itOwner, 0)
	if _, err := c.GetOrgPriceSystem(ctx, itOwner, "par"); !clevercloud.IsNotFound(err) {
		t.Fatalf("organisation without a price system: %v; want a 404", err)
	}
	if _, err := c.GetListPriceSystem(ctx, "nowhere", "EUR"); !clevercloud.IsNotFound(err) {
		t.Fatalf("unknown zone: %v; want a 404", err)
	}
	counts := fake.Counts()
	if counts["GET "+clevercloud.RouteOrgPriceSystem] != 2 || counts["GET "+clevercloud.RouteListPriceSystem] != 3 {
		t.Fatalf("routes as the fake counted them: %v", counts)
	}
}

func TestFakeIntegrationNetworkGroups(t *testing.T) {
	fake, url, cred := startFake(t, fakeapi.Options{})
	ctx := ctxFor(t, 20*time.Second)
	c := newITClient(t, url, clientCreds(cred), nil)
	pg, err := c.CreateAddon(ctx, itOwner, clevercloud.CreateOpts{Name: "ng-member", Region: "par", ProviderID: "postgresql-addon", Plan: itPGDevPlanID})
	if err != nil {
		t.Fatal(err)
	}
	fake.SetNetworkGroupDelay(itOwner, 300*time.Millisecond)

	id := "ng_0b5c3e2a-6f1d-4a8e-9c37-5d2e1f0a9b84"
	if err := c.CreateNetworkGroup(ctx, clevercloud.NewNetworkGroup{ID: id, OwnerID: itOwner, Label: "team-a", Description: "d", Tags: []string{"k8s"}}); err != nil {
		t.Fatal(err)
	}
	// Asynchronous, as every client polls for it: 404 at first.
	if _, err := c.GetNetworkGroup(ctx, itOwner, id); !clevercloud.IsNotFound(err) {
		t.Fatalf("a group just asked for: %v; want a 404 until it exists", err)
	}
	var ng *clevercloud.NetworkGroup
	deadline := time.Now().Add(5 * time.Second)
	for ng == nil && time.Now().Before(deadline) {
		if ng, err = c.GetNetworkGroup(ctx, itOwner, id); err != nil && !clevercloud.IsNotFound(err) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ng == nil || ng.Label != "team-a" || ng.Description == nil || *ng.Description != "d" || len(ng.Tags) != 1 || ng.NetworkIP == "" || ng.OwnerID != itOwner {
		t.Fatalf("group: %+v", ng)
	}
	// The same id twice: a conflict, never a second group.
	if err := c.CreateNetworkGroup(ctx, clevercloud.NewNetworkGroup{ID: id, OwnerID: itOwner, Label: "again"}); err == nil || clevercloud.IsRetryable(err) {
		t.Fatalf("second create with the same id: %v", err)
	}
	for _, bad := range []clevercloud.NewNetworkGroup{{ID: "team-a", OwnerID: itOwner, Label: "x"}, {ID: "ng_3f0c9a0e-1b2c-4d3e-8f4a-5b6c7d8e9f00", OwnerID: itOwner}} {
		if err := c.CreateNetworkGroup(ctx, bad); !clevercloud.IsBadRequest(err) {
			t.Errorf("create %+v: %v; want a 400", bad, err)
		}
	}

	member := clevercloud.NetworkGroupMember{ID: pg.RealID, Label: "ns/pg", DomainName: clevercloud.MemberDomainName(id, pg.RealID), Kind: clevercloud.MemberKindAddon}
	if err := c.AddNetworkGroupMember(ctx, itOwner, id, member); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []clevercloud.NetworkGroupMember{
		{ID: pg.ID, DomainName: "x", Kind: "ADDON"},                                  // the add-on id, not its real id
		{ID: pg.RealID, DomainName: "x", Kind: "APPLICATION"},                        // the wrong kind
		{ID: "postgresql_" + strings.Repeat("0", 8), DomainName: "x", Kind: "ADDON"}, // no such add-on
	} {
		if err := c.AddNetworkGroupMember(ctx, itOwner, id, bad); err == nil || clevercloud.IsRetryable(err) {
			t.Errorf("member %+v accepted (%v)", bad, err)
		}
	}
	time.Sleep(400 * time.Millisecond)
	if ng, err = c.GetNetworkGroup(ctx, itOwner, id); err != nil {
		t.Fatal(err)
	}
	if len(ng.Members) != 1 || ng.Members[0].ID != pg.RealID || ng.Members[0].Kind != "ADDON" ||
		ng.Members[0].DomainName != pg.RealID+".m."+id+".cc-ng.cloud" {
		t.Fatalf("members (kind upper-cased by the client): %+v", ng.Members)
	}
	if err := c.RemoveNetworkGroupMember(ctx, itOwner, id, pg.RealID); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveNetworkGroupMember(ctx, itOwner, id, pg.RealID); !clevercloud.IsNotFound(err) {
		t.Fatalf("removing a member twice: %v; want a 404", err)
	}
	if err := c.DeleteNetworkGroup(ctx, itOwner, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetNetworkGroup(ctx, itOwner, id); !clevercloud.IsNotFound(err) {
		t.Fatalf("deleted group: %v", err)
	}
	if got := fake.NetworkGroups(itOwner); len(got) != 0 {
		t.Fatalf("groups left: %+v", got)
	}
}
