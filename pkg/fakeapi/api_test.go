package fakeapi

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

var (
	addonKeys = []string{"id", "name", "realId", "region", "provider", "plan", "creationDate", "configKeys"}
	// Addon.provider is the OpenAPI AddonProviderInfoView; catalogue items
	// (AddonProviderInfoFullView) add "plans" and "features".
	providerKeys = []string{"id", "name", "website", "supportEmail", "googlePlusName", "twitterName", "analyticsId", "shortDesc", "longDesc", "logoUrl", "status", "openInNewTab", "canUpgrade", "regions"}
	catalogKeys  = append(slices.Clone(providerKeys), "plans", "features")
	planKeys     = []string{"id", "name", "slug", "price", "price_id", "features", "zones"}
	featureKeys  = []string{"name", "type", "value", "computable_value", "name_code"}
)

func TestProvidersShape(t *testing.T) {
	_, c := newTest(t, Options{})
	r := c.do("GET", "/v2/products/addonproviders", nil)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %v", r.status, r.header)
	}
	var raw []map[string]any
	r.decode(t, &raw)
	var ids []string
	for _, p := range raw {
		wantKeys(t, "provider", p, catalogKeys...)
		for _, f := range p["features"].([]any) {
			wantKeys(t, "provider feature", f.(map[string]any), "name", "type", "name_code")
		}
		ids = append(ids, p["id"].(string))
		plans := p["plans"].([]any)
		if len(plans) == 0 {
			t.Fatalf("provider %v has no plans", p["id"])
		}
		for _, pl := range plans {
			plm := pl.(map[string]any)
			wantKeys(t, "plan", plm, planKeys...)
			if !strings.HasPrefix(plm["id"].(string), "plan_") || len(plm["zones"].([]any)) == 0 {
				t.Fatalf("bad plan %v", plm)
			}
			for _, f := range plm["features"].([]any) {
				wantKeys(t, "feature", f.(map[string]any), featureKeys...)
			}
		}
	}
	want := []string{"postgresql-addon", "redis-addon", "mysql-addon", "mongodb-addon", "addon-pulsar", "config-provider",
		"es-addon", "kv", "metabase", "keycloak", "addon-matomo", "otoroshi", "azimutt", "cellar-addon", "fs-bucket"}
	if !slices.Equal(ids, want) {
		t.Fatalf("providers = %v, want %v", ids, want)
	}
	var provs []Provider
	r.decode(t, &provs)
	regions := map[string][]string{}
	for _, p := range provs {
		regions[p.ID] = p.Regions
	}
	for id, want := range map[string]string{
		"postgresql-addon": "par,grahds,rbx,rbxhds,scw,mtl,sgp,syd,wsw",
		"addon-pulsar":     "par", "kv": "par", "config-provider": "par",
		"cellar-addon": "par,rbxhds",
		"fs-bucket":    "mtl,par,rbx,rbxhds,sgp,syd,wsw",
	} {
		if got := strings.Join(regions[id], ","); got != want {
			t.Errorf("%s regions = %s, want %s", id, got, want)
		}
	}
	// One provider.
	r = c.do("GET", "/v2/products/addonproviders/cellar-addon", nil)
	var one Provider
	r.decode(t, &one)
	if one.ID != "cellar-addon" || len(one.Plans) != 1 || one.Plans[0].Slug != "S" {
		t.Fatalf("cellar provider = %+v", one)
	}
	c.do("GET", "/v2/products/addonproviders/nope", nil).errBody(t, http.StatusNotFound)
}

func TestSelf(t *testing.T) {
	s, c := newTest(t, Options{})
	r := c.do("GET", "/v2/self", nil)
	var m map[string]any
	r.decode(t, &m)
	wantKeys(t, "self", m, "id", "name", "email", "phone", "address", "city", "zipcode", "country", "avatar",
		"creationDate", "lang", "emailValidated", "oauthApps", "admin", "canPay", "preferredMFA", "hasPassword")
	if id := m["id"].(string); !strings.HasPrefix(id, "user_") || id != s.Self().ID {
		t.Fatalf("self id %q vs %q", id, s.Self().ID)
	}
}

