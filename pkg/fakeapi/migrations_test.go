package fakeapi

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

const (
	routeStartMigration = "POST /v2/organisations/{ownerId}/addons/{addonId}/migrations"
	routeListMigrations = "GET /v2/organisations/{ownerId}/addons/{addonId}/migrations"
	routeGetMigration   = "GET /v2/organisations/{ownerId}/addons/{addonId}/migrations/{migrationId}"
	routeAbortMigration = "DELETE /v2/organisations/{ownerId}/addons/{addonId}/migrations/{migrationId}"
	routeProviderInfo   = "GET /v4/addon-providers/{providerId}"
)

var (
	migrationKeys = []string{"migrationId", "requestDate", "status", "steps"}
	stepKeysDone  = []string{"value", "status", "startDate", "endDate"}
	stepKeysRun   = []string{"value", "status", "startDate"}
)

func migrationsPath(owner, addonID string) string {
	return "/v2/organisations/" + owner + "/addons/" + addonID + "/migrations"
}

func migBody(planID, region string, version any) map[string]any {
	return map[string]any{"planId": planID, "region": region, "version": version}
}

// startMig posts M1 and checks a 200 RUNNING answer.
func (c *client) startMig(t *testing.T, owner, addonID string, body any) Migration {
	t.Helper()
	r := c.do("POST", migrationsPath(owner, addonID), body)
	if r.status != http.StatusOK {
		t.Fatalf("start migration: %d %s", r.status, r.body)
	}
	var m Migration
	r.decode(t, &m)
	if m.Status != MigrationRunning {
		t.Fatalf("M1 status = %s, want RUNNING", m.Status)
	}
	return m
}

func (c *client) getMig(t *testing.T, owner, addonID, id string) Migration {
	t.Helper()
	r := c.do("GET", migrationsPath(owner, addonID)+"/"+id, nil)
	if r.status != http.StatusOK {
		t.Fatalf("get migration: %d %s", r.status, r.body)
	}
	var m Migration
	r.decode(t, &m)
	return m
}

func stepNames(m Migration) []string {
	var out []string
	for _, s := range m.Steps {
		out = append(out, s.Value)
	}
	return out
}

// checkMigrationJSON checks the key sets of a raw Migration and its steps.
func checkMigrationJSON(t *testing.T, raw map[string]any) {
	t.Helper()
	wantKeys(t, "migration", raw, migrationKeys...)
	for _, st := range raw["steps"].([]any) {
		sm := st.(map[string]any)
		switch {
		case sm["status"] == "RUNNING":
			wantKeys(t, "running step", sm, stepKeysRun...)
		case sm["message"] != nil:
			wantKeys(t, "step with message", sm, append(slices.Clone(stepKeysDone), "message")...)
		default:
			wantKeys(t, "finished step", sm, stepKeysDone...)
		}
	}
	for _, k := range []string{"migrationId", "requestDate", "status"} {
		if _, ok := raw[k].(string); !ok {
			t.Fatalf("%s is not a string: %v", k, raw[k])
		}
	}
	if _, err := time.Parse(time.RFC3339, raw["requestDate"].(string)); err != nil {
		t.Fatalf("requestDate %v is not ISO 8601: %v", raw["requestDate"], err)
	}
}

