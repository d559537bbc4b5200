package fakeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// Tests of the behaviours that model the real API of today (issue #13):
// hosts, the published consumer pair, v4 operator add-ons, 200 + JSON
// deletes, refused deletions while provisioning, slow creates, private
// plans, recorded options, per-owner counters, /v2/organisations.
// Every request goes over real HTTP with a verified OAuth1 signature or a
// bearer token.

func TestHostsAcceptOneSchemeEach(t *testing.T) {
	for _, bearerOnAPI := range []bool{false, true} {
		s, api, bridge := newTestHosts(t, Options{BearerTokens: []string{"bt-1"}, BearerOnAPIHost: bearerOnAPI})
		_ = s
		apiBearer := &client{t: t, base: api.base, auth: "bearer:bt-1"}
		bridgeOAuth := &client{t: t, base: bridge.base, auth: "oauth", cred: testCred}
		bridge.auth = "bearer:bt-1"
		cases := []struct {
			name string
			c    *client
			want int
			msg  string
		}{
			{"OAuth1 on the API host", api, 200, ""},
			{"bearer on the bridge", bridge, 200, ""},
			{"OAuth1 on the bridge", bridgeOAuth, 401, "only accepts bearer"},
			{"bearer on the API host", apiBearer, map[bool]int{false: 401, true: 200}[bearerOnAPI], "not accepted by this host"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tc.c.t = t
				for _, path := range []string{"/v2/self", "/v2/products/addonproviders", "/v2/organisations/" + testOwner + "/addons"} {
					r := tc.c.do("GET", path, nil)
					if tc.want == 200 {
						if r.status != 200 {
							t.Fatalf("GET %s (BearerOnAPIHost=%v): %d %s", path, bearerOnAPI, r.status, r.body)
						}
						continue
					}
					if e := r.errBody(t, tc.want); !strings.Contains(e.Message, tc.msg) || strings.Contains(string(r.body), "bt-1") {
						t.Fatalf("GET %s: %+v", path, e)
					}
				}
				// A version-suffixed base doubled into the path is a 404 JSON error, on both hosts.
				tc.c.do("GET", "/v2/v2/self", nil).errBody(t, http.StatusNotFound)
				tc.c.do("GET", "/v4/v2/organisations/"+testOwner+"/addons", nil).errBody(t, http.StatusNotFound)
			})
		}
	}
}

func TestBridgeSharesState(t *testing.T) {
	s, api, bridge := newTestHosts(t, Options{BearerTokens: []string{"bt"}})
	bridge.auth = "bearer:bt"
	a := bridge.create(t, testOwner, createBody(s, "redis-addon", "s_mono", "par"))
	var got Addon
	api.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil).decode(t, &got)
	if got.ID != a.ID || got.RealID != a.RealID {
		t.Fatalf("API host sees %+v, want the add-on created through the bridge %s", got, a.ID)
	}
	if n := s.CountsFor(testOwner)["POST /v2/organisations/{ownerId}/addons"]; n != 1 {
		t.Fatalf("bridge requests counted %d, want 1", n)
	}
}

