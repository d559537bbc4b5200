package backups

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
)

func TestParseMaxAge(t *testing.T) {
	for _, tc := range []struct {
		v       string
		def     time.Duration
		want    time.Duration
		wantErr bool
	}{
		{"", 0, DefaultMaxAge, false},
		{"", 48 * time.Hour, 48 * time.Hour, false},
		{"90m", 48 * time.Hour, 90 * time.Minute, false},
		{"36h", 0, 36 * time.Hour, false},
		{"1d", 0, 0, true},
		{"0s", 0, 0, true},
		{"-5h", 0, 0, true},
		{"soon", 0, 0, true},
		{strings.Repeat("9", 300), 0, 0, true},
	} {
		got, err := parseMaxAge(tc.v, tc.def)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%.20q: %s, %v; want %s, error %t", tc.v, got, err, tc.want, tc.wantErr)
		}
		if err != nil && (!strings.Contains(err.Error(), AnnotationMaxAge) || len(err.Error()) > 200) {
			t.Errorf("%.20q: the error must name the annotation and stay short: %v", tc.v, err)
		}
	}
}

func TestStaleness(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		last, created time.Time
		maxAge        time.Duration
		stale         bool
		msgHas        string
	}{
		{"recent", now.Add(-10 * time.Hour), now.Add(-30 * 24 * time.Hour), 36 * time.Hour, false, "2026-11-25T02:00:00Z"},
		{"just within", now.Add(-36 * time.Hour), now.Add(-30 * 24 * time.Hour), 36 * time.Hour, false, "within"},
		{"old", now.Add(-49 * time.Hour), now.Add(-30 * 24 * time.Hour), 36 * time.Hour, true, "longer ago than the maximum backup age 36h0m0s"},
		{"none, young resource", time.Time{}, now.Add(-time.Hour), 36 * time.Hour, false, "no backup yet"},
		{"none, old resource", time.Time{}, now.Add(-40 * time.Hour), 36 * time.Hour, true, "no backup"},
		{"annotation shortens it", now.Add(-2 * time.Hour), now.Add(-30 * 24 * time.Hour), time.Hour, true, "1h0m0s"},
	} {
		stale, msg := staleness(now, tc.last, tc.created, tc.maxAge)
		if stale != tc.stale || !strings.Contains(msg, tc.msgHas) {
			t.Errorf("%s: %t %q; want %t with %q", tc.name, stale, msg, tc.stale, tc.msgHas)
		}
	}
}

func TestSummarize(t *testing.T) {
	bs := []clevercloud.Backup{
		{BackupID: "b1", Status: "DONE", CreationDate: "2026-11-23T03:00:00.123456Z"},
		{BackupID: "b3", Status: "DONE", CreationDate: "garbage"},
		{BackupID: "b2", Status: "DONE", CreationDate: "2026-11-24T03:00:00.5Z[UTC]"},
	}
	for _, tc := range []struct {
		name string
		bs   []clevercloud.Backup
		want string
	}{
		{"newest wins, whatever the order", bs, `{"count":3,"last":{"id":"b2","status":"DONE","time":"2026-11-24T03:00:00Z"}}`},
		{"none", nil, `{"count":0}`},
		{"no date parses", bs[1:2], `{"count":1}`},
		{"an over-long id is left out", []clevercloud.Backup{{BackupID: strings.Repeat("x", 65), CreationDate: "2026-11-24T03:00:00Z"}}, `{"count":1,"last":{"time":"2026-11-24T03:00:00Z"}}`},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		kinds.Change(u, summarize(tc.bs).set)
		got, _ := json.Marshal(u.Object["status"].(map[string]any)["backups"])
		if string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
