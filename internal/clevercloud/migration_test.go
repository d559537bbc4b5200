package clevercloud

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

const migrationJSON = `{"migrationId":"migration_1","requestDate":"2026-01-02T10:00:00Z","status":"RUNNING",
 "steps":[{"value":"RETRIEVE_ADDON","status":"OK","startDate":"2026-01-02T10:00:00Z","endDate":"2026-01-02T10:00:01Z","message":"m","name":"x"},
          {"value":"CREATE_ADDON_ON_TARGET_CLUSTER","status":"RUNNING","startDate":"2026-01-02T10:00:01Z"}]}`

var wantMigration = &Migration{
	MigrationID: "migration_1", RequestDate: "2026-01-02T10:00:00Z", Status: MigrationRunning,
	Steps: []MigrationStep{
		{Value: "RETRIEVE_ADDON", Status: "OK", StartDate: "2026-01-02T10:00:00Z", EndDate: "2026-01-02T10:00:01Z", Message: "m"},
		{Value: "CREATE_ADDON_ON_TARGET_CLUSTER", Status: "RUNNING", StartDate: "2026-01-02T10:00:01Z"},
	},
}

func TestMigrationEndpoints(t *testing.T) {
	ctx := context.Background()
	v := "8.4"
	cases := []struct {
		name     string
		call     func(*Client) (any, error)
		respBody string
		method   string
		path     string
		reqBody  string
		want     any
	}{
		{
			name: "StartMigration sends all three keys",
			call: func(c *Client) (any, error) {
				return c.StartMigration(ctx, "orga_1", "addon_1", MigrationRequest{PlanID: "plan_1", Region: "par", Version: &v})
			},
			respBody: migrationJSON, method: "POST", path: "/v2/organisations/orga_1/addons/addon_1/migrations",
			reqBody: `{"planId":"plan_1","region":"par","version":"8.4"}`, want: wantMigration,
		},
		{
			name: "StartMigration nil version is null",
			call: func(c *Client) (any, error) {
				return c.StartMigration(ctx, "orga_1", "addon_1", MigrationRequest{PlanID: "plan_1", Region: "par"})
			},
			respBody: migrationJSON, method: "POST", path: "/v2/organisations/orga_1/addons/addon_1/migrations",
			reqBody: `{"planId":"plan_1","region":"par","version":null}`, want: wantMigration,
		},
		{
			name:     "ListMigrations",
			call:     func(c *Client) (any, error) { return c.ListMigrations(ctx, "orga_1", "addon_1") },
			respBody: "[" + migrationJSON + "]", method: "GET", path: "/v2/organisations/orga_1/addons/addon_1/migrations",
			want: []Migration{*wantMigration},
		},
		{
			name:     "ListMigrations null is empty",
			call:     func(c *Client) (any, error) { return c.ListMigrations(ctx, "orga_1", "addon_1") },
			respBody: "null", method: "GET", path: "/v2/organisations/orga_1/addons/addon_1/migrations",
			want: []Migration{},
		},
		{
			name:     "GetMigration",
			call:     func(c *Client) (any, error) { return c.GetMigration(ctx, "orga_1", "addon_1", "migration_1") },
			respBody: migrationJSON, method: "GET", path: "/v2/organisations/orga_1/addons/addon_1/migrations/migration_1",
			want: wantMigration,
		},
		{
			name:     "AbortMigration",
			call:     func(c *Client) (any, error) { return nil, c.AbortMigration(ctx, "orga_1", "addon_1", "migration_1") },
			respBody: `"aborted"`, method: "DELETE", path: "/v2/organisations/orga_1/addons/addon_1/migrations/migration_1",
		},
		{
			name: "GetProviderInfo",
			call: func(c *Client) (any, error) { return c.GetProviderInfo(ctx, "postgresql-addon") },
			respBody: `{"providerId":"postgresql-addon","clusters":[{"id":"cluster_1","label":"par-postgresql-c6","zone":"par","version":"15","features":[]}],
			  "dedicated":{"17":{"features":[{"name":"encryption","enabled":false}]},"18":{"features":[]}},"defaultDedicatedVersion":"17"}`,
			method: "GET", path: "/v4/addon-providers/postgresql-addon",
			want: &ProviderInfo{ProviderID: "postgresql-addon",
				Clusters: []ProviderCluster{{ID: "cluster_1", Label: "par-postgresql-c6", Zone: "par", Version: "15", Features: []ProviderFeature{}}},
				Dedicated: map[string]DedicatedVersion{
					"17": {Features: []ProviderFeature{{Name: "encryption"}}},
					"18": {Features: []ProviderFeature{}},
				},
				DefaultDedicatedVersion: "17"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{body: tc.respBody}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			c := mustClient(t, Config{Endpoint: srv.URL})
			got, err := tc.call(c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("result:\n got %#v\nwant %#v", got, tc.want)
			}
			if len(rec.reqs) != 1 {
				t.Fatalf("%d requests", len(rec.reqs))
			}
			r := rec.reqs[0]
			if r.method != tc.method || r.path != tc.path || r.body != tc.reqBody {
				t.Errorf("request %s %s %s, want %s %s %s", r.method, r.path, r.body, tc.method, tc.path, tc.reqBody)
			}
		})
	}
}