func TestPublishedConsumerPair(t *testing.T) {
	if CleverToolsConsumerKey != "T5nFjKeHH4AIlEveuGhB5S3xg8T19e" || CleverToolsConsumerSecret != "MgVMqTr6fWlf2M0tkC2MXOnhfqBWDT" {
		t.Fatal("consumer pair differs from clever-tools src/config/config.js")
	}
	tokenOnly := Credential{Token: "user-token", Secret: "user secret/&"}
	s, c := newTest(t, Options{Credentials: []Credential{tokenOnly}})
	_ = s
	withPair := Credential{CleverToolsConsumerKey, CleverToolsConsumerSecret, tokenOnly.Token, tokenOnly.Secret}
	cases := []struct {
		name string
		cred Credential
		auth string
		want int
	}{
		{"HMAC-SHA512 with the published pair", withPair, "oauth", 200},
		{"PLAINTEXT with the published pair", withPair, "plaintext", 200},
		{"another consumer", Credential{"my-consumer", "my-secret", tokenOnly.Token, tokenOnly.Secret}, "oauth", 401},
		{"published pair, wrong token secret", Credential{CleverToolsConsumerKey, CleverToolsConsumerSecret, tokenOnly.Token, "nope"}, "oauth", 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cc := *c
			cc.t, cc.cred, cc.auth = t, tc.cred, tc.auth
			if r := cc.do("GET", "/v2/self", nil); r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
		})
	}
	// An explicit consumer keeps winning: only that pair is accepted for it.
	own := Credential{"own-key", "own-secret", "t2", "s2"}
	_, c2 := newTest(t, Options{Credentials: []Credential{own}})
	c2.cred = Credential{CleverToolsConsumerKey, CleverToolsConsumerSecret, "t2", "s2"}
	c2.do("GET", "/v2/self", nil).errBody(t, http.StatusUnauthorized)
	c2.cred = own
	if r := c2.do("GET", "/v2/self", nil); r.status != 200 {
		t.Fatalf("explicit consumer: %d %s", r.status, r.body)
	}
}

// operatorKinds: v2 provider id -> v4 segment, and the keys of the v4 answer
// (clever-client.js *.types.ts / Go SDK models/<kind>.go).
var operatorKinds = []struct {
	provider, slug, segment string
	keys                    []string
	resources               []string
	versioned, networkGroup bool
}{
	{"keycloak", "base", "keycloak",
		[]string{"resourceId", "addonId", "name", "ownerId", "plan", "version", "javaVersion", "accessUrl", "availableVersions", "resources", "features", "initialCredentials", "envVars"},
		[]string{"entrypoint", "fsbucketId", "pgsqlId"}, true, true},
	{"metabase", "base", "metabase",
		[]string{"resourceId", "addonId", "name", "ownerId", "plan", "version", "javaVersion", "accessUrl", "availableVersions", "resources", "envVars"},
		[]string{"entrypoint", "pgsqlId"}, true, false},
	{"addon-matomo", "beta", "matomo",
		[]string{"resourceId", "addonId", "name", "ownerId", "plan", "version", "phpVersion", "accessUrl", "availableVersions", "resources", "envVars"},
		[]string{"entrypoint", "mysqlId", "redisId"}, false, false},
	{"otoroshi", "base", "otoroshi",
		[]string{"resourceId", "addonId", "name", "ownerId", "plan", "version", "javaVersion", "accessUrl", "availableVersions", "resources", "features", "initialCredentials", "api"},
		[]string{"entrypoint", "redisId"}, true, true},
}

func opPath(segment, realID string) string {
	return "/v4/addon-providers/addon-" + segment + "/addons/" + realID
}

