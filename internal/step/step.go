// Package step is what the engine's pass gives the capabilities some kinds have (backups,
// migrations, Network Group memberships, the operator add-ons' actions): the pass as a port,
// so each capability lives in its own package, beside the engine, without depending on it;
// and what the pass calls of them (Capability, Source: capability.go).
package step

import (
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Pass is one pass of the engine over a resource, as a step sees it. Steps change the
// status only through Update, Condition and RemoveCondition (the pass writes it once, at its
// end) and queue events with Event.
type Pass interface {
	// Kind is the resource's row in the table of kinds.
	Kind() *kinds.Kind
	// Object is the working copy (its status and conditions as the pass read them); Snapshot
	// the resource as the pass read it. Status and Conditions are its status and conditions,
	// decoded once, with every change made so far; Update changes the status.
	Object() *unstructured.Unstructured
	Snapshot() *unstructured.Unstructured
	Status() *kinds.Status
	Conditions() []status.Condition
	Update(change func(*kinds.Status))
	// Condition sets a condition and reports whether its reason or message changed (an
	// event is worth recording only then).
	Condition(t string, cs metav1.ConditionStatus, reason, msg string) (changed bool)
	RemoveCondition(t string)
	Event(typ, reason, msg string)
	Now() time.Time
	Log() logr.Logger
	// Org is spec.organisation; API the Clever Cloud client of the resource's credentials,
	// which allow Org; Key identifies those credentials (for caches).
	Org() string
	API() credentials.API
	Key() string
	// Grant is what the credentials allow (organisations, add-ons and groups to bind).
	Grant() *credentials.Grant
	// ObserveOnly: the resource only reads its add-on (spec.observeOnly); Paused: the pause
	// annotation is set (no Clever Cloud write).
	ObserveOnly() bool
	Paused() bool
	// FailAPI reports an API error met while doing something (a condition, an event when
	// it is new) and returns the error that ends the pass; Transient says whether err is
	// one that FailAPI reports without touching a Ready add-on (throttled, unavailable).
	FailAPI(doing string, err error) error
	Transient(err error) bool
	// FailSpecOrAPI reports a spec error (a *kinds.SpecError, with def as its reason when it
	// names none) or else an API error met while doing something.
	FailSpecOrAPI(err error, def, doing string) error
	// Succeeded drops the conditions of transient failures after a successful call.
	Succeeded()
}

// Stop ends a pass early: Result is what the work queue is told and Cause, when not nil, the
// error it backs off on. Steps return it as their error; the engine translates it in one place.
type Stop struct {
	Result ctrl.Result
	Cause  error
}

func (e *Stop) Error() string {
	if e.Cause != nil {
		return e.Cause.Error()
	}
	return "pass stopped"
}

// End ends the pass with res.
func End(res ctrl.Result) error { return &Stop{Result: res} }

// Retry ends the pass and hands cause to the work queue's backoff.
func Retry(cause error) error { return &Stop{Cause: cause} }
