package clevercloud_test

// Contract tests between three parties that must agree on the wire:
//
//   - the golden answers in testdata/golden/<endpoint>.json, written from Clever
//     Cloud's own clients (each has a sibling <endpoint>.source naming the files it
//     follows; docs/api-sources.md has the full list);
//   - the operator's client (this package): (a) every golden answer is served over HTTP
//     and decoded by the client method the operator calls, key fields must come
//     through, and every JSON key the client's types know must exist in the golden
//     answer (a misnamed field fails here);
//   - the fake (pkg/fakeapi): (b) its live answer for the same endpoint must have
//     the same JSON keys, with the same JSON types, as the golden answer, so the
//     fake and the fixtures cannot drift apart.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

const goldenDir = "testdata/golden"

// golden returns a fixture and checks that it names its source.
func golden(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenDir, name+".json"))
	if err != nil {
		t.Fatalf("golden %s: %v", name, err)
	}
	if !json.Valid(data) {
		t.Fatalf("golden %s is not valid JSON", name)
	}
	src, err := os.ReadFile(filepath.Join(goldenDir, name+".source"))
	if err != nil || !strings.Contains(string(src), "CleverCloud/") && !strings.Contains(string(src), "openapi-client-clevercloud") {
		t.Fatalf("golden %s has no sibling .source naming a Clever Cloud client source (%v)", name, err)
	}
	return data
}

// ---- JSON structure ----

// jsonPaths returns every key path of a JSON document with the set of JSON
// types seen there. Array elements share the path "<array>[]"; the keys of the
// objects at a dynamic path (a map: versions, env names) become "*".
func jsonPaths(data []byte, dynamic []string) map[string]map[string]bool {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return map[string]map[string]bool{"<invalid JSON>": {"error": true}}
	}
	out := map[string]map[string]bool{}
	add := func(p, typ string) {
		if out[p] == nil {
			out[p] = map[string]bool{}
		}
		out[p][typ] = true
	}
	var walk func(p string, v any)
	walk = func(p string, v any) {
		switch x := v.(type) {
		case map[string]any:
			add(p, "object")
			for k, child := range x {
				if slices.Contains(dynamic, p) {
					k = "*"
				}
				walk(p+"."+k, child)
			}
		case []any:
			add(p, "array")
			for _, child := range x {
				walk(p+"[]", child)
			}
		case string:
			add(p, "string")
		case json.Number:
			add(p, "number")
		case bool:
			add(p, "bool")
		case nil:
			add(p, "null")
		}
	}
	walk("", v)
	return out
}