func TestOperatorAddonsServedAtV4(t *testing.T) {
	s, c := newTest(t, Options{})
	for _, k := range operatorKinds {
		t.Run(k.provider, func(t *testing.T) {
			c.t = t
			a := c.create(t, testOwner, createBody(s, k.provider, k.slug, "par"))
			if len(a.ConfigKeys) != 0 {
				t.Fatalf("configKeys = %v, want [] (the real API no longer publishes them)", a.ConfigKeys)
			}
			r := c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID+"/env", nil)
			if r.status != 200 || string(r.body) != "[]" {
				t.Fatalf("v2 env = %d %s, want 200 []", r.status, r.body)
			}
			var info map[string]any
			c.do("GET", opPath(k.segment, a.RealID), nil).decode(t, &info)
			wantKeys(t, "v4 info", info, k.keys...)
			wantKeys(t, "resources", info["resources"].(map[string]any), k.resources...)
			if info["resourceId"] != a.RealID || info["addonId"] != a.ID || info["ownerId"] != testOwner || info["name"] != a.AddonName() {
				t.Fatalf("ids = %v", info)
			}
			if u, _ := info["accessUrl"].(string); !strings.HasPrefix(u, "https://") {
				t.Fatalf("accessUrl = %v", info["accessUrl"])
			}
			if av, _ := info["availableVersions"].([]any); len(av) == 0 || !slices.Contains(av, info["version"]) {
				t.Fatalf("version %v not in availableVersions %v", info["version"], info["availableVersions"])
			}
			if ic, ok := info["initialCredentials"].(map[string]any); ok {
				wantKeys(t, "initialCredentials", ic, "user", "password")
				if ic["user"] == "" || ic["password"] == "" {
					t.Fatalf("empty initial credentials %v", ic)
				}
			}
			if api, ok := info["api"].(map[string]any); ok {
				wantKeys(t, "api", api, "url", "user", "secret", "openapi", "swaggerUrl")
			}
			// The accessor shows the same JSON.
			if acc, ok := s.OperatorAddon(a.RealID); !ok || acc["accessUrl"] != info["accessUrl"] {
				t.Fatalf("OperatorAddon = %v, %v", acc, ok)
			}
			// realId only, and only under the kind's own segment.
			c.do("GET", opPath(k.segment, a.ID), nil).errBody(t, 404)
			other := "keycloak"
			if k.segment == "keycloak" {
				other = "metabase"
			}
			c.do("GET", opPath(other, a.RealID), nil).errBody(t, 404)
			// reboot and rebuild for every kind.
			for _, action := range []string{"reboot", "rebuild"} {
				if r := c.do("POST", opPath(k.segment, a.RealID)+"/"+action, nil); r.status != http.StatusNoContent {
					t.Fatalf("%s: %d %s", action, r.status, r.body)
				}
			}
			if calls := s.OperatorCalls(a.RealID); calls["reboot"] != 1 || calls["rebuild"] != 1 {
				t.Fatalf("OperatorCalls = %v", calls)
			}
			// version check/update only where the clients have them.
			check := c.do("GET", opPath(k.segment, a.RealID)+"/version/check", nil)
			if !k.versioned {
				check.errBody(t, 404)
				c.do("POST", opPath(k.segment, a.RealID)+"/version/update", map[string]string{"targetVersion": "1"}).errBody(t, 404)
			} else {
				var vc map[string]any
				check.decode(t, &vc)
				wantKeys(t, "version/check", vc, "installed", "available", "latest", "needUpdate")
			}
			ng := c.do("POST", opPath(k.segment, a.RealID)+"/networkgroup", nil)
			if !k.networkGroup {
				ng.errBody(t, 404)
			} else {
				var withNG map[string]any
				ng.decode(t, &withNG)
				if id, _ := withNG["features"].(map[string]any)["networkGroup"].(map[string]any)["id"].(string); id == "" {
					t.Fatalf("networkgroup not enabled: %v", withNG["features"])
				}
				if r := c.do("DELETE", opPath(k.segment, a.RealID)+"/networkgroup", nil); r.status != http.StatusNoContent {
					t.Fatalf("networkgroup delete: %d", r.status)
				}
				info, _ = s.OperatorAddon(a.RealID)
				if len(info["features"].(map[string]any)) != 0 {
					t.Fatalf("features after disable = %v", info["features"])
				}
			}
		})
	}
}

func TestOperatorLegacyEnv(t *testing.T) {
	s, c := newTest(t, Options{LegacyOperatorEnv: true})
	a := c.create(t, testOwner, createBody(s, "keycloak", "base", "par"))
	var env []Variable
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID+"/env", nil).decode(t, &env)
	m := map[string]string{}
	for _, v := range env {
		m[v.Name] = v.Value
	}
	info, _ := s.OperatorAddon(a.RealID)
	ic := info["initialCredentials"].(map[string]any)
	if len(a.ConfigKeys) == 0 || m["CC_KEYCLOAK_URL"] != info["accessUrl"] || m["CC_KEYCLOAK_ADMIN"] != ic["user"] ||
		m["CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"] != ic["password"] {
		t.Fatalf("legacy env %v does not match v4 %v", m, info)
	}
}

