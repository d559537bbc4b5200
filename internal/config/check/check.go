// Package check is the operator's --check: it proves a configuration (internal/config)
// against the Clever Cloud API and says who the credentials are, or, in one line, what to
// change.
//
// It sits beside the configuration code rather than in it because it calls the API through
// internal/clevercloud, which imports internal/config: in package config it would be an
// import cycle.
package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/config"
)

// Timeout bounds --check's API calls.
const Timeout = 30 * time.Second

// Run proves the configuration (--check): GET /v2/self and GET /v2/organisations through
// the client the engine would use (clevercloud.NewFromConfig: bearer tokens through the
// bridge), then prints who the credentials are and which organisations they reach. A wrong
// base or path (404) and refused credentials (401/403) fail with one line saying what to
// change.
func Run(ctx context.Context, cfg config.Config, out io.Writer) error {
	api := cfg.API
	ep := api.RequestEndpoint()
	c, err := clevercloud.NewFromConfig(api, clevercloud.ClientOptions{RateLimit: -1, Timeout: 15 * time.Second, MaxRetries: 1})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	self, err := c.Self(ctx)
	if err != nil {
		return explain(api, ep, "GET /v2/self", err)
	}
	orgs, err := c.Organisations(ctx)
	if err != nil {
		return explain(api, ep, "GET /v2/organisations", err)
	}
	how := api.Mode()
	switch {
	case api.Mode() == config.ModeBearer:
		how = "bearer token, through the API bridge"
	default:
		if _, _, published := api.Consumer(); published {
			how = "OAuth1 token + secret, signed with clever-tools' published consumer"
		} else {
			how = "OAuth1 token + secret, signed with your OAuth consumer"
		}
	}
	fmt.Fprintln(out, "clever-operator configuration is healthy!")
	fmt.Fprintf(out, "  credentials:   %s (from %s)\n", how, strings.Join(cfg.Sources, ", "))
	fmt.Fprintf(out, "  endpoint:      %s (GET /v2/self answered)\n", ep)
	who := self.ID
	if self.Name != "" {
		who += " " + self.Name
	}
	if self.Email != "" {
		who += " <" + self.Email + ">"
	}
	fmt.Fprintf(out, "  user:          %s\n", who)
	fmt.Fprintf(out, "  organisations: %d\n", len(orgs))
	for _, o := range orgs {
		fmt.Fprintf(out, "    %s  %s\n", o.ID, o.Name)
	}
	if exp, from, ok := api.Expiry(); ok {
		left := time.Until(exp)
		state := fmt.Sprintf("in %d days", int(left.Hours()/24))
		if left <= 0 {
			state = "EXPIRED"
		}
		fmt.Fprintf(out, "  expires:       %s (%s, from %s)\n", exp.UTC().Format(time.RFC3339), state, from)
	}
	return nil
}

// explain turns a failed --check call into one line naming what to change.
func explain(api config.APIConfig, ep, call string, err error) error {
	var ae *clevercloud.APIError
	if !errors.As(err, &ae) {
		return fmt.Errorf("cannot use the Clever Cloud API at %s: %s failed: %w", ep, call, err)
	}
	switch ae.StatusCode {
	case 404:
		return fmt.Errorf("endpoint %s does not serve the Clever Cloud API: %s answered 404 (did you mean %s?)", ep, call, suggestEndpoint(api, ep))
	case 401, 403:
		hint := "check the token, secret and consumer pair, and that the token is not expired or revoked"
		switch {
		case api.Mode() == config.ModeBearer:
			hint = "API tokens are accepted by the API bridge only (api.bridge-endpoint, default " + config.DefaultBridgeEndpoint + "); check that the token is not expired or revoked"
		case func() bool { _, _, p := api.Consumer(); return p }():
			hint = "token + secret are signed with clever-tools' published OAuth consumer, right for `clever login` tokens; a token made for your own OAuth consumer needs api.consumer-key and api.consumer-secret; check that the token is not expired or revoked"
		}
		return fmt.Errorf("credentials refused by %s: %s answered %d (%s)", ep, call, ae.StatusCode, hint)
	}
	return fmt.Errorf("cannot use the Clever Cloud API at %s: %w", ep, err)
}

// suggestEndpoint proposes the base to try after a 404: the same host without its path,
// else Clever Cloud's public host for the credentials' mode.
func suggestEndpoint(api config.APIConfig, ep string) string {
	if u, err := url.Parse(ep); err == nil && strings.Trim(u.Path, "/") != "" {
		u.Path, u.RawPath = "", ""
		return u.String()
	}
	def := config.DefaultEndpoint
	if api.Mode() == config.ModeBearer {
		def = config.DefaultBridgeEndpoint
	}
	if ep != def {
		return def
	}
	return def + " with no path"
}
