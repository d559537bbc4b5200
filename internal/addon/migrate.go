package addon

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clever-operator/clever-operator/api/shared"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

const (
	// migrationPoll is how often a running migration is read.
	migrationPoll = 5 * time.Second
)

// migrationState is the engine's record of the last migration (status.migration).
type migrationState = shared.MigrationStatus

// currentVersion is the add-on's version: as recorded in status, else from its env (every
// migratable kind publishes a *_VERSION variable; the first in name order is used).
func currentVersion(obj *unstructured.Unstructured, env map[string]string) string {
	if v := kinds.StatusVersion.String(obj); v != "" {
		return v
	}
	return envVersion(env)
}

// envVersion is the version an add-on's env publishes (its first *_VERSION variable).
func envVersion(env map[string]string) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		if strings.HasSuffix(k, "_VERSION") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		return env[keys[0]]
	}
	return ""
}

// migrationChoice is what to do about an existing add-on's plan, region and version.
type migrationChoice int

const (
	migrationNone   migrationChoice = iota // all equal: nothing to do
	migrationStart                         // start a migration to target
	migrationFailed                        // this target already failed for this generation: wait for a new spec
	migrationPaused                        // a change is due but the resource is paused
)

// migrationTarget is what the spec asks of an existing add-on.
type migrationTarget struct{ plan, region, version string }

func (t migrationTarget) String() string {
	return fmt.Sprintf("plan %s, region %s, version %s", t.plan, t.region, t.version)
}

// chooseMigration compares the add-on (plan, region, version as it runs) with the target and
// the last migration recorded. want.version "" (or the same version) keeps the current one.
func chooseMigration(addon *clevercloud.Addon, version string, want migrationTarget, last *migrationState, generation int64, paused bool) (migrationChoice, migrationTarget) {
	if want.version == "" || clevercloud.SameVersion(want.version, version) {
		want.version = version
	}
	if want.plan == addon.Plan.ID && strings.EqualFold(want.region, addon.Region) && want.version == version {
		return migrationNone, want
	}
	if last != nil && last.Generation == generation && last.Target == want.String() {
		return migrationFailed, want
	}
	if paused {
		return migrationPaused, want
	}
	return migrationStart, want
}

// migrate applies a change of plan, version or region to an existing add-on through a
// Clever Cloud migration, one at a time. It ends the pass while a migration runs or was just
// started; the old add-on keeps serving, so Ready is untouched.
func (r *Reconciler) migrate(ctx context.Context, s *pass, addon *clevercloud.Addon) error {
	obj, api, org := s.obj, s.api, s.org
	last, hasLast := kinds.MigrationOf(obj)
	if hasLast && (last.Status == clevercloud.MigrationRunning || last.Status == clevercloud.MigrationRecovering) {
		return r.pollMigration(ctx, s, addon, last)
	}
	planID := addon.Plan.ID
	var err error
	if r.Kind.PlanFromSpec() {
		if planID, err = r.Plans.Resolve(ctx, api, s.key, org, r.Kind.ProviderID, r.Kind.SpecPlan(obj)); err != nil {
			return s.failSpecOrAPI(err, status.ReasonPlanNotFound, "resolving the plan")
		}
	}
	region := addon.Region
	if r.Kind.RegionMigrations {
		region, _ = r.Kind.Region(obj)
	}
	if _, err := r.Kind.Options(obj); err != nil {
		return nil
	}
	opts, err := r.options(ctx, s, planID, false)
	if err != nil {
		return s.failSpecOrAPI(err, status.ReasonInvalidSpec, "reading the provider's versions")
	}
	env, err := api.GetAddonEnv(ctx, org, addon.ID)
	if err != nil {
		return s.failAPI("reading the add-on's version", err)
	}
	var lastp *migrationState
	if hasLast {
		lastp = &last
	}
	choice, want := chooseMigration(addon, currentVersion(obj, clevercloud.EnvMap(env)), migrationTarget{planID, region, opts.Version}, lastp, obj.GetGeneration(), s.life.paused)
	target := want.String()
	switch choice {
	case migrationNone, migrationFailed:
		// Nothing to change, or this change already failed: wait for a new spec instead of
		// retrying in a loop.
		return nil
	case migrationPaused:
		// Keep the change pending (observedGeneration stays behind) until unpaused.
		s.condition(status.TypeMigrating, metav1.ConditionFalse, status.ReasonPauseRequested, "change to "+target+" waits: the resource is paused")
		return stop(ctrl.Result{})
	}
	var v *string
	if want.version != "" {
		v = &want.version
	}
	m, err := api.StartMigration(ctx, org, addon.ID, clevercloud.MigrationRequest{PlanID: planID, Region: region, Version: v})
	if clevercloud.IsConflict(err) {
		// A migration already runs (e.g. an earlier start whose answer was lost): follow it.
		if list, lerr := api.ListMigrations(ctx, org, addon.ID); lerr == nil {
			for i := range list {
				if !list[i].Done() {
					m, err = &list[i], nil
					break
				}
			}
		}
	}
	if err != nil {
		if clevercloud.IsBadRequest(err) {
			msg := "Clever Cloud refused the migration to " + target + ": " + clevercloud.Message(err)
			s.migrationReport(migrationState{Status: clevercloud.MigrationFailed, Message: msg, Target: target, Generation: obj.GetGeneration()},
				metav1.ConditionFalse, status.ReasonMigrationFailed, msg, corev1.EventTypeWarning, status.EventMigrationFailed)
			return nil
		}
		return s.failAPI("starting a migration", err)
	}
	if planID != addon.Plan.ID || region != addon.Region {
		r.migrationPriceEvent(ctx, s, addon, planID, region)
	}
	s.migrationReport(migrationState{ID: m.MigrationID, Status: m.Status, Step: runningStep(m), Target: target, Generation: obj.GetGeneration()},
		metav1.ConditionTrue, status.ReasonMigrating, fmt.Sprintf("migration %s to %s started", m.MigrationID, target), corev1.EventTypeNormal, status.EventMigrationStarted)
	return stop(ctrl.Result{RequeueAfter: migrationPoll})
}