func TestOperatorVersionUpdate(t *testing.T) {
	s, c := newTest(t, Options{})
	s.SetProviderVersions("keycloak", []string{"26.1.4", "26.2.5", "26.3.0"}, "26.1.4")
	a := c.create(t, testOwner, createBody(s, "keycloak", "base", "par"))
	base := opPath("keycloak", a.RealID)
	var vc struct {
		Installed  string   `json:"installed"`
		Available  []string `json:"available"`
		Latest     string   `json:"latest"`
		NeedUpdate bool     `json:"needUpdate"`
	}
	c.do("GET", base+"/version/check", nil).decode(t, &vc)
	if vc.Installed != "26.1.4" || vc.Latest != "26.3.0" || !vc.NeedUpdate || len(vc.Available) != 3 {
		t.Fatalf("check = %+v", vc)
	}
	for _, bad := range []any{map[string]string{"targetVersion": "99"}, map[string]string{}, `[]`} {
		c.do("POST", base+"/version/update", bad).errBody(t, http.StatusBadRequest)
	}
	var info map[string]any
	c.do("POST", base+"/version/update", map[string]string{"targetVersion": "26.3.0"}).decode(t, &info)
	if info["version"] != "26.3.0" {
		t.Fatalf("after update: %v", info["version"])
	}
	c.do("GET", base+"/version/check", nil).decode(t, &vc)
	if vc.Installed != "26.3.0" || vc.NeedUpdate {
		t.Fatalf("check after update = %+v", vc)
	}
	// The version at creation is validated against the announced ones.
	body := createBody(s, "keycloak", "base", "par")
	body["options"] = map[string]any{"version": "12.0.0"}
	if e := c.do("POST", "/v2/organisations/"+testOwner+"/addons", body).errBody(t, http.StatusBadRequest); !strings.Contains(e.Message, "26.2.5") {
		t.Fatalf("error does not list the supported versions: %+v", e)
	}
	body["options"] = map[string]any{"version": "26.2.5"}
	b := c.create(t, testOwner, body)
	if info, _ := s.OperatorAddon(b.RealID); info["version"] != "26.2.5" {
		t.Fatalf("created version = %v", info["version"])
	}
	// The provider endpoint announces the same versions.
	var pi ProviderInfo
	c.do("GET", "/v4/addon-providers/keycloak", nil).decode(t, &pi)
	if !slices.Equal(infoVersions(pi), []string{"26.1.4", "26.2.5", "26.3.0"}) || pi.DefaultDedicatedVersion != "26.1.4" {
		t.Fatalf("provider info %+v", pi)
	}
}

func TestDeleteWhileProvisioning(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now, ProvisioningDelay: 10 * time.Second})
	a := c.create(t, testOwner, createBody(s, "postgresql-addon", "dev", "par"))
	path := "/v2/organisations/" + testOwner + "/addons/" + a.ID
	if e := c.do("DELETE", path, nil).errBody(t, http.StatusConflict); !strings.Contains(e.Message, "provision") {
		t.Fatalf("%+v", e)
	}
	if len(s.Addons(testOwner)) != 1 {
		t.Fatal("refused delete removed the add-on")
	}
	clock.Add(11 * time.Second)
	c.do("DELETE", path, nil).wantMessage(t)
	c.do("GET", path, nil).errBody(t, http.StatusNotFound)
	c.do("DELETE", path, nil).errBody(t, http.StatusNotFound)
}