func TestCreateGetListDelete(t *testing.T) {
	s, c := newTest(t, Options{})
	body := createBody(s, "postgresql-addon", "s_sml", "par")
	body["options"] = map[string]any{"version": "16", "encryption": "false"}
	r := c.do("POST", "/v2/organisations/"+testOwner+"/addons", body)
	if r.status != http.StatusOK {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var m map[string]any
	r.decode(t, &m)
	wantKeys(t, "addon", m, addonKeys...)
	wantKeys(t, "addon.provider", m["provider"].(map[string]any), providerKeys...)
	wantKeys(t, "addon.plan", m["plan"].(map[string]any), planKeys...)
	var a Addon
	r.decode(t, &a)
	if !strings.HasPrefix(a.ID, "addon_") || !strings.HasPrefix(a.RealID, "postgresql_") || a.AddonName() != body["name"] ||
		a.Region != "par" || a.Plan.Slug != "s_sml" || a.Plan.ID != "plan_f1f39547-be55-4be0-96d0-5140da25c138" ||
		a.Provider.ID != "postgresql-addon" || a.CreationDate == 0 || len(a.ConfigKeys) != 7 {
		t.Fatalf("bad add-on %+v", a)
	}
	if d := time.Since(time.UnixMilli(int64(a.CreationDate))); d < 0 || d > time.Minute {
		t.Fatalf("creationDate %d is not epoch ms of now", a.CreationDate)
	}

	// Get by addon id and by realId; wrong owner is 404.
	for _, id := range []string{a.ID, a.RealID} {
		var got Addon
		c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+id, nil).decode(t, &got)
		if got.ID != a.ID || got.RealID != a.RealID {
			t.Fatalf("get %s = %+v", id, got)
		}
	}
	c.do("GET", "/v2/organisations/orga_other/addons/"+a.ID, nil).errBody(t, http.StatusNotFound)
	c.do("GET", "/v2/organisations/orga_other/addons/"+a.ID+"/env", nil).errBody(t, http.StatusNotFound)
	if e := c.do("GET", "/v2/organisations/bogus/addons/"+a.ID, nil).errBody(t, http.StatusNotFound); e.Message != "organisation not found" {
		t.Fatalf("bad owner: %+v", e)
	}
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/addon_nope", nil).errBody(t, http.StatusNotFound)

	// Rename (the only in-place v2 update): by addon id or realId, answers the whole add-on;
	// a body without a name, another owner or an unknown id are refused.
	for i, id := range []string{a.ID, a.RealID} {
		name := fmt.Sprintf("renamed-%d", i)
		var got map[string]any
		c.do("PUT", "/v2/organisations/"+testOwner+"/addons/"+id, map[string]any{"name": name}).decode(t, &got)
		wantKeys(t, "renamed addon", got, addonKeys...)
		var back Addon
		c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil).decode(t, &back)
		if back.AddonName() != name {
			t.Fatalf("after renaming through %s the name is %q", id, back.AddonName())
		}
	}
	c.do("PUT", "/v2/organisations/"+testOwner+"/addons/"+a.ID, map[string]any{"plan": "x"}).errBody(t, http.StatusBadRequest)
	c.do("PUT", "/v2/organisations/orga_other/addons/"+a.ID, map[string]any{"name": "x"}).errBody(t, http.StatusNotFound)
	c.do("PUT", "/v2/organisations/"+testOwner+"/addons/addon_nope", map[string]any{"name": "x"}).errBody(t, http.StatusNotFound)

	// List: creation order, only that owner's.
	b := c.create(t, testOwner, createBody(s, "redis-addon", "s_mono", "rbx"))
	c.create(t, "user_someone", createBody(s, "kv", "alpha", "par"))
	var list []Addon
	c.do("GET", "/v2/organisations/"+testOwner+"/addons", nil).decode(t, &list)
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("list = %+v", list)
	}
	var empty []map[string]any
	r = c.do("GET", "/v2/organisations/orga_empty/addons", nil)
	if string(r.body) != "[]" {
		t.Fatalf("empty list body = %s", r.body)
	}
	r.decode(t, &empty)
	c.do("GET", "/v2/organisations/nope/addons", nil).errBody(t, http.StatusNotFound)

	// Delete: by realId is refused (like the real API), by addon id works, then 404.
	c.do("DELETE", "/v2/organisations/"+testOwner+"/addons/"+a.RealID, nil).errBody(t, http.StatusNotFound)
	c.do("DELETE", "/v2/organisations/orga_other/addons/"+a.ID, nil).errBody(t, http.StatusNotFound)
	c.do("DELETE", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil).wantMessage(t)
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil).errBody(t, http.StatusNotFound)
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.RealID, nil).errBody(t, http.StatusNotFound)
	c.do("DELETE", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil).errBody(t, http.StatusNotFound)
	if got := s.Addons(testOwner); len(got) != 1 || got[0].ID != b.ID {
		t.Fatalf("state after delete: %+v", got)
	}
}

