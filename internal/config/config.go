package config

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
)

// Credential modes returned by APIConfig.Mode.
const (
	ModeBearer = "bearer"
	ModeOAuth1 = "oauth1"
)

// Environment variables read by Load.
const (
	EnvEndpoint       = "CLEVER_OPERATOR_API_ENDPOINT"
	EnvToken          = "CLEVER_OPERATOR_API_TOKEN"
	EnvSecret         = "CLEVER_OPERATOR_API_SECRET"
	EnvConsumerKey    = "CLEVER_OPERATOR_API_CONSUMER_KEY"
	EnvConsumerSecret = "CLEVER_OPERATOR_API_CONSUMER_SECRET"
	EnvBearerToken    = "CLEVER_OPERATOR_API_BEARER_TOKEN"
	// EnvBridgeEndpoint is the base URL of the API bridge, where bearer tokens are sent.
	EnvBridgeEndpoint = "CLEVER_OPERATOR_API_BRIDGE_ENDPOINT"
	// EnvTokenExpiration is when the token expires (RFC 3339 or YYYY-MM-DD), for the
	// expiry warning; clever-tools.json's expirationDate fills it.
	EnvTokenExpiration = "CLEVER_OPERATOR_API_TOKEN_EXPIRATION"
	// EnvCleverToolsConfig is the path of a clever-tools login file (clever-tools.json).
	EnvCleverToolsConfig = "CLEVER_OPERATOR_CLEVER_TOOLS_CONFIG"
)

// Command-line flag names (without the leading "--") that the main package is
// expected to bind to LoadOptions.Flags. They are used in Validate's messages.
const (
	FlagEndpoint          = "api-endpoint"
	FlagToken             = "api-token"
	FlagSecret            = "api-secret"
	FlagConsumerKey       = "api-consumer-key"
	FlagConsumerSecret    = "api-consumer-secret"
	FlagBearerToken       = "api-bearer-token"
	FlagBridgeEndpoint    = "api-bridge-endpoint"
	FlagTokenExpiration   = "api-token-expiration"
	FlagCleverToolsConfig = "clever-tools-config"
)

// Clever Cloud's public hosts (clever-tools src/config/config.js API_HOST and
// AUTH_BRIDGE_HOST defaults). Bearer API tokens are served by the bridge only.
const (
	DefaultEndpoint       = "https://api.clever-cloud.com"
	DefaultBridgeEndpoint = "https://api-bridge.clever-cloud.com"
)

// clever-tools' OAuth consumer pair, which clever-tools publishes in its source as not
// secret (src/config/config.js OAUTH_CONSUMER_KEY / OAUTH_CONSUMER_SECRET: "The disclosure
// of these tokens is not considered as a vulnerability"); clevercloud-sdk-rust carries the
// same pair (src/lib.rs DEFAULT_CONSUMER_KEY / DEFAULT_CONSUMER_SECRET). Tokens made by
// `clever login` belong to this consumer, so a token + secret without a consumer pair is
// signed with it.
const (
	CleverToolsConsumerKey    = "T5nFjKeHH4AIlEveuGhB5S3xg8T19e"
	CleverToolsConsumerSecret = "MgVMqTr6fWlf2M0tkC2MXOnhfqBWDT" // #nosec G101 -- published by clever-tools
)

// APIConfig holds the Clever Cloud API endpoint and credentials.
//
// It never prints its secrets: fmt verbs (%v, %+v, %#v, %s, %q, ...) and the
// slog/logr hooks show "<redacted>" for a set secret and "<unset>" for an empty
// one. Endpoint is shown (with any user information in the URL hidden).
type APIConfig struct {
	Endpoint       string `json:"endpoint" toml:"endpoint"`
	Token          string `json:"token" toml:"token"`
	Secret         string `json:"secret" toml:"secret"`
	ConsumerKey    string `json:"consumer-key" toml:"consumer-key"`
	ConsumerSecret string `json:"consumer-secret" toml:"consumer-secret"`
	BearerToken    string `json:"bearer-token" toml:"bearer-token"`
	// BridgeEndpoint is where bearer tokens are sent (default DefaultBridgeEndpoint, or
	// Endpoint when that is set to a host other than Clever Cloud's public API).
	BridgeEndpoint string `json:"bridge-endpoint" toml:"bridge-endpoint"`
	// TokenExpiration is when the token (bearer or OAuth1) expires, RFC 3339 or
	// YYYY-MM-DD; optional, for the expiry warning.
	TokenExpiration string `json:"token-expiration" toml:"token-expiration"`
}

