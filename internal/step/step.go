// Package step is what the engine's pass gives the capabilities some kinds have (backups,
// migrations, Network Group memberships, the operator add-ons' actions): the pass as a port,
// so each capability lives in its own package, beside the engine, without depending on it.
package step

import (
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
)

// Pass is one pass of the engine over a resource, as a step sees it. Steps change the
// status only through Set, Condition and RemoveCondition (the pass writes it once, at its
// end) and queue events with Event.
type Pass interface {
	// Kind is the resource's row in the table of kinds.
	Kind() *kinds.Kind
	// Object is the working copy, with every change made so far; Snapshot the resource as
	// the pass read it.
	Object() *unstructured.Unstructured
	Snapshot() *unstructured.Unstructured
	Set(change func(*unstructured.Unstructured))
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
	// Succeeded drops the conditions of transient failures after a successful call.
	Succeeded()
}