func TestMigrationLifecycle(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now})
	a := c.create(t, testOwner, createBody(s, "postgresql-addon", "xs_sml", "par"))
	before := envMap(s.Env(a.ID))
	target := s.PlanID("postgresql-addon", "m_med")

	r := c.do("POST", migrationsPath(testOwner, a.RealID), migBody(target, "rbx", "17")) // realId works too
	if r.status != http.StatusOK {
		t.Fatalf("M1: %d %s", r.status, r.body)
	}
	var raw map[string]any
	r.decode(t, &raw)
	checkMigrationJSON(t, raw)
	var m Migration
	r.decode(t, &m)
	if !strings.HasPrefix(m.MigrationID, "migration_") || m.Status != "RUNNING" || m.RequestDate != "2026-03-01T12:00:00.000Z" {
		t.Fatalf("M1 = %+v", m)
	}
	if got := stepNames(m); !slices.Equal(got, []string{"RETRIEVE_ADDON", "CHECK_NO_MIGRATION_ALREADY_RUNNING_FOR_ADDON", "RETRIEVE_TARGET_CLUSTER"}) ||
		m.Steps[0].Status != "OK" || m.Steps[2].Status != "RUNNING" || m.Steps[2].EndDate != "" {
		t.Fatalf("M1 steps = %+v", m.Steps)
	}

	// Halfway: still RUNNING, more steps, add-on untouched (API and helpers).
	clock.Add(1500 * time.Millisecond)
	m = c.getMig(t, testOwner, a.ID, m.MigrationID)
	if m.Status != "RUNNING" || len(m.Steps) <= 3 || len(m.Steps) >= len(MigrationSteps()) {
		t.Fatalf("halfway = %+v", m)
	}
	for i, st := range m.Steps {
		if want := MigrationSteps()[i]; st.Value != want {
			t.Fatalf("step %d = %s, want %s", i, st.Value, want)
		}
		if last := i == len(m.Steps)-1; (st.Status == "RUNNING") != last || (st.EndDate == "") != last {
			t.Fatalf("step %d = %+v", i, st)
		}
	}
	var got Addon
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil).decode(t, &got)
	if got.Plan.Slug != "xs_sml" || got.Region != "par" {
		t.Fatalf("add-on changed before the end: %s %s", got.Plan.Slug, got.Region)
	}
	var env []Variable
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID+"/env", nil).decode(t, &env)
	if !maps2Equal(envMap(env), before) {
		t.Fatal("env changed before the end")
	}

	// At the end: OK; reading the add-on alone is enough to see the change.
	clock.Add(1500 * time.Millisecond)
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID, nil).decode(t, &got)
	if got.Plan.ID != target || got.Plan.Slug != "m_med" || got.Region != "rbx" || !slices.Equal(got.ConfigKeys, a.ConfigKeys) {
		t.Fatalf("after migration: %s %s %v", got.Plan.Slug, got.Region, got.ConfigKeys)
	}
	after := envMap(s.Env(a.ID))
	if after["POSTGRESQL_ADDON_PASSWORD"] == before["POSTGRESQL_ADDON_PASSWORD"] || after["POSTGRESQL_ADDON_HOST"] == before["POSTGRESQL_ADDON_HOST"] ||
		after["POSTGRESQL_ADDON_VERSION"] != "17" || after["POSTGRESQL_ADDON_DB"] == before["POSTGRESQL_ADDON_DB"] {
		t.Fatalf("env after migration: %v (before %v)", after, before)
	}
	u, err := url.Parse(after["POSTGRESQL_ADDON_URI"])
	if pw, _ := u.User.Password(); err != nil || u.Hostname() != after["POSTGRESQL_ADDON_HOST"] || pw != after["POSTGRESQL_ADDON_PASSWORD"] {
		t.Fatalf("URI %q inconsistent", after["POSTGRESQL_ADDON_URI"])
	}
	r = c.do("GET", migrationsPath(testOwner, a.ID)+"/"+m.MigrationID, nil)
	var rawFinal map[string]any
	r.decode(t, &rawFinal)
	checkMigrationJSON(t, rawFinal)
	m = Migration{}
	r.decode(t, &m)
	if m.Status != "OK" || !slices.Equal(stepNames(m), MigrationSteps()) {
		t.Fatalf("final = %+v", m)
	}
	for _, st := range m.Steps {
		if st.Status != "OK" || st.EndDate == "" {
			t.Fatalf("final step %+v", st)
		}
	}
	if last := m.Steps[len(m.Steps)-1]; last.EndDate != "2026-03-01T12:00:03.000Z" {
		t.Fatalf("last endDate %s", last.EndDate)
	}
	// Nothing changes afterwards.
	clock.Add(time.Hour)
	if !maps2Equal(envMap(s.Env(a.ID)), after) {
		t.Fatal("env changed again")
	}
	// A refresh migration (same plan, region and version) is accepted; null version keeps 17.
	m2 := c.startMig(t, testOwner, a.ID, migBody(target, "rbx", nil))
	clock.Add(3 * time.Second)
	if ms := s.Migrations(a.ID); len(ms) != 2 || ms[0].MigrationID != m2.MigrationID || ms[0].Status != "OK" {
		t.Fatalf("Migrations = %+v", ms)
	}
	if v := envMap(s.Env(a.ID))["POSTGRESQL_ADDON_VERSION"]; v != "17" {
		t.Fatalf("version after refresh = %s", v)
	}
	if envMap(s.Env(a.ID))["POSTGRESQL_ADDON_PASSWORD"] == after["POSTGRESQL_ADDON_PASSWORD"] {
		t.Fatal("refresh did not renew credentials")
	}

	counts := s.Counts()
	if counts[routeStartMigration] != 2 || counts[routeGetMigration] != 2 {
		t.Fatalf("counts %v", counts)
	}
}

