package check

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/config/configtest"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// loadAndRun is what the operator does for --check: load the configuration (lo carries
// --config, the --api-* flags and --clever-tools-config), validate it, then Run.
func loadAndRun(lo config.LoadOptions, out io.Writer) error {
	cfg, err := config.Load(lo)
	if err != nil {
		return err
	}
	if err := cfg.API.Validate(); err != nil {
		return err
	}
	return Run(context.Background(), cfg, out)
}

// TestCheckConfigErrors: a configuration that cannot work stops --check with one line that
// says why and shows no credential.
func TestCheckConfigErrors(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		load    config.LoadOptions
		wantErr string
	}{
		{"no credentials", nil, config.LoadOptions{}, "no usable Clever Cloud credentials"},
		{"half oauth1", map[string]string{"CLEVER_OPERATOR_API_TOKEN": "t", "CLEVER_OPERATOR_API_CONSUMER_KEY": "ck"}, config.LoadOptions{}, "api.secret"},
		{"lone token is a bearer token (Rust operator compatibility)", map[string]string{"CLEVER_OPERATOR_API_TOKEN": "tok-only", "CLEVER_OPERATOR_API_ENDPOINT": "http://127.0.0.1:1"}, config.LoadOptions{},
			"cannot use the Clever Cloud API at http://127.0.0.1:1"},
		{"missing config file", nil, config.LoadOptions{ConfigFile: "/nonexistent/config.toml"}, "/nonexistent/config.toml"},
		{"half a consumer pair", map[string]string{"CLEVER_OPERATOR_API_TOKEN": "t1", "CLEVER_OPERATOR_API_SECRET": "s1", "CLEVER_OPERATOR_API_CONSUMER_KEY": "ck"}, config.LoadOptions{},
			"incomplete OAuth consumer: missing api.consumer-secret"},
		{"flags are read", nil, config.LoadOptions{Flags: config.APIConfig{BearerToken: "tok-flag", BridgeEndpoint: "http://127.0.0.1:1/v2"}}, "at http://127.0.0.1:1:"},
		{"bad bridge endpoint", map[string]string{"CLEVER_OPERATOR_API_BEARER_TOKEN": "tok"}, config.LoadOptions{Flags: config.APIConfig{BridgeEndpoint: "bridge"}}, "api.bridge-endpoint"},
		{"missing clever-tools file", nil, config.LoadOptions{CleverToolsFile: "/nonexistent/clever-tools.json"}, "/nonexistent/clever-tools.json"},
		{"bad endpoint", map[string]string{"CLEVER_OPERATOR_API_BEARER_TOKEN": "tok"}, config.LoadOptions{Flags: config.APIConfig{Endpoint: "not a url"}}, "endpoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			configtest.CleanEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			err := loadAndRun(c.load, io.Discard)
			configtest.ExpectError(t, err, c.wantErr, c.env)
		})
	}
}

