package fakeapi

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Add-on migrations (clever-cloud-api-more.md §1): M1 starts one, M2 lists,
// M3 gets, M4 aborts. A migration is RUNNING for Options.MigrationDuration
// and then OK; only then do the add-on's plan, region, version and
// credentials change. Progress is computed lazily from the clock whenever
// the state is read (no goroutine): every state access first settles the
// migrations whose time has come.

// DefaultMigrationDuration is used when Options.MigrationDuration is zero.
const DefaultMigrationDuration = 3 * time.Second

// DefaultMigrationFailureStep is the step at which FailNextMigrations makes
// migrations fail.
const DefaultMigrationFailureStep = "DUMP_AND_RESTORE"

const defaultMigrationFailureMessage = "Migration failed: injected failure"

// The steps the fake goes through, a realistic subset of migration.types.ts
// in run order. The instant ones are already OK in M1's answer; the timed
// ones share the migration's duration equally.
var (
	migrationInstantSteps = []string{"RETRIEVE_ADDON", "CHECK_NO_MIGRATION_ALREADY_RUNNING_FOR_ADDON"}
	migrationTimedSteps   = []string{
		"RETRIEVE_TARGET_CLUSTER", "REMOVE_EDIT_RIGHT", "CREATE_ADDON_ON_TARGET_CLUSTER",
		"DEPLOY_MIGRATION_INSTANCE", "DUMP_AND_RESTORE", "UPDATE_DNS", "UPDATE_ADDON",
		"REMOVE_ADDON_FROM_SOURCE_CLUSTER", "ENABLE_EDIT_RIGHT",
	}
)

// MigrationSteps returns the step names a fake migration goes through, in order.
func MigrationSteps() []string {
	return slices.Concat(migrationInstantSteps, migrationTimedSteps)
}

// FailableMigrationSteps returns the step names a migration can be made to
// fail at (Faults.MigrationFailures values): every step after the instant
// checks M1 answers with.
func FailableMigrationSteps() []string { return slices.Clone(migrationTimedSteps) }

// migrationRecord is one migration of an add-on. Guarded by Server.mu.
type migrationRecord struct {
	seq       uint64
	id        string
	requested time.Time
	duration  time.Duration
	plan      *Plan  // target
	region    string // target
	version   string // target ("" when the provider has none)
	status    string
	// steps is set when the migration leaves RUNNING (frozen from then on).
	steps   []MigrationStep
	failAt  int // index in migrationTimedSteps where it fails; -1: it succeeds
	failMsg string
}

func apiDate(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// stepStart and stepEnd are the scheduled bounds of timed step i.
func (m *migrationRecord) stepStart(i int) time.Time {
	return m.requested.Add(time.Duration(int64(m.duration) * int64(i) / int64(len(migrationTimedSteps))))
}

func (m *migrationRecord) stepEnd(i int) time.Time {
	if i >= len(migrationTimedSteps)-1 {
		return m.requested.Add(m.duration)
	}
	return m.stepStart(i + 1)
}

// current is the index of the timed step running at now.
func (m *migrationRecord) current(now time.Time) int {
	n := len(migrationTimedSteps)
	k := n - 1
	if m.duration > 0 {
		elapsed := max(now.Sub(m.requested), 0)
		k = min(int(int64(elapsed)*int64(n)/int64(m.duration)), n-1)
	}
	if m.failAt >= 0 && k > m.failAt {
		k = m.failAt
	}
	return k
}

// progress returns the steps as seen at now: the instant ones, the finished
// timed ones and the one running (with no end date).
func (m *migrationRecord) progress(now time.Time) []MigrationStep {
	req := apiDate(m.requested)
	steps := make([]MigrationStep, 0, len(migrationInstantSteps)+len(migrationTimedSteps))
	for _, name := range migrationInstantSteps {
		steps = append(steps, MigrationStep{Value: name, Status: MigrationOK, StartDate: req, EndDate: req})
	}
	k := m.current(now)
	for i := 0; i < k; i++ {
		steps = append(steps, MigrationStep{Value: migrationTimedSteps[i], Status: MigrationOK,
			StartDate: apiDate(m.stepStart(i)), EndDate: apiDate(m.stepEnd(i))})
	}
	return append(steps, MigrationStep{Value: migrationTimedSteps[k], Status: MigrationRunning,
		StartDate: apiDate(m.stepStart(k))})
}

// view renders the migration at now.
func (m *migrationRecord) view(now time.Time) Migration {
	out := Migration{MigrationID: m.id, RequestDate: apiDate(m.requested), Status: m.status}
	if m.status == MigrationRunning {
		out.Steps = m.progress(now)
	} else {
		out.Steps = slices.Clone(m.steps)
	}
	return out
}

// runningMigration returns the add-on's RUNNING migration, if any. Caller holds s.mu.
func (rec *addonRecord) runningMigration() *migrationRecord {
	for _, m := range rec.migrations {
		if m.status == MigrationRunning {
			return m
		}
	}
	return nil
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
		if m.failAt >= 0 {
			if at := m.stepEnd(m.failAt); !now.Before(at) {
				m.steps = m.progress(at)
				last := &m.steps[len(m.steps)-1]
				last.Status, last.EndDate, last.Message = MigrationFailed, apiDate(at), m.failMsg
				m.status = MigrationFailed
				delete(s.migrating, rec)
			}
			continue
		}
		if end := m.requested.Add(m.duration); !now.Before(end) {
			m.steps = m.progress(end)
			last := &m.steps[len(m.steps)-1]
			last.Status, last.EndDate = MigrationOK, apiDate(end)
			m.status = MigrationOK
			s.applyMigration(rec, m)
			delete(s.migrating, rec)
		}
	}
}

