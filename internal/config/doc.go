// Package config loads the operator's Clever Cloud API configuration: the API
// endpoint, the bridge endpoint (for bearer tokens) and the credentials (OAuth1
// token and secret, with an own consumer pair or clever-tools' published one; or a
// bearer API token), and when they expire.
//
// # Sources and precedence
//
// Values are merged field by field, highest precedence first:
//
//  1. command-line flags (LoadOptions.Flags; --api-token, --api-secret, ...);
//  2. environment variables (CLEVER_OPERATOR_API_ENDPOINT, CLEVER_OPERATOR_API_TOKEN,
//     CLEVER_OPERATOR_API_SECRET, CLEVER_OPERATOR_API_CONSUMER_KEY,
//     CLEVER_OPERATOR_API_CONSUMER_SECRET, CLEVER_OPERATOR_API_BEARER_TOKEN,
//     CLEVER_OPERATOR_API_BRIDGE_ENDPOINT, CLEVER_OPERATOR_API_TOKEN_EXPIRATION);
//  3. the names Clever Cloud's own clients read (see envAliases: CLEVER_TOKEN +
//     CLEVER_SECRET, CC_OAUTH_TOKEN + CC_OAUTH_SECRET, CC_CONSUMER_KEY,
//     CC_CONSUMER_SECRET, CLEVER_API_TOKEN, CC_API_TOKEN, CLEVER_API_HOST,
//     CLEVER_AUTH_BRIDGE_HOST);
//  4. clever-tools' login file (LoadOptions.CleverToolsFile, CLEVER_OPERATOR_CLEVER_TOOLS_CONFIG,
//     a variable named clever-tools.json holding it, or DefaultCleverToolsPaths; see
//     ParseCleverTools);
//  5. configuration files.
//
// Endpoints are normalised (NormalizeEndpoint): "…/v2", "…/v4", "…/" and "…" are the
// same base. Bearer tokens are sent to the bridge (APIConfig.RequestEndpoint).
//
// An empty (or whitespace-only) value never overrides a non-empty one, whatever
// its source, and surrounding whitespace is removed from every value (a Secret
// written with `echo` ends with a newline).
//
// This deliberately differs from the Rust operator this project replaces, where
// environment variables were only defaults and lost against any file value, even
// an empty one (reference-operator.md §3.2, §6.2 item 13).
//
// Files: when LoadOptions.ConfigFile (--config) is set, only that file is read;
// it must exist and parse. Otherwise every existing file of the search path is
// read and merged in order, later files overriding earlier ones (see
// DefaultSearchPaths); missing files are skipped, but a file that exists and
// cannot be read or parsed is an error.
//
// # File format
//
// TOML, YAML or JSON, chosen by the extension (.toml, .yaml/.yml, .json) and
// sniffed otherwise. The credentials live in an "api" table:
//
//	[api]
//	endpoint        = "https://api.clever-cloud.com"  # optional
//	token           = "..."
//	secret          = "..."
//	consumer-key    = "..."
//	consumer-secret = "..."
//	bearer-token    = "..."   # alternative to the OAuth1 values
//	bridge-endpoint = "https://api-bridge.clever-cloud.com"  # optional
//	token-expiration = "2027-01-31"  # optional, RFC 3339 or YYYY-MM-DD
//
// The camelCase spellings consumerKey, consumerSecret and bearerToken are
// accepted too (the Rust operator's Helm chart wrote camelCase keys, which that
// operator silently ignored). Setting both spellings of one key to different
// values is an error. Unknown keys and tables are ignored. Values must be strings.
//
// Errors never contain file content or secret values: a syntax error names the
// file, the format and the line (and column) reported by the parser.
//
// # Per-namespace override
//
// ParseOverrideSecret reads a per-namespace override Secret (named clever-operator or
// clever-kubernetes-operator): its `config` key through ParseDocument (TOML, YAML or
// JSON, or base64 of one of them, the Rust operator's form) and/or its
// `clever-tools.json` key through ParseCleverTools. ApplyOverride combines it with
// the operator's own configuration without ever sending the operator's
// credentials to an endpoint chosen by the namespace.
//
// # Secrets in output
//
// APIConfig and Config implement fmt.Formatter, fmt.Stringer, fmt.GoStringer,
// slog.LogValuer and logr.Marshaler (MarshalLog) so that printing or logging them
// shows only whether each secret is set. JSON/TOML serialisation
// (encoding/json, toml) is NOT redacted: it is meant for generating
// configuration, never for logs.
package config
