// Package clevercloud is a small client for the Clever Cloud HTTP API as the operator
// uses it (shared/docs/clever-cloud-api.md §4, clever-cloud-api-more.md §6-7).
//
// It authenticates with OAuth 1.0a HMAC-SHA512 or a bearer API token, rate-limits
// per credential set, retries idempotent calls with capped exponential backoff and
// full jitter (honouring Retry-After), and exposes Prometheus metrics labelled by
// route template. It logs one line per HTTP attempt (CallLogMessage: method, route
// template, status, duration, attempt; never a URL, body, header or id) through the
// logger of the request's context, and never puts credentials or environment variable
// values into errors or logs.
package clevercloud

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"

	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/tracing"
)

// Default API hosts (clever-cloud-api.md §4.1; clever-tools src/config/config.js API_HOST and
// AUTH_BRIDGE_HOST). Bearer API tokens are served by the bridge only.
const (
	DefaultEndpoint       = config.DefaultEndpoint
	DefaultBearerEndpoint = config.DefaultBridgeEndpoint
)

// Defaults applied by New to zero Config fields.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultMaxRetries    = 4
	DefaultMinBackoff    = 200 * time.Millisecond
	DefaultMaxBackoff    = 10 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
	DefaultRateLimit     = 10.0
	DefaultRateBurst     = 20
	DefaultUserAgent     = "clever-operator"
)

// Route templates, used in errors and metric labels.
const (
	RouteSelf              = "/v2/self"
	RouteOrganisations     = "/v2/organisations"
	RouteProviders         = "/v2/products/addonproviders"
	RouteAddons            = "/v2/organisations/{ownerId}/addons"
	RouteAddon             = "/v2/organisations/{ownerId}/addons/{addonId}"
	RouteAddonEnv          = "/v2/organisations/{ownerId}/addons/{addonId}/env"
	RouteConfigProviderEnv = "/v4/addon-providers/config-provider/addons/{realId}/env"
	RouteMigrations        = "/v2/organisations/{ownerId}/addons/{addonId}/migrations"
	RouteMigration         = "/v2/organisations/{ownerId}/addons/{addonId}/migrations/{migrationId}"
	RouteProviderInfo      = "/v4/addon-providers/{providerId}"
	RouteCellarRenew       = "/v4/cellar/organisations/{ownerId}/cellar/{realId}/credentials/renew"
)

const (
	maxSuccessBody = 32 << 20 // 32 MiB
	maxErrorBody   = 64 << 10 // 64 KiB
)

// Config configures a Client. Zero values take the documented defaults.
type Config struct {
	// Endpoint is the API base URL; "" means DefaultEndpoint for OAuth1 and
	// DefaultBearerEndpoint for bearer credentials. A path prefix is kept, but one
	// trailing API version ("/v2" or "/v4", as Clever Cloud's documentation writes the
	// base) is removed: every route carries its own version (config.NormalizeEndpoint).
	Endpoint    string
	Credentials Credentials
	// HTTPClient is optional; the default shares one transport with dial/TLS timeouts.
	// Redirects are never followed (a signed request must not be replayed elsewhere).
	HTTPClient *http.Client
	// Timeout bounds each attempt (request and response body); default 30s.
	Timeout time.Duration
	// MaxRetries is the number of automatic retries of idempotent calls; default 4
	// (0 in the struct means default; a negative value means no retry).
	MaxRetries int
	// MinBackoff and MaxBackoff bound the capped exponential backoff with full
	// jitter; defaults 200ms and 10s.
	MinBackoff, MaxBackoff time.Duration
	// MaxRetryAfter caps how long a Retry-After header may delay a retry; default 60s.
	MaxRetryAfter time.Duration
	// RateLimit is the requests/second allowed per credential set (shared by every
	// Client with the same endpoint and credentials); default 10; negative = unlimited.
	RateLimit float64
	// RateBurst is the limiter burst; default 20.
	RateBurst int
	// CircuitThreshold consecutive 429/5xx/transport failures (shared per credential set)
	// open the circuit for CircuitCooldown; defaults 8 and 30s; a negative threshold
	// disables the circuit.
	CircuitThreshold int
	CircuitCooldown  time.Duration
	// Metrics is optional; nil records nothing.
	Metrics *Metrics
	// UserAgent defaults to "clever-operator".
	UserAgent string
	// Now is an optional clock (OAuth timestamps, Retry-After dates).
	Now func() time.Time
	// Nonce is an optional OAuth nonce source; default random UUID v4.
	Nonce func() string
}

