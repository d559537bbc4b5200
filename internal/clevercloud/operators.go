package clevercloud

import (
	"context"
	"net/http"
	"net/url"
)

// Routes of the v4 "operator" add-ons (Keycloak, Metabase, Matomo, Otoroshi), keyed by the
// add-on's realId under the provider segment addon-<name>. Verified against clever-tools
// src/clever-client/operators.js and clever-client.js
// src/clients/cc-api/commands/{keycloak,metabase,matomo,otoroshi}/*-command.ts.
const (
	RouteOperator              = "/v4/addon-providers/{provider}/addons/{realId}"
	RouteOperatorVersionCheck  = "/v4/addon-providers/{provider}/addons/{realId}/version/check"
	RouteOperatorVersionUpdate = "/v4/addon-providers/{provider}/addons/{realId}/version/update"
	RouteOperatorReboot        = "/v4/addon-providers/{provider}/addons/{realId}/reboot"
	RouteOperatorRebuild       = "/v4/addon-providers/{provider}/addons/{realId}/rebuild"
)

// OperatorProviders maps the v2 provider id of each operator add-on (the one the catalogue
// and the create call use) to its v4 provider segment. Keycloak, Metabase and Otoroshi use
// a different id at v4 (clever-cloud-api-more.md §2.3; clever-tools operators.js builds
// addon-${provider}).
var OperatorProviders = map[string]string{
	"keycloak":     "addon-keycloak",
	"metabase":     "addon-metabase",
	"addon-matomo": "addon-matomo",
	"otoroshi":     "addon-otoroshi",
}

// GetOperator returns what Clever Cloud serves about an operator add-on
// (GET /v4/addon-providers/{provider}/addons/{realId}); provider is the v4 segment, e.g.
// "addon-keycloak". 404 (IsNotFound) while it is unknown. The answer carries credentials:
// nothing of its body ever appears in errors.
func (c *Client) GetOperator(ctx context.Context, provider, realID string) (*OperatorInfo, error) {
	cl := &call{method: http.MethodGet, route: RouteOperator, idempotent: true, sensitive: true}
	if err := cl.setPath(RouteOperator, "provider", provider, "realId", realID); err != nil {
		return nil, err
	}
	var out OperatorInfo
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}

// CheckOperatorVersion returns the installed, available and latest versions of an operator
// add-on (GET …/version/check). Keycloak, Metabase and Otoroshi offer it.
func (c *Client) CheckOperatorVersion(ctx context.Context, provider, realID string) (*OperatorVersionCheck, error) {
	cl := &call{method: http.MethodGet, route: RouteOperatorVersionCheck, idempotent: true}
	if err := cl.setPath(RouteOperatorVersionCheck, "provider", provider, "realId", realID); err != nil {
		return nil, err
	}
	var out OperatorVersionCheck
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateOperatorVersion asks Clever Cloud to move an operator add-on to target
// (POST …/version/update {"targetVersion": target}) and returns the add-on as answered.
// It restarts the add-on, so it is retried only when the request was certainly not acted on.
func (c *Client) UpdateOperatorVersion(ctx context.Context, provider, realID, target string) (*OperatorInfo, error) {
	cl := &call{method: http.MethodPost, route: RouteOperatorVersionUpdate, sensitive: true}
	if err := cl.setPath(RouteOperatorVersionUpdate, "provider", provider, "realId", realID); err != nil {
		return nil, err
	}
	if err := cl.setBody(OperatorVersionUpdate{TargetVersion: target}); err != nil {
		return nil, err
	}
	var out OperatorInfo
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}

// RebootOperator restarts an operator add-on (POST …/reboot); the body is ignored.
func (c *Client) RebootOperator(ctx context.Context, provider, realID string) error {
	cl := &call{method: http.MethodPost, route: RouteOperatorReboot}
	if err := cl.setPath(RouteOperatorReboot, "provider", provider, "realId", realID); err != nil {
		return err
	}
	return c.do(ctx, cl)
}

// RebuildOperator rebuilds and restarts an operator add-on (POST …/rebuild); the body is
// ignored.
func (c *Client) RebuildOperator(ctx context.Context, provider, realID string) error {
	cl := &call{method: http.MethodPost, route: RouteOperatorRebuild}
	if err := cl.setPath(RouteOperatorRebuild, "provider", provider, "realId", realID); err != nil {
		return err
	}
	return c.do(ctx, cl)
}

// ListProvidersForOwner lists the add-on providers and plans as the owner sees them
// (GET /v2/products/addonproviders?orgaId={ownerId}): with the organisation, plans private to
// it are listed too (clever-client.js src/clients/cc-api/commands/product/
// list-product-addon-command.ts and get-product-addon-command.ts send orgaId). An empty ownerID asks for the public catalogue.
func (c *Client) ListProvidersForOwner(ctx context.Context, ownerID string) ([]Provider, error) {
	path := "/v2/products/addonproviders"
	if ownerID != "" {
		path += "?" + url.Values{"orgaId": {ownerID}}.Encode()
	}
	var out []Provider
	if err := c.do(ctx, &call{method: http.MethodGet, route: RouteProviders, path: path, out: &out, idempotent: true}); err != nil {
		return nil, err
	}
	return out, nil
}
