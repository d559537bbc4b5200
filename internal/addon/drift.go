package addon

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/migrations"
	"github.com/clever-operator/clever-operator/internal/status"
)

// drift is a change made to the add-on outside the operator (condition Drifted).
type drift struct{ reason, msg string }

func (r *Reconciler) countRefresh(obj *unstructured.Unstructured) int {
	v, _ := r.refreshes.LoadOrStore(obj.GetUID(), new(int))
	n := v.(*int)
	*n++
	return *n
}

// addonDrift compares the add-on read at Clever Cloud with what the operator applied.
func (r *Reconciler) addonDrift(obj *unstructured.Unstructured, st *kinds.Status, a *clevercloud.Addon) *drift {
	if plan := st.Plan; plan != "" && a.Plan.ID != plan {
		return &drift{status.ReasonPlanDrift, fmt.Sprintf("add-on %s now runs plan %s (%s), not %s as applied by the operator; it was changed outside the operator", a.ID, a.Plan.Slug, a.Plan.ID, plan)}
	}
	if want, err := r.Kind.Region(obj); err == nil && !strings.EqualFold(want, a.Region) {
		return &drift{status.ReasonRegionDrift, fmt.Sprintf("add-on %s now runs in region %s, not %s as in spec; it was changed outside the operator", a.ID, a.Region, want)}
	}
	return nil
}

// versionDrift compares the version the add-on publishes in its env with status.version.
func versionDrift(st *kinds.Status, env map[string]string) *drift {
	recorded := st.Version
	if recorded == "" {
		return nil
	}
	actual := migrations.EnvVersion(env)
	if actual == "" || clevercloud.SameVersion(recorded, actual) {
		return nil
	}
	return &drift{status.ReasonVersionDrift, fmt.Sprintf("add-on now runs version %s, not %s as applied by the operator; it was changed outside the operator", actual, recorded)}
}

// reportDrift sets or clears the Drifted condition, with a Warning event when it appears or
// changes.
func (s *pass) reportDrift(d *drift) {
	if _, had := status.Find(s.conds, status.TypeDrifted); d == nil {
		if had {
			s.removeCondition(status.TypeDrifted)
		}
		return
	}
	if s.condition(status.TypeDrifted, metav1.ConditionTrue, d.reason, d.msg) {
		s.event(corev1.EventTypeWarning, d.reason, d.msg)
	}
}