// applyMigration moves the add-on to the migration's target: plan, region,
// version, and new credentials (new host, database, user, password, port),
// as on a fresh instance. Caller holds s.mu.
func (s *Server) applyMigration(rec *addonRecord, m *migrationRecord) {
	rec.addon.Plan = clonePlan(*m.plan)
	rec.addon.Region = m.region
	rec.version = m.version
	rec.env = s.generateEnv(rec.kind, rec.owner, rec.addon.RealID, m.plan, m.region, m.version)
	rec.addon.ConfigKeys = varNames(rec.env)
}

// views renders rec's migrations, newest first. Caller holds s.mu.
func (rec *addonRecord) views(now time.Time) []Migration {
	ms := slices.Clone(rec.migrations)
	slices.SortFunc(ms, func(a, b *migrationRecord) int {
		if c := b.requested.Compare(a.requested); c != 0 {
			return c
		}
		return cmp.Compare(b.seq, a.seq)
	})
	out := make([]Migration, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.view(now))
	}
	return out
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

// versionPrefixLess reports whether target is older than current, comparing
// only as many segments as target has ("8" is not older than "8.19.9").
func versionPrefixLess(target, current string) bool {
	n := strings.Count(target, ".") + 1
	parts := strings.Split(current, ".")
	if len(parts) > n {
		current = strings.Join(parts[:n], ".")
	}
	return compareVersions(target, current) < 0
}

// migrationFailure decides, for a new migration of providerID, at which timed
// step it fails (-1: it succeeds). FailNextMigrations wins over
// Faults.MigrationFailures. Caller holds s.mu.
func (s *Server) migrationFailure(providerID string, f Faults) (int, string) {
	if s.failNext > 0 {
		s.failNext--
		return slices.Index(migrationTimedSteps, DefaultMigrationFailureStep), s.failNextMsg
	}
	step, ok := f.MigrationFailures[providerID]
	if !ok {
		step, ok = f.MigrationFailures["*"]
	}
	if !ok || step == "" {
		return -1, ""
	}
	i := slices.Index(migrationTimedSteps, step)
	if i < 0 {
		i = slices.Index(migrationTimedSteps, DefaultMigrationFailureStep)
	}
	return i, "Migration failed at step " + migrationTimedSteps[i] + ": injected failure"
}

func migrationNotFound(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, errIDNotFound, "migration not found")
}

