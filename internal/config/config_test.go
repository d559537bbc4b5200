package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Distinctive secret values: tests assert that they never appear in output.
const (
	secToken          = "tok-7f3a9c1e"
	secSecret         = "sec-b2d4e6f8"
	secConsumerKey    = "ck-0a1b2c3d"
	secConsumerSecret = "cs-9e8d7c6b"
	secBearer         = "bearer-5a5b5c5d"
)

var allSecrets = []string{secToken, secSecret, secConsumerKey, secConsumerSecret, secBearer}

func fullConfig() APIConfig {
	return APIConfig{
		Endpoint:       "https://api.example.test/",
		Token:          secToken,
		Secret:         secSecret,
		ConsumerKey:    secConsumerKey,
		ConsumerSecret: secConsumerSecret,
		BearerToken:    secBearer,
	}
}

func oauthConfig() APIConfig {
	c := fullConfig()
	c.BearerToken = ""
	return c
}

func assertNoSecrets(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range allSecrets {
		if strings.Contains(s, sec) {
			t.Errorf("%s contains secret %q: %s", what, sec, s)
		}
	}
}

func TestMode(t *testing.T) {
	tests := []struct {
		name string
		cfg  APIConfig
		want string
	}{
		{"empty", APIConfig{}, ""},
		{"endpoint only", APIConfig{Endpoint: "https://x.test"}, ""},
		{"bearer alone", APIConfig{BearerToken: secBearer}, ModeBearer},
		{"bearer wins over oauth1", fullConfig(), ModeBearer},
		{"oauth1 complete", oauthConfig(), ModeOAuth1},
		{"oauth1 missing token", APIConfig{Secret: "s", ConsumerKey: "k", ConsumerSecret: "c"}, ""},
		{"oauth1 missing consumer secret", APIConfig{Token: "t", Secret: "s", ConsumerKey: "k"}, ""},
		{"token and secret only: clever-tools' published consumer", APIConfig{Token: "t", Secret: "s"}, ModeOAuth1},
		{"token, secret and half a consumer pair", APIConfig{Token: "t", Secret: "s", ConsumerSecret: "c"}, ""},
		{"lone token is bearer (Rust operator compatibility)", APIConfig{Token: "t"}, ModeBearer},
		{"whitespace bearer is unset", APIConfig{BearerToken: " \n"}, ""},
		{"whitespace oauth field is unset", APIConfig{Token: "t", Secret: "s", ConsumerKey: "k", ConsumerSecret: "\t"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.Mode(); got != tt.want {
				t.Errorf("Mode() = %q, want %q", got, tt.want)
			}
		})
	}
}

var apiKeyRE = regexp.MustCompile(`api\.[a-z-]+`)

