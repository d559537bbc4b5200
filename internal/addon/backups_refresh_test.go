package addon

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/internal/status"
)

// A refresh whose turn is the backups read evaluates BackupStale once, on what the read
// answered: a recorded backup that has just grown too old, replaced by a fresh one in the same
// read, makes no Warning/Normal pair of events. A read cancelled with the pass (the operator
// stopping, a lost lease) reports nothing: BackupStale stays as it was, no event.
func TestRefreshBackups(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	cancelled := &clevercloud.RequestError{Method: "GET", Route: clevercloud.RouteBackups, Op: "waiting for rate limiter", Err: context.Canceled}
	for _, tc := range []struct {
		name string
		api  *backupsAPI
	}{
		{"fresh backup in the same read", &backupsAPI{backups: []clevercloud.Backup{backupAt(now.Add(-2 * time.Hour))}}},
		{"read cancelled", &backupsAPI{err: cancelled}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := refreshBackupsPass(t, now, tc.api)
			if tc.api.calls != 1 {
				t.Fatalf("%d backups reads, want 1", tc.api.calls)
			}
			if got := condition(s.conds, status.TypeBackupStale); got != "False/BackupRecent" {
				t.Fatalf("BackupStale %s", got)
			}
			if len(s.events) != 0 {
				t.Fatalf("events %v, want none: the condition never changed", s.events)
			}
		})
	}
}

// refreshBackupsPass runs the periodic refresh whose turn is the backups read, against api,
// for a PostgreSql whose status records a backup 40 h old (BackupStale False, as last seen).
func refreshBackupsPass(t *testing.T, now time.Time, api *backupsAPI) *pass {
	t.Helper()
	k := kind(t, "PostgreSql")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.GVK)
	u.SetNamespace("ns")
	u.SetName("pg")
	u.SetUID("uid-refresh")
	u.SetCreationTimestamp(metav1.NewTime(now.Add(-10 * 24 * time.Hour)))
	kinds.Change(u, func(st *kinds.Status) { st.Addon = "addon_1" })
	_ = unstructured.SetNestedField(u.Object, map[string]any{"count": int64(1), "last": map[string]any{"time": now.Add(-40 * time.Hour).Format(time.RFC3339)}}, "status", "backups")
	setCondition(u, status.TypeAddonReady, metav1.ConditionTrue, status.ReasonProvisioned, "ok", now)
	setCondition(u, status.TypeBackupStale, metav1.ConditionFalse, status.ReasonBackupRecent, "recent", now.Add(-time.Hour))
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: k.SourceSecretName("pg"),
		Annotations: map[string]string{kinds.AnnotationAddonID: "addon_1", secrets.AnnotationRealID: "postgresql_1"}}}
	secrets.Sign(testClaimKey, src) // as the operator wrote it
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Kind: k, Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(src).Build(),
		Credentials: staticCredentials{api}, Now: func() time.Time { return now }, ResyncPeriod: time.Hour, ClaimKey: testClaimKey}
	r.countRefresh(u) // the first refresh read the add-on: the second reads the backups
	s := r.newPass(context.Background(), u)
	_ = r.refresh(context.Background(), s)
	return s
}
