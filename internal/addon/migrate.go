package addon

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Condition and events of migrations.
const (
	TypeMigrating           = "Migrating"
	ReasonMigrating         = "Migrating"
	ReasonMigrated          = "Migrated"
	ReasonMigrationFailed   = "MigrationFailed"
	EventMigrationStarted   = "MigrationStarted"
	EventMigrationSucceeded = "MigrationSucceeded"
	EventMigrationFailed    = "MigrationFailed"

	// migrationPoll is how often a running migration is read.
	migrationPoll = 5 * time.Second
)

// migrationState is the engine's record of the last migration (status.migration).
type migrationState struct {
	ID, Status, Step, Message, Target string
	Generation                        int64
}

func migrationOf(obj *unstructured.Unstructured) (migrationState, bool) {
	m, found, _ := unstructured.NestedMap(obj.Object, "status", "migration")
	if !found {
		return migrationState{}, false
	}
	st := migrationState{}
	st.ID, _ = m["id"].(string)
	st.Status, _ = m["status"].(string)
	st.Step, _ = m["step"].(string)
	st.Message, _ = m["message"].(string)
	st.Target, _ = m["target"].(string)
	switch g := m["generation"].(type) {
	case int64:
		st.Generation = g
	case float64:
		st.Generation = int64(g)
	}
	return st, true
}

func (m migrationState) set(u *unstructured.Unstructured) {
	v := map[string]any{"id": m.ID, "status": m.Status, "generation": m.Generation}
	for k, s := range map[string]string{"step": m.Step, "message": m.Message, "target": m.Target} {
		if s != "" {
			v[k] = s
		}
	}
	_ = unstructured.SetNestedMap(u.Object, v, "status", "migration")
}

// currentVersion is the add-on's version: as recorded in status, else from its env (every
// migratable kind publishes a *_VERSION variable; the first in name order is used).
func currentVersion(obj *unstructured.Unstructured, env map[string]string) string {
	if v, _, _ := unstructured.NestedString(obj.Object, "status", "version"); v != "" {
		return v
	}
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

// sameVersion: the API names versions by their leading parts ("8" for 8.19.9, "17" for 17.10).
func sameVersion(want, actual string) bool {
	return want == actual || strings.HasPrefix(actual, want+".") || clevercloud.CompareVersions(want, actual) == 0
}

// migrate applies a change of plan, version or region to an existing add-on through a
// Clever Cloud migration, one at a time. handled is true while the pass must stop here (a
// migration runs or was just started); the old add-on keeps serving, so Ready is untouched.
func (r *Reconciler) migrate(ctx context.Context, api API, key string, obj *unstructured.Unstructured, org string, addon *clevercloud.Addon) (ctrl.Result, bool, error) {
	last, hasLast := migrationOf(obj)
	if hasLast && last.Status == clevercloud.MigrationRunning || hasLast && last.Status == clevercloud.MigrationRecovering {
		return r.pollMigration(ctx, api, obj, org, addon, last)
	}
	planID := addon.Plan.ID
	var err error
	if r.Kind.PlanFromSpec() {
		if planID, err = r.Plans.Resolve(ctx, api, key, org, r.Kind.ProviderID, r.Kind.SpecPlan(obj)); err != nil {
			var se *SpecError
			if errors.As(err, &se) {
				res, err := r.fail(ctx, obj, status.ReasonPlanNotFound, se.Msg, nil)
				return res, true, err
			}
			res, err := r.failAPI(ctx, obj, "resolving the plan", err)
			return res, true, err
		}
	}
	region := addon.Region
	if r.Kind.RegionMigrations {
		region, _ = r.Kind.Region(obj)
	}
	if _, err := r.Kind.Options(obj); err != nil {
		return ctrl.Result{}, false, nil
	}
	opts, err := r.options(ctx, api, key, org, obj, planID)
	if err != nil {
		var se *SpecError
		if errors.As(err, &se) {
			res, err := r.fail(ctx, obj, specErrorReason(se, status.ReasonInvalidSpec), se.Msg, nil)
			return res, true, err
		}
		res, err := r.failAPI(ctx, obj, "reading the provider's versions", err)
		return res, true, err
	}
	env, err := api.GetAddonEnv(ctx, org, addon.ID)
	if err != nil {
		res, err := r.failAPI(ctx, obj, "reading the add-on's version", err)
		return res, true, err
	}
	version := currentVersion(obj, envToMap(env))
	wantVersion := opts.Version
	if wantVersion == "" || sameVersion(wantVersion, version) {
		wantVersion = version
	}
	if planID == addon.Plan.ID && strings.EqualFold(region, addon.Region) && wantVersion == version {
		return ctrl.Result{}, false, nil
	}
	target := fmt.Sprintf("plan %s, region %s, version %s", planID, region, wantVersion)
	if hasLast && last.Generation == obj.GetGeneration() && last.Target == target {
		// This change already failed; wait for a new spec instead of retrying in a loop.
		return ctrl.Result{}, false, nil
	}
	if lifecycleOf(obj).paused {
		// Keep the change pending (observedGeneration stays behind) until unpaused.
		res, _, err := r.reportMigration(ctx, obj, nil, metav1.ConditionFalse, status.ReasonPauseRequested,
			"change to "+target+" waits: the resource is paused", "", "", nil)
		return res, true, err
	}
	var v *string
	if wantVersion != "" {
		v = &wantVersion
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
			msg := "Clever Cloud refused the migration to " + target + ": " + apiMessage(err)
			st := migrationState{Status: clevercloud.MigrationFailed, Message: msg, Target: target, Generation: obj.GetGeneration()}
			return r.reportMigration(ctx, obj, &st, metav1.ConditionFalse, ReasonMigrationFailed, msg, corev1.EventTypeWarning, EventMigrationFailed, nil)
		}
		res, err := r.failAPI(ctx, obj, "starting a migration", err)
		return res, true, err
	}
	st := migrationState{ID: m.MigrationID, Status: m.Status, Step: runningStep(m), Target: target, Generation: obj.GetGeneration()}
	return r.reportMigration(ctx, obj, &st, metav1.ConditionTrue, ReasonMigrating,
		fmt.Sprintf("migration %s to %s started", m.MigrationID, target), corev1.EventTypeNormal, EventMigrationStarted, &ctrl.Result{RequeueAfter: migrationPoll})
}

