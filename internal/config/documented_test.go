package config

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNormalizeEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"":                                     "",
		"https://api.clever-cloud.com":         "https://api.clever-cloud.com",
		"https://api.clever-cloud.com/":        "https://api.clever-cloud.com",
		"https://api.clever-cloud.com/v2":      "https://api.clever-cloud.com",
		"https://api.clever-cloud.com/v2/":     "https://api.clever-cloud.com",
		"https://api.clever-cloud.com/v4":      "https://api.clever-cloud.com",
		" HTTPS://API.Clever-Cloud.com/V2// ":  "https://api.clever-cloud.com",
		"http://127.0.0.1:8080/prefix/v2":      "http://127.0.0.1:8080/prefix",
		"http://127.0.0.1:8080/prefix":         "http://127.0.0.1:8080/prefix",
		"https://x.test/v2/v2":                 "https://x.test/v2", // one suffix only
		"https://x.test/v3":                    "https://x.test/v3",
		"https://x.test/api-v2":                "https://x.test/api-v2",
		"https://api-bridge.clever-cloud.com/": "https://api-bridge.clever-cloud.com",
	} {
		if got := NormalizeEndpoint(in); got != want {
			t.Errorf("NormalizeEndpoint(%q) = %q, want %q", in, got, want)
		}
	}
	// The four spellings Clever Cloud's users write are the same base.
	for _, e := range []string{"https://api.clever-cloud.com/v2", "https://api.clever-cloud.com/v4", "https://api.clever-cloud.com/", "https://api.clever-cloud.com"} {
		if !sameEndpoint(e, DefaultEndpoint) {
			t.Errorf("sameEndpoint(%q, default) = false", e)
		}
	}
}