func maps2Equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestMigrationVersionsPerProvider(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now, MigrationDuration: time.Second})
	for _, tc := range []struct {
		provider, slug, region, from, to, envKey string
	}{
		{"redis-addon", "s_mono", "par", "7.2.4", "8.8.0", "REDIS_VERSION"},
		{"mysql-addon", "xs_sml", "par", "8.0", "8.4", "MYSQL_ADDON_VERSION"},
		{"mysql-addon", "xs_sml", "par", "5.7", "8.0", "MYSQL_ADDON_VERSION"},
		{"mongodb-addon", "xs_sml", "par", "4.0.3", "4.0.3", "MONGODB_ADDON_VERSION"},
		{"es-addon", "s", "par", "7", "9", "ES_ADDON_VERSION"},
		{"postgresql-addon", "xs_sml", "par", "12", "12", "POSTGRESQL_ADDON_VERSION"}, // legacy version kept
		{"postgresql-addon", "xs_sml", "par", "13", "18", "POSTGRESQL_ADDON_VERSION"},
	} {
		body := createBody(s, tc.provider, tc.slug, tc.region)
		body["options"] = map[string]any{"version": tc.from}
		a := c.create(t, testOwner, body)
		c.startMig(t, testOwner, a.ID, migBody(a.Plan.ID, a.Region, tc.to))
		clock.Add(time.Second)
		if v := envMap(s.Env(a.ID))[tc.envKey]; v != tc.to {
			t.Errorf("%s %s -> %s: %s = %s", tc.provider, tc.from, tc.to, tc.envKey, v)
		}
	}
}

