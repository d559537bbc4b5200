package clevercloud

import (
	"context"
	"net/http"
	"net/url"
)

// The price system (issue #18 §5): what Clever Cloud charges per hour for each runtime
// flavour, for one zone. Routes and shapes from clever-client.js
// src/clients/cc-api/commands/price-system/get-price-system-command.js (organisation,
// "[GET] /v4/billing/organisations/:XXX/price-system", query zone_id; a 404 maps to
// undefined) and esm/api/v4/billing.js (the list price: /v4/billing/price-system with
// zone_id and currency); clever-components src/lib/product.js matches a plan's price_id to
// runtime[].slug_id case-insensitively and multiplies the hourly price by 24 × 30.
const (
	RouteOrgPriceSystem  = "/v4/billing/organisations/{ownerId}/price-system"
	RouteListPriceSystem = "/v4/billing/price-system"
)

// PriceSystem is one zone's prices (only the fields the operator reads).
type PriceSystem struct {
	ZoneID   string         `json:"zone_id"`
	Currency string         `json:"currency"`
	Runtime  []RuntimePrice `json:"runtime"`
}

// RuntimePrice is the price of one runtime flavour, per TimeUnit (PT1H: per hour).
type RuntimePrice struct {
	Source   string  `json:"source"`
	Flavor   string  `json:"flavor"`
	TimeUnit string  `json:"time_unit"`
	Price    float64 `json:"price"`
	SlugID   string  `json:"slug_id"`
}

// GetOrgPriceSystem is the organisation's price system for a zone (404: the organisation has
// none; IsNotFound).
func (c *Client) GetOrgPriceSystem(ctx context.Context, ownerID, zone string) (*PriceSystem, error) {
	cl := &call{method: http.MethodGet, route: RouteOrgPriceSystem, idempotent: true}
	if err := cl.setPath(RouteOrgPriceSystem, "ownerId", ownerID); err != nil {
		return nil, err
	}
	cl.path += "?" + url.Values{"zone_id": {zone}}.Encode()
	var out PriceSystem
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetListPriceSystem is Clever Cloud's list price system for a zone, in currency (EUR).
func (c *Client) GetListPriceSystem(ctx context.Context, zone, currency string) (*PriceSystem, error) {
	cl := &call{method: http.MethodGet, route: RouteListPriceSystem, idempotent: true,
		path: RouteListPriceSystem + "?" + url.Values{"zone_id": {zone}, "currency": {currency}}.Encode()}
	var out PriceSystem
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}
