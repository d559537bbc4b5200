package clevercloud_test

// Integration tests of the migration endpoints (clever-cloud-api-more.md §1)
// and the v4 provider info: the real client against the real fake.

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

var (
	keyStartMigration = http.MethodPost + " " + clevercloud.RouteMigrations
	keyListMigrations = http.MethodGet + " " + clevercloud.RouteMigrations
	keyGetMigration   = http.MethodGet + " " + clevercloud.RouteMigration
	keyAbortMigration = http.MethodDelete + " " + clevercloud.RouteMigration
	keyProviderInfo   = http.MethodGet + " " + clevercloud.RouteProviderInfo
)

// itClock is a controllable clock for the fake (the client keeps real time;
// the offsets used stay far below the fake's OAuth clock-skew limit).
type itClock struct {
	mu sync.Mutex
	t  time.Time
}

func newITClock() *itClock { return &itClock{t: time.Now()} }

func (c *itClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *itClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func ptr(s string) *string { return &s }

func envOf(t *testing.T, c *clevercloud.Client, addonID string) map[string]string {
	t.Helper()
	vars, err := c.GetAddonEnv(ctxFor(t, 5*time.Second), itOwner, addonID)
	if err != nil {
		t.Fatalf("GetAddonEnv: %v", err)
	}
	m := map[string]string{}
	for _, v := range vars {
		m[v.Name] = v.Value
	}
	return m
}

func sameEnv(a, b map[string]string) bool {
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

// createIT creates an add-on of provider/slug in region with options.version.
func createIT(t *testing.T, fake *fakeapi.Server, c *clevercloud.Client, provider, slug, region, version string) *clevercloud.Addon {
	t.Helper()
	a, err := c.CreateAddon(ctxFor(t, 5*time.Second), itOwner, clevercloud.CreateOpts{
		Name: "mig " + provider, Region: region, ProviderID: provider, Plan: fake.PlanID(provider, slug),
		Options: clevercloud.Options{Version: version},
	})
	if err != nil {
		t.Fatalf("CreateAddon(%s %s): %v", provider, slug, err)
	}
	return a
}

// pollMigration polls like Terraform (GetMigration until Done) and returns the final state.
func pollMigration(t *testing.T, c *clevercloud.Client, addonID, migrationID string, every, limit time.Duration) *clevercloud.Migration {
	t.Helper()
	ctx := ctxFor(t, limit)
	for {
		m, err := c.GetMigration(ctx, itOwner, addonID, migrationID)
		if err != nil {
			t.Fatalf("GetMigration: %v", err)
		}
		if m.Done() {
			return m
		}
		select {
		case <-ctx.Done():
			t.Fatalf("migration %s still %s after %v", migrationID, m.Status, limit)
		case <-time.After(every):
		}
	}
}

func TestFakeIntegrationMigrationPlanChange(t *testing.T) {
	clock := newITClock()
	fake, url, cred := startFake(t, fakeapi.Options{Now: clock.Now})
	c := newITClient(t, url, clientCreds(cred), nil)
	ctx := ctxFor(t, 10*time.Second)

	info, err := c.GetProviderInfo(ctx, "postgresql-addon")
	if err != nil {
		t.Fatalf("GetProviderInfo: %v", err)
	}
	if !slices.Equal(info.Versions(), []string{"14", "15", "16", "17", "18"}) || info.DefaultDedicatedVersion != "15" {
		t.Fatalf("provider info %+v", info)
	}

	a := createIT(t, fake, c, "postgresql-addon", "xs_sml", "par", "")
	before := envOf(t, c, a.ID)
	target := fake.PlanID("postgresql-addon", "m_med")
	// Terraform's pre-check: nothing running.
	if ms, err := c.ListMigrations(ctx, itOwner, a.ID); err != nil || ms == nil || len(ms) != 0 {
		t.Fatalf("ListMigrations before = %v, %v (want empty, non-nil)", ms, err)
	}
	m, err := c.StartMigration(ctx, itOwner, a.ID, clevercloud.MigrationRequest{PlanID: target, Region: a.Region, Version: ptr(before["POSTGRESQL_ADDON_VERSION"])})
	if err != nil {
		t.Fatalf("StartMigration: %v", err)
	}
	if !strings.HasPrefix(m.MigrationID, "migration_") || m.Status != clevercloud.MigrationRunning || m.Done() || len(m.Steps) == 0 {
		t.Fatalf("M1 = %+v", m)
	}
	if _, err := time.Parse(time.RFC3339, m.RequestDate); err != nil {
		t.Fatalf("requestDate %q: %v", m.RequestDate, err)
	}

	// Halfway: RUNNING, add-on and credentials untouched.
	clock.Add(1500 * time.Millisecond)
	got, err := c.GetMigration(ctx, itOwner, a.ID, m.MigrationID)
	if err != nil || got.Status != clevercloud.MigrationRunning || len(got.Steps) <= len(m.Steps) {
		t.Fatalf("halfway = %+v, %v", got, err)
	}
	ad, err := c.GetAddon(ctx, itOwner, a.ID)
	if err != nil || ad.Plan.ID != a.Plan.ID || !sameEnv(envOf(t, c, a.ID), before) {
		t.Fatalf("add-on changed before the end (plan %s, err %v)", ad.Plan.Slug, err)
	}

	// After the duration: OK, then the plan and the credentials have changed.
	clock.Add(1500 * time.Millisecond)
	got, err = c.GetMigration(ctx, itOwner, a.ID, m.MigrationID)
	if err != nil || !got.Done() || !got.Succeeded() {
		t.Fatalf("final = %+v, %v", got, err)
	}
	for _, st := range got.Steps {
		if st.Status != clevercloud.MigrationOK || st.EndDate == "" {
			t.Fatalf("final step %+v", st)
		}
	}
	ad, err = c.GetAddon(ctx, itOwner, a.ID)
	if err != nil || ad.Plan.ID != target || ad.Plan.Slug != "m_med" || ad.Region != "par" || !slices.Equal(ad.ConfigKeys, a.ConfigKeys) {
		t.Fatalf("add-on after migration = %+v, %v", ad, err)
	}
	after := envOf(t, c, a.ID)
	if after["POSTGRESQL_ADDON_PASSWORD"] == before["POSTGRESQL_ADDON_PASSWORD"] || after["POSTGRESQL_ADDON_HOST"] == before["POSTGRESQL_ADDON_HOST"] ||
		after["POSTGRESQL_ADDON_VERSION"] != before["POSTGRESQL_ADDON_VERSION"] || !strings.Contains(after["POSTGRESQL_ADDON_URI"], after["POSTGRESQL_ADDON_HOST"]) {
		t.Fatalf("credentials after migration: %v", after)
	}
	if ms, err := c.ListMigrations(ctx, itOwner, a.RealID); err != nil || len(ms) != 1 || ms[0].MigrationID != m.MigrationID || !ms[0].Succeeded() {
		t.Fatalf("ListMigrations = %+v, %v", ms, err)
	}
}

func TestFakeIntegrationMigrationVersionUpgrade(t *testing.T) {
	// Real time: a short duration and Terraform-like polling.
	fake, url, cred := startFake(t, fakeapi.Options{MigrationDuration: 300 * time.Millisecond})
	c := newITClient(t, url, clientCreds(cred), nil)
	ctx := ctxFor(t, 10*time.Second)

	a := createIT(t, fake, c, "mysql-addon", "xs_sml", "par", "8.0")
	before := envOf(t, c, a.ID)
	m, err := c.StartMigration(ctx, itOwner, a.ID, clevercloud.MigrationRequest{PlanID: a.Plan.ID, Region: a.Region, Version: ptr("8.4")})
	if err != nil {
		t.Fatalf("StartMigration: %v", err)
	}
	if v := envOf(t, c, a.ID)["MYSQL_ADDON_VERSION"]; v != "8.0" {
		t.Fatalf("version changed at once: %s", v)
	}
	final := pollMigration(t, c, a.ID, m.MigrationID, 50*time.Millisecond, 5*time.Second)
	if !final.Succeeded() {
		t.Fatalf("final %+v", final)
	}
	after := envOf(t, c, a.ID)
	if after["MYSQL_ADDON_VERSION"] != "8.4" || after["MYSQL_ADDON_PASSWORD"] == before["MYSQL_ADDON_PASSWORD"] {
		t.Fatalf("env after upgrade %v", after)
	}
	if n := fake.Counts()[keyGetMigration]; n < 2 {
		t.Fatalf("polled %d times", n)
	}

	// Redis: 7.2.4 -> 8.8.0 through the same path.
	rd := createIT(t, fake, c, "redis-addon", "s_mono", "par", "")
	m, err = c.StartMigration(ctx, itOwner, rd.ID, clevercloud.MigrationRequest{PlanID: rd.Plan.ID, Region: rd.Region, Version: ptr("8.8.0")})
	if err != nil {
		t.Fatalf("StartMigration(redis): %v", err)
	}
	if final := pollMigration(t, c, rd.ID, m.MigrationID, 50*time.Millisecond, 5*time.Second); !final.Succeeded() {
		t.Fatalf("redis final %+v", final)
	}
	if v := envOf(t, c, rd.ID)["REDIS_VERSION"]; v != "8.8.0" {
		t.Fatalf("REDIS_VERSION = %s", v)
	}
}

func TestFakeIntegrationMigrationRefusals(t *testing.T) {
	clock := newITClock()
	fake, url, cred := startFake(t, fakeapi.Options{Now: clock.Now})
	c := newITClient(t, url, clientCreds(cred), nil)
	ctx := ctxFor(t, 10*time.Second)
	pg := createIT(t, fake, c, "postgresql-addon", "xs_sml", "par", "16")

	// Downgrade: 400, not retried, the reason in the message and the fields.
	_, err := c.StartMigration(ctx, itOwner, pg.ID, clevercloud.MigrationRequest{PlanID: pg.Plan.ID, Region: "par", Version: ptr("15")})
	ae := asAPIError(t, err)
	if !clevercloud.IsBadRequest(err) || clevercloud.IsRetryable(err) || !strings.Contains(ae.Message, "downgrades are not supported") ||
		ae.Fields["version"] == "" || ae.Route != clevercloud.RouteMigrations {
		t.Fatalf("downgrade: %v (fields %v)", err, ae.Fields)
	}
	// Unknown version, slug instead of plan id, region outside the plan's zones.
	for _, req := range []clevercloud.MigrationRequest{
		{PlanID: pg.Plan.ID, Region: "par", Version: ptr("99")},
		{PlanID: "m_med", Region: "par"},
		{PlanID: fake.PlanID("postgresql-addon", "dev"), Region: "sgp"},
	} {
		if _, err := c.StartMigration(ctx, itOwner, pg.ID, req); !clevercloud.IsBadRequest(err) {
			t.Errorf("%+v: err = %v, want 400", req, err)
		}
	}
	// Unsupported provider.
	kv := createIT(t, fake, c, "kv", "alpha", "par", "")
	_, err = c.StartMigration(ctx, itOwner, kv.ID, clevercloud.MigrationRequest{PlanID: kv.Plan.ID, Region: "par"})
	if ae := asAPIError(t, err); !clevercloud.IsBadRequest(err) || ae.Message != "migration not supported for kv" {
		t.Fatalf("kv: %v", err)
	}
	// Elasticsearch cannot change region.
	es := createIT(t, fake, c, "es-addon", "s", "par", "")
	_, err = c.StartMigration(ctx, itOwner, es.ID, clevercloud.MigrationRequest{PlanID: es.Plan.ID, Region: "rbx"})
	if ae := asAPIError(t, err); !clevercloud.IsBadRequest(err) || !strings.Contains(ae.Message, "migration not supported for es-addon") {
		t.Fatalf("es region: %v", err)
	}
	if n := fake.Counts()[keyStartMigration]; n != 6 {
		t.Fatalf("M1 count = %d, want 6 (4xx are never retried)", n)
	}

	// Concurrent migration: 409, not retried; the list shows the running one.
	m, err := c.StartMigration(ctx, itOwner, pg.ID, clevercloud.MigrationRequest{PlanID: pg.Plan.ID, Region: "par", Version: ptr("17")})
	if err != nil {
		t.Fatalf("StartMigration: %v", err)
	}
	_, err = c.StartMigration(ctx, itOwner, pg.ID, clevercloud.MigrationRequest{PlanID: fake.PlanID("postgresql-addon", "l_sml"), Region: "par", Version: ptr("17")})
	ae = asAPIError(t, err)
	if ae.StatusCode != http.StatusConflict || !strings.Contains(ae.Message, m.MigrationID) || clevercloud.IsRetryable(err) {
		t.Fatalf("concurrent: %v", err)
	}
	if statusCount(fake, keyStartMigration, http.StatusConflict) != 1 {
		t.Fatalf("409 retried: %v", fake.CountsByStatus()[keyStartMigration])
	}
	ms, err := c.ListMigrations(ctx, itOwner, pg.ID)
	if err != nil || len(ms) != 1 || ms[0].Status != clevercloud.MigrationRunning {
		t.Fatalf("list while running = %+v, %v", ms, err)
	}

	// Unknown add-on or migration: IsNotFound.
	if _, err := c.ListMigrations(ctx, itOwner, "addon_00000000-0000-4000-8000-000000000000"); !clevercloud.IsNotFound(err) {
		t.Fatalf("ListMigrations(unknown) = %v", err)
	}
	if _, err := c.GetMigration(ctx, itOwner, pg.ID, "migration_nope"); !clevercloud.IsNotFound(err) {
		t.Fatalf("GetMigration(unknown) = %v", err)
	}
	if err := c.AbortMigration(ctx, itOwner, pg.ID, "migration_nope"); !clevercloud.IsNotFound(err) {
		t.Fatalf("AbortMigration(unknown) = %v", err)
	}
	if _, err := c.GetMigration(ctx, itOwner, kv.ID, m.MigrationID); !clevercloud.IsNotFound(err) {
		t.Fatalf("migration of another add-on = %v", err)
	}
	if _, err := c.GetProviderInfo(ctx, "cellar-addon"); !clevercloud.IsNotFound(err) {
		t.Fatalf("GetProviderInfo(cellar) = %v", err)
	}
}

func TestFakeIntegrationMigrationFailureAndAbort(t *testing.T) {
	clock := newITClock()
	fake, url, cred := startFake(t, fakeapi.Options{Now: clock.Now})
	c := newITClient(t, url, clientCreds(cred), nil)
	ctx := ctxFor(t, 10*time.Second)
	pg := createIT(t, fake, c, "postgresql-addon", "xs_sml", "par", "")
	before := envOf(t, c, pg.ID)
	target := fake.PlanID("postgresql-addon", "l_sml")

	// Injected failure.
	fake.FailNextMigrations(1, "Dump and restore failed: out of disk space")
	m, err := c.StartMigration(ctx, itOwner, pg.ID, clevercloud.MigrationRequest{PlanID: target, Region: "par", Version: ptr("16")})
	if err != nil {
		t.Fatalf("StartMigration: %v", err)
	}
	clock.Add(time.Minute)
	got, err := c.GetMigration(ctx, itOwner, pg.ID, m.MigrationID)
	if err != nil || got.Status != clevercloud.MigrationFailed || !got.Done() || got.Succeeded() {
		t.Fatalf("failed migration = %+v, %v", got, err)
	}
	step, ok := got.FailedStep()
	if !ok || step.Value != fakeapi.DefaultMigrationFailureStep || step.Message != "Dump and restore failed: out of disk space" || step.EndDate == "" {
		t.Fatalf("failed step %+v", step)
	}
	if got.Steps[len(got.Steps)-1] != step {
		t.Fatalf("steps continue after the failure: %+v", got.Steps)
	}
	ad, err := c.GetAddon(ctx, itOwner, pg.ID)
	if err != nil || ad.Plan.ID != pg.Plan.ID || !sameEnv(envOf(t, c, pg.ID), before) {
		t.Fatalf("failed migration changed the add-on (plan %s, err %v)", ad.Plan.Slug, err)
	}

	// Abort.
	m, err = c.StartMigration(ctx, itOwner, pg.ID, clevercloud.MigrationRequest{PlanID: target, Region: "par", Version: ptr("16")})
	if err != nil {
		t.Fatalf("StartMigration: %v", err)
	}
	clock.Add(time.Second)
	if err := c.AbortMigration(ctx, itOwner, pg.ID, m.MigrationID); err != nil {
		t.Fatalf("AbortMigration: %v", err)
	}
	if err := c.AbortMigration(ctx, itOwner, pg.ID, m.MigrationID); err != nil {
		t.Fatalf("AbortMigration again: %v", err)
	}
	clock.Add(time.Minute)
	got, err = c.GetMigration(ctx, itOwner, pg.ID, m.MigrationID)
	if err != nil || got.Status != clevercloud.MigrationAborted || !got.Done() || got.Steps[len(got.Steps)-1].Status != clevercloud.MigrationAborted {
		t.Fatalf("aborted = %+v, %v", got, err)
	}
	if ad, _ := c.GetAddon(ctx, itOwner, pg.ID); ad.Plan.ID != pg.Plan.ID || !sameEnv(envOf(t, c, pg.ID), before) {
		t.Fatal("aborted migration changed the add-on")
	}

	// A finished migration cannot be aborted (409).
	m2, err := c.StartMigration(ctx, itOwner, pg.ID, clevercloud.MigrationRequest{PlanID: target, Region: "par", Version: ptr("16")})
	if err != nil {
		t.Fatalf("StartMigration: %v", err)
	}
	clock.Add(time.Minute)
	if err := c.AbortMigration(ctx, itOwner, pg.ID, m2.MigrationID); asAPIError(t, err).StatusCode != http.StatusConflict {
		t.Fatalf("abort finished = %v", err)
	}

	// The list is newest first; the fake's inspection helper agrees.
	ms, err := c.ListMigrations(ctx, itOwner, pg.ID)
	if err != nil || len(ms) != 3 {
		t.Fatalf("ListMigrations = %+v, %v", ms, err)
	}
	var statuses []string
	for _, x := range ms {
		statuses = append(statuses, x.Status)
	}
	if ms[0].MigrationID != m2.MigrationID || ms[1].MigrationID != m.MigrationID ||
		strings.Join(statuses, ",") != "OK,ABORTED,FAILED" {
		t.Fatalf("order %v", statuses)
	}
	if fm := fake.Migrations(pg.ID); len(fm) != 3 || fm[0].MigrationID != ms[0].MigrationID {
		t.Fatalf("fake.Migrations = %+v", fm)
	}
	if v := envOf(t, c, pg.ID)["POSTGRESQL_ADDON_VERSION"]; v != "16" {
		t.Fatalf("version %s", v)
	}
}

func TestFakeIntegrationMigrationFaults(t *testing.T) {
	clock := newITClock()
	fake, url, cred := startFake(t, fakeapi.Options{Now: clock.Now})
	c := newITClient(t, url, clientCreds(cred), nil)
	ctx := ctxFor(t, 10*time.Second)
	pg := createIT(t, fake, c, "postgresql-addon", "xs_sml", "par", "")
	req := clevercloud.MigrationRequest{PlanID: pg.Plan.ID, Region: "par", Version: ptr("15")}

	// A 503 on M1 is returned at once (never retried) and starts nothing.
	fake.SetFaults(fakeapi.Faults{ErrorRate: map[string]float64{keyStartMigration: 1}})
	if _, err := c.StartMigration(ctx, itOwner, pg.ID, req); !clevercloud.IsRetryable(err) || fake.Counts()[keyStartMigration] != 1 {
		t.Fatalf("faulted M1: %v, count %d", err, fake.Counts()[keyStartMigration])
	}
	if len(fake.Migrations(pg.ID)) != 0 {
		t.Fatal("faulted M1 started a migration")
	}
	// Reads are retried through transient 503s: fault every route, then clear it.
	fake.SetFaults(fakeapi.Faults{})
	m, err := c.StartMigration(ctx, itOwner, pg.ID, req)
	if err != nil {
		t.Fatalf("StartMigration: %v", err)
	}
	fake.SetFaults(fakeapi.Faults{ErrorRate: map[string]float64{keyGetMigration: 1}})
	if _, err := c.GetMigration(ctx, itOwner, pg.ID, m.MigrationID); !clevercloud.IsRetryable(err) {
		t.Fatalf("faulted GetMigration: %v", err)
	}
	if n := statusCount(fake, keyGetMigration, http.StatusServiceUnavailable); n != 4 {
		t.Fatalf("GetMigration attempts = %d, want 1 + 3 retries", n)
	}
	fake.SetFaults(fakeapi.Faults{})

	// Per-provider injected failure through Faults.
	clock.Add(time.Minute)
	fake.SetFaults(fakeapi.Faults{MigrationFailures: map[string]string{"postgresql-addon": "UPDATE_DNS"}})
	m, err = c.StartMigration(ctx, itOwner, pg.ID, req)
	if err != nil {
		t.Fatalf("StartMigration: %v", err)
	}
	clock.Add(time.Minute)
	got, err := c.GetMigration(ctx, itOwner, pg.ID, m.MigrationID)
	if step, _ := got.FailedStep(); err != nil || got.Status != clevercloud.MigrationFailed || step.Value != "UPDATE_DNS" || step.Message == "" {
		t.Fatalf("fault-injected failure = %+v, %v", got, err)
	}
}

func TestFakeIntegrationMigrationMetrics(t *testing.T) {
	clock := newITClock()
	fake, url, cred := startFake(t, fakeapi.Options{Now: clock.Now})
	reg := prometheus.NewRegistry()
	c := newITClient(t, url, clientCreds(cred), func(cfg *clevercloud.Config) { cfg.Metrics = clevercloud.NewMetrics(reg) })
	ctx := ctxFor(t, 10*time.Second)
	pg := createIT(t, fake, c, "postgresql-addon", "xs_sml", "par", "")

	m, err := c.StartMigration(ctx, itOwner, pg.ID, clevercloud.MigrationRequest{PlanID: pg.Plan.ID, Region: "par"})
	if err != nil {
		t.Fatalf("StartMigration: %v", err)
	}
	if _, err := c.ListMigrations(ctx, itOwner, pg.RealID); err != nil {
		t.Fatalf("ListMigrations: %v", err)
	}
	if _, err := c.GetMigration(ctx, itOwner, pg.ID, m.MigrationID); err != nil {
		t.Fatalf("GetMigration: %v", err)
	}
	if err := c.AbortMigration(ctx, itOwner, pg.ID, m.MigrationID); err != nil {
		t.Fatalf("AbortMigration: %v", err)
	}
	if _, err := c.GetMigration(ctx, itOwner, pg.ID, "migration_nope"); !clevercloud.IsNotFound(err) {
		t.Fatalf("GetMigration(unknown): %v", err)
	}
	if _, err := c.GetProviderInfo(ctx, "mysql-addon"); err != nil {
		t.Fatalf("GetProviderInfo: %v", err)
	}

	// The fake counted them under the same route keys the client's templates build.
	counts := fake.Counts()
	for key, want := range map[string]int{keyStartMigration: 1, keyListMigrations: 1, keyGetMigration: 2, keyAbortMigration: 1, keyProviderInfo: 1} {
		if counts[key] != want {
			t.Errorf("fake count %s = %d, want %d", key, counts[key], want)
		}
	}

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	templates := []string{clevercloud.RouteAddons, clevercloud.RouteMigrations, clevercloud.RouteMigration, clevercloud.RouteProviderInfo}
	forbidden := []string{pg.ID, pg.RealID, itOwner, m.MigrationID, "migration_", "addon_", "postgresql_", "mysql-addon", url}
	requests := map[string]float64{}
	for _, mf := range mfs {
		for _, met := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range met.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
				for _, bad := range forbidden {
					if strings.Contains(lp.GetValue(), bad) {
						t.Errorf("%s: label %s=%q contains the raw value %q", mf.GetName(), lp.GetName(), lp.GetValue(), bad)
					}
				}
			}
			if r, ok := labels["route"]; ok && !slices.Contains(templates, r) {
				t.Errorf("%s: route label %q is not a route template", mf.GetName(), r)
			}
			if mf.GetName() == "clevercloud_api_requests_total" {
				requests[labels["method"]+" "+labels["route"]+" "+labels["code"]] = met.GetCounter().GetValue()
			}
		}
	}
	want := map[string]float64{
		"POST " + clevercloud.RouteAddons + " 200":      1,
		"POST " + clevercloud.RouteMigrations + " 200":  1,
		"GET " + clevercloud.RouteMigrations + " 200":   1,
		"GET " + clevercloud.RouteMigration + " 200":    1,
		"GET " + clevercloud.RouteMigration + " 404":    1,
		"DELETE " + clevercloud.RouteMigration + " 200": 1,
		"GET " + clevercloud.RouteProviderInfo + " 200": 1,
	}
	for k, v := range want {
		if requests[k] != v {
			t.Errorf("requests_total{%s} = %v, want %v", k, requests[k], v)
		}
	}
	if len(requests) != len(want) {
		t.Errorf("requests_total series = %v", requests)
	}
}