func TestCreateDelay(t *testing.T) {
	s, c := newTest(t, Options{CreateDelay: 400 * time.Millisecond})
	body := createBody(s, "redis-addon", "s_mono", "par")
	done := make(chan resp, 1)
	start := time.Now()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.base+"/v2/organisations/"+testOwner+"/addons", bytes.NewReader(data))
	req.Header.Set("Authorization", oauthHeader("POST", req.URL.String(), testCred, time.Now(), "n-slow"))
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- resp{}
			return
		}
		res.Body.Close()
		done <- resp{status: res.StatusCode}
	}()
	// While the create is still waiting, the add-on is already listed by name.
	deadline := time.Now().Add(300 * time.Millisecond)
	var listed []Addon
	for time.Now().Before(deadline) && len(listed) == 0 {
		c.do("GET", "/v2/organisations/"+testOwner+"/addons", nil).decode(t, &listed)
	}
	if len(listed) != 1 || listed[0].AddonName() != body["name"] {
		t.Fatalf("listed during the wait = %+v", listed)
	}
	r := <-done
	if r.status != 200 || time.Since(start) < 400*time.Millisecond {
		t.Fatalf("create answered %d after %v", r.status, time.Since(start))
	}
	// A client that gives up does not cancel the creation.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, "POST", c.base+"/v2/organisations/"+testOwner+"/addons", strings.NewReader(`{"name":"n2","region":"par","providerId":"redis-addon","plan":"`+s.PlanID("redis-addon", "s_mono")+`","options":{}}`))
	req.Header.Set("Authorization", oauthHeader("POST", req.URL.String(), testCred, time.Now(), "n-timeout"))
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("expected the client to time out")
	}
	if n := len(s.Addons(testOwner)); n != 2 {
		t.Fatalf("%d add-ons after a timed-out create, want 2", n)
	}
}

func TestPrivatePlans(t *testing.T) {
	const other = "orga_99999999-2222-3333-4444-555555555555"
	s, c := newTest(t, Options{})
	id := s.AddPrivatePlan(testOwner, "postgresql-addon", "xxl_custom")
	if !strings.HasPrefix(id, "plan_") || s.AddPrivatePlan(testOwner, "postgresql-addon", "xxl_custom") != id || s.AddPrivatePlan(testOwner, "nope", "x") != "" {
		t.Fatalf("AddPrivatePlan id %q", id)
	}
	has := func(path string) bool {
		var ps []Provider
		var one Provider
		r := c.do("GET", path, nil)
		if strings.Contains(path, "/postgresql-addon") {
			r.decode(t, &one)
			ps = []Provider{one}
		} else {
			r.decode(t, &ps)
		}
		for _, p := range ps {
			for _, pl := range p.Plans {
				if pl.ID == id {
					return p.ID == "postgresql-addon" && pl.Slug == "xxl_custom"
				}
			}
		}
		return false
	}
	for path, want := range map[string]bool{
		"/v2/products/addonproviders":                                      false,
		"/v2/products/addonproviders?orgaId=" + testOwner:                  true,
		"/v2/products/addonproviders?orgaId=" + other:                      false,
		"/v2/products/addonproviders/postgresql-addon":                     false,
		"/v2/products/addonproviders/postgresql-addon?orgaId=" + testOwner: true,
	} {
		if got := has(path); got != want {
			t.Errorf("GET %s lists the private plan: %v, want %v", path, got, want)
		}
	}
	body := createBody(s, "postgresql-addon", "dev", "par")
	body["plan"] = id
	a := c.create(t, testOwner, body)
	if a.Plan.ID != id || a.Plan.Slug != "xxl_custom" {
		t.Fatalf("created with %+v", a.Plan)
	}
	c.do("POST", "/v2/organisations/"+other+"/addons", body).errBody(t, http.StatusBadRequest)
}

func TestCreateOptionsRecorded(t *testing.T) {
	s, c := newTest(t, Options{})
	cases := []struct {
		name    string
		options any
		want    map[string]any
		status  int
	}{
		{"elasticsearch flat kibana/apm", map[string]any{"version": "8", "kibana": "true", "apm": "true"}, map[string]any{"version": "8", "kibana": "true", "apm": "true"}, 200},
		{"empty object", map[string]any{}, map[string]any{}, 200},
		{"null (Terraform's Cellar)", nil, nil, 200},
		{"boolean values", map[string]any{"kibana": true}, map[string]any{"kibana": true}, 200},
		{"nested JSON object", map[string]any{"services": map[string]any{"kibana": true}}, nil, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			body := createBody(s, "es-addon", "xs", "par")
			body["options"] = tc.options
			r := c.do("POST", "/v2/organisations/"+testOwner+"/addons", body)
			if tc.status != 200 {
				r.errBody(t, tc.status)
				return
			}
			var a Addon
			r.decode(t, &a)
			got := s.CreateOptions(a.ID)
			if (got == nil) != (tc.want == nil) || len(got) != len(tc.want) {
				t.Fatalf("CreateOptions = %#v, want %#v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("CreateOptions[%q] = %#v, want %#v", k, got[k], v)
				}
			}
			if by := s.CreateOptions(a.RealID); len(by) != len(got) {
				t.Fatal("CreateOptions by realId differs")
			}
		})
	}
	if s.CreateOptions("addon_unknown") != nil {
		t.Fatal("unknown add-on has options")
	}
}