// pollMigration follows a running migration to its end.
func (r *Reconciler) pollMigration(ctx context.Context, s *pass, addon *clevercloud.Addon, last migrationState) error {
	m, err := s.api.GetMigration(ctx, s.org, addon.ID, last.ID)
	if err != nil {
		return s.failAPI("reading migration "+last.ID, err)
	}
	st := last
	st.Status, st.Step = m.Status, runningStep(m)
	switch {
	case !m.Done():
		s.migrationReport(st, metav1.ConditionTrue, status.ReasonMigrating, fmt.Sprintf("migration %s to %s: step %s", m.MigrationID, last.Target, st.Step), "", "")
		return stop(ctrl.Result{RequeueAfter: migrationPoll})
	case m.Succeeded():
		s.migrationReport(st, metav1.ConditionFalse, status.ReasonMigrated,
			fmt.Sprintf("migration %s to %s succeeded", m.MigrationID, last.Target), corev1.EventTypeNormal, status.EventMigrationSucceeded)
		if err := r.afterMigration(ctx, s, addon); err != nil {
			return err
		}
		if last.Generation != s.obj.GetGeneration() {
			// The spec changed again while it ran: apply that too, in a new pass.
			return stop(ctrl.Result{Requeue: true})
		}
		// Continue the pass: the add-on's plan and credentials changed.
		return nil
	default:
		if step, ok := m.FailedStep(); ok {
			st.Step, st.Message = step.Value, step.Message
		}
		msg := fmt.Sprintf("migration %s to %s ended %s at step %s: %s; the add-on is unchanged", m.MigrationID, last.Target, m.Status, st.Step, st.Message)
		s.migrationReport(st, metav1.ConditionFalse, status.ReasonMigrationFailed, msg, corev1.EventTypeWarning, status.EventMigrationFailed)
		return nil
	}
}

// afterMigration refreshes the add-on's plan and version in status.
func (r *Reconciler) afterMigration(ctx context.Context, s *pass, addon *clevercloud.Addon) error {
	fresh, err := s.api.GetAddon(ctx, s.org, addon.ID)
	if err != nil {
		return err
	}
	*addon = *fresh
	opts, _ := r.Kind.Options(s.obj)
	plan := fresh.Plan.ID
	s.set(func(u *unstructured.Unstructured) {
		kinds.StatusPlan.Set(u, plan)
		if opts.Version != "" {
			kinds.StatusVersion.Set(u, opts.Version)
		}
	})
	return nil
}

// migrationReport records st and the Migrating condition, with an event (eventReason, when
// set) if the condition's reason or message changed.
func (s *pass) migrationReport(st migrationState, cs metav1.ConditionStatus, reason, msg, eventType, eventReason string) {
	s.set(func(u *unstructured.Unstructured) { kinds.SetMigration(u, st) })
	if s.condition(status.TypeMigrating, cs, reason, msg) && eventReason != "" {
		s.event(eventType, eventReason, msg)
	}
}

func runningStep(m *clevercloud.Migration) string {
	for _, s := range m.Steps {
		if s.Status == clevercloud.MigrationRunning || s.Status == clevercloud.MigrationFailed {
			return s.Value
		}
	}
	if n := len(m.Steps); n > 0 {
		return m.Steps[n-1].Value
	}
	return ""
}