func TestMigrationValidation(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now})
	pg := c.create(t, testOwner, createBody(s, "postgresql-addon", "xs_sml", "par")) // version 15
	es := c.create(t, testOwner, createBody(s, "es-addon", "s", "par"))              // version 8
	legacy := createBody(s, "postgresql-addon", "xs_sml", "par")
	legacy["options"] = map[string]any{"version": "12"}
	pg12 := c.create(t, testOwner, legacy)
	pgPlan := pg.Plan.ID
	p := migrationsPath(testOwner, pg.ID)

	cases := []struct {
		name, path string
		body       any
		code       int
		msg        string
		field      string
	}{
		{"slug instead of id", p, migBody("m_med", "par", nil), 400, `plan "m_med" is not a plan id of provider postgresql-addon`, "planId"},
		{"plan of another provider", p, migBody(s.PlanID("mysql-addon", "m_med"), "par", nil), 400, "is not a plan id of provider postgresql-addon", "planId"},
		{"region outside plan zones", p, migBody(s.PlanID("postgresql-addon", "dev"), "sgp", nil), 400, `not available in region "sgp"`, "region"},
		{"unknown region", p, migBody(pgPlan, "mars", nil), 400, `not available in region "mars"`, "region"},
		{"unknown version", p, migBody(pgPlan, "par", "19"), 400, `version "19" is not offered by postgresql-addon (offered: 14, 15, 16, 17, 18)`, "version"},
		{"legacy version not current", migrationsPath(testOwner, pg12.ID), migBody(pgPlan, "par", "13"), 400, `version "13" is not offered`, "version"},
		{"downgrade", p, migBody(pgPlan, "par", "14"), 400, "downgrades are not supported", "version"},
		{"es region change", migrationsPath(testOwner, es.ID), migBody(es.Plan.ID, "rbx", "8"), 400, "migration not supported for es-addon", "region"},
		{"es downgrade", migrationsPath(testOwner, es.ID), migBody(es.Plan.ID, "par", "7"), 400, "downgrades are not supported", "version"},
		{"missing fields", p, map[string]any{"version": "17"}, 400, "missing required field(s): planId, region", "planId"},
		{"malformed JSON", p, `{"planId": `, 400, "invalid JSON body", ""},
		{"JSON array", p, `[]`, 400, "invalid JSON body", ""},
		{"wrong type", p, `{"planId": 3, "region": "par"}`, 400, `"planId" has the wrong type`, ""},
		{"unknown add-on", migrationsPath(testOwner, "addon_nope"), migBody(pgPlan, "par", nil), 404, "addon not found", ""},
		{"other owner", migrationsPath("orga_other", pg.ID), migBody(pgPlan, "par", nil), 404, "addon not found", ""},
		{"bad owner", migrationsPath("team_x", pg.ID), migBody(pgPlan, "par", nil), 404, "organisation not found", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cc := *c
			cc.t = t
			e := cc.do("POST", tc.path, tc.body).errBody(t, tc.code)
			if !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("message %q does not contain %q", e.Message, tc.msg)
			}
			if tc.field != "" && e.Fields[tc.field] == "" {
				t.Fatalf("fields %v lack %s", e.Fields, tc.field)
			}
		})
	}
	for _, id := range []string{pg.ID, es.ID, pg12.ID} {
		if ms := s.Migrations(id); len(ms) != 0 {
			t.Fatalf("refused migrations were stored: %+v", ms)
		}
	}

	// Providers that cannot migrate.
	for _, prov := range []string{"addon-pulsar", "config-provider", "kv", "metabase", "keycloak", "addon-matomo", "otoroshi", "azimutt", "cellar-addon"} {
		k := s.catalog.ByID[prov]
		a := c.create(t, testOwner, createBody(s, prov, k.Provider.Plans[0].Slug, "par"))
		e := c.do("POST", migrationsPath(testOwner, a.ID), migBody(a.Plan.ID, "par", nil)).errBody(t, 400)
		if e.Message != "migration not supported for "+prov {
			t.Errorf("%s: %q", prov, e.Message)
		}
	}

	// Concurrent migration: 409 naming the running one; an empty version is null.
	m := c.startMig(t, testOwner, pg.ID, migBody(pgPlan, "par", ""))
	e := c.do("POST", p, migBody(s.PlanID("postgresql-addon", "m_med"), "par", "16")).errBody(t, http.StatusConflict)
	if !strings.Contains(e.Message, "already running") || !strings.Contains(e.Message, m.MigrationID) || e.ID != wire.ErrIDConflict {
		t.Fatalf("409 = %+v", e)
	}
	// Unknown migration: GET and DELETE are 404; a migration of another add-on too.
	c.do("GET", p+"/migration_nope", nil).errBody(t, 404)
	c.do("DELETE", p+"/migration_nope", nil).errBody(t, 404)
	c.do("GET", migrationsPath(testOwner, es.ID)+"/"+m.MigrationID, nil).errBody(t, 404)
	c.do("GET", migrationsPath("orga_other", pg.ID)+"/"+m.MigrationID, nil).errBody(t, 404)
	c.do("GET", migrationsPath(testOwner, "addon_nope"), nil).errBody(t, 404)
	// Once done, another migration may start; the version is still 15.
	clock.Add(3 * time.Second)
	c.startMig(t, testOwner, pg.ID, migBody(pgPlan, "par", "15"))
	if v := envMap(s.Env(pg.ID))["POSTGRESQL_ADDON_VERSION"]; v != "15" {
		t.Fatalf("version = %s", v)
	}
}