func TestRequestEndpoint(t *testing.T) {
	cases := []struct {
		name string
		cfg  APIConfig
		want string
	}{
		{"oauth1 default", APIConfig{Token: "t", Secret: "s"}, DefaultEndpoint},
		{"oauth1 documented base", APIConfig{Endpoint: "https://api.clever-cloud.com/v2", Token: "t", Secret: "s"}, DefaultEndpoint},
		{"oauth1 ignores the bridge", APIConfig{BridgeEndpoint: "https://b.test", Token: "t", Secret: "s"}, DefaultEndpoint},
		{"bearer default goes to the bridge", APIConfig{BearerToken: "b"}, DefaultBridgeEndpoint},
		{"lone token goes to the bridge", APIConfig{Token: "b"}, DefaultBridgeEndpoint},
		{"bearer with the public API host still goes to the bridge", APIConfig{Endpoint: "https://api.clever-cloud.com/v2/", BearerToken: "b"}, DefaultBridgeEndpoint},
		{"bearer with a configured bridge", APIConfig{Endpoint: "http://api.test", BridgeEndpoint: "http://bridge.test/v2", BearerToken: "b"}, "http://bridge.test"},
		{"bearer with a private endpoint and no bridge", APIConfig{Endpoint: "http://127.0.0.1:1/v2", BearerToken: "b"}, "http://127.0.0.1:1"},
	}
	for _, c := range cases {
		if got := c.cfg.RequestEndpoint(); got != c.want {
			t.Errorf("%s: RequestEndpoint() = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestConsumer(t *testing.T) {
	k, s, pub := APIConfig{Token: "t", Secret: "s"}.Consumer()
	if k != CleverToolsConsumerKey || s != CleverToolsConsumerSecret || !pub {
		t.Errorf("token+secret: Consumer() = %q, %q, %v; want clever-tools' pair", k, s, pub)
	}
	k, s, pub = APIConfig{Token: "t", Secret: "s", ConsumerKey: "mine", ConsumerSecret: "own"}.Consumer()
	if k != "mine" || s != "own" || pub {
		t.Errorf("explicit consumer: Consumer() = %q, %q, %v; explicit values must win", k, s, pub)
	}
	notes := strings.Join(APIConfig{Token: "t", Secret: "s"}.Notes(), "\n")
	if !strings.Contains(notes, "published OAuth consumer") || strings.Contains(notes, CleverToolsConsumerSecret) {
		t.Errorf("Notes() = %q", notes)
	}
	if n := (APIConfig{Token: "t", Secret: "s", ConsumerKey: "k", ConsumerSecret: "c"}).Notes(); len(n) != 0 {
		t.Errorf("own consumer: Notes() = %q, want none", n)
	}
	if n := strings.Join(APIConfig{Endpoint: "http://fake.test", BearerToken: "b"}.Notes(), ""); !strings.Contains(n, "api.bridge-endpoint") {
		t.Errorf("bearer on a private endpoint: Notes() = %q", n)
	}
}

func TestLoadNormalisesEndpoints(t *testing.T) {
	cfg, err := Load(LoadOptions{SearchPaths: []string{}, Env: mapEnv(map[string]string{
		EnvEndpoint: "https://api.clever-cloud.com/v2", EnvBridgeEndpoint: "https://api-bridge.clever-cloud.com/", EnvToken: "t", EnvSecret: "s"})})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.API.Endpoint != DefaultEndpoint || cfg.API.BridgeEndpoint != DefaultBridgeEndpoint {
		t.Errorf("endpoints = %q, %q", cfg.API.Endpoint, cfg.API.BridgeEndpoint)
	}
	if err := cfg.API.Validate(); err != nil {
		t.Errorf("token + secret + documented endpoint: Validate() = %v", err)
	}
}

func TestLoadEnvAliases(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		want    APIConfig
		sources []string
	}{
		{"clever-tools pair", map[string]string{"CLEVER_TOKEN": "ct", "CLEVER_SECRET": "cs", "CLEVER_API_HOST": "https://api.clever-cloud.com/v2"},
			APIConfig{Endpoint: DefaultEndpoint, Token: "ct", Secret: "cs"}, []string{"env CLEVER_TOKEN,CLEVER_SECRET,CLEVER_API_HOST"}},
		{"CLEVER_TOKEN alone is ignored (clever-tools reads the pair only)", map[string]string{"CLEVER_TOKEN": "ct"}, APIConfig{}, nil},
		{"Go client and Terraform names", map[string]string{"CC_OAUTH_TOKEN": "gt", "CC_OAUTH_SECRET": "gs", "CC_CONSUMER_KEY": "gk", "CC_CONSUMER_SECRET": "gc"},
			APIConfig{Token: "gt", Secret: "gs", ConsumerKey: "gk", ConsumerSecret: "gc"}, []string{"env CC_OAUTH_TOKEN,CC_OAUTH_SECRET,CC_CONSUMER_KEY,CC_CONSUMER_SECRET"}},
		{"clever-tools wins over the Go client's pair", map[string]string{"CLEVER_TOKEN": "ct", "CLEVER_SECRET": "cs", "CC_OAUTH_TOKEN": "gt", "CC_OAUTH_SECRET": "gs"},
			APIConfig{Token: "ct", Secret: "cs"}, []string{"env CLEVER_TOKEN,CLEVER_SECRET"}},
		{"bearer aliases", map[string]string{"CC_API_TOKEN": "b2", "CLEVER_API_TOKEN": "b1", "CLEVER_AUTH_BRIDGE_HOST": "https://b.test/"},
			APIConfig{BearerToken: "b1", BridgeEndpoint: "https://b.test"}, []string{"env CLEVER_API_TOKEN,CLEVER_AUTH_BRIDGE_HOST"}},
		{"our names win over aliases", map[string]string{"CLEVER_TOKEN": "ct", "CLEVER_SECRET": "cs", EnvToken: "ours", "CLEVER_API_HOST": "https://alias.test", EnvEndpoint: "https://ours.test"},
			APIConfig{Endpoint: "https://ours.test", Token: "ours", Secret: "cs"}, []string{"env CLEVER_TOKEN,CLEVER_SECRET,CLEVER_API_HOST", "env"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Load(LoadOptions{SearchPaths: []string{}, Env: mapEnv(c.env)})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.API != c.want {
				t.Errorf("got %s, want %s", describe(cfg.API), describe(c.want))
			}
			if fmt.Sprint(cfg.Sources) != fmt.Sprint(c.sources) {
				t.Errorf("sources = %q, want %q", cfg.Sources, c.sources)
			}
		})
	}
}

const cleverToolsLegacy = `{"token":"legacy-token","secret":"legacy-secret","expirationDate":"2027-03-01T10:00:00.000Z"}`

// cleverTools4 is clever-tools 4's shape (src/config/config.js ConfigFileSchema): the
// active profile is the first one.
const cleverTools4 = `{
  "version": 1,
  "profiles": [
    {"alias": "staging", "token": "p1-token", "secret": "p1-secret", "expirationDate": "2027-04-01T00:00:00Z",
     "userId": "user_1", "email": "a@example.test",
     "overrides": {"API_HOST": "https://api.staging.test/v2", "AUTH_BRIDGE_HOST": "https://bridge.staging.test", "CONSOLE_URL": "https://console.staging.test"}},
    {"alias": "default", "token": "p2-token", "secret": "p2-secret"}
  ]
}`

func TestParseCleverTools(t *testing.T) {
	got, err := ParseCleverTools([]byte(cleverToolsLegacy))
	if err != nil {
		t.Fatal(err)
	}
	want := APIConfig{Token: "legacy-token", Secret: "legacy-secret", ConsumerKey: CleverToolsConsumerKey, ConsumerSecret: CleverToolsConsumerSecret, TokenExpiration: "2027-03-01T10:00:00.000Z"}
	if got != want {
		t.Errorf("legacy: got %s, want %s", describe(got), describe(want))
	}
	if exp, from, ok := got.Expiry(); !ok || from != ExpiryFromConfig || !exp.Equal(time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("legacy Expiry() = %v, %q, %v", exp, from, ok)
	}

	got, err = ParseCleverTools([]byte(cleverTools4))
	if err != nil {
		t.Fatal(err)
	}
	want = APIConfig{Endpoint: "https://api.staging.test", BridgeEndpoint: "https://bridge.staging.test", Token: "p1-token", Secret: "p1-secret",
		ConsumerKey: CleverToolsConsumerKey, ConsumerSecret: CleverToolsConsumerSecret, TokenExpiration: "2027-04-01T00:00:00Z"}
	if got != want {
		t.Errorf("profiles: got %s, want %s", describe(got), describe(want))
	}
	if got.Mode() != ModeOAuth1 {
		t.Errorf("Mode() = %q", got.Mode())
	}

	own, err := ParseCleverTools([]byte(`{"version":1,"profiles":[{"alias":"x","token":"t","secret":"s","overrides":{"OAUTH_CONSUMER_KEY":"ok","OAUTH_CONSUMER_SECRET":"os"}}]}`))
	if err != nil || own.ConsumerKey != "ok" || own.ConsumerSecret != "os" {
		t.Errorf("consumer override: %s, %v", describe(own), err)
	}

	for name, doc := range map[string]string{
		"no profile":         `{"version":1,"profiles":[]}`,
		"profile w/o secret": `{"version":1,"profiles":[{"alias":"a","token":"sekrit-tok"}]}`,
		"flat w/o secret":    `{"token":"sekrit-tok"}`,
		"syntax":             `{"token":"sekrit-tok",`,
		"not an object":      `["sekrit-tok"]`,
	} {
		_, err := ParseCleverTools([]byte(doc))
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), "sekrit") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error leaks content or is not one line: %q", name, err)
		}
	}
}