func TestCreateValidation(t *testing.T) {
	s, c := newTest(t, Options{})
	path := "/v2/organisations/" + testOwner + "/addons"
	pg := func(mod func(m map[string]any)) map[string]any {
		m := createBody(s, "postgresql-addon", "xs_sml", "par")
		mod(m)
		return m
	}
	cases := []struct {
		name string
		path string
		body any
		code int
		msg  string
	}{
		{"unknown provider", path, pg(func(m map[string]any) { m["providerId"] = "nosql-addon" }), 400, `unknown provider "nosql-addon"`},
		{"slug instead of id", path, pg(func(m map[string]any) { m["plan"] = "s_sml" }), 400, `plan "s_sml" is not a plan id of provider postgresql-addon`},
		{"plan of another provider", path, pg(func(m map[string]any) { m["plan"] = s.PlanID("mysql-addon", "xs_sml") }), 400, "is not a plan id of provider postgresql-addon"},
		{"bad region", path, pg(func(m map[string]any) { m["region"] = "mars" }), 400, `region "mars" is not available for provider postgresql-addon`},
		{"region outside plan zones", path, pg(func(m map[string]any) { m["plan"] = s.PlanID("postgresql-addon", "dev"); m["region"] = "rbx" }), 400, "not available in region"},
		{"pulsar outside par", path, createBody(s, "addon-pulsar", "beta", "rbx"), 400, "not available for provider addon-pulsar"},
		{"missing fields", path, map[string]any{"name": "x"}, 400, "missing required field(s): plan, providerId, region"},
		{"malformed JSON", path, `{"name": `, 400, "invalid JSON body"},
		{"JSON array", path, `[]`, 400, "invalid JSON body"},
		{"JSON null", path, `null`, 400, "invalid JSON body"},
		{"wrong type", path, `{"providerId": 3}`, 400, `"providerId" has the wrong type`},
		{"bad owner", "/v2/organisations/team_x/addons", createBody(s, "kv", "alpha", "par"), 404, "organisation not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cc := *c
			cc.t = t
			e := cc.do("POST", tc.path, tc.body).errBody(t, tc.code)
			if !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("message %q does not contain %q", e.Message, tc.msg)
			}
		})
	}
	if e := c.do("POST", path, map[string]any{}).errBody(t, 400); e.Fields["providerId"] == "" {
		t.Fatalf("want fields on validation errors: %+v", e)
	}
	if n := len(s.AllAddons()); n != 0 {
		t.Fatalf("failed creates stored %d owners", n)
	}

	// options null or missing are accepted (Terraform sends null for Cellar).
	for _, body := range []string{
		`{"name":"a","region":"par","providerId":"cellar-addon","plan":"plan_84c85ee3-5fdb-4aca-a727-298ddc14b766","options":null}`,
		`{"name":"b","region":"rbxhds","providerId":"cellar-addon","plan":"plan_84c85ee3-5fdb-4aca-a727-298ddc14b766"}`,
		`{"region":"par","providerId":"config-provider","plan":"plan_5d8e9596-dd73-4b73-84d9-e165372c5324","options":{},"linkedApp":"app_x"}`,
	} {
		if r := c.do("POST", path, body); r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", body, r.status, r.body)
		}
	}
	// A nameless add-on has "name": null.
	list := s.Addons(testOwner)
	if list[2].Name != nil {
		t.Fatalf("nameless add-on name = %q", *list[2].Name)
	}
}