func TestCountsFor(t *testing.T) {
	const other = "orga_99999999-2222-3333-4444-555555555555"
	s, c := newTest(t, Options{})
	a := c.create(t, testOwner, createBody(s, "keycloak", "base", "par"))
	c.create(t, other, createBody(s, "redis-addon", "s_mono", "par"))
	c.do("GET", "/v2/products/addonproviders?orgaId="+testOwner, nil)
	c.do("GET", "/v2/products/addonproviders", nil)
	c.do("GET", opPath("keycloak", a.RealID), nil)
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil)
	c.do("GET", "/v2/self", nil)
	want := map[string]int{
		"POST /v2/organisations/{ownerId}/addons":                1,
		"GET /v2/products/addonproviders":                        1,
		"GET /v4/addon-providers/addon-keycloak/addons/{realId}": 1,
		"GET /v2/organisations/{ownerId}/addons/{addonId}":       1,
	}
	got := s.CountsFor(testOwner)
	if len(got) != len(want) {
		t.Fatalf("CountsFor = %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("CountsFor[%q] = %d, want %d (all: %v)", k, got[k], n, got)
		}
	}
	if o := s.CountsFor(other); len(o) != 1 || o["POST /v2/organisations/{ownerId}/addons"] != 1 {
		t.Fatalf("CountsFor(other) = %v", o)
	}
	if s.Counts()["GET /v2/products/addonproviders"] != 2 {
		t.Fatal("global counter lost a request")
	}
	s.ResetCounts()
	if len(s.CountsFor(testOwner)) != 0 {
		t.Fatal("ResetCounts kept the owner counters")
	}
}

func TestSelfAndOrganisations(t *testing.T) {
	s, c := newTest(t, Options{Organisations: []string{"orga_00000000-0000-0000-0000-00000000000b"}})
	s.AddOrganisation("orga_00000000-0000-0000-0000-00000000000a")
	c.create(t, testOwner, createBody(s, "redis-addon", "s_mono", "par"))
	var self map[string]any
	c.do("GET", "/v2/self", nil).decode(t, &self)
	wantKeys(t, "self", self, "id", "name", "email", "phone", "address", "city", "zipcode", "country", "avatar",
		"creationDate", "lang", "emailValidated", "oauthApps", "admin", "canPay", "preferredMFA", "hasPassword")
	var orgs []map[string]any
	c.do("GET", "/v2/organisations", nil).decode(t, &orgs)
	var ids []string
	for _, o := range orgs {
		wantKeys(t, "organisation", o, "id", "name", "description", "billingEmail", "address", "city", "zipcode", "country",
			"company", "VAT", "avatar", "vatState", "customerFullName", "canPay", "cleverEnterprise", "emergencyNumber", "canSEPA", "isTrusted")
		ids = append(ids, o["id"].(string))
	}
	want := []string{self["id"].(string), "orga_00000000-0000-0000-0000-00000000000a", "orga_00000000-0000-0000-0000-00000000000b", testOwner}
	if !slices.Equal(ids, want) {
		t.Fatalf("organisations = %v, want %v", ids, want)
	}
}