// TestCheckAgainstTheFake runs --check against the fake Clever Cloud API over HTTP, its API
// host and its bridge (which alone accepts bearer tokens), configured as Clever Cloud's
// documentation and clients do.
func TestCheckAgainstTheFake(t *testing.T) {
	const (
		userToken  = "check-user-token-0123"
		userSecret = "check-user-secret-4567"
		apiToken   = "check-api-token-89ab"
	)
	fake, api, bridge := fakeapi.NewTestServers(fakeapi.Options{
		// A `clever login` token + secret: signed with clever-tools' consumer pair.
		Credentials:   []fakeapi.Credential{{Token: userToken, Secret: userSecret}},
		BearerTokens:  []string{apiToken},
		Organisations: []string{"orga_check-1"},
	})
	defer api.Close()
	defer bridge.Close()
	self := fake.Self()

	dir := t.TempDir()
	cleverTools := filepath.Join(dir, "clever-tools.json")
	if err := os.WriteFile(cleverTools, []byte(`{"version":1,"profiles":[{"alias":"default","token":"`+userToken+`","secret":"`+userSecret+`",
		"overrides":{"API_HOST":"`+api.URL+`/v2"}},{"alias":"other","token":"x","secret":"y"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(dir, "legacy.json")
	if err := os.WriteFile(legacy, []byte(`{"token":"`+userToken+`","secret":"`+userSecret+`","expirationDate":"2099-01-01T00:00:00.000Z"}`), 0o600); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name    string
		env     map[string]string
		load    config.LoadOptions
		want    []string // in the output (success) or the error
		wantErr bool
	}{
		{"token + secret alone, endpoint with /v2 as documented", map[string]string{
			"CLEVER_TOKEN": userToken, "CLEVER_SECRET": userSecret, "CLEVER_OPERATOR_API_ENDPOINT": api.URL + "/v2"}, config.LoadOptions{},
			[]string{"healthy", "signed with clever-tools' published consumer", "env CLEVER_TOKEN,CLEVER_SECRET", "endpoint:      " + api.URL + " ", self.ID, self.Email, "orga_check-1"}, false},
		{"bearer token through the bridge", map[string]string{
			"CLEVER_OPERATOR_API_BEARER_TOKEN": apiToken, "CLEVER_OPERATOR_API_ENDPOINT": api.URL, "CLEVER_OPERATOR_API_BRIDGE_ENDPOINT": bridge.URL + "/"}, config.LoadOptions{},
			[]string{"bearer token, through the API bridge", "endpoint:      " + bridge.URL + " ", self.ID, "orga_check-1"}, false},
		{"clever-tools 4 login file (first profile, its API host)", nil, config.LoadOptions{CleverToolsFile: cleverTools},
			[]string{"healthy", "clever-tools file " + cleverTools, api.URL, self.ID}, false},
		{"older clever-tools login file", map[string]string{"CLEVER_OPERATOR_CLEVER_TOOLS_CONFIG": legacy, "CLEVER_API_HOST": api.URL}, config.LoadOptions{},
			[]string{"healthy", "expires:       2099-01-01T00:00:00Z"}, false},
		{"bearer token sent to the API host", map[string]string{"CLEVER_API_TOKEN": apiToken, "CLEVER_OPERATOR_API_ENDPOINT": api.URL}, config.LoadOptions{},
			[]string{"credentials refused by " + api.URL + ": GET /v2/self answered 401", "API tokens are accepted by the API bridge only"}, true},
		{"wrong path", map[string]string{"CLEVER_TOKEN": userToken, "CLEVER_SECRET": userSecret, "CLEVER_OPERATOR_API_ENDPOINT": api.URL + "/api/v2"}, config.LoadOptions{},
			[]string{"endpoint " + api.URL + "/api does not serve the Clever Cloud API: GET /v2/self answered 404 (did you mean " + api.URL + "?)"}, true},
		{"bad credentials", map[string]string{"CLEVER_TOKEN": userToken, "CLEVER_SECRET": "wrong-secret", "CLEVER_OPERATOR_API_ENDPOINT": api.URL}, config.LoadOptions{},
			[]string{"credentials refused by " + api.URL + ": GET /v2/self answered 401", "clever-tools' published OAuth consumer"}, true},
		{"own consumer pair where the token belongs to clever-tools'", map[string]string{"CLEVER_TOKEN": userToken, "CLEVER_SECRET": userSecret,
			"CC_CONSUMER_KEY": "own-key", "CC_CONSUMER_SECRET": "own-secret", "CLEVER_OPERATOR_API_ENDPOINT": api.URL}, config.LoadOptions{},
			[]string{"answered 401"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			configtest.CleanEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var out bytes.Buffer
			err := loadAndRun(c.load, &out)
			text := out.String()
			if c.wantErr {
				if err == nil {
					t.Fatalf("--check succeeded:\n%s", text)
				}
				text = err.Error()
				if strings.Contains(text, "\n") {
					t.Errorf("error is not one line: %q", text)
				}
			} else if err != nil {
				t.Fatalf("--check: %v", err)
			}
			t.Log(text)
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
			for _, secret := range []string{userToken, userSecret, apiToken, "wrong-secret", "own-secret", fakeapi.CleverToolsConsumerSecret} {
				if strings.Contains(text, secret) {
					t.Errorf("output shows a credential:\n%s", text)
				}
			}
		})
	}
}
