package addon

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/backups"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/step"
)

func TestKindsWithBackups(t *testing.T) {
	want := map[string]bool{"PostgreSql": true, "MySql": true, "MongoDb": true, "Redis": true, "ElasticSearch": true}
	for _, k := range kinds.Kinds {
		if k.Backups != want[k.GVK.Kind] {
			t.Errorf("%s: Backups = %t, want %t (the providers the console's cc-addon-backups lists)", k.GVK.Kind, k.Backups, want[k.GVK.Kind])
		}
	}
}

// TestRefreshReadFor: still one read per period; kinds with backups rotate over three.
func TestRefreshReadFor(t *testing.T) {
	names := map[kinds.RefreshRead]string{kinds.ReadEnv: "env", kinds.ReadAddon: "addon", kinds.ReadBackups: "backups"}
	for _, tc := range []struct {
		kind string
		want []string
	}{
		{"PostgreSql", []string{"addon", "backups", "env", "addon", "backups", "env"}},
		{"Azimutt", []string{"addon", "env", "addon", "env", "addon", "env"}},
		{"Cellar", []string{"addon", "env", "addon", "env", "addon", "env"}},
	} {
		k := kind(t, tc.kind)
		var got []string
		for n := 1; n <= 6; n++ {
			got = append(got, names[k.RefreshReadFor(n)])
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: %v, want %v", tc.kind, got, tc.want)
		}
	}
}

// backupsAPI answers ListBackups and records the calls.
type backupsAPI struct {
	credentials.API
	backups []clevercloud.Backup
	err     error
	calls   int
}

func (a *backupsAPI) ListBackups(context.Context, string, string) ([]clevercloud.Backup, error) {
	a.calls++
	return a.backups, a.err
}

func backupAt(t time.Time) clevercloud.Backup {
	return clevercloud.Backup{BackupID: "b-" + t.Format("0102"), Status: "DONE", CreationDate: t.UTC().Format("2006-01-02T15:04:05.000000Z")}
}

func setCondition(u *unstructured.Unstructured, t string, s metav1.ConditionStatus, reason, msg string, now time.Time) {
	status.Update([]status.Change{status.Setting(t, s, reason, msg, func() time.Time { return now })})(u)
}

func condition(conds []status.Condition, t string) string {
	c, ok := status.Find(conds, t)
	if !ok {
		return "absent"
	}
	return c.Status + "/" + c.Reason
}

// TestBackupStaleSequence: the condition and its events over a life (read, stale, still stale,
// fresh again, bad annotation, unreadable list); Ready (AddonReady) is never touched.
func TestBackupStaleSequence(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	k := kind(t, "PostgreSql")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.GVK)
	u.SetNamespace("ns")
	u.SetName("pg")
	u.SetUID("uid-pg")
	u.SetCreationTimestamp(metav1.NewTime(now.Add(-10 * 24 * time.Hour)))
	setCondition(u, status.TypeAddonReady, metav1.ConditionTrue, status.ReasonProvisioned, "ok", now)
	api := &backupsAPI{}
	r := &Reconciler{Kind: k, Now: func() time.Time { return now }, ResyncPeriod: time.Hour}

	steps := []struct {
		name       string
		backups    []clevercloud.Backup
		err        error
		annotation string
		want       string
		events     []string
	}{
		{"recent", []clevercloud.Backup{backupAt(now.Add(-30 * time.Hour)), backupAt(now.Add(-6 * time.Hour))}, nil, "", "False/BackupRecent", nil},
		{"stale", []clevercloud.Backup{backupAt(now.Add(-40 * time.Hour))}, nil, "", "True/BackupStale", []string{"Warning BackupStale"}},
		{"still stale: no second event", []clevercloud.Backup{backupAt(now.Add(-40 * time.Hour))}, nil, "", "True/BackupStale", nil},
		{"a fresh backup clears it", []clevercloud.Backup{backupAt(now.Add(-time.Hour))}, nil, "", "False/BackupRecent", []string{"Normal BackupRecent"}},
		{"a 404 never erases the backups seen", nil, &clevercloud.APIError{StatusCode: 404, Message: "Not Found"}, "", "False/BackupRecent", nil},
		{"the annotation shortens the maximum age", []clevercloud.Backup{backupAt(now.Add(-time.Hour))}, nil, "30m", "True/BackupStale", []string{"Warning BackupStale"}},
		{"a bad annotation", []clevercloud.Backup{backupAt(now.Add(-time.Hour))}, nil, "1 day", "Unknown/InvalidBackupMaxAge", []string{"Warning InvalidBackupMaxAge"}},
		{"no backup, resource older than the maximum age", []clevercloud.Backup{}, nil, "", "True/BackupStale", []string{"Warning BackupStale"}},
		{"an unreadable list", nil, &clevercloud.APIError{StatusCode: 400, Message: "bad ref"}, "", "Unknown/BackupsUnreadable", []string{"Warning BackupsUnreadable"}},
	}
	for _, st := range steps {
		api.backups, api.err = st.backups, st.err
		if st.annotation != "" {
			u.SetAnnotations(map[string]string{backups.AnnotationMaxAge: st.annotation})
		} else {
			u.SetAnnotations(nil)
		}
		s := r.newPass(context.Background(), u)
		s.api, s.org = api, testOrg
		_, err := r.refreshRead(context.Background(), s, kinds.ReadBackups, "postgresql_1")
		var sp *step.Stop
		if !errors.As(err, &sp) || sp.Cause != nil || sp.Result.RequeueAfter < time.Hour {
			t.Fatalf("%s: the pass ends with a requeue at the period, got %v", st.name, err)
		}
		if got := condition(s.conds, status.TypeBackupStale); got != st.want {
			t.Errorf("%s: BackupStale %s, want %s", st.name, got, st.want)
		}
		var evs []string
		for _, e := range s.events {
			evs = append(evs, e.typ+" "+e.reason)
		}
		if strings.Join(evs, ";") != strings.Join(st.events, ";") {
			t.Errorf("%s: events %v, want %v", st.name, evs, st.events)
		}
		if got := condition(s.conds, status.TypeAddonReady); got != "True/Provisioned" {
			t.Errorf("%s: AddonReady %s", st.name, got)
		}
		if st.err != nil && clevercloud.IsNotFound(st.err) {
			if b := s.st.Backups; b == nil || b.Last == nil || b.Last.Time.IsZero() {
				t.Errorf("%s: the 404 erased status.backups", st.name)
			}
		}
		u = s.obj
		s.st.Encode(u) // what commit writes
		status.SetConditions(u, s.conds)
	}
	if api.calls != len(steps) {
		t.Fatalf("%d calls for %d reads", api.calls, len(steps))
	}
	// The unreadable list kept the last status.backups it had.
	if n, _, _ := unstructured.NestedInt64(u.Object, "status", "backups", "count"); n != 0 {
		t.Fatalf("count %d", n)
	}
}