func TestEnvPerKind(t *testing.T) {
	s, c := newTest(t, Options{})
	for _, p := range s.Providers() {
		t.Run(p.ID, func(t *testing.T) {
			cc := *c
			cc.t = t
			body := createBody(s, p.ID, p.Plans[len(p.Plans)-1].Slug, p.Regions[0])
			a := cc.create(t, testOwner, body)
			if !strings.HasPrefix(a.RealID, kindPrefix(p.ID)+"_") {
				t.Fatalf("realId %s", a.RealID)
			}
			r := cc.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID+"/env", nil)
			var raw []map[string]any
			r.decode(t, &raw)
			for _, v := range raw {
				wantKeys(t, "variable", v, "name", "value")
			}
			var env []Variable
			r.decode(t, &env)
			if names := wire.VarNames(env); !slices.Equal(names, a.ConfigKeys) || !slices.IsSorted(names) {
				t.Fatalf("env names %v != configKeys %v", names, a.ConfigKeys)
			}
			for _, v := range env {
				if v.Value == "" {
					t.Fatalf("%s is empty", v.Name)
				}
			}
			switch p.ID {
			case "azimutt", "config-provider":
				if len(env) != 0 || len(a.ConfigKeys) != 0 {
					t.Fatalf("%s env = %v", p.ID, env)
				}
			case "postgresql-addon":
				m := envMap(env)
				u, err := url.Parse(m["POSTGRESQL_ADDON_URI"])
				if err != nil || u.Scheme != "postgresql" || u.Hostname() != m["POSTGRESQL_ADDON_HOST"] || u.Port() != m["POSTGRESQL_ADDON_PORT"] ||
					u.User.Username() != m["POSTGRESQL_ADDON_USER"] || u.Path != "/"+m["POSTGRESQL_ADDON_DB"] {
					t.Fatalf("URI %q inconsistent with %v", m["POSTGRESQL_ADDON_URI"], m)
				}
				if pw, _ := u.User.Password(); pw != m["POSTGRESQL_ADDON_PASSWORD"] || len(pw) < 20 {
					t.Fatalf("password")
				}
				if !strings.HasSuffix(m["POSTGRESQL_ADDON_HOST"], "-postgresql.services.clever-cloud.com") ||
					!strings.HasPrefix(m["POSTGRESQL_ADDON_USER"], "u") || m["POSTGRESQL_ADDON_VERSION"] != "15" {
					t.Fatalf("values %v", m)
				}
			case "cellar-addon":
				m := envMap(env)
				if m["CELLAR_ADDON_HOST"] != "cellar-c2.services.clever-cloud.com" || len(m["CELLAR_ADDON_KEY_ID"]) != 20 ||
					strings.ToUpper(m["CELLAR_ADDON_KEY_ID"]) != m["CELLAR_ADDON_KEY_ID"] {
					t.Fatalf("cellar env %v", m)
				}
			case "fs-bucket":
				// A provider the operator has no typed kind for (the generic Addon serves it).
				m := envMap(env)
				if !slices.Equal(wire.VarNames(env), []string{"BUCKET_FTP_PASSWORD", "BUCKET_FTP_USERNAME", "BUCKET_HOST"}) ||
					m["BUCKET_FTP_USERNAME"] != a.RealID || !strings.HasSuffix(m["BUCKET_HOST"], "-fsbucket.services.clever-cloud.com") {
					t.Fatalf("fs-bucket env %v", m)
				}
			}
		})
	}
	// options.version is echoed in the *_VERSION key.
	body := createBody(s, "mysql-addon", "dev", "par")
	body["options"] = map[string]any{"version": "8.4", "encryption": "false"}
	a := c.create(t, testOwner, body)
	if v := envMap(s.Env(a.ID))["MYSQL_ADDON_VERSION"]; v != "8.4" {
		t.Fatalf("MYSQL_ADDON_VERSION = %q", v)
	}
}