func TestMigrationFailureInjection(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now, MigrationDuration: 9 * time.Second}) // 1s per timed step
	a := c.create(t, testOwner, createBody(s, "mysql-addon", "xs_sml", "par"))
	before, beforeAddon := s.Env(a.ID), s.Addons(testOwner)[0]
	target := s.PlanID("mysql-addon", "m_med")

	s.FailNextMigrations(1, "Dump failed: disk full")
	m := c.startMig(t, testOwner, a.ID, migBody(target, "par", "8.4"))
	clock.Add(4500 * time.Millisecond) // DUMP_AND_RESTORE is timed step 4: [4s, 5s)
	if got := c.getMig(t, testOwner, a.ID, m.MigrationID); got.Status != "RUNNING" || got.Steps[len(got.Steps)-1].Value != "DUMP_AND_RESTORE" {
		t.Fatalf("before failure: %+v", got)
	}
	clock.Add(500 * time.Millisecond)
	r := c.do("GET", migrationsPath(testOwner, a.ID)+"/"+m.MigrationID, nil)
	var raw map[string]any
	r.decode(t, &raw)
	checkMigrationJSON(t, raw)
	m = Migration{}
	r.decode(t, &m)
	last := m.Steps[len(m.Steps)-1]
	if m.Status != "FAILED" || last.Value != "DUMP_AND_RESTORE" || last.Status != "FAILED" || last.Message != "Dump failed: disk full" ||
		last.EndDate != "2026-03-01T12:00:05.000Z" {
		t.Fatalf("failed migration = %+v", m)
	}
	if fs, ok := failedStep(m); !ok || fs.Value != "DUMP_AND_RESTORE" || !migrationDone(m) || migrationSucceeded(m) {
		t.Fatalf("helpers on %+v", m)
	}
	clock.Add(time.Hour)
	if got := s.Addons(testOwner)[0]; got.Plan.ID != beforeAddon.Plan.ID || !slices.Equal(s.Env(a.ID), before) {
		t.Fatal("failed migration changed the add-on")
	}
	if got := c.getMig(t, testOwner, a.ID, m.MigrationID); got.Status != "FAILED" {
		t.Fatalf("status moved on: %s", got.Status)
	}
	// The counter is consumed: the next one succeeds.
	m = c.startMig(t, testOwner, a.ID, migBody(target, "par", "8.4"))
	clock.Add(9 * time.Second)
	if got := c.getMig(t, testOwner, a.ID, m.MigrationID); got.Status != "OK" {
		t.Fatalf("second migration: %s", got.Status)
	}

	// Faults.MigrationFailures: per provider, then "*".
	s.SetFaults(Faults{MigrationFailures: map[string]string{"mysql-addon": "UPDATE_DNS", "*": "RETRIEVE_TARGET_CLUSTER"}})
	m = c.startMig(t, testOwner, a.ID, migBody(target, "par", nil))
	clock.Add(time.Minute)
	m = c.getMig(t, testOwner, a.ID, m.MigrationID)
	if fs, _ := failedStep(m); m.Status != "FAILED" || fs.Value != "UPDATE_DNS" || !strings.Contains(fs.Message, "UPDATE_DNS") {
		t.Fatalf("mysql failure: %+v", m)
	}
	rd := c.create(t, testOwner, createBody(s, "redis-addon", "s_mono", "par"))
	m = c.startMig(t, testOwner, rd.ID, migBody(rd.Plan.ID, "par", nil))
	clock.Add(time.Second)
	if m = c.getMig(t, testOwner, rd.ID, m.MigrationID); m.Status != "FAILED" || len(m.Steps) != 3 {
		t.Fatalf("redis failure: %+v", m)
	}
	s.SetFaults(Faults{})

	// Admin endpoint.
	admin := *c
	admin.auth = ""
	var st migrationFailJSON
	admin.do("PUT", "/admin/migrations/fail", `{"count":2,"message":"boom"}`).decode(t, &st)
	if st.Count != 2 || st.Message != "boom" {
		t.Fatalf("PUT fail: %+v", st)
	}
	c.startMig(t, testOwner, rd.ID, migBody(rd.Plan.ID, "par", nil))
	admin.do("GET", "/admin/migrations/fail", nil).decode(t, &st)
	if st.Count != 1 {
		t.Fatalf("GET fail: %+v", st)
	}
	clock.Add(time.Minute)
	if ms := s.Migrations(rd.ID); ms[0].Status != "FAILED" {
		t.Fatalf("admin-injected failure: %+v", ms[0])
	}
	if r := admin.do("DELETE", "/admin/migrations/fail", nil); r.status != 204 {
		t.Fatalf("DELETE fail: %d", r.status)
	}
	if n, _ := s.pendingMigrationFailures(); n != 0 {
		t.Fatalf("pending %d", n)
	}
	admin.do("PUT", "/admin/migrations/fail", `{"count":-1}`).errBody(t, 400)
	admin.do("PUT", "/admin/migrations/fail", `nope`).errBody(t, 400)
	var ms []Migration
	admin.do("GET", "/admin/addons/"+rd.RealID+"/migrations", nil).decode(t, &ms)
	if len(ms) != 2 {
		t.Fatalf("admin migrations: %+v", ms)
	}
	admin.do("GET", "/admin/addons/addon_nope/migrations", nil).errBody(t, 404)

	// Faults JSON carries migrationFailures and validates step names.
	var fj map[string]any
	admin.do("PUT", "/admin/faults", `{"migrationFailures":{"*":"DUMP_AND_RESTORE"}}`).decode(t, &fj)
	if s.Faults().MigrationFailures["*"] != "DUMP_AND_RESTORE" || fj["migrationFailures"].(map[string]any)["*"] != "DUMP_AND_RESTORE" {
		t.Fatalf("faults %v", fj)
	}
	admin.do("PUT", "/admin/faults", `{"migrationFailures":{"*":"NOPE"}}`).errBody(t, 400)
	admin.do("PUT", "/admin/faults", `{"migrationFailures":{"*":"RETRIEVE_ADDON"}}`).errBody(t, 400)
}