// Config is the loaded configuration.
type Config struct {
	API APIConfig `json:"api" toml:"api"`
	// Sources lists where values were read from, in merge order, e.g.
	// "file /etc/clever-operator/config.toml", "env", "flags". Meant for --check.
	Sources []string `json:"-" toml:"-"`
}

// field describes one APIConfig field and how it is named in every source.
type field struct {
	name    string   // Go field name
	key     string   // canonical key in the [api] table
	aliases []string // accepted alternative keys (camelCase)
	env     string
	flag    string
	secret  bool
	ptr     func(*APIConfig) *string
}

// fields lists APIConfig's fields in declaration order.
var fields = []field{
	{"Endpoint", "endpoint", nil, EnvEndpoint, FlagEndpoint, false, func(c *APIConfig) *string { return &c.Endpoint }},
	{"Token", "token", nil, EnvToken, FlagToken, true, func(c *APIConfig) *string { return &c.Token }},
	{"Secret", "secret", nil, EnvSecret, FlagSecret, true, func(c *APIConfig) *string { return &c.Secret }},
	{"ConsumerKey", "consumer-key", []string{"consumerKey"}, EnvConsumerKey, FlagConsumerKey, true, func(c *APIConfig) *string { return &c.ConsumerKey }},
	{"ConsumerSecret", "consumer-secret", []string{"consumerSecret"}, EnvConsumerSecret, FlagConsumerSecret, true, func(c *APIConfig) *string { return &c.ConsumerSecret }},
	{"BearerToken", "bearer-token", []string{"bearerToken"}, EnvBearerToken, FlagBearerToken, true, func(c *APIConfig) *string { return &c.BearerToken }},
	{"BridgeEndpoint", "bridge-endpoint", []string{"bridgeEndpoint"}, EnvBridgeEndpoint, FlagBridgeEndpoint, false, func(c *APIConfig) *string { return &c.BridgeEndpoint }},
	{"TokenExpiration", "token-expiration", []string{"tokenExpiration", "expirationDate"}, EnvTokenExpiration, FlagTokenExpiration, false, func(c *APIConfig) *string { return &c.TokenExpiration }},
}

func fieldByName(name string) field {
	for _, f := range fields {
		if f.name == name {
			return f
		}
	}
	panic("config: unknown field " + name)
}

func isSet(s string) bool { return strings.TrimSpace(s) != "" }

// normalized returns c with surrounding whitespace removed from every field.
func (c APIConfig) normalized() APIConfig {
	for _, f := range fields {
		p := f.ptr(&c)
		*p = strings.TrimSpace(*p)
	}
	c.Endpoint = NormalizeEndpoint(c.Endpoint)
	c.BridgeEndpoint = NormalizeEndpoint(c.BridgeEndpoint)
	return c
}

// isZero reports whether no field of c is set.
func (c APIConfig) isZero() bool {
	for _, f := range fields {
		if isSet(*f.ptr(&c)) {
			return false
		}
	}
	return true
}

// tokenAlone: Token is set and none of the other OAuth1 values is.
func (c APIConfig) tokenAlone() bool {
	return isSet(c.Token) && !isSet(c.Secret) && !isSet(c.ConsumerKey) && !isSet(c.ConsumerSecret)
}

// Bearer returns the bearer token in bearer mode (BearerToken, or a lone Token).
func (c APIConfig) Bearer() string {
	if isSet(c.BearerToken) {
		return strings.TrimSpace(c.BearerToken)
	}
	if c.tokenAlone() {
		return strings.TrimSpace(c.Token)
	}
	return ""
}

// Mode returns "bearer" when BearerToken is set, "oauth1" when Token and Secret are
// set (with ConsumerKey and ConsumerSecret both set, or both unset: then clever-tools'
// published consumer pair is used, see Consumer), and "" otherwise. Whitespace-only
// values count as unset. For compatibility with the Rust operator, whose configuration
// treated a lone `token` as an API (bearer) token, Token set alone is bearer mode too
// (as clevercloud-sdk-rust's Credentials: {token} alone is Bearer, {token, secret} is
// OAuth1 with clever-tools' consumer by default).
func (c APIConfig) Mode() string {
	if isSet(c.BearerToken) || c.tokenAlone() {
		return ModeBearer
	}
	if isSet(c.Token) && isSet(c.Secret) && isSet(c.ConsumerKey) == isSet(c.ConsumerSecret) {
		return ModeOAuth1
	}
	return ""
}