func kindPrefix(providerID string) string {
	return map[string]string{
		"postgresql-addon": "postgresql", "redis-addon": "redis", "mysql-addon": "mysql", "mongodb-addon": "mongodb",
		"addon-pulsar": "pulsar", "config-provider": "config", "es-addon": "es", "kv": "kv", "metabase": "metabase",
		"keycloak": "keycloak", "addon-matomo": "matomo", "otoroshi": "otoroshi", "azimutt": "azimutt", "cellar-addon": "cellar",
		"fs-bucket": "bucket",
	}[providerID]
}

func envMap(env []Variable) map[string]string {
	m := map[string]string{}
	for _, v := range env {
		m[v.Name] = v.Value
	}
	return m
}

func TestProvisioningDelay(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now, ProvisioningDelay: 30 * time.Second})
	a := c.create(t, testOwner, createBody(s, "redis-addon", "m_mono", "par"))
	envPath := "/v2/organisations/" + testOwner + "/addons/" + a.RealID + "/env"
	if r := c.do("GET", envPath, nil); r.status != 200 || string(r.body) != "[]" {
		t.Fatalf("env during provisioning: %d %s", r.status, r.body)
	}
	if len(a.ConfigKeys) != 6 || len(s.Env(a.ID)) != 6 {
		t.Fatalf("configKeys/Env must be complete during provisioning: %v", a.ConfigKeys)
	}
	clock.Add(29 * time.Second)
	if r := c.do("GET", envPath, nil); string(r.body) != "[]" {
		t.Fatalf("env at 29s: %s", r.body)
	}
	clock.Add(time.Second)
	var env []Variable
	c.do("GET", envPath, nil).decode(t, &env)
	if len(env) != 6 {
		t.Fatalf("env after delay: %v", env)
	}
}