func TestMigrationAbort(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now})
	a := c.create(t, testOwner, createBody(s, "postgresql-addon", "xs_sml", "par"))
	before := s.Env(a.ID)
	m := c.startMig(t, testOwner, a.ID, migBody(s.PlanID("postgresql-addon", "l_sml"), "par", nil))
	clock.Add(time.Second)
	path := migrationsPath(testOwner, a.ID) + "/" + m.MigrationID
	c.do("DELETE", path, nil).wantMessage(t)
	m = c.getMig(t, testOwner, a.ID, m.MigrationID)
	last := m.Steps[len(m.Steps)-1]
	if m.Status != "ABORTED" || last.Status != "ABORTED" || last.EndDate != "2026-03-01T12:00:01.000Z" || !migrationDone(m) {
		t.Fatalf("aborted = %+v", m)
	}
	clock.Add(time.Hour)
	if got := c.getMig(t, testOwner, a.ID, m.MigrationID); got.Status != "ABORTED" || s.Addons(testOwner)[0].Plan.Slug != "xs_sml" ||
		!slices.Equal(s.Env(a.ID), before) {
		t.Fatalf("abort did not keep the add-on: %+v", got)
	}
	// Aborting again is fine; aborting a finished migration is 409.
	c.do("DELETE", path, nil).wantMessage(t)
	m2 := c.startMig(t, testOwner, a.ID, migBody(a.Plan.ID, "par", nil))
	clock.Add(3 * time.Second)
	e := c.do("DELETE", migrationsPath(testOwner, a.ID)+"/"+m2.MigrationID, nil).errBody(t, http.StatusConflict)
	if !strings.Contains(e.Message, "already finished (status OK)") {
		t.Fatalf("409 %q", e.Message)
	}
	if n := s.Counts()[routeAbortMigration]; n != 3 {
		t.Fatalf("abort count %d", n)
	}
}

