package addon

import (
	"context"
	"fmt"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/step"
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

// pricePer30Days is "19.50 EUR" for a plan, "" when it cannot be had (for events).
func (r *Reconciler) pricePer30Days(ctx context.Context, s step.Pass, planID, zone string) string {
	if r.Prices == nil || planID == "" || zone == "" {
		return ""
	}
	p := r.Prices.Price(ctx, s.API(), r.Plans, s.Key(), s.Org(), r.Kind.Provider(s.Object()), planID, zone)
	if p.Per30Days == "" {
		return ""
	}
	return p.Per30Days + " " + p.Currency
}

// migrationPriceEvent publishes, before a migration to planID in region starts, the add-on's
// price now and after it (a Normal event; nothing when neither price can be had).
func (r *Reconciler) migrationPriceEvent(ctx context.Context, s step.Pass, addon *clevercloud.Addon, planID, region string) {
	if r.Prices == nil {
		return
	}
	before := r.pricePer30Days(ctx, s, addon.Plan.ID, addon.Region)
	after := r.pricePer30Days(ctx, s, planID, region)
	if before == "" && after == "" {
		return
	}
	unknown := func(p string) string {
		if p == "" {
			return "unknown"
		}
		return p + " per 30 days"
	}
	name := func(id, region string) string {
		if pl, ok := r.Plans.Plan(ctx, s.API(), s.Key(), s.Org(), r.Kind.Provider(s.Object()), id); ok && pl.Slug != "" {
			return pl.Slug + " in " + region
		}
		return id + " in " + region
	}
	s.Event("Normal", status.EventMigrationPrice, fmt.Sprintf("Migrating add-on %s from %s (%s) to %s (%s)",
		addon.ID, name(addon.Plan.ID, addon.Region), unknown(before), name(planID, region), unknown(after)))
}
