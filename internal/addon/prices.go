package addon

import (
	"context"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

// What each resource costs (issue #18 §5).
//
// Clever Cloud prices a plan per hour in a price system per zone: the organisation's
// (GET /v4/billing/organisations/{ownerId}/price-system?zone_id=), else the list price
// (GET /v4/billing/price-system?zone_id=&currency=EUR). A plan's price_id matches a runtime
// entry's slug_id case-insensitively; the console shows hourly × 720 as "30 days"
// (clever-components src/lib/product.js). Without a price system that lists the plan, the
// catalogue's plan price (euros per 30 days) is used. Price systems are read per credential
// set, owner and zone at most once per PriceCache.TTL (hours), failures at most once per
// RetryAfter: never one call per resource, and a price that cannot be had never holds up
// provisioning (status.price then has a reason instead of amounts).

// recordPrice sets status.price for the add-on's plan when due. It makes API calls only when
// the owner's catalogue or price system is not cached.
func (r *Reconciler) recordPrice(ctx context.Context, s *pass, zone string) {
	if r.Prices == nil {
		return
	}
	planID := s.st.Plan
	if planID == "" || zone == "" || !r.Prices.Due(s.st.Price, planID, zone) {
		return
	}
	p := r.Prices.Price(ctx, s.api, r.Plans, s.key, s.org, r.Kind.Provider(s.obj), planID, zone)
	s.update(func(st *kinds.Status) { st.Price = &p })
}
