package catalog

import (
	"math"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// ---- the price system (GET /v4/billing/[organisations/{ownerId}/]price-system) ----
//
// Shapes from clever-client.js src/clients/cc-api/commands/price-system/
// (get-price-system-command.js: [GET] /v4/billing/organisations/:XXX/price-system with
// zone_id, a 404 mapped to undefined; price-system.types.ts) and esm/api/v4/billing.js
// (the list price, /v4/billing/price-system with zone_id and currency), and clever-components
// src/stories/fixtures/price-system.js: runtime entries per flavour, priced per hour
// (time_unit PT1H), with slug_id "<family>.<FLAVOUR>" in upper case while plans carry
// price_id "<family>.<slug>" in lower case (clients match them case-insensitively);
// countable services (Cellar storage and traffic) with price plans. A plan's catalogue price
// is 720 × its hourly price (the console shows "30 days" as 24 × 30 hours).

// Currency conversion of the list price (the fixture has an EUR and a USD price system;
// the fake's rate is made up).
var currencyRates = map[string]float64{"EUR": 1, "USD": 1.1}

// priceSystemNamespace derives the fake's policy ids.
var priceSystemNamespace = uuid.MustParse("5b0e7c2a-4f1d-5c93-8e26-a17d3b9f0c44")

// PriceSystem is the JSON of a price system.
type PriceSystem struct {
	ID        string         `json:"id"`
	OwnerID   *string        `json:"owner_id"`
	StartDate string         `json:"start_date"`
	EndDate   *string        `json:"end_date"`
	ZoneID    string         `json:"zone_id"`
	Currency  string         `json:"currency"`
	Runtime   []RuntimePrice `json:"runtime"`
	Countable []Countable    `json:"countable"`
}

// RuntimePrice is the hourly price of one plan flavour.
type RuntimePrice struct {
	RuntimePolicyID string  `json:"runtime_policy_id"`
	Source          string  `json:"source"`
	Flavor          string  `json:"flavor"`
	TimeUnit        string  `json:"time_unit"`
	Price           float64 `json:"price"`
	SlugID          string  `json:"slug_id"`
}

// Countable is a service priced by use (Cellar storage and traffic).
type Countable struct {
	CountablePolicyID    string               `json:"countable_policy_id"`
	Service              string               `json:"service"`
	DataUnit             string               `json:"data_unit"`
	DataQuantityForPrice Quantity             `json:"data_quantity_for_price"`
	TimeIntervalForPrice *Interval            `json:"time_interval_for_price"`
	PricePlans           []CountablePlanPrice `json:"price_plans"`
}

// Quantity is the data quantity a countable price is for.
type Quantity struct {
	Secability string `json:"secability"`
	Quantity   int64  `json:"quantity"`
}

// Interval is the time interval a countable price is for.
type Interval struct {
	Secability string `json:"secability"`
	Interval   string `json:"interval"`
}

// CountablePlanPrice is one tier of a countable service.
type CountablePlanPrice struct {
	PlanID      string  `json:"plan_id"`
	MaxQuantity int64   `json:"max_quantity"`
	Price       float64 `json:"price"`
}

// KnownCurrency reports whether the list price exists in currency.
func KnownCurrency(currency string) bool {
	_, ok := currencyRates[currency]
	return ok
}

// PriceSystem renders the price system of zone in currency, every price × factor, for owner
// ("" for the list price); nil for an unknown zone.
func (c *Catalog) PriceSystem(zone, currency string, factor float64, owner string) *PriceSystem {
	known := false
	var runtime []RuntimePrice
	rate := currencyRates[currency]
	for _, k := range c.Kinds {
		if slices.Contains(k.Provider.Regions, zone) {
			known = true
		}
		for _, pl := range k.Provider.Plans {
			if pl.PriceID == nil || !slices.Contains(pl.Zones, zone) {
				continue
			}
			family, flavor, _ := strings.Cut(*pl.PriceID, ".")
			hourly := float64(pl.Price) / 720 * rate * factor
			runtime = append(runtime, RuntimePrice{
				RuntimePolicyID: uuid.NewSHA1(priceSystemNamespace, []byte("runtime/"+*pl.PriceID)).String(),
				Source:          family, Flavor: flavor, TimeUnit: "PT1H",
				Price:  math.Round(hourly*1e10) / 1e10,
				SlugID: family + "." + strings.ToUpper(flavor),
			})
		}
	}
	if !known {
		return nil
	}
	out := &PriceSystem{
		ID:        uuid.NewSHA1(priceSystemNamespace, []byte(owner+"/"+zone+"/"+currency)).String(),
		StartDate: "2026-01-01T00:00:00Z", ZoneID: zone, Currency: currency, Runtime: runtime,
	}
	if owner != "" {
		out.OwnerID = &owner
	}
	for _, svc := range []struct {
		name     string
		interval *Interval
		price    float64
	}{
		{"cellar.storage", &Interval{Secability: "secable", Interval: "PT1H"}, 0.02 / 720},
		{"cellar.outbound", nil, 0.09},
	} {
		out.Countable = append(out.Countable, Countable{
			CountablePolicyID:    uuid.NewSHA1(priceSystemNamespace, []byte("countable/"+svc.name)).String(),
			Service:              svc.name,
			DataUnit:             "B",
			DataQuantityForPrice: Quantity{Secability: "secable", Quantity: 1_000_000_000},
			TimeIntervalForPrice: svc.interval,
			PricePlans: []CountablePlanPrice{
				{PlanID: uuid.NewSHA1(priceSystemNamespace, []byte("free/"+svc.name)).String(), MaxQuantity: 1_000_000_000, Price: 0},
				{PlanID: uuid.NewSHA1(priceSystemNamespace, []byte("paid/"+svc.name)).String(), MaxQuantity: 0, Price: svc.price * rate * factor},
			},
		})
	}
	return out
}