func nonNull(types map[string]bool) []string {
	var out []string
	for k := range types {
		if k != "null" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// structureProblems lists how got differs from want: it must have exactly the
// key paths of want, each with compatible JSON types (null is compatible with
// anything, as for a nullable field). Paths in optional may be missing from
// either side.
func structureProblems(want, got []byte, dynamic, optional []string) []string {
	w, g := jsonPaths(want, dynamic), jsonPaths(got, dynamic)
	var problems []string
	for p, wt := range w {
		gt, ok := g[p]
		switch {
		case !ok && !slices.Contains(optional, p):
			problems = append(problems, fmt.Sprintf("missing %q (golden has it as %v)", p, nonNull(wt)))
		case ok:
			a, b := nonNull(wt), nonNull(gt)
			if len(a) > 0 && len(b) > 0 && !slices.Equal(a, b) {
				problems = append(problems, fmt.Sprintf("%q is %v, golden has %v", p, b, a))
			}
		}
	}
	for p, gt := range g {
		if _, ok := w[p]; !ok && !slices.Contains(optional, p) {
			problems = append(problems, fmt.Sprintf("extra %q (%v) not in the golden answer", p, nonNull(gt)))
		}
	}
	sort.Strings(problems)
	return problems
}

func sameStructure(t *testing.T, what string, want, got []byte, dynamic, optional []string) {
	t.Helper()
	if problems := structureProblems(want, got, dynamic, optional); len(problems) > 0 {
		t.Errorf("%s differs from the golden answer:\n  %s\ngot: %s", what, strings.Join(problems, "\n  "), got)
	}
}

// unknownClientKeys returns the key paths the client's decoded value emits
// that the golden answer lacks: a field the client names wrongly shows up as a
// key the real answer does not have.
func unknownClientKeys(golden []byte, decoded any, dynamic []string) []string {
	data, err := json.Marshal(decoded)
	if err != nil {
		return []string{"<cannot marshal the client value: " + err.Error() + ">"}
	}
	g, c := jsonPaths(golden, dynamic), jsonPaths(data, dynamic)
	var bad []string
	for p := range c {
		if _, ok := g[p]; !ok {
			bad = append(bad, p)
		}
	}
	sort.Strings(bad)
	return bad
}

// ---- serving golden answers to the client ----

type goldenRoute struct {
	method, path, name string
	status             int
	wantQuery          string // a query parameter the client must send
}

func goldenClient(t *testing.T, routes []goldenRoute) *clevercloud.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, rt := range routes {
			if rt.method != r.Method || rt.path != r.URL.Path {
				continue
			}
			if rt.wantQuery != "" && r.URL.Query().Get(rt.wantQuery) == "" {
				t.Errorf("%s %s: the client did not send ?%s=", r.Method, r.URL.Path, rt.wantQuery)
			}
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rt.status)
			_, _ = w.Write(golden(t, rt.name))
			return
		}
		t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	c, err := clevercloud.New(clevercloud.Config{
		Endpoint: srv.URL, Credentials: clevercloud.Credentials{BearerToken: "golden"},
		MaxRetries: -1, RateLimit: -1, Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ---- the fake, live ----

const (
	liveOwner = "orga_4c7f1b2e-9a3d-4e5f-8b6a-1c2d3e4f5a6b"
	liveToken = "contract-bearer-token"
)

type liveFake struct {
	t      *testing.T
	fake   *fakeapi.Server
	url    string
	addons map[string]fakeapi.Addon // by provider id, created through the API
	create []byte                   // the POST answer of the PostgreSQL add-on
	migs   map[string][]byte        // start, list, get, abort answers
}

func (l *liveFake) raw(method, path string, body any) (int, []byte) {
	l.t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			l.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, l.url+path, rd)
	if err != nil {
		l.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+liveToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		l.t.Fatal(err)
	}
	return res.StatusCode, data
}

func (l *liveFake) ok(method, path string, body any) []byte {
	l.t.Helper()
	status, data := l.raw(method, path, body)
	if status/100 != 2 {
		l.t.Fatalf("%s %s: %d %s", method, path, status, data)
	}
	return data
}

// startLiveFake runs the fake's bridge host (bearer) with one add-on of each
// kind the fixtures cover, and a migration.
func startLiveFake(t *testing.T) *liveFake {
	t.Helper()
	fake, api, bridge := fakeapi.NewTestServers(fakeapi.Options{BearerTokens: []string{liveToken}, MigrationDuration: time.Hour})
	t.Cleanup(api.Close)
	t.Cleanup(bridge.Close)
	l := &liveFake{t: t, fake: fake, url: bridge.URL, addons: map[string]fakeapi.Addon{}, migs: map[string][]byte{}}
	for _, p := range []struct{ provider, slug string }{
		{"postgresql-addon", "xs_sml"}, {"config-provider", "std"}, {"cellar-addon", "S"},
		{"keycloak", "base"}, {"metabase", "base"}, {"addon-matomo", "beta"}, {"otoroshi", "base"},
	} {
		data := l.ok("POST", "/v2/organisations/"+liveOwner+"/addons", map[string]any{
			"name": "kubernetes::Contract::" + p.provider, "region": "par", "providerId": p.provider,
			"plan": fake.PlanID(p.provider, p.slug), "options": map[string]string{},
		})
		var a fakeapi.Addon
		if err := json.Unmarshal(data, &a); err != nil {
			t.Fatal(err)
		}
		l.addons[p.provider] = a
		if p.provider == "postgresql-addon" {
			l.create = data
		}
	}
	pg := l.addons["postgresql-addon"]
	base := "/v2/organisations/" + liveOwner + "/addons/" + pg.ID + "/migrations"
	l.migs["start"] = l.ok("POST", base, map[string]any{"planId": fake.PlanID("postgresql-addon", "m_med"), "region": "par", "version": "15"})
	var m fakeapi.Migration
	if err := json.Unmarshal(l.migs["start"], &m); err != nil {
		t.Fatal(err)
	}
	l.migs["list"] = l.ok("GET", base, nil)
	l.migs["get"] = l.ok("GET", base+"/"+m.MigrationID, nil)
	l.migs["abort"] = l.ok("DELETE", base+"/"+m.MigrationID, nil)
	return l
}

func (l *liveFake) realID(provider string) string { return l.addons[provider].RealID }

// ---- the contract ----

type contractCase struct {
	name   string
	routes []goldenRoute
	// call decodes the golden answer through the client, checks key fields and
	// returns the decoded value (nil when the client returns none).
	call func(t *testing.T, ctx context.Context, c *clevercloud.Client) any
	// live returns the fake's answer for the same endpoint.
	live              func(l *liveFake) []byte
	dynamic, optional []string
	// sharedType lists keys the client's type emits although this endpoint
	// never has them, because the type is shared with another endpoint where
	// they exist (Addon.provider reuses the catalogue's Provider and its
	// "plans"; OperatorInfo serves the four operator kinds). They must decode
	// empty here.
	sharedType []string
}

func check(t *testing.T, cond bool, format string, args ...any) {
	t.Helper()
	if !cond {
		t.Errorf(format, args...)
	}
}

const (
	gOwner    = "orga_4c7f1b2e-9a3d-4e5f-8b6a-1c2d3e4f5a6b"
	gAddonID  = "addon_7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f"
	gRealID   = "postgresql_0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e"
	gMigID    = "migration_5b8a1c2d-3e4f-4a5b-9c6d-7e8f9a0b1c2d"
	gCellarID = "cellar_0a0a0a0a-0000-4000-8000-000000000000"
	gConfigID = "config_0b0b0b0b-0000-4000-8000-000000000000"
)

func checkAddon(t *testing.T, a *clevercloud.Addon) {
	t.Helper()
	check(t, a.ID == gAddonID && a.RealID == gRealID && a.Region == "par", "ids/region = %q %q %q", a.ID, a.RealID, a.Region)
	check(t, a.AddonName() == "kubernetes::PostgreSql::6f1c0c2e-1111-2222-3333-444455556666", "name = %q", a.AddonName())
	check(t, a.Provider.ID == "postgresql-addon" && a.Plan.ID == "plan_f14478be-b59a-4f64-870c-6887c561492d" && a.Plan.Slug == "xs_sml", "provider/plan = %+v / %+v", a.Provider.ID, a.Plan)
	check(t, a.CreationDate == 1700000000000 && len(a.ConfigKeys) == 7, "creationDate %d, configKeys %v", a.CreationDate, a.ConfigKeys)
}

func contractCases() []contractCase {
	addonPath := "/v2/organisations/" + gOwner + "/addons/" + gAddonID
	opCase := func(name, segment, provider string, checkInfo func(t *testing.T, i *clevercloud.OperatorInfo)) contractCase {
		var shared []string
		if segment == "metabase" || segment == "matomo" { // no features in the SDK models
			shared = []string{".features"}
		}
		return contractCase{
			sharedType: shared,
			name:       name,
			routes:     []goldenRoute{{method: "GET", path: "/v4/addon-providers/addon-" + segment + "/addons/" + segment + "_x", name: name, status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				info, err := c.GetOperator(ctx, "addon-"+segment, segment+"_x")
				if err != nil {
					t.Fatal(err)
				}
				check(t, strings.HasPrefix(info.ResourceID, segment+"_") && strings.HasPrefix(info.AddonID, "addon_") && info.OwnerID == gOwner, "ids %+v", info)
				check(t, strings.HasPrefix(info.AccessURL, "https://") && info.Version != "" && slices.Contains(info.AvailableVersions, info.Version), "accessUrl/version %+v", info)
				check(t, info.Resources.Entrypoint != "", "resources.entrypoint empty")
				checkInfo(t, info)
				return info
			},
			live: func(l *liveFake) []byte {
				if segment == "keycloak" { // the golden answer shows a network group
					l.ok("POST", "/v4/addon-providers/addon-keycloak/addons/"+l.realID(provider)+"/networkgroup", nil)
				}
				return l.ok("GET", "/v4/addon-providers/addon-"+segment+"/addons/"+l.realID(provider), nil)
			},
			dynamic: []string{".envVars"},
		}
	}
	return []contractCase{
		{
			name:   "self",
			routes: []goldenRoute{{method: "GET", path: "/v2/self", name: "self", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				s, err := c.Self(ctx)
				if err != nil {
					t.Fatal(err)
				}
				check(t, s.ID == "user_1b8e5a3c-4f2d-4e6a-9c1b-7d0e2f3a4b5c" && s.Email == "ada@example.com" && s.Name == "Ada Lovelace", "self %+v", s)
				check(t, s.CreationDate == 1700000000000 && s.EmailValidated && s.PreferredMFA == "NONE" && s.HasPassword && s.CanPay, "self %+v", s)
				return s
			},
			live: func(l *liveFake) []byte { return l.ok("GET", "/v2/self", nil) },
		},
		{
			name:   "organisations",
			routes: []goldenRoute{{method: "GET", path: "/v2/organisations", name: "organisations", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				orgs, err := c.Organisations(ctx)
				if err != nil {
					t.Fatal(err)
				}
				check(t, len(orgs) == 2 && strings.HasPrefix(orgs[0].ID, "user_") && orgs[1].ID == gOwner && orgs[1].Name == "Analytical Engines", "organisations %+v", orgs)
				return orgs
			},
			live: func(l *liveFake) []byte { return l.ok("GET", "/v2/organisations", nil) },
		},
		{
			name:   "addonproviders",
			routes: []goldenRoute{{method: "GET", path: "/v2/products/addonproviders", name: "addonproviders", status: 200, wantQuery: "orgaId"}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				ps, err := c.ListProvidersForOwner(ctx, gOwner)
				if err != nil {
					t.Fatal(err)
				}
				if len(ps) != 1 || len(ps[0].Plans) != 2 {
					t.Fatalf("providers %+v", ps)
				}
				p := ps[0]
				check(t, p.ID == "postgresql-addon" && p.Status == "RELEASE" && p.CanUpgrade && slices.Equal(p.Regions, []string{"par", "rbx", "mtl"}), "provider %+v", p)
				dev, xs := p.Plans[0], p.Plans[1]
				check(t, dev.ID == "plan_d2ada71a-aa8e-4ead-8cb9-28314664437e" && dev.Slug == "dev" && dev.Price == 0 && slices.Equal(dev.Zones, []string{"mtl", "par", "rbxhds"}), "dev plan %+v", dev)
				check(t, xs.Slug == "xs_sml" && xs.Price == 17.5 && xs.PriceID != nil && *xs.PriceID == "postgresql.xs_sml", "xs plan %+v", xs)
				f := xs.Features[1]
				check(t, f.Name == "Type" && f.Type == "STRING" && f.Value == "Dedicated" && f.NameCode != nil && *f.NameCode == "is-dedicated" &&
					f.ComputableValue != nil && *f.ComputableValue == "dedicated", "feature %+v", f)
				check(t, xs.Features[0].ComputableValue == nil && xs.Features[0].NameCode == nil, "null computable_value/name_code not decoded as null")
				return ps
			},
			live: func(l *liveFake) []byte { return l.ok("GET", "/v2/products/addonproviders?orgaId="+liveOwner, nil) },
		},
		{
			name:   "addon",
			routes: []goldenRoute{{method: "GET", path: addonPath, name: "addon", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				a, err := c.GetAddon(ctx, gOwner, gAddonID)
				if err != nil {
					t.Fatal(err)
				}
				checkAddon(t, a)
				return a
			},
			live: func(l *liveFake) []byte {
				return l.ok("GET", "/v2/organisations/"+liveOwner+"/addons/"+l.addons["postgresql-addon"].ID, nil)
			},
			sharedType: []string{".provider.plans"},
		},
		{
			// The rename answers the whole add-on, as GET does (clever-client.js
			// update-addon-command.ts, Terraform pkg/tmp/addon.go UpdateAddon decode it so).
			name:   "addon",
			routes: []goldenRoute{{method: "PUT", path: addonPath, name: "addon", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				a, err := c.RenameAddon(ctx, gOwner, gAddonID, "kubernetes::PostgreSql::new-uid")
				if err != nil {
					t.Fatal(err)
				}
				checkAddon(t, a)
				return a
			},
			live: func(l *liveFake) []byte {
				return l.ok("PUT", "/v2/organisations/"+liveOwner+"/addons/"+l.addons["postgresql-addon"].ID, map[string]string{"name": "renamed"})
			},
			sharedType: []string{".provider.plans"},
		},
		{
			name:   "addons",
			routes: []goldenRoute{{method: "GET", path: "/v2/organisations/" + gOwner + "/addons", name: "addons", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				as, err := c.ListAddons(ctx, gOwner)
				if err != nil {
					t.Fatal(err)
				}
				if len(as) != 1 {
					t.Fatalf("addons %+v", as)
				}
				checkAddon(t, &as[0])
				return as
			},
			live:       func(l *liveFake) []byte { return l.ok("GET", "/v2/organisations/"+liveOwner+"/addons", nil) },
			sharedType: []string{"[].provider.plans"},
		},
		{
			name:   "addon-create",
			routes: []goldenRoute{{method: "POST", path: "/v2/organisations/" + gOwner + "/addons", name: "addon-create", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				a, err := c.CreateAddon(ctx, gOwner, clevercloud.CreateOpts{Name: "n", Region: "par", ProviderID: "postgresql-addon", Plan: "plan_f14478be-b59a-4f64-870c-6887c561492d"})
				if err != nil {
					t.Fatal(err)
				}
				checkAddon(t, a)
				return a
			},
			live:       func(l *liveFake) []byte { return l.create },
			sharedType: []string{".provider.plans"},
		},
		{
			name:   "addon-delete",
			routes: []goldenRoute{{method: "DELETE", path: addonPath, name: "addon-delete", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				if err := c.DeleteAddon(ctx, gOwner, gAddonID); err != nil {
					t.Fatalf("DELETE answering 200 + JSON: %v", err)
				}
				return nil
			},
			live: func(l *liveFake) []byte {
				data := l.ok("POST", "/v2/organisations/"+liveOwner+"/addons", map[string]any{
					"name": "to-delete", "region": "par", "providerId": "redis-addon", "plan": l.fake.PlanID("redis-addon", "s_mono"),
				})
				var a fakeapi.Addon
				if err := json.Unmarshal(data, &a); err != nil {
					l.t.Fatal(err)
				}
				status, body := l.raw("DELETE", "/v2/organisations/"+liveOwner+"/addons/"+a.ID, nil)
				if status != http.StatusOK {
					l.t.Fatalf("fake DELETE answered %d, want 200", status)
				}
				return body
			},
		},
		{
			name:   "addon-env",
			routes: []goldenRoute{{method: "GET", path: addonPath + "/env", name: "addon-env", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				env, err := c.GetAddonEnv(ctx, gOwner, gAddonID)
				if err != nil {
					t.Fatal(err)
				}
				check(t, len(env) == 2 && env[0].Name == "POSTGRESQL_ADDON_HOST" && env[1].Value == "5432", "env %+v", env)
				return env
			},
			live: func(l *liveFake) []byte {
				return l.ok("GET", "/v2/organisations/"+liveOwner+"/addons/"+l.addons["postgresql-addon"].ID+"/env", nil)
			},
		},
		{
			name: "config-provider-env",
			routes: []goldenRoute{
				{method: "GET", path: "/v4/addon-providers/config-provider/addons/" + gConfigID + "/env", name: "config-provider-env", status: 200},
				{method: "PUT", path: "/v4/addon-providers/config-provider/addons/" + gConfigID + "/env", name: "config-provider-env", status: 200},
			},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				env, err := c.GetConfigProviderEnv(ctx, gConfigID)
				if err != nil {
					t.Fatal(err)
				}
				check(t, len(env) == 2 && env[0].Name == "A" && env[0].Value == "a value", "env %+v", env)
				put, err := c.PutConfigProviderEnv(ctx, gConfigID, env)
				if err != nil {
					t.Fatal(err)
				}
				check(t, len(put) == 2, "PUT answer %+v", put)
				return env
			},
			live: func(l *liveFake) []byte {
				path := "/v4/addon-providers/config-provider/addons/" + l.realID("config-provider") + "/env"
				l.ok("PUT", path, []map[string]string{{"name": "A", "value": "a value"}, {"name": "B", "value": "b-value"}})
				return l.ok("GET", path, nil)
			},
		},
		{
			name:   "cellar-renew",
			routes: []goldenRoute{{method: "POST", path: "/v4/cellar/organisations/" + gOwner + "/cellar/" + gCellarID + "/credentials/renew", name: "cellar-renew", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				if err := c.RenewCellarCredentials(ctx, gOwner, gCellarID); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			live: func(l *liveFake) []byte {
				return l.ok("POST", "/v4/cellar/organisations/"+liveOwner+"/cellar/"+l.realID("cellar-addon")+"/credentials/renew", nil)
			},
		},
		{
			name:   "backups",
			routes: []goldenRoute{{method: "GET", path: "/v2/backups/" + gOwner + "/" + gRealID, name: "backups", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				bs, err := c.ListBackups(ctx, gOwner, gRealID)
				if err != nil {
					t.Fatal(err)
				}
				check(t, len(bs) == 2 && bs[0].BackupID == "7a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d" && bs[0].EntityID == gRealID && bs[0].Status == "DONE", "backups (newest first) %+v", bs)
				created, err := bs[0].Created()
				check(t, err == nil && created.Equal(time.Date(2026, 1, 2, 3, 0, 9, 876543000, time.UTC)), "creation_date %v %v", created, err)
				return bs
			},
			live: func(l *liveFake) []byte {
				return l.ok("GET", "/v2/backups/"+liveOwner+"/"+l.realID("postgresql-addon"), nil)
			},
		},
		{
			name:   "migration-start",
			routes: []goldenRoute{{method: "POST", path: addonPath + "/migrations", name: "migration-start", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				v := "17"
				m, err := c.StartMigration(ctx, gOwner, gAddonID, clevercloud.MigrationRequest{PlanID: "plan_x", Region: "par", Version: &v})
				if err != nil {
					t.Fatal(err)
				}
				check(t, m.MigrationID == gMigID && m.Status == clevercloud.MigrationRunning && !m.Done() && len(m.Steps) == 2, "migration %+v", m)
				check(t, m.Steps[0].Value == "RETRIEVE_ADDON" && m.Steps[0].EndDate != "" && m.Steps[1].EndDate == "", "steps %+v", m.Steps)
				return m
			},
			live:     func(l *liveFake) []byte { return l.migs["start"] },
			optional: []string{".steps[].message"},
		},
		{
			name:   "migrations",
			routes: []goldenRoute{{method: "GET", path: addonPath + "/migrations", name: "migrations", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				ms, err := c.ListMigrations(ctx, gOwner, gAddonID)
				if err != nil {
					t.Fatal(err)
				}
				check(t, len(ms) == 1 && ms[0].MigrationID == gMigID && ms[0].RequestDate == "2026-01-02T10:00:00.000Z", "migrations %+v", ms)
				return ms
			},
			live:     func(l *liveFake) []byte { return l.migs["list"] },
			optional: []string{"[].steps[].message"},
		},
		{
			name:   "migration",
			routes: []goldenRoute{{method: "GET", path: addonPath + "/migrations/" + gMigID, name: "migration", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				m, err := c.GetMigration(ctx, gOwner, gAddonID, gMigID)
				if err != nil {
					t.Fatal(err)
				}
				check(t, m.Succeeded() && m.Done() && m.Steps[1].Value == "UPDATE_DNS" && m.Steps[1].EndDate == "2026-01-02T10:05:00.000Z", "migration %+v", m)
				return m
			},
			live:     func(l *liveFake) []byte { return l.migs["get"] },
			optional: []string{".steps[].message"},
		},
		{
			name:   "migration-abort",
			routes: []goldenRoute{{method: "DELETE", path: addonPath + "/migrations/" + gMigID, name: "migration-abort", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				if err := c.AbortMigration(ctx, gOwner, gAddonID, gMigID); err != nil {
					t.Fatalf("abort answering 200 + JSON: %v", err)
				}
				return nil
			},
			live: func(l *liveFake) []byte { return l.migs["abort"] },
		},
		{
			name:   "provider-info",
			routes: []goldenRoute{{method: "GET", path: "/v4/addon-providers/postgresql-addon", name: "provider-info", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				pi, err := c.GetProviderInfo(ctx, "postgresql-addon")
				if err != nil {
					t.Fatal(err)
				}
				check(t, pi.ProviderID == "postgresql-addon" && pi.DefaultDedicatedVersion == "17" && slices.Equal(pi.Versions(), []string{"17", "18"}), "provider info %+v", pi)
				check(t, len(pi.Clusters) == 1 && pi.Clusters[0].Version == "15" && pi.Clusters[0].Zone == "par", "clusters %+v", pi.Clusters)
				check(t, len(pi.Dedicated["17"].Features) == 2 && pi.Dedicated["17"].Features[0].Name == "encryption", "dedicated %+v", pi.Dedicated)
				return pi
			},
			live:    func(l *liveFake) []byte { return l.ok("GET", "/v4/addon-providers/postgresql-addon", nil) },
			dynamic: []string{".dedicated"},
		},
		opCase("operator-keycloak", "keycloak", "keycloak", func(t *testing.T, i *clevercloud.OperatorInfo) {
			check(t, i.InitialCredentials != nil && i.InitialCredentials.User == "cc-admin" && i.InitialCredentials.Password == "aV3ryL0ngInitialPassw0rd", "initialCredentials %+v", i.InitialCredentials)
			check(t, i.Plan == "BASE" && i.JavaVersion == "21" && i.Resources.PgsqlID != "" && i.Resources.FsbucketID != "", "keycloak %+v", i)
			check(t, i.Features.NetworkGroup != nil && strings.HasPrefix(i.Features.NetworkGroup.ID, "ng_"), "networkGroup %+v", i.Features)
			check(t, i.EnvVars["CC_KEYCLOAK_VERSION"] == "26.2.5", "envVars %+v", i.EnvVars)
		}),
		opCase("operator-metabase", "metabase", "metabase", func(t *testing.T, i *clevercloud.OperatorInfo) {
			check(t, i.InitialCredentials == nil && i.API == nil && i.Resources.PgsqlID != "", "metabase %+v", i)
		}),
		opCase("operator-matomo", "matomo", "addon-matomo", func(t *testing.T, i *clevercloud.OperatorInfo) {
			check(t, i.Plan == "BETA" && i.PHPVersion == "8.3" && i.JavaVersion == "" && i.Resources.MysqlID != "" && i.Resources.RedisID != "", "matomo %+v", i)
		}),
		opCase("operator-otoroshi", "otoroshi", "otoroshi", func(t *testing.T, i *clevercloud.OperatorInfo) {
			check(t, i.API != nil && i.API.URL == "https://api-4b5c6d7e8f9a4b0c.cleverapps.io" && i.API.User == "cc-api-client" && i.API.Secret != "" && i.API.OpenAPI != "" && i.API.SwaggerURL != "", "api %+v", i.API)
			check(t, i.InitialCredentials != nil && i.InitialCredentials.Password == "an0therL0ngInitialPassw0rd" && i.Resources.RedisID != "", "otoroshi %+v", i)
		}),
		{
			name:   "operator-version-check",
			routes: []goldenRoute{{method: "GET", path: "/v4/addon-providers/addon-keycloak/addons/keycloak_x/version/check", name: "operator-version-check", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				vc, err := c.CheckOperatorVersion(ctx, "addon-keycloak", "keycloak_x")
				if err != nil {
					t.Fatal(err)
				}
				check(t, vc.Installed == "26.1.4" && vc.Latest == "26.2.5" && vc.NeedUpdate && len(vc.Available) == 2, "version check %+v", vc)
				return vc
			},
			live: func(l *liveFake) []byte {
				return l.ok("GET", "/v4/addon-providers/addon-keycloak/addons/"+l.realID("keycloak")+"/version/check", nil)
			},
		},
		{
			name:   "operator-version-update",
			routes: []goldenRoute{{method: "POST", path: "/v4/addon-providers/addon-keycloak/addons/keycloak_x/version/update", name: "operator-version-update", status: 200}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				info, err := c.UpdateOperatorVersion(ctx, "addon-keycloak", "keycloak_x", "26.2.5")
				if err != nil {
					t.Fatal(err)
				}
				check(t, info.Version == "26.2.5" && info.AccessURL != "" && info.InitialCredentials != nil, "updated info %+v", info)
				return info
			},
			live: func(l *liveFake) []byte {
				// The golden answer shows a network group: enabled by the keycloak case or here.
				l.ok("POST", "/v4/addon-providers/addon-keycloak/addons/"+l.realID("keycloak")+"/networkgroup", nil)
				return l.ok("POST", "/v4/addon-providers/addon-keycloak/addons/"+l.realID("keycloak")+"/version/update", map[string]string{"targetVersion": "26.2.5"})
			},
			dynamic: []string{".envVars"},
		},
		{
			name:   "error",
			routes: []goldenRoute{{method: "GET", path: addonPath, name: "error", status: 404}},
			call: func(t *testing.T, ctx context.Context, c *clevercloud.Client) any {
				_, err := c.GetAddon(ctx, gOwner, gAddonID)
				ae := asAPIError(t, err)
				check(t, clevercloud.IsNotFound(err) && ae.ID == 4004 && ae.Message == "Not Found" && ae.Type == "error", "error %+v", ae)
				return nil
			},
			live: func(l *liveFake) []byte {
				status, body := l.raw("GET", "/v2/organisations/"+liveOwner+"/addons/addon_00000000-0000-4000-8000-000000000000", nil)
				if status != http.StatusNotFound {
					l.t.Fatalf("fake answered %d, want 404", status)
				}
				return body
			},
		},
	}
}

func TestContractGoldenAnswers(t *testing.T) {
	live := startLiveFake(t)
	seen := map[string]bool{}
	for _, tc := range contractCases() {
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			want := golden(t, tc.name)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// (a) the client decodes the golden answer, field names included.
			if decoded := tc.call(t, ctx, goldenClient(t, tc.routes)); decoded != nil {
				bad := slices.DeleteFunc(unknownClientKeys(want, decoded, tc.dynamic), func(p string) bool { return slices.Contains(tc.sharedType, p) })
				if len(bad) > 0 {
					t.Errorf("the client's types name keys the real answer does not have: %v", bad)
				}
			}
			// (b) the fake answers with the golden answer's structure.
			live.t = t
			sameStructure(t, "fake answer", want, tc.live(live), tc.dynamic, tc.optional)
		})
	}
	// Every fixture is used.
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".json"); !seen[name] {
			t.Errorf("golden %s is not checked by any case", name)
		}
	}
}

// TestContractDetectsMisnamedField proves the checks above can fail: a type
// with one misnamed field is caught by unknownClientKeys, and a fake answer
// with a renamed key, a missing key or a changed type by structureProblems.
func TestContractDetectsMisnamedField(t *testing.T) {
	want := golden(t, "addon-env")
	type badVariable struct {
		Name  string `json:"name"`
		Value string `json:"val"`
	}
	var bad []badVariable
	if err := json.Unmarshal(want, &bad); err != nil {
		t.Fatal(err)
	}
	if got := unknownClientKeys(want, bad, nil); !slices.Equal(got, []string{"[].val"}) {
		t.Errorf("unknownClientKeys = %v, want [[].val]", got)
	}
	var good []clevercloud.Variable
	if err := json.Unmarshal(want, &good); err != nil {
		t.Fatal(err)
	}
	if got := unknownClientKeys(want, good, nil); len(got) != 0 {
		t.Errorf("unknownClientKeys(client type) = %v", got)
	}
	if got := unknownClientKeys(want, []clevercloud.Variable{{Name: "A"}}, nil); len(got) != 0 {
		t.Errorf("unknownClientKeys(client type) = %v", got)
	}
	for _, tc := range []struct{ name, got string }{
		{"renamed key", `[{"name":"A","val":"b"}]`},
		{"missing key", `[{"name":"A"}]`},
		{"number instead of string", `[{"name":"A","value":5432}]`},
		{"object instead of array", `{"name":"A","value":"b"}`},
	} {
		if p := structureProblems(want, []byte(tc.got), nil, nil); len(p) == 0 {
			t.Errorf("%s: structureProblems found nothing", tc.name)
		}
	}
	if p := structureProblems(want, []byte(`[{"name":"A","value":"b"}]`), nil, nil); len(p) != 0 {
		t.Errorf("same structure reported as different: %v", p)
	}
}