// Client calls the Clever Cloud API. It is safe for concurrent use.
type Client struct {
	endpoint      string
	host          string // the endpoint's host, for trace spans
	hc            *http.Client
	bearer        string
	oauth         *oauthSigner
	timeout       time.Duration
	maxRetries    int
	minBackoff    time.Duration
	maxBackoff    time.Duration
	maxRetryAfter time.Duration
	limiter       *rate.Limiter
	circuit       *circuit
	metrics       *Metrics
	userAgent     string
	now           func() time.Time
	redact        []string
}

// New validates cfg and returns a Client. It fails when the credentials are not
// usable or the endpoint is not an absolute http(s) URL.
func New(cfg Config) (*Client, error) {
	if err := cfg.Credentials.Validate(); err != nil {
		return nil, err
	}
	creds := cfg.Credentials.normalized()
	mode := creds.Mode()

	endpoint := config.NormalizeEndpoint(cfg.Endpoint)
	if endpoint == "" {
		endpoint = DefaultEndpoint
		if mode == ModeBearer {
			endpoint = DefaultBearerEndpoint
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, errors.New("clever cloud client: endpoint is not a valid URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("clever cloud client: endpoint %q must be an absolute http(s) URL", u.Redacted())
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("clever cloud client: endpoint %q must not contain user info, query or fragment", u.Redacted())
	}
	endpoint = strings.TrimRight(u.String(), "/")

	c := &Client{
		endpoint:      endpoint,
		host:          u.Hostname(),
		timeout:       orDefault(cfg.Timeout, DefaultTimeout),
		minBackoff:    orDefault(cfg.MinBackoff, DefaultMinBackoff),
		maxBackoff:    orDefault(cfg.MaxBackoff, DefaultMaxBackoff),
		maxRetryAfter: orDefault(cfg.MaxRetryAfter, DefaultMaxRetryAfter),
		maxRetries:    cfg.MaxRetries,
		metrics:       cfg.Metrics,
		userAgent:     cfg.UserAgent,
		now:           cfg.Now,
		redact:        creds.secretValues(),
	}
	if c.maxBackoff < c.minBackoff {
		c.maxBackoff = c.minBackoff
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	if c.now == nil {
		c.now = time.Now
	}

	if cfg.HTTPClient != nil {
		hc := *cfg.HTTPClient
		hc.CheckRedirect = noRedirect
		c.hc = &hc
	} else {
		c.hc = &http.Client{Transport: defaultTransport(), CheckRedirect: noRedirect}
	}

	if mode == ModeBearer {
		c.bearer = creds.BearerToken
	} else {
		nonce := cfg.Nonce
		if nonce == nil {
			nonce = newUUIDv4
		}
		c.oauth = &oauthSigner{
			consumerKey: creds.ConsumerKey,
			token:       creds.Token,
			tokenSecret: creds.Secret,
			signer:      &HMAC512Signer{ConsumerSecret: creds.ConsumerSecret},
			now:         c.now,
			nonce:       nonce,
		}
	}

	limit := cfg.RateLimit
	if limit == 0 {
		limit = DefaultRateLimit
	}
	if limit > 0 {
		burst := cfg.RateBurst
		if burst <= 0 {
			burst = DefaultRateBurst
		}
		c.limiter = sharedLimiter(limiterKey(endpoint, creds), rate.Limit(limit), burst)
	}
	if cfg.CircuitThreshold >= 0 {
		threshold := cfg.CircuitThreshold
		if threshold == 0 {
			threshold = 8
		}
		c.circuit = sharedCircuit(limiterKey(endpoint, creds), threshold, orDefault(cfg.CircuitCooldown, 30*time.Second))
	}
	return c, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// defaultTransport is shared by every Client built without an HTTPClient, so that
// clients created per reconcile share one connection pool.
var defaultTransport = sync.OnceValue(func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 10 * time.Second
	t.ResponseHeaderTimeout = 60 * time.Second
	t.ExpectContinueTimeout = time.Second
	t.IdleConnTimeout = 90 * time.Second
	t.MaxIdleConns = 100
	t.MaxIdleConnsPerHost = 16
	return t
})

// KeyCircuit makes the client share the circuit of key (where its credentials come from, e.g.
// "namespace team-b") and its endpoint's host, instead of its credential set's: every client
// with that key and host, whatever its token, sees the same open circuit, so minting a new
// token does not close it. Call it before the client is used; a client without circuit
// (CircuitThreshold < 0) keeps none.
func (c *Client) KeyCircuit(key string) {
	if c.circuit == nil || key == "" {
		return
	}
	c.circuit.mu.Lock()
	threshold, cooldown := c.circuit.threshold, c.circuit.base
	c.circuit.mu.Unlock()
	c.circuit = sharedCircuit("source\x00"+key+"\x00"+strings.ToLower(c.host), threshold, cooldown)
}

// Endpoint returns the base URL the client talks to (without trailing slash).
func (c *Client) Endpoint() string { return c.endpoint }

// ---- endpoints (clever-cloud-api.md §4.4) ----

// Self returns the current user (GET /v2/self).
func (c *Client) Self(ctx context.Context) (*Self, error) {
	var out Self
	if err := c.do(ctx, &call{method: http.MethodGet, route: RouteSelf, path: "/v2/self", out: &out, idempotent: true}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Organisation is one item of GET /v2/organisations (the fields --check shows; the
// answer has more, clever-client.js organisation.types.ts).
type Organisation struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Organisations lists the organisations the credentials' user reaches, their personal
// space ("user_…") included (GET /v2/organisations, clever-client.js
// list-organisation-command.ts).
func (c *Client) Organisations(ctx context.Context) ([]Organisation, error) {
	var out []Organisation
	if err := c.do(ctx, &call{method: http.MethodGet, route: RouteOrganisations, path: "/v2/organisations", out: &out, idempotent: true}); err != nil {
		return nil, err
	}
	return out, nil
}

// Mode returns the credential mode of the client: ModeOAuth1 or ModeBearer.
func (c *Client) Mode() string {
	if c.bearer != "" {
		return ModeBearer
	}
	return ModeOAuth1
}

// ListProviders lists the add-on providers with their plans (GET /v2/products/addonproviders).
func (c *Client) ListProviders(ctx context.Context) ([]Provider, error) {
	var out []Provider
	if err := c.do(ctx, &call{method: http.MethodGet, route: RouteProviders, path: "/v2/products/addonproviders", out: &out, idempotent: true}); err != nil {
		return nil, err
	}
	return out, nil
}

// GetAddon returns one add-on (GET /v2/organisations/{ownerId}/addons/{addonId}).
// RenameAddon renames an add-on: PUT /v2/organisations/{ownerId}/addons/{addonId} with only
// {"name"}, as clever-tools (src/models/addon.js, rename), clever-client.js
// (update-addon-command.ts) and Terraform (pkg/tmp/addon.go, UpdateAddon) send it; the answer
// is the whole add-on. Renaming to the same name twice is harmless: idempotent.
func (c *Client) RenameAddon(ctx context.Context, ownerID, addonID, name string) (*Addon, error) {
	cl := &call{method: http.MethodPut, route: RouteAddon, idempotent: true}
	if err := cl.setPath(RouteAddon, "ownerId", ownerID, "addonId", addonID); err != nil {
		return nil, err
	}
	if err := cl.setBody(map[string]string{"name": name}); err != nil {
		return nil, err
	}
	var out Addon
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}

func (c *Client) GetAddon(ctx context.Context, ownerID, addonID string) (*Addon, error) {
	cl := &call{method: http.MethodGet, route: RouteAddon, idempotent: true}
	if err := cl.setPath(RouteAddon, "ownerId", ownerID, "addonId", addonID); err != nil {
		return nil, err
	}
	var out Addon
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListAddons lists the add-ons of an owner (GET /v2/organisations/{ownerId}/addons).
func (c *Client) ListAddons(ctx context.Context, ownerID string) ([]Addon, error) {
	cl := &call{method: http.MethodGet, route: RouteAddons, idempotent: true}
	if err := cl.setPath(RouteAddons, "ownerId", ownerID); err != nil {
		return nil, err
	}
	var out []Addon
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return out, nil
}

// CreateAddon provisions an add-on (POST /v2/organisations/{ownerId}/addons).
//
// Creating is not idempotent, so it is NEVER retried automatically except when the
// server provably did not act: a 429 answer (rate limited, nothing created) or a
// connection that could not be established (refused, DNS or dial failure: nothing
// was sent). Timeouts, 5xx (including 503 with id -500) and broken connections are
// returned to the caller, who must look the add-on up by name before trying again.
func (c *Client) CreateAddon(ctx context.Context, ownerID string, opts CreateOpts) (*Addon, error) {
	cl := &call{method: http.MethodPost, route: RouteAddons}
	if err := cl.setPath(RouteAddons, "ownerId", ownerID); err != nil {
		return nil, err
	}
	if err := cl.setBody(opts); err != nil {
		return nil, err
	}
	var out Addon
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteAddon deletes an add-on (DELETE /v2/organisations/{ownerId}/addons/{addonId}).
// It is idempotent and retried; a 404 is returned as an error (IsNotFound) and the
// caller decides whether that means "already gone".
func (c *Client) DeleteAddon(ctx context.Context, ownerID, addonID string) error {
	cl := &call{method: http.MethodDelete, route: RouteAddon, idempotent: true}
	if err := cl.setPath(RouteAddon, "ownerId", ownerID, "addonId", addonID); err != nil {
		return err
	}
	return c.do(ctx, cl)
}

// GetAddonEnv returns the environment variables of an add-on
// (GET /v2/organisations/{ownerId}/addons/{addonId}/env). Values never appear in errors.
func (c *Client) GetAddonEnv(ctx context.Context, ownerID, addonID string) ([]Variable, error) {
	cl := &call{method: http.MethodGet, route: RouteAddonEnv, idempotent: true, sensitive: true}
	if err := cl.setPath(RouteAddonEnv, "ownerId", ownerID, "addonId", addonID); err != nil {
		return nil, err
	}
	var out []Variable
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return out, nil
}

// RenewCellarCredentials asks Clever Cloud to regenerate the secret key of a Cellar add-on
// (POST /v4/cellar/organisations/{ownerId}/cellar/{realId}/credentials/renew). The new
// credentials are read back through the add-on's env; the answer's body is discarded.
// Renewing twice is harmless, so it is retried.
func (c *Client) RenewCellarCredentials(ctx context.Context, ownerID, realID string) error {
	cl := &call{method: http.MethodPost, route: RouteCellarRenew, idempotent: true, sensitive: true}
	if err := cl.setPath(RouteCellarRenew, "ownerId", ownerID, "realId", realID); err != nil {
		return err
	}
	return c.do(ctx, cl)
}

// GetConfigProviderEnv returns the variables of a config provider add-on
// (GET /v4/addon-providers/config-provider/addons/{realId}/env).
func (c *Client) GetConfigProviderEnv(ctx context.Context, realID string) ([]Variable, error) {
	cl := &call{method: http.MethodGet, route: RouteConfigProviderEnv, idempotent: true, sensitive: true}
	if err := cl.setPath(RouteConfigProviderEnv, "realId", realID); err != nil {
		return nil, err
	}
	var out []Variable
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return out, nil
}

// PutConfigProviderEnv replaces the whole variable list of a config provider add-on
// (PUT /v4/addon-providers/config-provider/addons/{realId}/env) and returns the
// list the API answers. Replacing the whole list is idempotent, so it is retried.
func (c *Client) PutConfigProviderEnv(ctx context.Context, realID string, vars []Variable) ([]Variable, error) {
	cl := &call{method: http.MethodPut, route: RouteConfigProviderEnv, idempotent: true, sensitive: true}
	if err := cl.setPath(RouteConfigProviderEnv, "realId", realID); err != nil {
		return nil, err
	}
	if vars == nil {
		vars = []Variable{} // send [] rather than null
	}
	if err := cl.setBody(vars); err != nil {
		return nil, err
	}
	for _, v := range vars {
		cl.redact = append(cl.redact, v.Value)
	}
	var out []Variable
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return out, nil
}

// ---- migrations (clever-cloud-api-more.md §1) ----

// StartMigration starts a migration of an add-on to req's plan, region and
// version (POST /v2/organisations/{ownerId}/addons/{addonId}/migrations) and
// returns it (status RUNNING). The add-on keeps its plan, region, version and
// credentials until the migration reaches OK; poll it with GetMigration.
//
// PlanID and Region must be set (send the current values for what does not
// change); a nil Version is sent as null. Starting a migration is not
// idempotent, so like CreateAddon it is retried only when the server provably
// did not act (429, or no connection). After any other failure, look the
// migration up with ListMigrations before starting another one.
func (c *Client) StartMigration(ctx context.Context, ownerID, addonID string, req MigrationRequest) (*Migration, error) {
	cl := &call{method: http.MethodPost, route: RouteMigrations}
	if err := cl.setPath(RouteMigrations, "ownerId", ownerID, "addonId", addonID); err != nil {
		return nil, err
	}
	switch {
	case req.PlanID == "":
		return nil, &RequestError{Method: cl.method, Route: cl.route, Op: opBuild, Err: errors.New("empty planId")}
	case req.Region == "":
		return nil, &RequestError{Method: cl.method, Route: cl.route, Op: opBuild, Err: errors.New("empty region")}
	}
	if err := cl.setBody(req); err != nil {
		return nil, err
	}
	var out Migration
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListMigrations lists the migrations of an add-on, newest first
// (GET /v2/organisations/{ownerId}/addons/{addonId}/migrations). It returns an
// empty list for an add-on never migrated, and a 404 error (IsNotFound) for an
// unknown add-on. The list is sorted by requestDate client-side, like
// clever-client.js does; items whose date does not parse keep their order.
func (c *Client) ListMigrations(ctx context.Context, ownerID, addonID string) ([]Migration, error) {
	cl := &call{method: http.MethodGet, route: RouteMigrations, idempotent: true}
	if err := cl.setPath(RouteMigrations, "ownerId", ownerID, "addonId", addonID); err != nil {
		return nil, err
	}
	var out []Migration
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	if out == nil {
		out = []Migration{}
	}
	sortMigrationsNewestFirst(out)
	return out, nil
}

// GetMigration returns one migration
// (GET /v2/organisations/{ownerId}/addons/{addonId}/migrations/{migrationId});
// 404 (IsNotFound) for an unknown add-on or migration.
func (c *Client) GetMigration(ctx context.Context, ownerID, addonID, migrationID string) (*Migration, error) {
	cl := &call{method: http.MethodGet, route: RouteMigration, idempotent: true}
	if err := cl.setPath(RouteMigration, "ownerId", ownerID, "addonId", addonID, "migrationId", migrationID); err != nil {
		return nil, err
	}
	var out Migration
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}

// AbortMigration aborts a running migration
// (DELETE /v2/organisations/{ownerId}/addons/{addonId}/migrations/{migrationId});
// the answer's body is ignored. Aborting is idempotent and retried.
func (c *Client) AbortMigration(ctx context.Context, ownerID, addonID, migrationID string) error {
	cl := &call{method: http.MethodDelete, route: RouteMigration, idempotent: true}
	if err := cl.setPath(RouteMigration, "ownerId", ownerID, "addonId", addonID, "migrationId", migrationID); err != nil {
		return err
	}
	return c.do(ctx, cl)
}

// GetProviderInfo returns the versions and options of a provider
// (GET /v4/addon-providers/{providerId}), e.g. "postgresql-addon".
func (c *Client) GetProviderInfo(ctx context.Context, providerID string) (*ProviderInfo, error) {
	cl := &call{method: http.MethodGet, route: RouteProviderInfo, idempotent: true}
	if err := cl.setPath(RouteProviderInfo, "providerId", providerID); err != nil {
		return nil, err
	}
	var out ProviderInfo
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}

// sortMigrationsNewestFirst orders by requestDate, newest first (stable).
func sortMigrationsNewestFirst(ms []Migration) {
	slices.SortStableFunc(ms, func(a, b Migration) int {
		ta, erra := parseAPIDate(a.RequestDate)
		tb, errb := parseAPIDate(b.RequestDate)
		if erra != nil || errb != nil {
			return 0
		}
		return tb.Compare(ta)
	})
}

// parseAPIDate parses an ISO 8601 date as the API writes them
// ("2026-01-02T10:00:00Z", with or without fractional seconds or offset).
func parseAPIDate(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
}

// ---- request machinery ----

type call struct {
	method     string
	route      string
	path       string // escaped path
	body       []byte // nil: no body
	out        any    // nil: body ignored
	idempotent bool   // retried on 429/5xx/network errors
	sensitive  bool   // env route: never echo bodies
	redact     []string
	status     int // HTTP status of the last attempt (0: no answer)
}

// CallLogMessage is the message of the line logged for every Clever Cloud HTTP attempt, with
// the keys method, route (the route template, never the URL: no id, query or credential),
// status (0 when no answer came), durationMs and attempt (1 for the first try), plus failure
// (what went wrong, e.g. "sending request") when no answer came. kubectl clever trace reads
// these lines.
const CallLogMessage = "Clever Cloud call"

// logCall logs one attempt through the context's logger (the engine's carries the resource:
// "<kind>": namespace/name). Calls that change something at Clever Cloud (every method but
// GET) and failed attempts log at info level; successful reads, the bulk of a steady state
// (one per resource and resync period), at V(1) (--zap-log-level=debug).
func logCall(ctx context.Context, cl *call, attempt int, d time.Duration, err error) {
	log := logr.FromContextOrDiscard(ctx)
	level := 1
	if cl.method != http.MethodGet || err != nil {
		level = 0
	}
	if !log.V(level).Enabled() {
		return
	}
	kv := []any{"method", cl.method, "route", cl.route, "status", cl.status, "durationMs", d.Milliseconds(), "attempt", attempt + 1}
	var re *RequestError
	if cl.status == 0 && errors.As(err, &re) {
		kv = append(kv, "failure", re.Op)
	}
	log.V(level).Info(CallLogMessage, kv...)
}

// spanErrorType is the error.type of an attempt's trace span: "" when it succeeded or the API
// answered an error status (the span reports the status code), else the fixed name of the
// step that failed (RequestError.Op, e.g. "sending request"), never the error's text.
func spanErrorType(cl *call, err error) string {
	if err == nil || cl.status >= 400 {
		return ""
	}
	var re *RequestError
	if errors.As(err, &re) {
		return re.Op
	}
	return "error"
}

// setPath fills the route template with url.PathEscape'd, non-empty values.
func (cl *call) setPath(template string, kv ...string) error {
	path := template
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			return &RequestError{Method: cl.method, Route: cl.route, Op: opBuild, Err: fmt.Errorf("empty %s", kv[i])}
		}
		path = strings.Replace(path, "{"+kv[i]+"}", url.PathEscape(kv[i+1]), 1)
	}
	cl.path = path
	return nil
}

func (cl *call) setBody(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return &RequestError{Method: cl.method, Route: cl.route, Op: opEncode, Err: &decodeError{msg: "cannot encode JSON"}}
	}
	cl.body = b
	return nil
}

// do runs the call with rate limiting, per-attempt timeout and retries.
func (c *Client) do(ctx context.Context, cl *call) error {
	var prevErr error // error of the previous attempt, reported if the caller gives up
	for attempt := 0; ; attempt++ {
		if c.circuit != nil {
			if open := c.circuit.openFor(c.now()); open > 0 {
				if prevErr != nil {
					return prevErr
				}
				return &RequestError{Method: cl.method, Route: cl.route, Op: opCircuit, Err: ErrCircuitOpen, RetryAfter: open}
			}
		}
		if err := c.waitLimiter(ctx, cl); err != nil {
			if prevErr != nil && ctx.Err() != nil {
				return withCtxErr(prevErr, ctx)
			}
			return err
		}
		start := time.Now()
		endSpan := tracing.StartAPICall(ctx, cl.method, cl.route, c.host, attempt)
		err := c.attempt(ctx, cl)
		endSpan(cl.status, spanErrorType(cl, err))
		logCall(ctx, cl, attempt, time.Since(start), err)
		if c.circuit != nil && (ctx.Err() == nil || c.unansweredUntilDeadline(ctx, start)) {
			if c.circuit.record(err, c.now()) {
				c.metrics.observeCircuitOpened()
			}
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			if prevErr != nil && errors.Is(err, ctx.Err()) {
				// Canceled in the middle of a retry: the previous failure is the useful one.
				return withCtxErr(prevErr, ctx)
			}
			return withCtxErr(err, ctx)
		}
		prevErr = err
		if attempt >= c.maxRetries || !c.shouldRetry(cl, err) {
			return err
		}
		delay := c.backoff(attempt)
		var ae *APIError
		if errors.As(err, &ae) && ae.RetryAfter > 0 {
			delay = max(delay, min(ae.RetryAfter, c.maxRetryAfter))
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			// The retry could not happen before the caller's deadline.
			return err
		}
		c.metrics.observeRetry(cl.method, cl.route)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return withCtxErr(err, ctx)
		case <-t.C:
		}
	}
}

// unansweredUntilDeadline: the caller's deadline (an engine pass's) cut an attempt the
// endpoint had left unanswered for a while (at least a second, or the attempt timeout when
// shorter): that counts against the circuit like the attempt's own timeout. A cancellation, or
// an attempt started just before the deadline, says nothing about the endpoint.
func (c *Client) unansweredUntilDeadline(ctx context.Context, start time.Time) bool {
	return errors.Is(ctx.Err(), context.DeadlineExceeded) && time.Since(start) >= min(c.timeout, time.Second)
}

// withCtxErr reports the last attempt's error together with the context's error
// (both visible to errors.Is/As).
func withCtxErr(err error, ctx context.Context) error {
	cerr := ctx.Err()
	if cerr == nil || errors.Is(err, cerr) {
		return err
	}
	return fmt.Errorf("%w (gave up: %w)", err, cerr)
}

func (c *Client) shouldRetry(cl *call, err error) bool {
	if cl.idempotent {
		return IsRetryable(err)
	}
	// Non-idempotent (POST create): only when the server certainly did not act.
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.StatusCode == http.StatusTooManyRequests
	}
	return requestNotSent(err)
}

// backoff returns a full-jitter delay in [0, min(MaxBackoff, MinBackoff·2^attempt)].
func (c *Client) backoff(attempt int) time.Duration {
	ceiling := c.maxBackoff
	if attempt < 32 {
		if d := c.minBackoff << attempt; d > 0 && d < ceiling {
			ceiling = d
		}
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

func (c *Client) waitLimiter(ctx context.Context, cl *call) error {
	if c.limiter == nil {
		return nil
	}
	start := time.Now()
	err := c.limiter.Wait(ctx)
	c.metrics.observeLimiterWait(time.Since(start).Seconds())
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		err = ctx.Err()
	} else {
		err = errRateLimiterWait
	}
	return &RequestError{Method: cl.method, Route: cl.route, Op: opWait, Err: err}
}

// attempt sends one request and decodes the answer.
func (c *Client) attempt(ctx context.Context, cl *call) error {
	cl.status = 0
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	var body io.Reader
	if cl.body != nil {
		body = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(actx, cl.method, c.endpoint+cl.path, body)
	if err != nil {
		return &RequestError{Method: cl.method, Route: cl.route, Op: opBuild, Err: errors.New("invalid URL")}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Charset", "utf-8")
	req.Header.Set("User-Agent", c.userAgent)
	if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	} else if err := c.oauth.authorize(req); err != nil {
		return &RequestError{Method: cl.method, Route: cl.route, Op: opSign, Err: errors.New("OAuth1 signature failed")}
	}

	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.metrics.observeRequest(cl.method, cl.route, "error", time.Since(start).Seconds())
		return &RequestError{Method: cl.method, Route: cl.route, Op: opSend, Err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	cl.status = resp.StatusCode
	code := strconv.Itoa(resp.StatusCode)

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		c.metrics.observeRequest(cl.method, cl.route, code, time.Since(start).Seconds())
		return newAPIError(cl.method, cl.route, resp.StatusCode, resp.Header, data, c.now(), cl.sensitive, append(cl.redact, c.redact...))
	}

	if cl.out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		c.metrics.observeRequest(cl.method, cl.route, code, time.Since(start).Seconds())
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxSuccessBody+1))
	c.metrics.observeRequest(cl.method, cl.route, code, time.Since(start).Seconds())
	if err != nil {
		return &RequestError{Method: cl.method, Route: cl.route, Op: opRead, Err: unwrapURLError(err)}
	}
	if len(data) > maxSuccessBody {
		return &RequestError{Method: cl.method, Route: cl.route, Op: opDecode, Err: &decodeError{msg: "response body too large"}}
	}
	if err := json.Unmarshal(data, cl.out); err != nil {
		return &RequestError{Method: cl.method, Route: cl.route, Op: opDecode, Err: describeJSONError(err, cl.sensitive)}
	}
	return nil
}

// unwrapURLError drops *url.Error so messages carry the route template, not the URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

// describeJSONError explains a decoding failure. For sensitive routes it never
// includes anything taken from the body (json.SyntaxError and UnmarshalTypeError
// can quote fragments of it).
func describeJSONError(err error, sensitive bool) error {
	if !sensitive {
		return &decodeError{msg: truncate(sanitize(err.Error()), maxJSONMessage)}
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &decodeError{msg: fmt.Sprintf("invalid JSON at offset %d", se.Offset)}
	case errors.As(err, &te):
		if te.Field != "" {
			return &decodeError{msg: fmt.Sprintf("unexpected JSON type for field %q (want %s)", te.Field, te.Type)}
		}
		return &decodeError{msg: fmt.Sprintf("unexpected JSON type (want %s)", te.Type)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &decodeError{msg: "truncated JSON"}
	default:
		return &decodeError{msg: "malformed JSON body"}
	}
}