func TestValidate(t *testing.T) {
	tests := []struct {
		name        string
		cfg         APIConfig
		ok          bool
		wantMissing []string // exact api.* keys named as missing (before "; or set a bearer token")
		contains    []string
	}{
		{name: "bearer alone", cfg: APIConfig{BearerToken: secBearer}, ok: true},
		{name: "oauth1 complete", cfg: oauthConfig(), ok: true},
		{name: "bearer with http endpoint", cfg: APIConfig{BearerToken: "b", Endpoint: "http://127.0.0.1:8080"}, ok: true},
		{name: "oauth1 with endpoint path", cfg: func() APIConfig { c := oauthConfig(); c.Endpoint = "https://fake.test/prefix/"; return c }(), ok: true},
		{
			name:        "nothing set",
			cfg:         APIConfig{},
			wantMissing: []string{"api.token", "api.secret"},
			contains: []string{
				"no usable Clever Cloud credentials: missing api.token, api.secret (",
				EnvToken, EnvSecret, "a config file", "--api-token", "--api-secret",
				"or set a bearer token (api.bearer-token, CLEVER_OPERATOR_API_BEARER_TOKEN or --api-bearer-token)",
			},
		},
		{name: "token and secret only (clever-tools' published consumer)", cfg: APIConfig{Token: secToken, Secret: secSecret}, ok: true},
		{
			name:     "token, secret and half a consumer pair",
			cfg:      APIConfig{Token: secToken, Secret: secSecret, ConsumerKey: secConsumerKey},
			contains: []string{"incomplete OAuth consumer: missing api.consumer-secret (set CLEVER_OPERATOR_API_CONSUMER_SECRET or --api-consumer-secret)", "published consumer"},
		},
		{name: "bad bridge endpoint", cfg: APIConfig{BearerToken: "b", BridgeEndpoint: "bridge.test"}, contains: []string{`invalid api.bridge-endpoint "bridge.test"`, "https://api-bridge.clever-cloud.com", "CLEVER_OPERATOR_API_BRIDGE_ENDPOINT"}},
		{name: "bad expiry", cfg: APIConfig{BearerToken: "b", TokenExpiration: "next week"}, contains: []string{"invalid api.token-expiration"}},
		{name: "expiry date", cfg: APIConfig{BearerToken: "b", TokenExpiration: "2027-01-02"}, ok: true},
		{
			name:        "consumer pair only",
			cfg:         APIConfig{ConsumerKey: secConsumerKey, ConsumerSecret: secConsumerSecret},
			wantMissing: []string{"api.token", "api.secret"},
			contains:    []string{"missing api.token, api.secret (set CLEVER_OPERATOR_API_TOKEN, CLEVER_OPERATOR_API_SECRET, a config file, or --api-token, --api-secret)"},
		},
		{
			name:        "only secret missing",
			cfg:         APIConfig{Token: secToken, ConsumerKey: secConsumerKey, ConsumerSecret: secConsumerSecret},
			wantMissing: []string{"api.secret"},
		},
		{
			name:        "whitespace token counts as missing",
			cfg:         APIConfig{Token: "  ", Secret: secSecret, ConsumerKey: secConsumerKey, ConsumerSecret: secConsumerSecret},
			wantMissing: []string{"api.token"},
		},
		{name: "relative endpoint", cfg: APIConfig{BearerToken: "b", Endpoint: "api.clever-cloud.com"}, contains: []string{`invalid api.endpoint "api.clever-cloud.com"`, "absolute http(s) URL"}},
		{name: "ftp endpoint", cfg: APIConfig{BearerToken: "b", Endpoint: "ftp://x.test"}, contains: []string{`invalid api.endpoint "ftp://x.test"`}},
		{name: "no host", cfg: APIConfig{BearerToken: "b", Endpoint: "https://"}, contains: []string{"no host"}},
		{name: "query", cfg: APIConfig{BearerToken: "b", Endpoint: "https://x.test/?a=b"}, contains: []string{"query or fragment"}},
		{name: "unparsable", cfg: APIConfig{BearerToken: "b", Endpoint: "http://[::1"}, contains: []string{"invalid api.endpoint: not a URL"}},
		{name: "user info hidden", cfg: APIConfig{BearerToken: "b", Endpoint: "https://" + secToken + ":" + secSecret + "@x.test"}, contains: []string{"must not contain user information"}},
		{
			name:        "missing credentials and bad endpoint in one line",
			cfg:         APIConfig{Token: secToken, ConsumerKey: "k", Endpoint: "x.test"},
			wantMissing: []string{"api.secret"},
			contains:    []string{"no usable Clever Cloud credentials", "; invalid api.endpoint"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.ok {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate() = nil, want error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			assertNoSecrets(t, "error", msg)
			for _, c := range tt.contains {
				if !strings.Contains(msg, c) {
					t.Errorf("error %q does not contain %q", msg, c)
				}
			}
			if tt.wantMissing != nil {
				head, _, ok := strings.Cut(msg, "; or set a bearer token")
				if !ok {
					t.Fatalf("error %q lacks the bearer token hint", msg)
				}
				head, _, _ = strings.Cut(head, " (set ")
				if got := apiKeyRE.FindAllString(head, -1); !slices.Equal(got, tt.wantMissing) {
					t.Errorf("missing keys = %v, want %v (error %q)", got, tt.wantMissing, msg)
				}
			}
		})
	}
}

func TestMerge(t *testing.T) {
	base := APIConfig{Endpoint: "https://a.test", Token: "t1", Secret: "s1", ConsumerKey: "k1", ConsumerSecret: "c1"}
	tests := []struct {
		name     string
		override APIConfig
		want     APIConfig
	}{
		{"empty override", APIConfig{}, base},
		{"whitespace never overrides", APIConfig{Token: "  ", Secret: "\n"}, base},
		{"partial", APIConfig{Token: "t2"}, APIConfig{Endpoint: "https://a.test", Token: "t2", Secret: "s1", ConsumerKey: "k1", ConsumerSecret: "c1"}},
		{"every field", fullConfig(), fullConfig()},
		{"bearer added", APIConfig{BearerToken: "b"}, APIConfig{Endpoint: "https://a.test", Token: "t1", Secret: "s1", ConsumerKey: "k1", ConsumerSecret: "c1", BearerToken: "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Merge(base, tt.override); got != tt.want {
				t.Errorf("Merge = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestApplyOverride(t *testing.T) {
	opBearer := APIConfig{Endpoint: "https://api.example.test", BearerToken: "op-bearer"}
	opOAuth := APIConfig{Endpoint: "https://api.example.test", Token: "op-t", Secret: "op-s", ConsumerKey: "op-k", ConsumerSecret: "op-c"}
	tests := []struct {
		name     string
		base     APIConfig
		override APIConfig
		want     APIConfig
		wantErr  string
	}{
		{"no credentials in override keeps base", opOAuth, APIConfig{}, opOAuth, ""},
		{"token and secret filled with base consumer pair", opOAuth, APIConfig{Token: "ns-t", Secret: "ns-s"},
			APIConfig{Endpoint: "https://api.example.test", Token: "ns-t", Secret: "ns-s", ConsumerKey: "op-k", ConsumerSecret: "op-c"}, ""},
		{"oauth1 override drops base bearer", APIConfig{Endpoint: "https://api.example.test", BearerToken: "op-bearer", ConsumerKey: "op-k", ConsumerSecret: "op-c"},
			APIConfig{Token: "ns-t", Secret: "ns-s"},
			APIConfig{Endpoint: "https://api.example.test", Token: "ns-t", Secret: "ns-s", ConsumerKey: "op-k", ConsumerSecret: "op-c"}, ""},
		{"bearer override drops base oauth1", opOAuth, APIConfig{BearerToken: "ns-b"},
			APIConfig{Endpoint: "https://api.example.test", BearerToken: "ns-b"}, ""},
		{"same endpoint (trailing slash) may inherit", opBearer, APIConfig{Endpoint: "https://api.example.test/"},
			APIConfig{Endpoint: "https://api.example.test", BearerToken: "op-bearer"}, ""},
		{"same endpoint (version suffix) may inherit", opOAuth, APIConfig{Endpoint: "https://API.example.test/v2/"}, opOAuth, ""},
		{"default endpoint spelled out may inherit", APIConfig{BearerToken: "op-bearer"}, APIConfig{Endpoint: "https://api.clever-cloud.com/v4"},
			APIConfig{Endpoint: "https://api.clever-cloud.com", BearerToken: "op-bearer"}, ""},
		{"bearer override keeps base's bridge", APIConfig{Endpoint: "https://api.example.test", BridgeEndpoint: "https://bridge.example.test", Token: "op-t", Secret: "op-s"},
			APIConfig{BearerToken: "ns-b"}, APIConfig{Endpoint: "https://api.example.test", BridgeEndpoint: "https://bridge.example.test", BearerToken: "ns-b"}, ""},
		{"same bridge may inherit", APIConfig{BearerToken: "op-bearer"}, APIConfig{BridgeEndpoint: "https://api-bridge.clever-cloud.com/"},
			APIConfig{BridgeEndpoint: "https://api-bridge.clever-cloud.com", BearerToken: "op-bearer"}, ""},
		{"other bridge alone is refused", APIConfig{BearerToken: "op-bearer"}, APIConfig{BridgeEndpoint: "https://evil.test"}, APIConfig{}, "never sent to an endpoint chosen by a namespace"},
		{"other bridge with own bearer", opOAuth, APIConfig{BridgeEndpoint: "https://ns-bridge.test", BearerToken: "ns-b"},
			APIConfig{BridgeEndpoint: "https://ns-bridge.test", BearerToken: "ns-b"}, ""},
		{"other endpoint with token and secret uses the published consumer, not base's", opOAuth, APIConfig{Endpoint: "https://ns.test", Token: "x", Secret: "y"},
			APIConfig{Endpoint: "https://ns.test", Token: "x", Secret: "y"}, ""},
		{"expiry follows the credentials", APIConfig{BearerToken: "op-bearer", TokenExpiration: "2030-01-01"}, APIConfig{Token: "ns-t", Secret: "ns-s"},
			APIConfig{Token: "ns-t", Secret: "ns-s"}, ""},
		{"other endpoint with complete oauth1", opBearer,
			APIConfig{Endpoint: "https://ns.test", Token: "a", Secret: "b", ConsumerKey: "c", ConsumerSecret: "d"},
			APIConfig{Endpoint: "https://ns.test", Token: "a", Secret: "b", ConsumerKey: "c", ConsumerSecret: "d"}, ""},
		{"other endpoint with bearer", opOAuth, APIConfig{Endpoint: "https://ns.test", BearerToken: "ns-b"},
			APIConfig{Endpoint: "https://ns.test", BearerToken: "ns-b"}, ""},
		{"other endpoint alone is refused", opBearer, APIConfig{Endpoint: "https://evil.test"}, APIConfig{}, "never sent to an endpoint chosen by a namespace"},
		{"other endpoint with partial oauth1 is refused", opOAuth, APIConfig{Endpoint: "https://evil.test", Token: "x", Secret: "y", ConsumerKey: "z"}, APIConfig{}, "not a complete credential set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyOverride(tt.base, tt.override)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "op-") {
					t.Errorf("error leaks a value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", describe(got), describe(tt.want))
			}
		})
	}
}

// describe shows values; only for non-secret test data.
func describe(c APIConfig) string {
	return fmt.Sprintf("[%q %q %q %q %q %q %q %q]", c.Endpoint, c.Token, c.Secret, c.ConsumerKey, c.ConsumerSecret, c.BearerToken, c.BridgeEndpoint, c.TokenExpiration)
}

func TestFingerprint(t *testing.T) {
	base := fullConfig()
	fp := base.Fingerprint()
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(fp) {
		t.Fatalf("Fingerprint() = %q, want 12 hex chars", fp)
	}
	if again := fullConfig().Fingerprint(); again != fp {
		t.Errorf("not deterministic: %q vs %q", fp, again)
	}
	padded := base
	padded.Token = " " + padded.Token + "\n"
	if padded.Fingerprint() != fp {
		t.Error("surrounding whitespace changes the fingerprint")
	}
	seen := map[string]string{fp: "base"}
	for _, f := range fields {
		c := base
		*f.ptr(&c) += "x"
		got := c.Fingerprint()
		if prev, dup := seen[got]; dup {
			t.Errorf("changing %s gives the same fingerprint as %s", f.name, prev)
		}
		seen[got] = f.name
	}
	// Moving a character between adjacent fields must change it (length prefixes).
	a := APIConfig{Token: "ab", Secret: "c"}
	b := APIConfig{Token: "a", Secret: "bc"}
	if a.Fingerprint() == b.Fingerprint() {
		t.Error("fingerprint ambiguous across field boundaries")
	}
	if (APIConfig{}).Fingerprint() == fp {
		t.Error("empty config has the same fingerprint")
	}
}

func TestRedaction(t *testing.T) {
	api := fullConfig()
	cfg := Config{API: api, Sources: []string{"file /etc/clever-operator/config.toml", "env"}}
	opts := LoadOptions{ConfigFile: "/x.toml", Flags: api}
	verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%10v", "%-30s"}
	values := map[string]any{
		"APIConfig":   api,
		"*APIConfig":  &api,
		"Config":      cfg,
		"*Config":     &cfg,
		"[]APIConfig": []APIConfig{api, api},
		"map":         map[string]APIConfig{"k": api},
		"LoadOptions": opts,
		"anon struct": struct{ C Config }{cfg},
	}
	for name, v := range values {
		for _, verb := range verbs {
			out := fmt.Sprintf(verb, v)
			assertNoSecrets(t, name+" "+verb, out)
		}
	}
	// The redacted form is informative.
	for _, verb := range []string{"%v", "%+v", "%s"} {
		out := fmt.Sprintf(verb, api)
		want := `{Endpoint:"https://api.example.test/" Token:<redacted> Secret:<redacted> ConsumerKey:<redacted> ConsumerSecret:<redacted> BearerToken:<redacted> BridgeEndpoint:"" TokenExpiration:""}`
		if out != want {
			t.Errorf("%s = %s, want %s", verb, out, want)
		}
	}
	if got, want := fmt.Sprintf("%v", APIConfig{Token: "t"}), `{Endpoint:"" Token:<redacted> Secret:<unset> ConsumerKey:<unset> ConsumerSecret:<unset> BearerToken:<unset> BridgeEndpoint:"" TokenExpiration:""}`; got != want {
		t.Errorf("%%v = %s, want %s", got, want)
	}
	if got, want := fmt.Sprintf("%#v", APIConfig{Token: "t"}), `config.APIConfig{Endpoint:"", Token:"<redacted>", Secret:"", ConsumerKey:"", ConsumerSecret:"", BearerToken:"", BridgeEndpoint:"", TokenExpiration:""}`; got != want {
		t.Errorf("%%#v = %s, want %s", got, want)
	}
	if got := fmt.Sprintf("%+v", cfg); !strings.Contains(got, "Sources:") || !strings.Contains(got, "/etc/clever-operator/config.toml") {
		t.Errorf("Config %%+v lacks sources: %s", got)
	}
	if got := fmt.Sprintf("%#v", cfg); !strings.HasPrefix(got, "config.Config{API:config.APIConfig{") {
		t.Errorf("Config %%#v = %s", got)
	}
	var nilPtr *APIConfig
	_ = fmt.Sprintf("%v", nilPtr) // must not panic

	// User information in the endpoint is never shown.
	withUser := APIConfig{Endpoint: "https://" + secToken + ":" + secSecret + "@x.test/p"}
	for _, verb := range verbs {
		out := fmt.Sprintf(verb, withUser)
		assertNoSecrets(t, "endpoint userinfo "+verb, out)
	}

	// Structured logging.
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	logger.Info("cfg", "api", api, "config", cfg)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("cfg", "api", api, "config", cfg)
	assertNoSecrets(t, "slog", buf.String())
	if !strings.Contains(buf.String(), redacted) {
		t.Errorf("slog output lacks %s: %s", redacted, buf.String())
	}
	j, err := json.Marshal(cfg.MarshalLog())
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecrets(t, "MarshalLog", string(j))
	if !strings.Contains(string(j), `"mode":"bearer"`) {
		t.Errorf("MarshalLog = %s", j)
	}
}

func TestApplyOverrideLoneTokenToOtherEndpointIsBearer(t *testing.T) {
	base := APIConfig{Token: "t", Secret: "s", ConsumerKey: "k", ConsumerSecret: "c"}
	got, err := ApplyOverride(base, APIConfig{Endpoint: "https://other.test", Token: "ns-token"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Mode() != ModeBearer || got.Bearer() != "ns-token" || got.Endpoint != "https://other.test" || got.Secret != "" {
		t.Fatalf("got %#v (mode %s)", got, got.Mode())
	}
}
