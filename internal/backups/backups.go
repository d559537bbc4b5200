// Package backups is the capability of the kinds Clever Cloud backs up (Kind.Backups):
// status.backups (count, newest backup's time, id and status: never a download URL or a
// restore command, which are credentials) and the BackupStale condition, a warning that never
// touches Ready.
//
// Cost: no call of its own. The periodic refresh stays one call per period; for these kinds it
// rotates over three reads (the add-on, its backups, its env) instead of two. The backups are
// also read once when the resource first becomes Ready, so status shows them at once (one call
// more on creation). Every refresh, and every pass with nothing to do at Clever Cloud (an edited
// annotation), re-evaluates BackupStale from status.backups, without a call.
package backups

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/api/shared"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/step"
)

const (
	// AnnotationMaxAge overrides --backup-max-age for one resource (Go duration, > 0): a
	// newest backup older than that sets BackupStale=True.
	AnnotationMaxAge = kinds.Group + "/backup-max-age"
	// DefaultMaxAge: Clever Cloud backs up daily; 36 h leaves half a day of slack.
	DefaultMaxAge = 36 * time.Hour
)

// MaxAgeOf is obj's maximum backup age: its annotation, else def (the operator's, or
// DefaultMaxAge when 0).
func MaxAgeOf(obj *unstructured.Unstructured, def time.Duration) (time.Duration, error) {
	return parseMaxAge(obj.GetAnnotations()[AnnotationMaxAge], def)
}

// parseMaxAge reads an annotation value ("" gives def, or DefaultMaxAge).
func parseMaxAge(v string, def time.Duration) (time.Duration, error) {
	if v == "" {
		if def > 0 {
			return def, nil
		}
		return DefaultMaxAge, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		shown := v
		if len(shown) > 64 {
			shown = shown[:64] + "…"
		}
		return 0, fmt.Errorf("annotation %s: %q is not a positive Go duration (for example 36h or 90m)", AnnotationMaxAge, shown)
	}
	return d, nil
}

// backupSummary is status.backups: the count and the newest backup whose date parses.
type backupSummary struct {
	count int
	last  *clevercloud.Backup
	at    time.Time
}

func summarize(bs []clevercloud.Backup) backupSummary {
	sum := backupSummary{count: len(bs)}
	for i := range bs {
		t, err := bs[i].Created()
		if err != nil {
			continue
		}
		if sum.last == nil || t.After(sum.at) {
			sum.last, sum.at = &bs[i], t
		}
	}
	return sum
}

// set writes status.backups. Only these fields are copied: the list's download URLs and
// commands were never decoded (clevercloud.Backup), and nothing else of it is kept.
func (b backupSummary) set(st *kinds.Status) {
	st.Backups = &shared.BackupsStatus{Count: int32(b.count)}
	if b.last != nil {
		last := &shared.BackupInfo{Time: metav1.NewTime(b.at)}
		if id := b.last.BackupID; id != "" && len(id) <= 64 {
			last.ID = id
		}
		if s := b.last.Status; s != "" && len(s) <= 64 {
			last.Status = s
		}
		st.Backups.Last = last
	}
}

// staleness decides BackupStale: the newest backup's time (zero: none) against maxAge; a
// resource with no backup is stale once it is older than maxAge itself.
func staleness(now, lastAt, created time.Time, maxAge time.Duration) (stale bool, msg string) {
	switch {
	case lastAt.IsZero() && now.Sub(created) > maxAge:
		return true, fmt.Sprintf("Clever Cloud lists no backup of the add-on, and the resource is older than the maximum backup age %s", maxAge)
	case lastAt.IsZero():
		return false, fmt.Sprintf("no backup yet; the first is expected within the maximum backup age %s", maxAge)
	case now.Sub(lastAt) > maxAge:
		return true, fmt.Sprintf("the newest backup of the add-on was taken at %s, longer ago than the maximum backup age %s", lastAt.UTC().Format(time.RFC3339), maxAge)
	}
	return false, fmt.Sprintf("the newest backup of the add-on was taken at %s, within the maximum backup age %s", lastAt.UTC().Format(time.RFC3339), maxAge)
}

