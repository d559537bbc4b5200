package clevercloud

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// backupsJSON has the fields of clever-client.js backup-transform.ts, the secrets included.
const backupsJSON = `[
 {"backup_id":"b-old","entity_id":"postgresql_1","status":"DONE","creation_date":"2026-01-01T03:00:00.123456Z","delete_at":"2026-01-08T03:00:00.123456Z","download_url":"https://dl.invalid/old?X-Amz-Signature=s3cr3t-old"},
 {"backup_id":"b-new","entity_id":"postgresql_1","status":"DONE","creation_date":"2026-01-02T03:00:00.5Z[UTC]","delete_at":"2026-01-09T03:00:00Z","download_url":"https://dl.invalid/new?X-Amz-Signature=s3cr3t-new","restore_command":"pg_restore pw=s3cr3t"},
 {"backup_id":"b-bad","entity_id":"postgresql_1","status":"DONE","creation_date":"not a date"}
]`

func TestListBackups(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		status  int
		body    string
		wantIDs []string
		wantErr string
	}{
		{"newest first, unparsable last", 200, backupsJSON, []string{"b-new", "b-old", "b-bad"}, ""},
		{"empty", 200, `[]`, []string{}, ""},
		{"null", 200, `null`, []string{}, ""},
		{"404 is an error the caller reads (IsNotFound)", 404, `{"id":4004,"message":"Not Found","type":"error"}`, nil, "404"},
		{"a 400 is an error that does not quote a non-JSON body", 400, `https://dl.invalid/x?X-Amz-Signature=s3cr3t`, nil, "400"},
		{"bad JSON is an error that does not quote the body", 200, `{"download_url":"https://dl.invalid/x?X-Amz-Signature=s3cr3t"`, nil, "decod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{status: tc.status, body: tc.body}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			c := mustClient(t, Config{Endpoint: srv.URL, MaxRetries: -1})
			got, err := c.ListBackups(ctx, "orga_1", "postgresql_1")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(strings.ToLower(err.Error()), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				if tc.status == 404 && !IsNotFound(err) {
					t.Fatalf("a 404 must satisfy IsNotFound: %v", err)
				}
				if strings.Contains(err.Error(), "s3cr3t") {
					t.Fatalf("the error quotes the answer: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{}
			for _, b := range got {
				ids = append(ids, b.BackupID)
			}
			if !reflect.DeepEqual(ids, tc.wantIDs) {
				t.Fatalf("ids = %v, want %v", ids, tc.wantIDs)
			}
			if p := rec.reqs[0].path; p != "/v2/backups/orga_1/postgresql_1" {
				t.Fatalf("path %s", p)
			}
			if len(got) > 0 {
				if created, err := got[0].Created(); err != nil || !created.Equal(time.Date(2026, 1, 2, 3, 0, 0, 5e8, time.UTC)) {
					t.Fatalf("created %v %v", created, err)
				}
				if b, _ := json.Marshal(got); strings.Contains(string(b), "s3cr3t") {
					t.Fatalf("the decoded backups hold a secret: %s", b)
				}
			}
		})
	}
	if _, err := mustClient(t, Config{Endpoint: "http://127.0.0.1:1"}).ListBackups(ctx, "orga_1", ""); err == nil {
		t.Fatal("an empty realId was sent")
	}
}