func TestConfigProvider(t *testing.T) {
	s, c := newTest(t, Options{ProvisioningDelay: time.Hour})
	a := c.create(t, testOwner, createBody(s, "config-provider", "std", "par"))
	if !strings.HasPrefix(a.RealID, "config_") {
		t.Fatalf("realId %s", a.RealID)
	}
	v4 := "/v4/addon-providers/config-provider/addons/"
	if r := c.do("GET", v4+a.RealID+"/env", nil); r.status != 200 || string(r.body) != "[]" {
		t.Fatalf("initial env: %d %s", r.status, r.body)
	}
	put := func(vars []Variable) []Variable {
		r := c.do("PUT", v4+a.RealID+"/env", vars)
		if r.status != 200 {
			t.Fatalf("PUT: %d %s", r.status, r.body)
		}
		var out []Variable
		r.decode(t, &out)
		return out
	}
	got := put([]Variable{{Name: "ZED", Value: "1"}, {Name: "ALPHA", Value: "a b"}})
	if len(got) != 2 || got[0].Name != "ALPHA" || got[1] != (Variable{Name: "ZED", Value: "1"}) {
		t.Fatalf("PUT returned %v", got)
	}
	// PUT replaces the whole list.
	got = put([]Variable{{Name: "ONLY", Value: "x"}})
	var v4env, v2env []Variable
	c.do("GET", v4+a.ID+"/env", nil).decode(t, &v4env) // addon id accepted too
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID+"/env", nil).decode(t, &v2env)
	if len(got) != 1 || !slices.Equal(v4env, got) || !slices.Equal(v2env, got) {
		t.Fatalf("after replace: put=%v v4=%v v2=%v", got, v4env, v2env)
	}
	var after Addon
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil).decode(t, &after)
	if !slices.Equal(after.ConfigKeys, []string{"ONLY"}) {
		t.Fatalf("configKeys = %v", after.ConfigKeys)
	}
	if r := c.do("PUT", v4+a.RealID+"/env", `null`); r.status != 200 || string(r.body) != "[]" {
		t.Fatalf("PUT null: %d %s", r.status, r.body)
	}
	c.do("PUT", v4+a.RealID+"/env", `{"name":"x"}`).errBody(t, 400)
	c.do("PUT", v4+a.RealID+"/env", `[{"name":"","value":"x"}]`).errBody(t, 400)
	c.do("PUT", v4+a.RealID+"/env", `[{"name":"A","value":"x"},{"name":"A","value":"y"}]`).errBody(t, 400)

	// Not a config provider, or unknown: 404.
	pg := c.create(t, testOwner, createBody(s, "postgresql-addon", "dev", "par"))
	c.do("GET", v4+pg.RealID+"/env", nil).errBody(t, 404)
	c.do("PUT", v4+pg.RealID+"/env", `[]`).errBody(t, 404)
	c.do("GET", v4+"config_nope/env", nil).errBody(t, 404)
}

func TestUnknownRoutes(t *testing.T) {
	s, c := newTest(t, Options{})
	if e := c.do("GET", "/v3/whatever", nil).errBody(t, 404); e.ID != wire.ErrIDNotFound {
		t.Fatalf("%+v", e)
	}
	c.auth = "" // unknown routes answer 404 before authentication
	c.do("GET", "/", nil).errBody(t, 404)
	r := c.do("PATCH", "/v2/organisations/"+testOwner+"/addons", `{}`)
	r.errBody(t, http.StatusMethodNotAllowed)
	if allow := r.header.Get("Allow"); allow != "GET, POST" {
		t.Fatalf("Allow = %q", allow)
	}
	if n := s.Counts()[RouteUnmatched]; n != 3 {
		t.Fatalf("unmatched count = %d", n)
	}
}

func TestStateHelpers(t *testing.T) {
	s, c := newTest(t, Options{})
	a := c.create(t, testOwner, createBody(s, "postgresql-addon", "xs_sml", "par"))
	rotated := []Variable{{Name: "POSTGRESQL_ADDON_PASSWORD", Value: "rotated"}, {Name: "POSTGRESQL_ADDON_HOST", Value: "h"}}
	if err := s.SetEnv(a.RealID, rotated); err != nil {
		t.Fatal(err)
	}
	var env []Variable
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID+"/env", nil).decode(t, &env)
	if len(env) != 2 || env[1].Value != "rotated" {
		t.Fatalf("env after SetEnv: %v", env)
	}
	if err := s.SetEnv("addon_nope", nil); err == nil {
		t.Fatal("SetEnv unknown: want error")
	}
	if err := s.DeleteAddonOutOfBand("orga_other", a.ID); err == nil {
		t.Fatal("DeleteAddonOutOfBand wrong owner: want error")
	}
	if err := s.DeleteAddonOutOfBand(testOwner, a.ID); err != nil {
		t.Fatal(err)
	}
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil).errBody(t, 404)
	if s.Env(a.ID) != nil || len(s.AllAddons()) != 0 {
		t.Fatal("state not empty after out-of-band delete")
	}
	// Returned values are copies.
	p := s.Providers()
	p[0].Plans[0].Zones[0] = "mutated"
	if s.Providers()[0].Plans[0].Zones[0] == "mutated" {
		t.Fatal("Providers() shares state")
	}
}