// ReportStale sets BackupStale from status.backups (no call): a Warning when it turns True,
// a Normal event when it turns False again, a Warning when the maximum age (def: the
// operator's) is invalid.
func ReportStale(s step.Pass, def time.Duration) {
	obj, backups := s.Object(), s.Status().Backups
	if backups == nil {
		return
	}
	prev, _ := status.Find(s.Conditions(), status.TypeBackupStale)
	maxAge, err := MaxAgeOf(obj, def)
	if err != nil {
		if s.Condition(status.TypeBackupStale, metav1.ConditionUnknown, status.ReasonInvalidBackupMaxAge, err.Error()) {
			s.Event(corev1.EventTypeWarning, status.ReasonInvalidBackupMaxAge, err.Error())
		}
		return
	}
	var lastAt time.Time
	if backups.Last != nil {
		lastAt = backups.Last.Time.Time
	}
	stale, msg := staleness(s.Now(), lastAt, obj.GetCreationTimestamp().Time, maxAge)
	if stale {
		s.Condition(status.TypeBackupStale, metav1.ConditionTrue, status.ReasonBackupStale, msg)
		if prev.Status != string(metav1.ConditionTrue) {
			s.Event(corev1.EventTypeWarning, status.EventBackupStale, msg)
		}
		return
	}
	s.Condition(status.TypeBackupStale, metav1.ConditionFalse, status.ReasonBackupRecent, msg)
	if prev.Status == string(metav1.ConditionTrue) {
		s.Event(corev1.EventTypeNormal, status.EventBackupRecent, msg)
	}
}

// apply records a backups list in status and re-evaluates BackupStale.
func apply(s step.Pass, bs []clevercloud.Backup, def time.Duration) {
	s.Update(summarize(bs).set)
	ReportStale(s, def)
}

// notFound handles a 404 of the backups list: clever-client.js reads it as "no backups"
// (list-backup-command.ts), so a resource that has none recorded records none; but a 404 alone
// never erases backups seen before (a wrong endpoint or a proxy can make every route answer
// 404; the same rule as for deleted add-ons): status.backups is kept as it was.
func notFound(s step.Pass, def time.Duration) {
	if s.Status().Backups != nil {
		ReportStale(s, def)
		return
	}
	apply(s, nil, def)
}

// Refresh is the periodic refresh's backups read (one call). Throttling and outages are
// reported as for the other reads (Synced=False, Ready kept): it returns FailAPI's error;
// another error leaves status.backups as it was and sets BackupStale=Unknown.
func Refresh(ctx context.Context, s step.Pass, realID string, def time.Duration) error {
	bs, err := s.API().ListBackups(ctx, s.Org(), realID)
	switch {
	case clevercloud.IsNotFound(err):
		s.Succeeded()
		notFound(s, def)
	case errors.Is(err, context.Canceled):
		return s.FailAPI("reading the add-on's backups", err) // cancelled: nothing to report
	case err != nil:
		if s.Transient(err) {
			ReportStale(s, def) // from status.backups, as the other reads do
			return s.FailAPI("reading the add-on's backups", err)
		}
		msg := fmt.Sprintf("Clever Cloud API error while reading the add-on's backups: %s", clevercloud.Message(err))
		if s.Condition(status.TypeBackupStale, metav1.ConditionUnknown, status.ReasonBackupsUnreadable, msg) {
			s.Event(corev1.EventTypeWarning, status.ReasonBackupsUnreadable, msg)
		}
	default:
		s.Succeeded()
		apply(s, bs, def)
	}
	return nil
}

// Capability is the backups as the pass calls them (step.Capability): BackupStale
// re-evaluated from status in the passes that read no backups, and the periodic refresh's
// backups read when it is its turn (kinds.ReadBackups). MaxAge is the operator's maximum
// backup age (0: DefaultMaxAge).
type Capability struct {
	step.Hooks
	MaxAge time.Duration
}

// Check reports BackupStale from status.backups (no call).
func (c Capability) Check(s step.Pass) { ReportStale(s, c.MaxAge) }

// Refresh reads the backups when the refresh's turn is theirs and the real id is known.
func (c Capability) Refresh(ctx context.Context, s step.Pass, read kinds.RefreshRead, realID string) (bool, error) {
	if read != kinds.ReadBackups || realID == "" {
		return false, nil
	}
	return true, Refresh(ctx, s, realID, c.MaxAge)
}
