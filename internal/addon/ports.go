package addon

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/step"
)

// The pass as the capabilities' packages see it (step.Pass).
var _ step.Pass = (*pass)(nil)

func (s *pass) Kind() *kinds.Kind                    { return s.kind }
func (s *pass) Object() *unstructured.Unstructured   { return s.obj }
func (s *pass) Snapshot() *unstructured.Unstructured { return s.base }
func (s *pass) Status() *kinds.Status                { return &s.st }
func (s *pass) Conditions() []status.Condition       { return s.conds }
func (s *pass) Update(change func(*kinds.Status))    { s.update(change) }
func (s *pass) Condition(t string, cs metav1.ConditionStatus, reason, msg string) bool {
	return s.condition(t, cs, reason, msg)
}
func (s *pass) RemoveCondition(t string)              { s.removeCondition(t) }
func (s *pass) Event(typ, reason, msg string)         { s.event(typ, reason, msg) }
func (s *pass) Now() time.Time                        { return s.now() }
func (s *pass) Log() logr.Logger                      { return s.log }
func (s *pass) Org() string                           { return s.org }
func (s *pass) API() credentials.API                  { return s.api }
func (s *pass) Grant() *credentials.Grant             { return s.grant }
func (s *pass) Key() string                           { return s.key }
func (s *pass) ObserveOnly() bool                     { return s.life.observeOnly }
func (s *pass) Paused() bool                          { return s.life.paused }
func (s *pass) FailAPI(doing string, err error) error { return s.failAPI(doing, err) }
func (s *pass) FailSpecOrAPI(err error, def, doing string) error {
	return s.failSpecOrAPI(err, def, doing)
}
func (s *pass) Succeeded() { s.clearTransient() }

// Transient: err is reported as throttling or unavailability, which leave a Ready add-on Ready.
func (s *pass) Transient(err error) bool {
	k := classify(err)
	return k == failThrottled || k == failUnavailable
}

// engine is the Reconciler as the migrations capability sees it (migrations.Engine).
type engine struct{ r *Reconciler }

func (e engine) SpecPlan(ctx context.Context, s step.Pass) (string, error) {
	k := e.r.Kind
	return e.r.Plans.Resolve(ctx, s.API(), s.Key(), s.Org(), k.ProviderID, k.SpecPlan(s.Object()))
}

func (e engine) Options(ctx context.Context, s step.Pass, planID string, creating bool) (clevercloud.Options, error) {
	return e.r.options(ctx, s, planID, creating)
}
