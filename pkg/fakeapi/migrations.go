package fakeapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/catalog"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/migration"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// Add-on migrations (clever-cloud-api-more.md §1): M1 starts one, M2 lists,
// M3 gets, M4 aborts. A migration is RUNNING for Options.MigrationDuration
// and then OK; only then do the add-on's plan, region, version and
// credentials change. Progress is computed lazily from the clock whenever
// the state is read (no goroutine): every state access first settles the
// migrations whose time has come.

// The timeline of one migration (steps, progress, failure, abort) is
// pkg/fakeapi/migration's; this file keeps each add-on's migrations and
// serves them.

// DefaultMigrationDuration is used when Options.MigrationDuration is zero.
const DefaultMigrationDuration = migration.DefaultDuration

// DefaultMigrationFailureStep is the step at which FailNextMigrations makes
// migrations fail.
const DefaultMigrationFailureStep = migration.DefaultFailureStep

// MigrationSteps returns the step names a fake migration goes through, in order.
func MigrationSteps() []string { return migration.Steps() }

// FailableMigrationSteps returns the step names a migration can be made to
// fail at (Faults.MigrationFailures values): every step after the instant
// checks M1 answers with.
func FailableMigrationSteps() []string { return migration.FailableSteps() }

// runningMigration returns the add-on's RUNNING migration, if any. Caller holds s.mu.
func (rec *addonRecord) runningMigration() *migration.Record {
	return migration.Running(rec.migrations)
}

// lockState takes s.mu and settles the migrations whose time has come.
func (s *Server) lockState() {
	s.mu.Lock()
	s.settleMigrations(s.now())
}

// settleMigrations moves every running migration whose failure or end time
// has passed to FAILED or OK (then updating the add-on). Caller holds s.mu.
func (s *Server) settleMigrations(now time.Time) {
	for rec := range s.migrating {
		m := rec.runningMigration()
		if m == nil {
			delete(s.migrating, rec)
			continue
		}
		if m.Settle(now) {
			if m.Status == MigrationOK {
				s.applyMigration(rec, m)
			}
			delete(s.migrating, rec)
		}
	}
}

// applyMigration moves the add-on to the migration's target: plan, region,
// version, and new credentials (new host, database, user, password, port),
// as on a fresh instance. Caller holds s.mu.
func (s *Server) applyMigration(rec *addonRecord, m *migration.Record) {
	rec.addon.Plan = wire.ClonePlan(*m.Plan)
	rec.addon.Region = m.Region
	rec.version = m.Version
	rec.env = s.generateEnv(rec.kind, rec.owner, rec.addon.RealID, m.Plan, m.Region, m.Version)
	rec.addon.ConfigKeys = wire.VarNames(rec.env)
}

// ownedAddon returns the add-on (addon_ id or realId) of owner, or nil.
// Caller holds s.mu.
func (s *Server) ownedAddon(owner, id string) *addonRecord {
	rec := s.find(id)
	if rec == nil || rec.owner != owner {
		return nil
	}
	return rec
}

// migrationFailure decides, for a new migration of providerID, at which timed
// step it fails (-1: it succeeds). FailNextMigrations wins over
// Faults.MigrationFailures. Caller holds s.mu.
func (s *Server) migrationFailure(providerID string, f Faults) (int, string) {
	if s.failNext > 0 {
		s.failNext--
		at, _ := migration.Failure(DefaultMigrationFailureStep)
		return at, s.failNextMsg
	}
	step, ok := f.MigrationFailures[providerID]
	if !ok {
		step, ok = f.MigrationFailures["*"]
	}
	if !ok || step == "" {
		return -1, ""
	}
	return migration.Failure(step)
}

func migrationNotFound(w http.ResponseWriter) {
	wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "migration not found")
}