func TestDeleteDuringProvisioningOption(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now, ProvisioningDelay: time.Minute, DeleteDuringProvisioning: true})
	a := c.create(t, testOwner, createBody(s, "redis-addon", "s_mono", "par"))
	// The env delay still applies...
	if r := c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID+"/env", nil); string(r.body) != "[]" {
		t.Fatalf("env during the delay: %s", r.body)
	}
	// ...but the delete is accepted.
	c.do("DELETE", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil).wantMessage(t)
}

func TestAdminRealAPIEndpoints(t *testing.T) {
	s, c := newTest(t, Options{})
	admin := *c
	admin.auth = ""
	// Private plan through the admin API, then listed with ?orgaId=.
	var pp map[string]string
	admin.do("POST", "/admin/private-plans", map[string]string{"owner": testOwner, "providerId": "mysql-addon", "slug": "huge"}).decode(t, &pp)
	if pp["planId"] != s.AddPrivatePlan(testOwner, "mysql-addon", "huge") {
		t.Fatalf("admin private plan %v", pp)
	}
	for _, bad := range []any{map[string]string{"owner": "x", "providerId": "mysql-addon", "slug": "s"}, map[string]string{"owner": testOwner, "providerId": "nope", "slug": "s"}, "[]"} {
		admin.do("POST", "/admin/private-plans", bad).errBody(t, http.StatusBadRequest)
	}
	// Recorded options.
	body := createBody(s, "es-addon", "xs", "par")
	body["options"] = map[string]string{"kibana": "true", "apm": "true"}
	a := c.create(t, testOwner, body)
	var opts map[string]any
	admin.do("GET", "/admin/addons/"+a.ID+"/options", nil).decode(t, &opts)
	if opts["kibana"] != "true" || opts["apm"] != "true" || len(opts) != 2 {
		t.Fatalf("admin options %v", opts)
	}
	admin.do("GET", "/admin/addons/addon_nope/options", nil).errBody(t, http.StatusNotFound)
	// Per-owner counters.
	var counts map[string]int
	admin.do("GET", "/admin/counts/owners/"+testOwner, nil).decode(t, &counts)
	if counts["POST /v2/organisations/{ownerId}/addons"] != 1 {
		t.Fatalf("admin owner counts %v", counts)
	}
	// Operator add-on info and calls.
	kc := c.create(t, testOwner, createBody(s, "keycloak", "base", "par"))
	c.do("POST", opPath("keycloak", kc.RealID)+"/reboot", nil)
	var op struct {
		Info  map[string]any `json:"info"`
		Calls map[string]int `json:"calls"`
	}
	admin.do("GET", "/admin/operators/"+kc.RealID, nil).decode(t, &op)
	if op.Info["resourceId"] != kc.RealID || op.Calls["reboot"] != 1 {
		t.Fatalf("admin operator %+v", op)
	}
	admin.do("GET", "/admin/operators/"+a.RealID, nil).errBody(t, http.StatusNotFound)
	// Provider versions.
	var pv map[string][]string
	admin.do("PUT", "/admin/providers/keycloak/versions", map[string]any{"versions": []string{"26.2.5", "26.3.1"}, "default": "26.3.1"}).decode(t, &pv)
	if !slices.Equal(pv["versions"], []string{"26.2.5", "26.3.1"}) {
		t.Fatalf("admin versions %v", pv)
	}
	if info, _ := s.OperatorAddon(kc.RealID); !slices.Equal(info["availableVersions"].([]any), []any{"26.2.5", "26.3.1"}) {
		t.Fatalf("availableVersions after the change: %v", info["availableVersions"])
	}
	admin.do("PUT", "/admin/providers/keycloak/versions", map[string]any{"versions": []string{}}).errBody(t, http.StatusBadRequest)
	admin.do("PUT", "/admin/providers/keycloak/versions", map[string]any{"versions": []string{"1"}, "default": "2"}).errBody(t, http.StatusBadRequest)
	admin.do("PUT", "/admin/providers/nope/versions", map[string]any{"versions": []string{"1"}}).errBody(t, http.StatusNotFound)
}