// TestRefreshBackupsTransient: throttling and outages are the refresh's usual Synced=False.
func TestRefreshBackupsTransient(t *testing.T) {
	k := kind(t, "Redis")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.GVK)
	setCondition(u, status.TypeAddonReady, metav1.ConditionTrue, status.ReasonProvisioned, "ok", time.Now())
	r := &Reconciler{Kind: k, ResyncPeriod: time.Hour}
	s := r.newPass(context.Background(), u)
	s.api = &backupsAPI{err: &clevercloud.APIError{StatusCode: 503, Message: "down"}}
	if _, err := r.refreshRead(context.Background(), s, kinds.ReadBackups, "redis_1"); err == nil {
		t.Fatal("no retry")
	}
	if got := condition(s.conds, status.TypeSynced); got != "False/"+status.ReasonAPIUnavailable {
		t.Fatalf("Synced %s", got)
	}
	if got := condition(s.conds, status.TypeBackupStale); got != "absent" {
		t.Fatalf("BackupStale %s", got)
	}
}

// TestRefreshBackupsRecords: the refresh's backups read records what it got; a 404 records
// none only when none were recorded, and keeps what was seen before; another error records
// nothing.
func TestRefreshBackupsRecords(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name      string
		had       bool
		err       error
		wantCount int64 // -1: no status.backups
	}{
		{"first read", false, nil, 1},
		{"read again", true, nil, 1},
		{"404 with none recorded: none", false, &clevercloud.APIError{StatusCode: 404}, 0},
		{"404 never erases what was seen", true, &clevercloud.APIError{StatusCode: 404}, 2},
		{"another error records nothing", false, &clevercloud.APIError{StatusCode: 400, Message: "bad"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := kind(t, "PostgreSql")
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(k.GVK)
			u.SetCreationTimestamp(metav1.NewTime(now))
			if tc.had {
				_ = unstructured.SetNestedField(u.Object, map[string]any{"count": int64(2)}, "status", "backups")
			}
			api := &backupsAPI{backups: []clevercloud.Backup{backupAt(now)}, err: tc.err}
			r := &Reconciler{Kind: k, ResyncPeriod: time.Hour}
			s := r.newPass(context.Background(), u)
			s.api = api
			_, _ = r.refreshRead(context.Background(), s, kinds.ReadBackups, "postgresql_1")
			got := int64(-1)
			if b := s.st.Backups; b != nil {
				got = int64(b.Count)
			}
			if api.calls != 1 || got != tc.wantCount {
				t.Errorf("%d calls, status.backups.count %d, want 1 call and %d", api.calls, got, tc.wantCount)
			}
		})
	}
}