// Consumer returns the OAuth1 consumer pair requests are signed with: ConsumerKey and
// ConsumerSecret when set, else clever-tools' published pair (published reports that).
func (c APIConfig) Consumer() (key, secret string, published bool) {
	key, secret = strings.TrimSpace(c.ConsumerKey), strings.TrimSpace(c.ConsumerSecret)
	if key == "" && secret == "" {
		return CleverToolsConsumerKey, CleverToolsConsumerSecret, true
	}
	return key, secret, key == CleverToolsConsumerKey && secret == CleverToolsConsumerSecret
}

// RequestEndpoint returns the base URL requests are sent to, normalised: for bearer
// credentials the bridge (BridgeEndpoint; else Endpoint when it names a host other than
// Clever Cloud's public API, e.g. a private deployment or a test server; else
// DefaultBridgeEndpoint), for OAuth1 Endpoint (default DefaultEndpoint).
func (c APIConfig) RequestEndpoint() string {
	if c.Mode() == ModeBearer {
		return c.bridge()
	}
	if e := NormalizeEndpoint(c.Endpoint); e != "" {
		return e
	}
	return DefaultEndpoint
}

func (c APIConfig) bridge() string {
	if b := NormalizeEndpoint(c.BridgeEndpoint); b != "" {
		return b
	}
	if e := NormalizeEndpoint(c.Endpoint); e != "" && !sameEndpoint(e, DefaultEndpoint) {
		return e
	}
	return DefaultBridgeEndpoint
}

// Validate returns nil when c holds a usable credential set and valid (or empty)
// endpoints and expiry. Otherwise it returns a single-line error naming the missing
// keys and where to set them. It never includes a secret value.
func (c APIConfig) Validate() error {
	var problems []string
	if c.Mode() == "" {
		var keys, envs, flags []string
		names := []string{"Token", "Secret"}
		if isSet(c.Token) && isSet(c.Secret) {
			// Only one half of the consumer pair: name the other half.
			names = []string{"ConsumerKey", "ConsumerSecret"}
		}
		for _, name := range names {
			f := fieldByName(name)
			if !isSet(*f.ptr(&c)) {
				keys = append(keys, "api."+f.key)
				envs = append(envs, f.env)
				flags = append(flags, "--"+f.flag)
			}
		}
		b := fieldByName("BearerToken")
		msg := fmt.Sprintf(
			"no usable Clever Cloud credentials: missing %s (set %s, a config file, or %s); or set a bearer token (api.%s, %s or --%s)",
			strings.Join(keys, ", "), strings.Join(envs, ", "), strings.Join(flags, ", "),
			b.key, b.env, b.flag)
		if isSet(c.Token) && isSet(c.Secret) {
			msg = fmt.Sprintf("incomplete OAuth consumer: missing %s (set %s or %s), or set neither api.consumer-key nor api.consumer-secret to sign with clever-tools' published consumer",
				strings.Join(keys, ", "), strings.Join(envs, ", "), strings.Join(flags, ", "))
		}
		problems = append(problems, msg)
	}
	if err := validateEndpoint("api.endpoint", c.Endpoint, EnvEndpoint, FlagEndpoint); err != nil {
		problems = append(problems, err.Error())
	}
	if err := validateEndpoint("api.bridge-endpoint", c.BridgeEndpoint, EnvBridgeEndpoint, FlagBridgeEndpoint); err != nil {
		problems = append(problems, err.Error())
	}
	if isSet(c.TokenExpiration) {
		if _, err := parseExpiration(c.TokenExpiration); err != nil {
			problems = append(problems, fmt.Sprintf("invalid api.token-expiration: want an RFC 3339 date-time or YYYY-MM-DD (set api.token-expiration, %s or --%s)", EnvTokenExpiration, FlagTokenExpiration))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "; "))
}

// validateEndpoint accepts "" (use the default) or an absolute http(s) URL with a
// host and without user information, query or fragment.
func validateEndpoint(key, endpoint, env, flag string) error {
	e := strings.TrimSpace(endpoint)
	if e == "" {
		return nil
	}
	hint := fmt.Sprintf("must be an absolute http(s) URL such as %s (set %s, %s or --%s)", defaultFor(key), key, env, flag)
	u, err := url.Parse(e)
	if err != nil {
		// Not echoed: an unparsable value could hold anything.
		return fmt.Errorf("invalid %s: not a URL; %s", key, hint)
	}
	shown := displayEndpoint(e)
	switch {
	case u.User != nil:
		return fmt.Errorf("invalid %s %q: must not contain user information (credentials go in the api.* credential keys); %s", key, shown, hint)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("invalid %s %q: %s", key, shown, hint)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("invalid %s %q: no host; %s", key, shown, hint)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return fmt.Errorf("invalid %s %q: must not have a query or fragment; %s", key, shown, hint)
	}
	return nil
}