// pollMigration follows a running migration to its end.
func (r *Reconciler) pollMigration(ctx context.Context, api API, obj *unstructured.Unstructured, org string, addon *clevercloud.Addon, last migrationState) (ctrl.Result, bool, error) {
	m, err := api.GetMigration(ctx, org, addon.ID, last.ID)
	if err != nil {
		res, err := r.failAPI(ctx, obj, "reading migration "+last.ID, err)
		return res, true, err
	}
	st := last
	st.Status, st.Step = m.Status, runningStep(m)
	switch {
	case !m.Done():
		return r.reportMigration(ctx, obj, &st, metav1.ConditionTrue, ReasonMigrating,
			fmt.Sprintf("migration %s to %s: step %s", m.MigrationID, last.Target, st.Step), "", "", &ctrl.Result{RequeueAfter: migrationPoll})
	case m.Succeeded():
		res, _, err := r.reportMigration(ctx, obj, &st, metav1.ConditionFalse, ReasonMigrated,
			fmt.Sprintf("migration %s to %s succeeded", m.MigrationID, last.Target), corev1.EventTypeNormal, EventMigrationSucceeded, nil)
		if err != nil {
			return res, true, err
		}
		if err := r.afterMigration(ctx, api, obj, org, addon); err != nil {
			return ctrl.Result{}, true, err
		}
		if last.Generation != obj.GetGeneration() {
			// The spec changed again while it ran: apply that too, in a new pass.
			return ctrl.Result{Requeue: true}, true, nil
		}
		// Continue the pass: the add-on's plan and credentials changed.
		return ctrl.Result{}, false, nil
	default:
		if step, ok := m.FailedStep(); ok {
			st.Step, st.Message = step.Value, step.Message
		}
		msg := fmt.Sprintf("migration %s to %s ended %s at step %s: %s; the add-on is unchanged", m.MigrationID, last.Target, m.Status, st.Step, st.Message)
		res, _, err := r.reportMigration(ctx, obj, &st, metav1.ConditionFalse, ReasonMigrationFailed, msg, corev1.EventTypeWarning, EventMigrationFailed, nil)
		return res, false, err
	}
}

// afterMigration refreshes the add-on's plan and version in status.
func (r *Reconciler) afterMigration(ctx context.Context, api API, obj *unstructured.Unstructured, org string, addon *clevercloud.Addon) error {
	fresh, err := api.GetAddon(ctx, org, addon.ID)
	if err != nil {
		return err
	}
	*addon = *fresh
	opts, _ := r.Kind.Options(obj)
	return r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, fresh.Plan.ID, "status", "plan")
		if opts.Version != "" {
			_ = unstructured.SetNestedField(u.Object, opts.Version, "status", "version")
		}
	})
}

// reportMigration records st (when not nil) and the Migrating condition.
func (r *Reconciler) reportMigration(ctx context.Context, obj *unstructured.Unstructured, st *migrationState, cs metav1.ConditionStatus, reason, msg, eventType, eventReason string, res *ctrl.Result) (ctrl.Result, bool, error) {
	old, _ := status.Find(status.Conditions(obj), TypeMigrating)
	err := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		if st != nil {
			st.set(u)
		}
		setCondition(u, TypeMigrating, cs, reason, msg, r.now())
	})
	if err != nil {
		return ctrl.Result{}, true, err
	}
	if eventReason != "" && (old.Reason != reason || old.Message != msg) {
		r.Recorder.Event(obj, eventType, eventReason, msg)
	}
	if res != nil {
		return *res, true, nil
	}
	return ctrl.Result{}, false, nil
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
