package fakeapi

import (
	"math"
	"net/http"
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

// priceSystemView is the JSON of a price system.
type priceSystemView struct {
	ID        string             `json:"id"`
	OwnerID   *string            `json:"owner_id"`
	StartDate string             `json:"start_date"`
	EndDate   *string            `json:"end_date"`
	ZoneID    string             `json:"zone_id"`
	Currency  string             `json:"currency"`
	Runtime   []runtimePriceView `json:"runtime"`
	Countable []countableView    `json:"countable"`
}

type runtimePriceView struct {
	RuntimePolicyID string  `json:"runtime_policy_id"`
	Source          string  `json:"source"`
	Flavor          string  `json:"flavor"`
	TimeUnit        string  `json:"time_unit"`
	Price           float64 `json:"price"`
	SlugID          string  `json:"slug_id"`
}

type countableView struct {
	CountablePolicyID    string               `json:"countable_policy_id"`
	Service              string               `json:"service"`
	DataUnit             string               `json:"data_unit"`
	DataQuantityForPrice quantityView         `json:"data_quantity_for_price"`
	TimeIntervalForPrice *intervalView        `json:"time_interval_for_price"`
	PricePlans           []countablePlanPrice `json:"price_plans"`
}

type quantityView struct {
	Secability string `json:"secability"`
	Quantity   int64  `json:"quantity"`
}

type intervalView struct {
	Secability string `json:"secability"`
	Interval   string `json:"interval"`
}

type countablePlanPrice struct {
	PlanID      string  `json:"plan_id"`
	MaxQuantity int64   `json:"max_quantity"`
	Price       float64 `json:"price"`
}

// SetOrgPriceFactor sets what owner pays relative to the list price (0.8: a 20 % discount)
// in GET /v4/billing/organisations/{owner}/price-system. A factor of 0 makes that route
// answer 404 for owner (an organisation with no price system of its own: clients fall back
// to the list price). Owners never set pay the list price.
func (s *Server) SetOrgPriceFactor(owner string, factor float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.priceFactors == nil {
		s.priceFactors = map[string]float64{}
	}
	s.priceFactors[owner] = factor
}

// priceFactor is owner's factor on the list price (1 unless set).
func (s *Server) priceFactor(owner string) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.priceFactors[owner]
	if !ok {
		return 1
	}
	return f
}

// priceSystem renders the price system of zone in currency, every price × factor; nil for
// an unknown zone.
func (s *Server) priceSystem(zone, currency string, factor float64, owner string) *priceSystemView {
	known := false
	var runtime []runtimePriceView
	rate := currencyRates[currency]
	for _, k := range s.catalog.kinds {
		if slices.Contains(k.provider.Regions, zone) {
			known = true
		}
		for _, pl := range k.provider.Plans {
			if pl.PriceID == nil || !slices.Contains(pl.Zones, zone) {
				continue
			}
			family, flavor, _ := strings.Cut(*pl.PriceID, ".")
			hourly := float64(pl.Price) / 720 * rate * factor
			runtime = append(runtime, runtimePriceView{
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
	out := &priceSystemView{
		ID:        uuid.NewSHA1(priceSystemNamespace, []byte(owner+"/"+zone+"/"+currency)).String(),
		StartDate: "2026-01-01T00:00:00Z", ZoneID: zone, Currency: currency, Runtime: runtime,
	}
	if owner != "" {
		out.OwnerID = &owner
	}
	for _, svc := range []struct {
		name     string
		interval *intervalView
		price    float64
	}{
		{"cellar.storage", &intervalView{Secability: "secable", Interval: "PT1H"}, 0.02 / 720},
		{"cellar.outbound", nil, 0.09},
	} {
		out.Countable = append(out.Countable, countableView{
			CountablePolicyID:    uuid.NewSHA1(priceSystemNamespace, []byte("countable/"+svc.name)).String(),
			Service:              svc.name,
			DataUnit:             "B",
			DataQuantityForPrice: quantityView{Secability: "secable", Quantity: 1_000_000_000},
			TimeIntervalForPrice: svc.interval,
			PricePlans: []countablePlanPrice{
				{PlanID: uuid.NewSHA1(priceSystemNamespace, []byte("free/"+svc.name)).String(), MaxQuantity: 1_000_000_000, Price: 0},
				{PlanID: uuid.NewSHA1(priceSystemNamespace, []byte("paid/"+svc.name)).String(), MaxQuantity: 0, Price: svc.price * rate * factor},
			},
		})
	}
	return out
}

// getListPriceSystem answers GET /v4/billing/price-system?zone_id=…&currency=….
func (s *Server) getListPriceSystem(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	zone, currency := q.Get("zone_id"), q.Get("currency")
	if currency == "" {
		currency = "EUR"
	}
	if zone == "" {
		writeFieldsError(w, "zone_id is required", map[string]string{"zone_id": "required"})
		return
	}
	if _, ok := currencyRates[currency]; !ok {
		writeFieldsError(w, "unknown currency", map[string]string{"currency": "unknown"})
		return
	}
	ps := s.priceSystem(zone, currency, 1, "")
	if ps == nil {
		writeError(w, http.StatusNotFound, errIDNotFound, "zone not found")
		return
	}
	writeJSON(w, http.StatusOK, ps)
}

// getOrgPriceSystem answers GET /v4/billing/organisations/{ownerId}/price-system?zone_id=…:
// the organisation's prices, in EUR.
func (s *Server) getOrgPriceSystem(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !validOwner(owner) {
		ownerNotFound(w)
		return
	}
	zone := r.URL.Query().Get("zone_id")
	if zone == "" {
		writeFieldsError(w, "zone_id is required", map[string]string{"zone_id": "required"})
		return
	}
	factor := s.priceFactor(owner)
	ps := s.priceSystem(zone, "EUR", factor, owner)
	if ps == nil || factor == 0 {
		writeError(w, http.StatusNotFound, errIDNotFound, "price system not found")
		return
	}
	writeJSON(w, http.StatusOK, ps)
}