func defaultFor(key string) string {
	if key == "api.bridge-endpoint" {
		return DefaultBridgeEndpoint
	}
	return DefaultEndpoint
}

// NormalizeEndpoint returns the API base URL as the client uses it: surrounding
// whitespace and trailing slashes removed, scheme and host lowercased, and one trailing
// API version segment ("/v2" or "/v4") removed, since every route the operator calls
// carries its version. Clever Cloud's documentation shows the base as
// https://api.clever-cloud.com/v2, so "…/v2", "…/v4", "…/" and "…" are the same base.
// An empty or unparsable value is returned trimmed (Validate reports it).
func NormalizeEndpoint(endpoint string) string {
	e := strings.TrimSpace(endpoint)
	if e == "" {
		return ""
	}
	u, err := url.Parse(e)
	if err != nil || u.Opaque != "" {
		return e
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	p := strings.TrimRight(u.Path, "/")
	if l := strings.ToLower(p); strings.HasSuffix(l, "/v2") || strings.HasSuffix(l, "/v4") {
		p = strings.TrimRight(p[:len(p)-3], "/")
	}
	u.Path, u.RawPath = p, ""
	return u.String()
}

// displayEndpoint returns the endpoint for display: user information is masked
// and an unparsable value is not shown at all.
func displayEndpoint(endpoint string) string {
	e := strings.TrimSpace(endpoint)
	if e == "" {
		return ""
	}
	u, err := url.Parse(e)
	if err != nil {
		return "<invalid URL>"
	}
	if u.User != nil {
		u.User = url.User("redacted")
		return u.String()
	}
	return e
}

// Merge returns base with every non-empty (not whitespace-only) field of
// override applied.
func Merge(base, override APIConfig) APIConfig {
	for _, f := range fields {
		if v := *f.ptr(&override); isSet(v) {
			*f.ptr(&base) = v
		}
	}
	return base
}

// ApplyOverride combines the operator's configuration (base) with a
// per-namespace override document (as returned by ParseDocument). Unlike Merge,
// it treats credentials as a set:
//
//   - if override sets a bearer token, the result uses it alone (base's OAuth1
//     values are dropped);
//   - if override sets any OAuth1 value, its missing OAuth1 values are filled
//     from base (as the Rust operator filled them from its environment) and
//     base's bearer token is dropped, so the override is really used (a bearer
//     token would otherwise take precedence);
//   - if override sets no credential, base's credentials are kept.
//
// The token expiry follows the credentials. Endpoints (API and bridge) are override's
// when set, else base's; they are compared after NormalizeEndpoint. When override points
// to an endpoint or bridge other than base's, it must carry a complete credential set of
// its own (token + secret signs with its own consumer pair, or clever-tools' published
// one, never base's): ApplyOverride returns an error rather than send any of the
// operator's credentials to an endpoint chosen by a namespace.
func ApplyOverride(base, override APIConfig) (APIConfig, error) {
	base, override = base.normalized(), override.normalized()
	result := base
	switch {
	case override.BearerToken != "":
		result = APIConfig{Endpoint: base.Endpoint, BridgeEndpoint: base.BridgeEndpoint, BearerToken: override.BearerToken, TokenExpiration: override.TokenExpiration}
	case override.Token != "" || override.Secret != "" || override.ConsumerKey != "" || override.ConsumerSecret != "":
		result = Merge(base, override)
		result.BearerToken = ""
		result.TokenExpiration = override.TokenExpiration
	case override.TokenExpiration != "":
		result.TokenExpiration = override.TokenExpiration
	}
	foreign := false
	if override.Endpoint != "" {
		if sameEndpoint(override.Endpoint, base.Endpoint) || (base.Endpoint == "" && sameEndpoint(override.Endpoint, DefaultEndpoint)) {
			result.Endpoint = override.Endpoint
		} else {
			foreign = true
		}
	}
	if override.BridgeEndpoint != "" {
		if sameEndpoint(override.BridgeEndpoint, base.bridge()) {
			result.BridgeEndpoint = override.BridgeEndpoint
		} else {
			foreign = true
		}
	}
	if foreign {
		if override.Mode() == "" {
			return APIConfig{}, errors.New("namespace override sets api.endpoint or api.bridge-endpoint to another endpoint but not a complete credential set of its own (a bearer token, or token and secret); the operator's credentials are never sent to an endpoint chosen by a namespace")
		}
		result = override
		if override.Mode() == ModeBearer {
			result = APIConfig{Endpoint: override.Endpoint, BridgeEndpoint: override.BridgeEndpoint, BearerToken: override.Bearer(), TokenExpiration: override.TokenExpiration}
		}
	}
	return result, nil
}

// sameEndpoint compares two endpoints after NormalizeEndpoint (case-insensitively).
func sameEndpoint(a, b string) bool {
	return strings.EqualFold(NormalizeEndpoint(a), NormalizeEndpoint(b))
}

// Fingerprint returns the first 12 hex characters of a SHA-256 digest over the
// endpoint and every credential field (whitespace-trimmed), suitable as a cache
// key (e.g. one API client per distinct configuration). Fields are
// length-prefixed, so distinct configurations never collide by concatenation.
func (c APIConfig) Fingerprint() string {
	n := c.normalized()
	h := sha256.New()
	io.WriteString(h, "clever-operator/config.APIConfig/v1\x00")
	var l [8]byte
	for _, f := range fields {
		v := *f.ptr(&n)
		binary.BigEndian.PutUint64(l[:], uint64(len(v)))
		h.Write(l[:])
		io.WriteString(h, v)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// Redaction placeholders.
const (
	redacted = "<redacted>"
	unset    = "<unset>"
)

func secretState(v string) string {
	if isSet(v) {
		return redacted
	}
	return unset
}

// String returns a representation with every secret replaced by "<redacted>"
// (set) or "<unset>" (empty).
func (c APIConfig) String() string {
	var b strings.Builder
	b.WriteString("{")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(f.name)
		b.WriteString(":")
		v := *f.ptr(&c)
		if f.secret {
			b.WriteString(secretState(v))
		} else {
			fmt.Fprintf(&b, "%q", displayEndpoint(v))
		}
	}
	b.WriteString("}")
	return b.String()
}

// GoString is used by %#v; secrets are redacted as in String.
func (c APIConfig) GoString() string {
	var b strings.Builder
	b.WriteString("config.APIConfig{")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		v := *f.ptr(&c)
		if f.secret {
			if isSet(v) {
				fmt.Fprintf(&b, "%s:%q", f.name, redacted)
			} else {
				fmt.Fprintf(&b, "%s:%q", f.name, "")
			}
		} else {
			fmt.Fprintf(&b, "%s:%q", f.name, displayEndpoint(v))
		}
	}
	b.WriteString("}")
	return b.String()
}

// Format implements fmt.Formatter so that every verb and flag prints the
// redacted form.
func (c APIConfig) Format(s fmt.State, verb rune) {
	formatRedacted(s, verb, c.String(), c.GoString())
}

// LogValue implements slog.LogValuer with secrets redacted.
func (c APIConfig) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, len(fields)+1)
	for _, f := range fields {
		v := *f.ptr(&c)
		if f.secret {
			attrs = append(attrs, slog.String(f.key, secretState(v)))
		} else {
			attrs = append(attrs, slog.String(f.key, displayEndpoint(v)))
		}
	}
	attrs = append(attrs, slog.String("mode", c.Mode()))
	return slog.GroupValue(attrs...)
}