func TestLoadCleverToolsFile(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, filepath.Join(dir, "clever-tools.json"), cleverTools4)
	cfg, err := Load(LoadOptions{SearchPaths: []string{}, Env: mapEnv(map[string]string{EnvCleverToolsConfig: p, EnvBridgeEndpoint: "https://ours.test"})})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.API.Token != "p1-token" || cfg.API.Endpoint != "https://api.staging.test" || cfg.API.BridgeEndpoint != "https://ours.test" {
		t.Errorf("got %s", describe(cfg.API))
	}
	if fmt.Sprint(cfg.Sources) != fmt.Sprint([]string{"clever-tools file " + p, "env"}) {
		t.Errorf("sources = %q", cfg.Sources)
	}
	// The flag wins over the environment variable; a missing file is an error.
	if _, err := Load(LoadOptions{SearchPaths: []string{}, CleverToolsFile: filepath.Join(dir, "none.json"), Env: mapEnv(map[string]string{EnvCleverToolsConfig: p})}); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestParseOverrideSecret(t *testing.T) {
	api, err := ParseOverrideSecret(map[string][]byte{CleverToolsFileName: []byte(cleverToolsLegacy)}, "config")
	if err != nil || api.Token != "legacy-token" || api.ConsumerKey != CleverToolsConsumerKey {
		t.Fatalf("clever-tools.json alone: %s, %v", describe(api), err)
	}
	api, err = ParseOverrideSecret(map[string][]byte{
		CleverToolsFileName: []byte(cleverToolsLegacy),
		"config":            []byte("[api]\nbridge-endpoint = \"https://b.test\"\n"),
	}, "config")
	if err != nil || api.Token != "legacy-token" || api.BridgeEndpoint != "https://b.test" {
		t.Fatalf("both keys: %s, %v", describe(api), err)
	}
	// Through ApplyOverride: the login file's token + secret are signed with clever-tools'
	// consumer, not with the operator's own pair.
	base := APIConfig{Token: "op-t", Secret: "op-s", ConsumerKey: "op-k", ConsumerSecret: "op-c"}
	api, _ = ParseOverrideSecret(map[string][]byte{CleverToolsFileName: []byte(cleverToolsLegacy)}, "config")
	res, err := ApplyOverride(base, api)
	if err != nil || res.ConsumerKey != CleverToolsConsumerKey || res.Token != "legacy-token" {
		t.Fatalf("ApplyOverride: %s, %v", describe(res), err)
	}
	if _, err := ParseOverrideSecret(map[string][]byte{"other": []byte("x")}, "config"); err == nil || !strings.Contains(err.Error(), `"config" or "clever-tools.json"`) {
		t.Errorf("no key: %v", err)
	}
	if _, err := ParseOverrideSecret(map[string][]byte{CleverToolsFileName: []byte(`{"token":"sekrit"`)}, "config"); err == nil || strings.Contains(err.Error(), "sekrit") || !strings.Contains(err.Error(), CleverToolsFileName) {
		t.Errorf("bad file: %v", err)
	}
}

