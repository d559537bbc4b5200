package addon

import (
	"context"
	"errors"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/internal/statusmerge"
)

// Fairness between tenants (docs/security.md, "Fairness between tenants"): a
// namespace's own credentials may name any endpoint, and one that never answers would hold a
// worker for every attempt of every call. Three rules bound what it costs the other
// namespaces:
//
//   - every pass runs under a deadline (PassTimeout, default DefaultPassTimeout): a pass cut
//     by it reports ApiUnavailable ("did not answer in time") and backs off; the status it
//     decided is still written (the write does not run under the deadline), and a create
//     whose answer was lost is looked up by name by the next pass, never made twice;
//   - passes whose credentials a namespace supplied (or whose endpoint is not the
//     operator's: Grant.Tenant) hold at most TenantWorkers of the kind's workers at once,
//     per namespace (per credentials object and namespace for an admin's). A pass over the
//     share makes no call: it comes back after TenantRetry (with jitter), without growing
//     its backoff;
//   - the circuit breaker is keyed by where the credentials come from and the endpoint's
//     host, not by the token (Resolver.ClientFor), and counts the attempts left unanswered:
//     a namespace does not reset an open circuit by minting a new token.

func (r *Reconciler) passTimeout() time.Duration {
	if r.PassTimeout > 0 {
		return r.PassTimeout
	}
	return queue.DefaultPassTimeout
}

// tenantShare is how many of the kind's workers one tenant's passes may hold at once:
// TenantWorkers, else half the workers (at least one); 0: no limit.
func (r *Reconciler) tenantShare() int {
	switch {
	case r.TenantWorkers > 0:
		return r.TenantWorkers
	case r.TenantWorkers < 0:
		return 0
	}
	workers := r.MaxConcurrentReconciles
	if workers <= 0 {
		workers = 4
	}
	return max(1, workers/2)
}

// takeSlot takes a worker slot for the pass's tenant (connect calls it, before any call).
// Over the share it ends the pass, to be tried again after TenantRetry with jitter, without
// any call or status change; a first pass stays a first pass.
func (r *Reconciler) takeSlot(s *pass, g *credentials.Grant) error {
	share := r.tenantShare()
	if g.Tenant == "" || share == 0 || s.slot != "" {
		return nil
	}
	if !r.slots.Acquire(g.Tenant, share) {
		if s.first {
			statusmerge.KeepNew(s.obj.GetUID())
		}
		s.log.V(1).Info("waiting for a worker of its credentials' share", "credentials", g.Source, "share", share)
		return stop(ctrl.Result{RequeueAfter: queue.TenantJitter()})
	}
	s.slot = g.Tenant
	return nil
}

// releaseSlot gives the pass's slot back (at the end of the pass).
func (r *Reconciler) releaseSlot(s *pass) {
	if s.slot != "" {
		r.slots.Release(s.slot)
		s.slot = ""
	}
}

// endpointOf names whose endpoint the pass calls, for messages ("of Secret team-b/x ").
func (s *pass) endpointOf() string {
	if s.grant == nil || s.grant.Source == "" {
		return ""
	}
	return "of " + s.grant.Source + " "
}

// timedOut: the endpoint did not answer in time (the attempt's timeout or the pass's
// deadline).
func timedOut(err error) bool { return errors.Is(err, context.DeadlineExceeded) }