// MarshalLog implements logr.Marshaler (honoured by zapr and other logr sinks)
// with secrets redacted.
func (c APIConfig) MarshalLog() any {
	m := make(map[string]string, len(fields)+1)
	for _, f := range fields {
		v := *f.ptr(&c)
		if f.secret {
			m[f.key] = secretState(v)
		} else {
			m[f.key] = displayEndpoint(v)
		}
	}
	m["mode"] = c.Mode()
	return m
}

// String returns a representation with every secret redacted.
func (c Config) String() string {
	return fmt.Sprintf("{API:%s Sources:%q}", c.API.String(), c.Sources)
}

// GoString is used by %#v; secrets are redacted.
func (c Config) GoString() string {
	return fmt.Sprintf("config.Config{API:%s, Sources:%#v}", c.API.GoString(), c.Sources)
}

// Format implements fmt.Formatter so that every verb prints the redacted form.
func (c Config) Format(s fmt.State, verb rune) {
	formatRedacted(s, verb, c.String(), c.GoString())
}

// LogValue implements slog.LogValuer with secrets redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(slog.Any("api", c.API.LogValue()), slog.Any("sources", c.Sources))
}

// MarshalLog implements logr.Marshaler with secrets redacted.
func (c Config) MarshalLog() any {
	return map[string]any{"api": c.API.MarshalLog(), "sources": c.Sources}
}

func formatRedacted(s fmt.State, verb rune, str, goStr string) {
	switch {
	case verb == 'v' && s.Flag('#'):
		io.WriteString(s, goStr)
	case verb == 'q':
		fmt.Fprintf(s, "%q", str)
	default:
		io.WriteString(s, str)
	}
}