func TestListMigrationsNewestFirst(t *testing.T) {
	rec := &recorder{body: `[
	 {"migrationId":"migration_old","requestDate":"2026-01-02T10:00:00Z","status":"OK","steps":[]},
	 {"migrationId":"migration_new","requestDate":"2026-01-03T10:00:00.5+01:00","status":"RUNNING","steps":[]},
	 {"migrationId":"migration_mid","requestDate":"2026-01-02T10:00:00.001Z","status":"FAILED","steps":[]}]`}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	ms, err := mustClient(t, Config{Endpoint: srv.URL}).ListMigrations(context.Background(), "orga_1", "addon_1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.MigrationID)
	}
	if !slices.Equal(ids, []string{"migration_new", "migration_mid", "migration_old"}) {
		t.Fatalf("order %v", ids)
	}
}

func TestMigrationCallsValidateInputs(t *testing.T) {
	rec := &recorder{body: `{}`}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL})
	ctx := context.Background()
	req := MigrationRequest{PlanID: "plan_1", Region: "par"}
	errs := []error{
		func() error { _, err := c.StartMigration(ctx, "orga_1", "", req); return err }(),
		func() error {
			_, err := c.StartMigration(ctx, "orga_1", "addon_1", MigrationRequest{Region: "par"})
			return err
		}(),
		func() error {
			_, err := c.StartMigration(ctx, "orga_1", "addon_1", MigrationRequest{PlanID: "plan_1"})
			return err
		}(),
		func() error { _, err := c.ListMigrations(ctx, "", "addon_1"); return err }(),
		func() error { _, err := c.GetMigration(ctx, "orga_1", "addon_1", ""); return err }(),
		c.AbortMigration(ctx, "orga_1", "addon_1", ""),
		func() error { _, err := c.GetProviderInfo(ctx, ""); return err }(),
	}
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "empty") {
			t.Errorf("call %d: err = %v, want an empty-value error", i, err)
		}
	}
	if n := rec.attempts.Load(); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

