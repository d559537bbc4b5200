package fakeapi

import (
	"net/http"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/catalog"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// The price system (GET /v4/billing/[organisations/{ownerId}/]price-system) is rendered from
// the catalogue (pkg/fakeapi/catalog, prices.go); the fake keeps each organisation's factor.

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

// getListPriceSystem answers GET /v4/billing/price-system?zone_id=…&currency=….
func (s *Server) getListPriceSystem(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	zone, currency := q.Get("zone_id"), q.Get("currency")
	if currency == "" {
		currency = "EUR"
	}
	if zone == "" {
		wire.WriteFieldsError(w, "zone_id is required", map[string]string{"zone_id": "required"})
		return
	}
	if !catalog.KnownCurrency(currency) {
		wire.WriteFieldsError(w, "unknown currency", map[string]string{"currency": "unknown"})
		return
	}
	ps := s.catalog.PriceSystem(zone, currency, 1, "")
	if ps == nil {
		wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "zone not found")
		return
	}
	wire.WriteJSON(w, http.StatusOK, ps)
}

// getOrgPriceSystem answers GET /v4/billing/organisations/{ownerId}/price-system?zone_id=…:
// the organisation's prices, in EUR.
func (s *Server) getOrgPriceSystem(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	zone := r.URL.Query().Get("zone_id")
	if zone == "" {
		wire.WriteFieldsError(w, "zone_id is required", map[string]string{"zone_id": "required"})
		return
	}
	factor := s.priceFactor(owner)
	ps := s.catalog.PriceSystem(zone, "EUR", factor, owner)
	if ps == nil || factor == 0 {
		wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "price system not found")
		return
	}
	wire.WriteJSON(w, http.StatusOK, ps)
}