func TestMigrationListAndLifecycleEdges(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now, MigrationDuration: -1})
	a := c.create(t, testOwner, createBody(s, "mongodb-addon", "xs_sml", "par"))
	if r := c.do("GET", migrationsPath(testOwner, a.ID), nil); r.status != 200 || string(r.body) != "[]" {
		t.Fatalf("empty list: %d %s", r.status, r.body)
	}
	// A negative duration ends at the first read; M1 still answers RUNNING.
	// The last two start in the same millisecond: the later one is still first.
	var ids []string
	for i, slug := range []string{"xs_med", "s_sml", "m_sml", a.Plan.Slug} {
		m := c.startMig(t, testOwner, a.ID, migBody(s.PlanID("mongodb-addon", slug), "par", "4.0.3"))
		ids = append(ids, m.MigrationID)
		if i < 2 {
			clock.Add(time.Minute)
		}
	}
	r := c.do("GET", migrationsPath(testOwner, a.ID), nil)
	var raw []map[string]any
	r.decode(t, &raw)
	for _, x := range raw {
		checkMigrationJSON(t, x)
	}
	var list []Migration
	r.decode(t, &list)
	if len(list) != 4 {
		t.Fatalf("list %+v", list)
	}
	for i, mm := range list {
		if mm.MigrationID != ids[len(ids)-1-i] || mm.Status != "OK" {
			t.Fatalf("list[%d] = %s %s, want %s OK (newest first)", i, mm.MigrationID, mm.Status, ids[len(ids)-1-i])
		}
	}
	if got := s.Addons(testOwner)[0].Plan.ID; got != a.Plan.ID {
		t.Fatalf("plan %s", got)
	}

	// Deleting the add-on drops its migrations (even a running one).
	s2, c2 := newTest(t, Options{Now: clock.Now})
	b := c2.create(t, testOwner, createBody(s2, "redis-addon", "s_mono", "par"))
	c2.startMig(t, testOwner, b.ID, migBody(b.Plan.ID, "par", "8.8.0"))
	c2.do("DELETE", "/v2/organisations/"+testOwner+"/addons/"+b.ID, nil).wantMessage(t)
	clock.Add(time.Minute)
	c2.do("GET", migrationsPath(testOwner, b.ID), nil).errBody(t, 404)
	s2.mu.Lock()
	running := len(s2.migrating)
	s2.mu.Unlock()
	if s2.Migrations(b.ID) != nil || running != 0 {
		t.Fatal("migrations survived the add-on")
	}

	// Injected errors apply to the migration routes, and nothing is started.
	s2.SetFaults(Faults{ErrorRate: map[string]float64{routeStartMigration: 1}})
	d := c2.create(t, testOwner, createBody(s2, "redis-addon", "s_mono", "par"))
	if e := c2.do("POST", migrationsPath(testOwner, d.ID), migBody(d.Plan.ID, "par", nil)).errBody(t, 503); e.ID != -500 {
		t.Fatalf("%+v", e)
	}
	if len(s2.Migrations(d.ID)) != 0 || s2.CountsByStatus()[routeStartMigration][503] != 1 {
		t.Fatal("faulted M1")
	}
	s2.SetFaults(Faults{ErrorRate: map[string]float64{"*": 1}})
	c2.do("GET", migrationsPath(testOwner, d.ID), nil).errBody(t, 503)
	c2.do("GET", "/v4/addon-providers/redis-addon", nil).errBody(t, 503)
	s2.SetFaults(Faults{})
	c2.auth = ""
	c2.do("GET", migrationsPath(testOwner, d.ID), nil).errBody(t, 401)
}

func TestProviderInfo(t *testing.T) {
	s, c := newTest(t, Options{})
	r := c.do("GET", "/v4/addon-providers/postgresql-addon", nil)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var raw map[string]any
	r.decode(t, &raw)
	wantKeys(t, "provider info", raw, "providerId", "clusters", "dedicated", "defaultDedicatedVersion")
	for v, d := range raw["dedicated"].(map[string]any) {
		wantKeys(t, "dedicated["+v+"]", d.(map[string]any), "features")
		for _, f := range d.(map[string]any)["features"].([]any) {
			wantKeys(t, "feature", f.(map[string]any), "name", "enabled")
		}
	}
	for _, cl := range raw["clusters"].([]any) {
		wantKeys(t, "cluster", cl.(map[string]any), "id", "label", "zone", "version", "features")
	}
	var info ProviderInfo
	r.decode(t, &info)
	if info.ProviderID != "postgresql-addon" || !slices.Equal(infoVersions(info), []string{"14", "15", "16", "17", "18"}) ||
		info.DefaultDedicatedVersion != "15" || len(info.Clusters) != 3 || info.Clusters[0].Version != "15" ||
		!strings.HasPrefix(info.Clusters[0].ID, "cluster_") {
		t.Fatalf("pg info %+v", info)
	}
	for prov, want := range map[string]string{
		"mysql-addon": "5.7 8.0 8.4", "redis-addon": "7.2.4 8.8.0", "mongodb-addon": "4.0.3", "es-addon": "7 8 9",
	} {
		var pi ProviderInfo
		c.do("GET", "/v4/addon-providers/"+prov, nil).decode(t, &pi)
		if strings.Join(infoVersions(pi), " ") != want || !hasVersion(pi, pi.DefaultDedicatedVersion) || pi.Clusters == nil {
			t.Errorf("%s: %+v", prov, pi)
		}
		if got := strings.Join(s.ProviderVersions(prov), " "); got != want {
			t.Errorf("ProviderVersions(%s) = %s", prov, got)
		}
	}
	c.do("GET", "/v4/addon-providers/nope", nil).errBody(t, 404)
	if e := c.do("GET", "/v4/addon-providers/cellar-addon", nil).errBody(t, 404); !strings.Contains(e.Message, "no version information") {
		t.Fatalf("%+v", e)
	}
	if s.Counts()[routeProviderInfo] != 7 {
		t.Fatalf("counts %v", s.Counts())
	}
}