func TestStartMigrationRetryPolicy(t *testing.T) {
	// Like create: never retried on 5xx, retried on 429.
	var count atomic.Int64
	srv := httptest.NewServer(flaky(100, 503, provider503, nil, migrationJSON, &count))
	c := mustClient(t, Config{Endpoint: srv.URL})
	req := MigrationRequest{PlanID: "plan_1", Region: "par"}
	_, err := c.StartMigration(context.Background(), "orga_1", "addon_1", req)
	srv.Close()
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 503 || count.Load() != 1 || ae.Route != RouteMigrations {
		t.Fatalf("err=%v attempts=%d", err, count.Load())
	}
	count.Store(0)
	srv = httptest.NewServer(flaky(1, 429, ``, nil, migrationJSON, &count))
	defer srv.Close()
	c = mustClient(t, Config{Endpoint: srv.URL})
	if m, err := c.StartMigration(context.Background(), "orga_1", "addon_1", req); err != nil || m.MigrationID != "migration_1" || count.Load() != 2 {
		t.Fatalf("429: err=%v attempts=%d", err, count.Load())
	}
	// Reads and aborts are retried on 503.
	count.Store(0)
	srv2 := httptest.NewServer(flaky(2, 503, provider503, nil, migrationJSON, &count))
	defer srv2.Close()
	c = mustClient(t, Config{Endpoint: srv2.URL})
	if _, err := c.GetMigration(context.Background(), "orga_1", "addon_1", "migration_1"); err != nil || count.Load() != 3 {
		t.Fatalf("GetMigration: err=%v attempts=%d", err, count.Load())
	}
	count.Store(0)
	if err := c.AbortMigration(context.Background(), "orga_1", "addon_1", "migration_1"); err != nil || count.Load() != 3 {
		t.Fatalf("AbortMigration: err=%v attempts=%d", err, count.Load())
	}
}

func TestMigrationHelpers(t *testing.T) {
	for _, tc := range []struct {
		status    string
		done, ok_ bool
	}{
		{MigrationRunning, false, false}, {MigrationRecovering, false, false},
		{MigrationOK, true, true}, {MigrationFailed, true, false}, {MigrationAborted, true, false},
		{MigrationRecovered, true, false}, {"SOMETHING_NEW", true, false},
	} {
		m := Migration{Status: tc.status}
		if m.Done() != tc.done || m.Succeeded() != tc.ok_ {
			t.Errorf("%s: Done=%v Succeeded=%v", tc.status, m.Done(), m.Succeeded())
		}
	}
	m := Migration{Steps: []MigrationStep{{Value: "A", Status: "OK"}, {Value: "B", Status: "FAILED", Message: "why"}}}
	if s, ok := m.FailedStep(); !ok || s.Value != "B" || s.Message != "why" {
		t.Fatalf("FailedStep = %+v %v", s, ok)
	}
	if _, ok := (Migration{}).FailedStep(); ok {
		t.Fatal("FailedStep on no steps")
	}
	// Wire shape: endDate and message are omitted when empty; version null.
	b, _ := json.Marshal(MigrationStep{Value: "A", Status: "RUNNING", StartDate: "d"})
	if string(b) != `{"value":"A","status":"RUNNING","startDate":"d"}` {
		t.Fatalf("step JSON %s", b)
	}
	b, _ = json.Marshal(Migration{})
	if string(b) != `{"migrationId":"","requestDate":"","status":"","steps":null}` {
		t.Fatalf("migration JSON %s", b)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"14", "15", -1}, {"15", "14", 1}, {"8.0", "8.4", -1}, {"8.4", "8.0", 1}, {"5.7", "8.0", -1},
		{"7.2.4", "8.8.0", -1}, {"8", "8.0", 0}, {"8", "8.0.0", 0}, {"10", "9", 1}, {"v17", "17", 0},
		{"8.19.9", "8", 1}, {"", "", 0}, {"1.0-rc1", "1.0", 1}, {"1.a", "1.b", -1}, {"1.2", "1.x", -1},
	} {
		if got := CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	info := ProviderInfo{Dedicated: map[string]DedicatedVersion{"9": {}, "17": {}, "8.4": {}, "10": {}}}
	if got := info.Versions(); !slices.Equal(got, []string{"8.4", "9", "10", "17"}) || !info.HasVersion("17") || info.HasVersion("16") {
		t.Fatalf("Versions = %v", got)
	}
}
