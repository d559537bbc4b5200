// Package migrations is the capability of the kinds whose plan, version or region can change
// after creation (Kind.Migrations): a change of the spec is applied to the existing add-on
// through a Clever Cloud migration, one at a time, followed to its end (status.migration and
// the Migrating condition); the old add-on keeps serving meanwhile, so Ready is untouched.
package migrations

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clever-operator/clever-operator/api/shared"
	"github.com/clever-operator/clever-operator/internal/catalog"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/step"
)

// Engine is what a migration needs of the engine beyond the pass: the plan the spec asks for,
// and the create options for a plan (the version it resolves to).
type Engine interface {
	SpecPlan(ctx context.Context, s step.Pass) (string, error)
	Options(ctx context.Context, s step.Pass, planID string, creating bool) (clevercloud.Options, error)
}

const (
	// pollEvery is how often a running migration is read.
	pollEvery = 5 * time.Second
)

// State is the engine's record of the last migration (status.migration).
type State = shared.MigrationStatus

// CurrentVersion is the add-on's version: as recorded in status, else from its env (every
// migratable kind publishes a *_VERSION variable; the first in name order is used).
func CurrentVersion(st *kinds.Status, env map[string]string) string {
	if v := st.Version; v != "" {
		return v
	}
	return EnvVersion(env)
}

// EnvVersion is the version an add-on's env publishes (its first *_VERSION variable).
func EnvVersion(env map[string]string) string {
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

// Choice is what to do about an existing add-on's plan, region and version.
type Choice int

const (
	None   Choice = iota // all equal: nothing to do
	Start                // start a migration to target
	Failed               // this target already failed for this generation: wait for a new spec
	Paused               // a change is due but the resource is paused
)

// Target is what the spec asks of an existing add-on.
type Target struct{ Plan, Region, Version string }

func (t Target) String() string {
	return fmt.Sprintf("plan %s, region %s, version %s", t.Plan, t.Region, t.Version)
}

// Choose compares the add-on (plan, region, version as it runs) with the target and
// the last migration recorded. want.Version "" (or the same version) keeps the current one.
func Choose(addon *clevercloud.Addon, version string, want Target, last *State, generation int64, paused bool) (Choice, Target) {
	if want.Version == "" || clevercloud.SameVersion(want.Version, version) {
		want.Version = version
	}
	if want.Plan == addon.Plan.ID && strings.EqualFold(want.Region, addon.Region) && want.Version == version {
		return None, want
	}
	if last != nil && last.Generation == generation && last.Target == want.String() {
		return Failed, want
	}
	if paused {
		return Paused, want
	}
	return Start, want
}

// Migrate applies a change of plan, version or region to an existing add-on through a
// Clever Cloud migration, one at a time. It ends the pass while a migration runs or was just
// started; the old add-on keeps serving, so Ready is untouched.
func Migrate(ctx context.Context, s step.Pass, e Engine, p Prices, addon *clevercloud.Addon) error {
	obj, api, org, k := s.Object(), s.API(), s.Org(), s.Kind()
	var last State
	hasLast := s.Status().Migration != nil
	if hasLast {
		last = *s.Status().Migration
	}
	if hasLast && (last.Status == clevercloud.MigrationRunning || last.Status == clevercloud.MigrationRecovering) {
		return poll(ctx, s, addon, last)
	}
	planID := addon.Plan.ID
	var err error
	if k.PlanFromSpec() {
		if planID, err = e.SpecPlan(ctx, s); err != nil {
			return s.FailSpecOrAPI(err, status.ReasonPlanNotFound, "resolving the plan")
		}
	}
	region := addon.Region
	if k.RegionMigrations {
		region, _ = k.Region(obj)
	}
	if _, err := k.Options(obj); err != nil {
		return nil
	}
	opts, err := e.Options(ctx, s, planID, false)
	if err != nil {
		return s.FailSpecOrAPI(err, status.ReasonInvalidSpec, "reading the provider's versions")
	}
	env, err := api.GetAddonEnv(ctx, org, addon.ID)
	if err != nil {
		return s.FailAPI("reading the add-on's version", err)
	}
	var lastp *State
	if hasLast {
		lastp = &last
	}
	choice, want := Choose(addon, CurrentVersion(s.Status(), clevercloud.EnvMap(env)), Target{planID, region, opts.Version}, lastp, obj.GetGeneration(), s.Paused())
	target := want.String()
	switch choice {
	case None, Failed:
		// Nothing to change, or this change already failed: wait for a new spec instead of
		// retrying in a loop.
		return nil
	case Paused:
		// Keep the change pending (observedGeneration stays behind) until unpaused.
		s.Condition(status.TypeMigrating, metav1.ConditionFalse, status.ReasonPauseRequested, "change to "+target+" waits: the resource is paused")
		return step.End(ctrl.Result{})
	}
	var v *string
	if want.Version != "" {
		v = &want.Version
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
			report(s, State{Status: clevercloud.MigrationFailed, Message: msg, Target: target, Generation: obj.GetGeneration()},
				metav1.ConditionFalse, status.ReasonMigrationFailed, msg, corev1.EventTypeWarning, status.EventMigrationFailed)
			return nil
		}
		return s.FailAPI("starting a migration", err)
	}
	if planID != addon.Plan.ID || region != addon.Region {
		p.event(ctx, s, addon, planID, region)
	}
	report(s, State{ID: m.MigrationID, Status: m.Status, Step: runningStep(m), Target: target, Generation: obj.GetGeneration()},
		metav1.ConditionTrue, status.ReasonMigrating, fmt.Sprintf("migration %s to %s started", m.MigrationID, target), corev1.EventTypeNormal, status.EventMigrationStarted)
	return step.End(ctrl.Result{RequeueAfter: pollEvery})
}