func jwt(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc([]byte(claims)) + "." + enc([]byte("sig"))
}

func TestExpiry(t *testing.T) {
	if exp, from, ok := (APIConfig{BearerToken: jwt(`{"sub":"user_1","exp":1893456000}`)}).Expiry(); !ok || from != ExpiryFromClaims || exp.Unix() != 1893456000 {
		t.Errorf("JWT: %v %q %v", exp, from, ok)
	}
	// A configured expiry wins over the claims.
	if exp, from, ok := (APIConfig{BearerToken: jwt(`{"exp":1893456000}`), TokenExpiration: "2026-12-01"}).Expiry(); !ok || from != ExpiryFromConfig || exp.Format("2006-01-02") != "2026-12-01" {
		t.Errorf("configured: %v %q %v", exp, from, ok)
	}
	for name, tok := range map[string]string{
		"opaque":          "api_tokens_0123456789abcdef",
		"jwt without exp": jwt(`{"sub":"x"}`),
		"not base64":      "a.b.c",
		"dotted opaque":   "abc.def.ghi",
	} {
		if _, _, ok := (APIConfig{BearerToken: tok}).Expiry(); ok {
			t.Errorf("%s: Expiry() ok", name)
		}
	}
	// OAuth1 credentials have an expiry only when configured (the token is not a JWT).
	if _, _, ok := (APIConfig{Token: jwt(`{"exp":1893456000}`), Secret: "s"}).Expiry(); ok {
		t.Error("oauth1 token read as a JWT")
	}
}

func TestCleverToolsSearchPaths(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, filepath.Join(dir, "mounted", "clever-tools.json"), cleverToolsLegacy)
	cfg, err := Load(LoadOptions{SearchPaths: []string{}, CleverToolsSearchPaths: []string{filepath.Join(dir, "absent.json"), p}, Env: mapEnv(nil)})
	if err != nil || cfg.API.Token != "legacy-token" {
		t.Fatalf("%s, %v", describe(cfg.API), err)
	}
	// An optional Secret that does not exist leaves its mount empty: nothing is read.
	cfg, err = Load(LoadOptions{SearchPaths: []string{}, CleverToolsSearchPaths: []string{filepath.Join(dir, "absent.json")}, Env: mapEnv(nil)})
	if err != nil || cfg.API.Token != "" || len(cfg.Sources) != 0 {
		t.Fatalf("%s, %v, %q", describe(cfg.API), err, cfg.Sources)
	}
}

func TestCleverToolsFromEnvFrom(t *testing.T) {
	cfg, err := Load(LoadOptions{SearchPaths: []string{}, CleverToolsSearchPaths: []string{}, Env: mapEnv(map[string]string{CleverToolsFileName: cleverTools4})})
	if err != nil || cfg.API.Token != "p1-token" || fmt.Sprint(cfg.Sources) != "[env clever-tools.json]" {
		t.Fatalf("%s, %v, %q", describe(cfg.API), err, cfg.Sources)
	}
	_, err = Load(LoadOptions{SearchPaths: []string{}, CleverToolsSearchPaths: []string{}, Env: mapEnv(map[string]string{CleverToolsFileName: `{"token":"sekrit"}`})})
	if err == nil || strings.Contains(err.Error(), "sekrit") || !strings.Contains(err.Error(), "environment variable clever-tools.json") {
		t.Fatalf("err = %v", err)
	}
}
