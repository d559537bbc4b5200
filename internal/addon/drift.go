package addon

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/status"
)

// TypeDrifted is set when the periodic refresh finds the add-on changed outside the operator
// (plan, region or version). It is a report: Ready is untouched, and the next change of the
// resource's spec converges the add-on to the spec again (through a migration).
const TypeDrifted = "Drifted"

// Drift reasons.
const (
	ReasonPlanDrift    = "PlanDrift"
	ReasonRegionDrift  = "RegionDrift"
	ReasonVersionDrift = "VersionDrift"
)

type drift struct{ reason, msg string }

func (r *Reconciler) countRefresh(obj *unstructured.Unstructured) int {
	v, _ := r.refreshes.LoadOrStore(obj.GetUID(), new(int))
	n := v.(*int)
	*n++
	return *n
}

// addonDrift compares the add-on read at Clever Cloud with what the operator applied.
func (r *Reconciler) addonDrift(obj *unstructured.Unstructured, a *clevercloud.Addon) *drift {
	if plan, _, _ := unstructured.NestedString(obj.Object, "status", "plan"); plan != "" && a.Plan.ID != plan {
		return &drift{ReasonPlanDrift, fmt.Sprintf("add-on %s now runs plan %s (%s), not %s as applied by the operator; it was changed outside the operator", a.ID, a.Plan.Slug, a.Plan.ID, plan)}
	}
	if want, err := r.Kind.Region(obj); err == nil && !strings.EqualFold(want, a.Region) {
		return &drift{ReasonRegionDrift, fmt.Sprintf("add-on %s now runs in region %s, not %s as in spec; it was changed outside the operator", a.ID, a.Region, want)}
	}
	return nil
}

// versionDrift compares the version the add-on publishes in its env with status.version.
func (r *Reconciler) versionDrift(obj *unstructured.Unstructured, env map[string]string) *drift {
	recorded, _, _ := unstructured.NestedString(obj.Object, "status", "version")
	if recorded == "" {
		return nil
	}
	unrecorded := obj.DeepCopy()
	unstructured.RemoveNestedField(unrecorded.Object, "status", "version")
	actual := currentVersion(unrecorded, env)
	if actual == "" || sameVersion(recorded, actual) {
		return nil
	}
	return &drift{ReasonVersionDrift, fmt.Sprintf("add-on now runs version %s, not %s as applied by the operator; it was changed outside the operator", actual, recorded)}
}

// reportDrift sets or clears the Drifted condition, with a Warning event when it appears.
func (r *Reconciler) reportDrift(ctx context.Context, obj *unstructured.Unstructured, d *drift) error {
	old, had := status.Find(status.Conditions(obj), TypeDrifted)
	if d == nil && !had {
		return nil
	}
	err := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		if d == nil {
			if conds, removed := status.Remove(status.Conditions(u), TypeDrifted); removed {
				status.SetConditions(u, conds)
			}
			return
		}
		setCondition(u, TypeDrifted, metav1.ConditionTrue, d.reason, d.msg, r.now())
	})
	if err == nil && d != nil && (old.Reason != d.reason || old.Message != d.msg) {
		r.Recorder.Event(obj, "Warning", d.reason, d.msg)
	}
	return err
}