// poll follows a running migration to its end.
func poll(ctx context.Context, s step.Pass, addon *clevercloud.Addon, last State) error {
	m, err := s.API().GetMigration(ctx, s.Org(), addon.ID, last.ID)
	if err != nil {
		return s.FailAPI("reading migration "+last.ID, err)
	}
	st := last
	st.Status, st.Step = m.Status, runningStep(m)
	switch {
	case !m.Done():
		report(s, st, metav1.ConditionTrue, status.ReasonMigrating, fmt.Sprintf("migration %s to %s: step %s", m.MigrationID, last.Target, st.Step), "", "")
		return step.End(ctrl.Result{RequeueAfter: pollEvery})
	case m.Succeeded():
		report(s, st, metav1.ConditionFalse, status.ReasonMigrated,
			fmt.Sprintf("migration %s to %s succeeded", m.MigrationID, last.Target), corev1.EventTypeNormal, status.EventMigrationSucceeded)
		if err := after(ctx, s, addon); err != nil {
			return err
		}
		if last.Generation != s.Object().GetGeneration() {
			// The spec changed again while it ran: apply that too, in a new pass.
			return step.End(ctrl.Result{Requeue: true})
		}
		// Continue the pass: the add-on's plan and credentials changed.
		return nil
	default:
		if failed, ok := m.FailedStep(); ok {
			st.Step, st.Message = failed.Value, failed.Message
		}
		msg := fmt.Sprintf("migration %s to %s ended %s at step %s: %s; the add-on is unchanged", m.MigrationID, last.Target, m.Status, st.Step, st.Message)
		report(s, st, metav1.ConditionFalse, status.ReasonMigrationFailed, msg, corev1.EventTypeWarning, status.EventMigrationFailed)
		return nil
	}
}

// after refreshes the add-on's plan and version in status.
func after(ctx context.Context, s step.Pass, addon *clevercloud.Addon) error {
	fresh, err := s.API().GetAddon(ctx, s.Org(), addon.ID)
	if err != nil {
		return err
	}
	*addon = *fresh
	opts, _ := s.Kind().Options(s.Object())
	plan := fresh.Plan.ID
	s.Update(func(st *kinds.Status) {
		st.Plan = plan
		if opts.Version != "" {
			st.Version = opts.Version
		}
	})
	return nil
}

// report records st and the Migrating condition, with an event (eventReason, when
// set) if the condition's reason or message changed.
func report(s step.Pass, st State, cs metav1.ConditionStatus, reason, msg, eventType, eventReason string) {
	s.Update(func(cur *kinds.Status) {
		m := st
		cur.Migration = &m
	})
	if s.Condition(status.TypeMigrating, cs, reason, msg) && eventReason != "" {
		s.Event(eventType, eventReason, msg)
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

// Capability is the migrations as the pass calls them (step.Capability): a change of the
// spec is applied to an existing add-on, unless the resource only observes it.
type Capability struct {
	step.Hooks
	Engine Engine
	Prices Prices
}

// Existing migrates the add-on when the spec asks for another plan, version or region.
func (c Capability) Existing(ctx context.Context, s step.Pass, addon *clevercloud.Addon) error {
	if s.ObserveOnly() {
		return nil
	}
	return Migrate(ctx, s, c.Engine, c.Prices, addon)
}

// Prices are the caches a migration's price event reads (nil PriceCache: no event).
type Prices struct {
	Plans  *catalog.PlanCache
	Prices *catalog.PriceCache
}

// per30Days is "19.50 EUR" for a plan, "" when it cannot be had.
func (p Prices) per30Days(ctx context.Context, s step.Pass, planID, zone string) string {
	if planID == "" || zone == "" {
		return ""
	}
	pr := p.Prices.Price(ctx, s.API(), p.Plans, s.Key(), s.Org(), s.Kind().Provider(s.Object()), planID, zone)
	if pr.Per30Days == "" {
		return ""
	}
	return pr.Per30Days + " " + pr.Currency
}

// event publishes, before a migration to planID in region starts, the add-on's price now and
// after it (a Normal event; nothing when neither price can be had).
func (p Prices) event(ctx context.Context, s step.Pass, addon *clevercloud.Addon, planID, region string) {
	if p.Prices == nil {
		return
	}
	before := p.per30Days(ctx, s, addon.Plan.ID, addon.Region)
	after := p.per30Days(ctx, s, planID, region)
	if before == "" && after == "" {
		return
	}
	unknown := func(pr string) string {
		if pr == "" {
			return "unknown"
		}
		return pr + " per 30 days"
	}
	name := func(id, region string) string {
		if pl, ok := p.Plans.Plan(ctx, s.API(), s.Key(), s.Org(), s.Kind().Provider(s.Object()), id); ok && pl.Slug != "" {
			return pl.Slug + " in " + region
		}
		return id + " in " + region
	}
	s.Event(corev1.EventTypeNormal, status.EventMigrationPrice, fmt.Sprintf("Migrating add-on %s from %s (%s) to %s (%s)",
		addon.ID, name(addon.Plan.ID, addon.Region), unknown(before), name(planID, region), unknown(after)))
}
