package fakeapi

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestBackups(t *testing.T) {
	clock := newFakeClock()
	s, c := newTest(t, Options{Now: clock.Now})
	pg := c.create(t, testOwner, createBody(s, "postgresql-addon", "xs_sml", "par"))
	es := c.create(t, testOwner, createBody(s, "es-addon", "xs", "par"))
	cellar := c.create(t, testOwner, createBody(s, "cellar-addon", "S", "par"))
	clock.Add(9*24*time.Hour + time.Hour) // 10 daily backups so far, 7 kept

	other := "orga_99999999-2222-3333-4444-555555555555"
	for _, tc := range []struct {
		name, owner, ref string
		status, n        int
	}{
		{"by realId", testOwner, pg.RealID, http.StatusOK, BackupRetention},
		{"elasticsearch", testOwner, es.RealID, http.StatusOK, BackupRetention},
		{"the addon_ id is not a ref", testOwner, pg.ID, http.StatusNotFound, 0},
		{"another owner", other, pg.RealID, http.StatusNotFound, 0},
		{"a provider without backups", testOwner, cellar.RealID, http.StatusNotFound, 0},
		{"unknown", testOwner, "postgresql_00000000-0000-0000-0000-000000000000", http.StatusNotFound, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do("GET", "/v2/backups/"+tc.owner+"/"+tc.ref, nil)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.status != http.StatusOK {
				r.errBody(t, tc.status)
				return
			}
			var raw []map[string]any
			r.decode(t, &raw)
			if len(raw) != tc.n {
				t.Fatalf("%d backups, want %d", len(raw), tc.n)
			}
			keys := []string{"backup_id", "entity_id", "status", "creation_date", "delete_at", "download_url"}
			if tc.ref == es.RealID {
				keys = []string{"backup_id", "entity_id", "status", "creation_date", "delete_at", "link", "restore_command", "delete_command"}
			}
			for _, b := range raw {
				wantKeys(t, "backup", b, keys...)
			}
			last, _ := time.Parse(time.RFC3339Nano, raw[len(raw)-1]["creation_date"].(string))
			if want := time.UnixMilli(int64(pg.CreationDate)).Add(9 * 24 * time.Hour); tc.ref == pg.RealID && !last.Equal(want) {
				t.Fatalf("last backup at %s, want %s", last, want)
			}
			if !strings.HasSuffix(raw[0]["creation_date"].(string), "Z") || len(raw[0]["creation_date"].(string)) != len("2026-03-01T12:00:00.000000Z") {
				t.Fatalf("creation_date %q: not ISO 8601 with 6 fractional digits", raw[0]["creation_date"])
			}
		})
	}
	if n := s.Counts()[RouteBackups]; n != 6 {
		t.Fatalf("counted %d backups calls under %q, want 6", n, RouteBackups)
	}

	// A test sets the backups: none, then one two days old.
	if err := s.SetBackups(pg.ID, nil); err != nil {
		t.Fatal(err)
	}
	r := c.do("GET", "/v2/backups/"+testOwner+"/"+pg.RealID, nil)
	if r.status != http.StatusOK || strings.TrimSpace(string(r.body)) != "[]" {
		t.Fatalf("no backups: %d %s", r.status, r.body)
	}
	old := clock.Now().Add(-48 * time.Hour)
	if err := s.SetBackups(pg.RealID, []time.Time{old}); err != nil {
		t.Fatal(err)
	}
	bs := s.Backups(pg.ID)
	if len(bs) != 1 || bs[0].CreationDate != old.UTC().Format(backupDateLayout) || len(s.BackupSecrets(pg.ID)) != 1 {
		t.Fatalf("set backups: %+v", bs)
	}
	if len(s.BackupSecrets(es.ID)) != 3*BackupRetention {
		t.Fatalf("elasticsearch secrets: %v", s.BackupSecrets(es.ID))
	}
	if err := s.SetBackups(cellar.ID, nil); err == nil {
		t.Fatal("SetBackups accepted a provider without backups")
	}
}

func TestBackupsAdmin(t *testing.T) {
	s, c := newTest(t, Options{})
	pg := c.create(t, testOwner, createBody(s, "postgresql-addon", "xs_sml", "par"))
	admin := &client{t: t, base: c.base}
	r := admin.do("PUT", "/admin/addons/"+pg.ID+"/backups", `{"times":["2026-01-02T03:00:00Z","2026-01-01T03:00:00Z"]}`)
	var got []Backup
	r.decode(t, &got)
	if r.status != http.StatusOK || len(got) != 2 || got[1].CreationDate != "2026-01-02T03:00:00.000000Z" {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	if r := admin.do("GET", "/admin/addons/"+pg.ID+"/backups", nil); r.status != http.StatusOK {
		t.Fatalf("GET: %d", r.status)
	}
	for _, tc := range []struct{ id, body string }{{pg.ID, `[]`}, {pg.ID, `{"times":"x"}`}, {"addon_nope", `{"times":[]}`}} {
		if r := admin.do("PUT", "/admin/addons/"+tc.id+"/backups", tc.body); r.status == http.StatusOK {
			t.Fatalf("PUT %s %s accepted", tc.id, tc.body)
		}
	}
	if n := s.Counts()[RouteBackups]; n != 0 {
		t.Fatalf("admin requests counted: %d", n)
	}
}