// startMigration is M1.
func (s *Server) startMigration(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	var body MigrationRequest
	if !wire.DecodeObjectBody(w, r, &body) {
		return
	}
	faults := s.Faults() // before s.mu: never take faultMu under s.mu

	s.lockState()
	defer s.mu.Unlock()
	rec := s.ownedAddon(owner, r.PathValue("addonId"))
	if rec == nil {
		wire.AddonNotFound(w)
		return
	}
	k := rec.kind
	pid := k.Spec.ProviderID
	vs, migratable := s.versionSpecOf(pid)
	if !migratable || vs.NoMigration {
		wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, "migration not supported for "+pid)
		return
	}
	missing := map[string]string{}
	if body.PlanID == "" {
		missing["planId"] = "required"
	}
	if body.Region == "" {
		missing["region"] = "required"
	}
	if len(missing) > 0 {
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range missing {
				if !yield(n) {
					return
				}
			}
		})
		wire.WriteFieldsError(w, "missing required field(s): "+strings.Join(names, ", "), missing)
		return
	}
	plan := k.PlanByID[body.PlanID]
	if plan == nil {
		wire.WriteFieldsError(w, fmt.Sprintf("plan %q is not a plan id of provider %s", body.PlanID, pid),
			map[string]string{"planId": "not a plan id of this provider"})
		return
	}
	if !slices.Contains(plan.Zones, body.Region) {
		wire.WriteFieldsError(w, fmt.Sprintf("plan %s of provider %s is not available in region %q (available: %s)",
			plan.Slug, pid, body.Region, strings.Join(plan.Zones, ", ")),
			map[string]string{"region": "not available for this plan"})
		return
	}
	if body.Region != rec.addon.Region && !vs.RegionChange {
		wire.WriteFieldsError(w, fmt.Sprintf("migration not supported for %s: the region cannot be changed (contact support)", pid),
			map[string]string{"region": "cannot be changed for this provider"})
		return
	}
	version := rec.version
	if body.Version != nil && *body.Version != "" {
		v := *body.Version
		if !slices.Contains(vs.Offered, v) && !(slices.Contains(vs.Legacy, v) && v == rec.version) {
			wire.WriteFieldsError(w, fmt.Sprintf("version %q is not offered by %s (offered: %s)", v, pid, strings.Join(vs.Offered, ", ")),
				map[string]string{"version": "not offered by this provider"})
			return
		}
		if rec.version != "" && catalog.VersionPrefixLess(v, rec.version) {
			wire.WriteFieldsError(w, fmt.Sprintf("downgrades are not supported: %s cannot go from version %s to %s", pid, rec.version, v),
				map[string]string{"version": "older than the current version"})
			return
		}
		version = v
	}
	if running := rec.runningMigration(); running != nil {
		wire.WriteError(w, http.StatusConflict, wire.ErrIDConflict, fmt.Sprintf(
			"a migration is already running for this add-on (%s): wait for it to finish or abort it", running.ID))
		return
	}

	now := s.now()
	s.seq++
	failAt, failMsg := s.migrationFailure(pid, faults)
	m := &migration.Record{
		Seq: s.seq, ID: "migration_" + s.newUUID(), Requested: now, Duration: s.migrationDuration(),
		Plan: plan, Region: body.Region, Version: version, Status: MigrationRunning,
		FailAt: failAt, FailMsg: failMsg,
	}
	rec.migrations = append(rec.migrations, m)
	s.migrating[rec] = true
	wire.WriteJSON(w, http.StatusOK, m.View(now))
}

func (s *Server) migrationDuration() time.Duration {
	switch d := s.opts.MigrationDuration; {
	case d == 0:
		return DefaultMigrationDuration
	case d < 0:
		return 0
	default:
		return d
	}
}

// listMigrations is M2.
func (s *Server) listMigrations(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	s.lockState()
	rec := s.ownedAddon(owner, r.PathValue("addonId"))
	var out []Migration
	if rec != nil {
		out = migration.Views(rec.migrations, s.now())
	}
	s.mu.Unlock()
	if rec == nil {
		wire.AddonNotFound(w)
		return
	}
	wire.WriteJSON(w, http.StatusOK, out)
}

// findMigration returns the add-on and its migration, answering 404 itself.
// Caller holds s.mu.
func (s *Server) findMigration(w http.ResponseWriter, r *http.Request) (*addonRecord, *migration.Record) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return nil, nil
	}
	rec := s.ownedAddon(owner, r.PathValue("addonId"))
	if rec == nil {
		wire.AddonNotFound(w)
		return nil, nil
	}
	id := r.PathValue("migrationId")
	for _, m := range rec.migrations {
		if m.ID == id {
			return rec, m
		}
	}
	migrationNotFound(w)
	return nil, nil
}

// getMigration is M3.
func (s *Server) getMigration(w http.ResponseWriter, r *http.Request) {
	s.lockState()
	defer s.mu.Unlock()
	if _, m := s.findMigration(w, r); m != nil {
		wire.WriteJSON(w, http.StatusOK, m.View(s.now()))
	}
}

// abortMigration is M4: 200 with a JSON message (like an add-on DELETE) for
// a RUNNING (now ABORTED) or already ABORTED migration, 409 for one that
// already finished otherwise.
func (s *Server) abortMigration(w http.ResponseWriter, r *http.Request) {
	s.lockState()
	defer s.mu.Unlock()
	rec, m := s.findMigration(w, r)
	if m == nil {
		return
	}
	switch m.Status {
	case MigrationRunning:
		m.Abort(s.now())
		delete(s.migrating, rec)
	case MigrationAborted:
	default:
		wire.WriteError(w, http.StatusConflict, wire.ErrIDConflict, fmt.Sprintf(
			"migration %s has already finished (status %s) and cannot be aborted", m.ID, m.Status))
		return
	}
	wire.WriteJSON(w, http.StatusOK, MessageBody{ID: 0, Message: "The migration has been aborted", Type: "success"})
}

// ---- inspection and control (for tests) ----

// Migrations returns the migrations of an add-on (addon_ id or realId),
// newest first, as M2 would show them now; nil when the add-on is unknown.
func (s *Server) Migrations(addonID string) []Migration {
	s.lockState()
	defer s.mu.Unlock()
	rec := s.find(addonID)
	if rec == nil {
		return nil
	}
	return migration.Views(rec.migrations, s.now())
}

// FailNextMigrations makes the next n migrations started (of any add-on)
// fail at step DUMP_AND_RESTORE with message (a default message when
// empty): the migration ends FAILED and the add-on is left unchanged.
// It replaces any previous count; n <= 0 cancels it. It wins over
// Faults.MigrationFailures.
func (s *Server) FailNextMigrations(n int, message string) {
	if message == "" {
		message = migration.DefaultFailureMessage
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = max(n, 0)
	s.failNextMsg = message
}

// pendingMigrationFailures returns what FailNextMigrations left.
func (s *Server) pendingMigrationFailures() (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failNext, s.failNextMsg
}