// startMigration is M1.
func (s *Server) startMigration(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !validOwner(owner) {
		ownerNotFound(w)
		return
	}
	var body MigrationRequest
	if !decodeObjectBody(w, r, &body) {
		return
	}
	faults := s.Faults() // before s.mu: never take faultMu under s.mu

	s.lockState()
	defer s.mu.Unlock()
	rec := s.ownedAddon(owner, r.PathValue("addonId"))
	if rec == nil {
		addonNotFound(w)
		return
	}
	k := rec.kind
	pid := k.spec.providerID
	vs, migratable := s.versionSpecOf(pid)
	if !migratable || vs.noMigration {
		writeError(w, http.StatusBadRequest, errIDBadRequest, "migration not supported for "+pid)
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
		writeFieldsError(w, "missing required field(s): "+strings.Join(names, ", "), missing)
		return
	}
	plan := k.planByID[body.PlanID]
	if plan == nil {
		writeFieldsError(w, fmt.Sprintf("plan %q is not a plan id of provider %s", body.PlanID, pid),
			map[string]string{"planId": "not a plan id of this provider"})
		return
	}
	if !slices.Contains(plan.Zones, body.Region) {
		writeFieldsError(w, fmt.Sprintf("plan %s of provider %s is not available in region %q (available: %s)",
			plan.Slug, pid, body.Region, strings.Join(plan.Zones, ", ")),
			map[string]string{"region": "not available for this plan"})
		return
	}
	if body.Region != rec.addon.Region && !vs.regionChange {
		writeFieldsError(w, fmt.Sprintf("migration not supported for %s: the region cannot be changed (contact support)", pid),
			map[string]string{"region": "cannot be changed for this provider"})
		return
	}
	version := rec.version
	if body.Version != nil && *body.Version != "" {
		v := *body.Version
		if !slices.Contains(vs.offered, v) && !(slices.Contains(vs.legacy, v) && v == rec.version) {
			writeFieldsError(w, fmt.Sprintf("version %q is not offered by %s (offered: %s)", v, pid, strings.Join(vs.offered, ", ")),
				map[string]string{"version": "not offered by this provider"})
			return
		}
		if rec.version != "" && versionPrefixLess(v, rec.version) {
			writeFieldsError(w, fmt.Sprintf("downgrades are not supported: %s cannot go from version %s to %s", pid, rec.version, v),
				map[string]string{"version": "older than the current version"})
			return
		}
		version = v
	}
	if running := rec.runningMigration(); running != nil {
		writeError(w, http.StatusConflict, errIDConflict, fmt.Sprintf(
			"a migration is already running for this add-on (%s): wait for it to finish or abort it", running.id))
		return
	}

	now := s.now()
	s.seq++
	failAt, failMsg := s.migrationFailure(pid, faults)
	m := &migrationRecord{
		seq: s.seq, id: "migration_" + s.newUUID(), requested: now, duration: s.migrationDuration(),
		plan: plan, region: body.Region, version: version, status: MigrationRunning,
		failAt: failAt, failMsg: failMsg,
	}
	rec.migrations = append(rec.migrations, m)
	s.migrating[rec] = true
	writeJSON(w, http.StatusOK, m.view(now))
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
	if !validOwner(owner) {
		ownerNotFound(w)
		return
	}
	s.lockState()
	rec := s.ownedAddon(owner, r.PathValue("addonId"))
	var out []Migration
	if rec != nil {
		out = rec.views(s.now())
	}
	s.mu.Unlock()
	if rec == nil {
		addonNotFound(w)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// findMigration returns the add-on and its migration, answering 404 itself.
// Caller holds s.mu.
func (s *Server) findMigration(w http.ResponseWriter, r *http.Request) (*addonRecord, *migrationRecord) {
	owner := r.PathValue("ownerId")
	if !validOwner(owner) {
		ownerNotFound(w)
		return nil, nil
	}
	rec := s.ownedAddon(owner, r.PathValue("addonId"))
	if rec == nil {
		addonNotFound(w)
		return nil, nil
	}
	id := r.PathValue("migrationId")
	for _, m := range rec.migrations {
		if m.id == id {
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
		writeJSON(w, http.StatusOK, m.view(s.now()))
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
	switch m.status {
	case MigrationRunning:
		now := s.now()
		m.steps = m.progress(now)
		last := &m.steps[len(m.steps)-1]
		last.Status, last.EndDate, last.Message = MigrationAborted, apiDate(now), "Migration aborted"
		m.status = MigrationAborted
		delete(s.migrating, rec)
	case MigrationAborted:
	default:
		writeError(w, http.StatusConflict, errIDConflict, fmt.Sprintf(
			"migration %s has already finished (status %s) and cannot be aborted", m.id, m.status))
		return
	}
	writeJSON(w, http.StatusOK, MessageBody{ID: 0, Message: "The migration has been aborted", Type: "success"})
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
	return rec.views(s.now())
}

// FailNextMigrations makes the next n migrations started (of any add-on)
// fail at step DUMP_AND_RESTORE with message (a default message when
// empty): the migration ends FAILED and the add-on is left unchanged.
// It replaces any previous count; n <= 0 cancels it. It wins over
// Faults.MigrationFailures.
func (s *Server) FailNextMigrations(n int, message string) {
	if message == "" {
		message = defaultMigrationFailureMessage
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
