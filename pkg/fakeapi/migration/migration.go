// Package migration is the timeline of an add-on migration in the fake Clever
// Cloud API (clever-cloud-api-more.md §1): the steps it goes through, how they
// progress with the clock, where it fails or is aborted, and how it renders
// (wire.Migration). A migration is RUNNING for its duration and then OK (or
// FAILED at the step it was made to fail at); progress is computed lazily
// from the clock, with no goroutine. pkg/fakeapi keeps the migrations of each
// add-on and applies the finished ones.
package migration

import (
	"cmp"
	"slices"
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// DefaultDuration is how long a migration runs when the server sets no
// duration of its own.
const DefaultDuration = 3 * time.Second

// DefaultFailureStep is the step at which a migration made to fail without a
// (known) step fails.
const DefaultFailureStep = "DUMP_AND_RESTORE"

// DefaultFailureMessage is the message of a failure injected without one.
const DefaultFailureMessage = "Migration failed: injected failure"

// The steps the fake goes through, a realistic subset of migration.types.ts
// in run order. The instant ones are already OK in M1's answer; the timed
// ones share the migration's duration equally.
var (
	instantSteps = []string{"RETRIEVE_ADDON", "CHECK_NO_MIGRATION_ALREADY_RUNNING_FOR_ADDON"}
	timedSteps   = []string{
		"RETRIEVE_TARGET_CLUSTER", "REMOVE_EDIT_RIGHT", "CREATE_ADDON_ON_TARGET_CLUSTER",
		"DEPLOY_MIGRATION_INSTANCE", "DUMP_AND_RESTORE", "UPDATE_DNS", "UPDATE_ADDON",
		"REMOVE_ADDON_FROM_SOURCE_CLUSTER", "ENABLE_EDIT_RIGHT",
	}
)

// Steps returns the step names a fake migration goes through, in order.
func Steps() []string {
	return slices.Concat(instantSteps, timedSteps)
}

// FailableSteps returns the step names a migration can be made to fail at:
// every step after the instant checks M1 answers with.
func FailableSteps() []string { return slices.Clone(timedSteps) }

// Failure returns where a migration made to fail at step fails (an index for
// Record.FailAt; an unknown step means DefaultFailureStep) and its message.
func Failure(step string) (at int, msg string) {
	i := slices.Index(timedSteps, step)
	if i < 0 {
		i = slices.Index(timedSteps, DefaultFailureStep)
	}
	return i, "Migration failed at step " + timedSteps[i] + ": injected failure"
}

// Record is one migration of an add-on. It has no lock: the server guards it
// with its state.
type Record struct {
	Seq       uint64
	ID        string
	Requested time.Time
	Duration  time.Duration
	Plan      *wire.Plan // target
	Region    string     // target
	Version   string     // target ("" when the provider has none)
	Status    string
	// FailAt is the index (see Failure) of the step where it fails; -1: it succeeds.
	FailAt  int
	FailMsg string
	// steps is set when the migration leaves RUNNING (frozen from then on).
	steps []wire.MigrationStep
}

func apiDate(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// stepStart and stepEnd are the scheduled bounds of timed step i.
func (m *Record) stepStart(i int) time.Time {
	return m.Requested.Add(time.Duration(int64(m.Duration) * int64(i) / int64(len(timedSteps))))
}

func (m *Record) stepEnd(i int) time.Time {
	if i >= len(timedSteps)-1 {
		return m.Requested.Add(m.Duration)
	}
	return m.stepStart(i + 1)
}

// current is the index of the timed step running at now.
func (m *Record) current(now time.Time) int {
	n := len(timedSteps)
	k := n - 1
	if m.Duration > 0 {
		elapsed := max(now.Sub(m.Requested), 0)
		k = min(int(int64(elapsed)*int64(n)/int64(m.Duration)), n-1)
	}
	if m.FailAt >= 0 && k > m.FailAt {
		k = m.FailAt
	}
	return k
}

// progress returns the steps as seen at now: the instant ones, the finished
// timed ones and the one running (with no end date).
func (m *Record) progress(now time.Time) []wire.MigrationStep {
	req := apiDate(m.Requested)
	steps := make([]wire.MigrationStep, 0, len(instantSteps)+len(timedSteps))
	for _, name := range instantSteps {
		steps = append(steps, wire.MigrationStep{Value: name, Status: wire.MigrationOK, StartDate: req, EndDate: req})
	}
	k := m.current(now)
	for i := 0; i < k; i++ {
		steps = append(steps, wire.MigrationStep{Value: timedSteps[i], Status: wire.MigrationOK,
			StartDate: apiDate(m.stepStart(i)), EndDate: apiDate(m.stepEnd(i))})
	}
	return append(steps, wire.MigrationStep{Value: timedSteps[k], Status: wire.MigrationRunning,
		StartDate: apiDate(m.stepStart(k))})
}

// View renders the migration at now.
func (m *Record) View(now time.Time) wire.Migration {
	out := wire.Migration{MigrationID: m.ID, RequestDate: apiDate(m.Requested), Status: m.Status}
	if m.Status == wire.MigrationRunning {
		out.Steps = m.progress(now)
	} else {
		out.Steps = slices.Clone(m.steps)
	}
	return out
}

// Settle moves a RUNNING migration whose failure or end time has passed at
// now to FAILED or OK, and reports whether it did (the caller then applies
// an OK one to its add-on).
func (m *Record) Settle(now time.Time) bool {
	if m.FailAt >= 0 {
		if at := m.stepEnd(m.FailAt); !now.Before(at) {
			m.steps = m.progress(at)
			last := &m.steps[len(m.steps)-1]
			last.Status, last.EndDate, last.Message = wire.MigrationFailed, apiDate(at), m.FailMsg
			m.Status = wire.MigrationFailed
			return true
		}
		return false
	}
	if end := m.Requested.Add(m.Duration); !now.Before(end) {
		m.steps = m.progress(end)
		last := &m.steps[len(m.steps)-1]
		last.Status, last.EndDate = wire.MigrationOK, apiDate(end)
		m.Status = wire.MigrationOK
		return true
	}
	return false
}

// Abort ends a RUNNING migration ABORTED at now, at the step it was running.
func (m *Record) Abort(now time.Time) {
	m.steps = m.progress(now)
	last := &m.steps[len(m.steps)-1]
	last.Status, last.EndDate, last.Message = wire.MigrationAborted, apiDate(now), "Migration aborted"
	m.Status = wire.MigrationAborted
}

// Running returns the RUNNING migration of ms, if any.
func Running(ms []*Record) *Record {
	for _, m := range ms {
		if m.Status == wire.MigrationRunning {
			return m
		}
	}
	return nil
}

// Views renders ms at now, newest first.
func Views(ms []*Record, now time.Time) []wire.Migration {
	ms = slices.Clone(ms)
	slices.SortFunc(ms, func(a, b *Record) int {
		if c := b.Requested.Compare(a.Requested); c != 0 {
			return c
		}
		return cmp.Compare(b.Seq, a.Seq)
	})
	out := make([]wire.Migration, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.View(now))
	}
	return out
}
