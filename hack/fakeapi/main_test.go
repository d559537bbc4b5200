package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.listen != "127.0.0.1:8085" || len(c.opts.Credentials) != 1 || c.opts.Credentials[0].ConsumerKey != defaultConsumerKey ||
		strings.Join(c.opts.BearerTokens, ",") != defaultBearerToken || c.opts.MaxClockSkew != 5*time.Minute || c.opts.Faults.ErrorRate != nil ||
		c.opts.MigrationDuration != 3*time.Second {
		t.Fatalf("defaults: %+v", c)
	}
	c, err = parseFlags([]string{"--bearer-token", "a,b", "--bearer-token=c", "--error-rate", "0.5", "--latency", "20ms", "--seed", "7", "--migration-duration", "90s"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.opts.BearerTokens, ",") != "a,b,c" || c.opts.Faults.ErrorRate["*"] != 0.5 || c.opts.Faults.Latency != 20*time.Millisecond || c.opts.Seed != 7 ||
		c.opts.MigrationDuration != 90*time.Second {
		t.Fatalf("parsed: %+v", c.opts)
	}
	for _, bad := range [][]string{{"--error-rate", "2"}, {"--latency", "soon"}, {"--rate-limit-burst", "-1"}, {"--nope"}, {"extra"}, {"--max-clock-skew", "0s"}, {"--migration-duration", "-1s"}} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: want error", bad)
		}
	}
}

func TestPrintEnv(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"--print-env", "--listen", "0.0.0.0:9000"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"export CLEVER_OPERATOR_API_ENDPOINT='http://127.0.0.1:9000'", "CLEVER_OPERATOR_API_CONSUMER_KEY='fake-consumer-key'", "CLEVER_OPERATOR_API_SECRET='fake-secret'"} {
		if !strings.Contains(got, want) {
			t.Fatalf("missing %q in\n%s", want, got)
		}
	}
	if err := run([]string{"--print-env", "--listen", "127.0.0.1:0"}, &out, &bytes.Buffer{}); err == nil {
		t.Fatal("port 0 with --print-env: want error")
	}
}

func TestBindFailure(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "addr")
	err := run([]string{"--listen", "256.0.0.1:1", "--ready-file", ready}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "cannot listen") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(ready); err == nil {
		t.Fatal("ready file written on bind failure")
	}
}

func TestParseNewFlags(t *testing.T) {
	c, err := parseFlags([]string{"--bridge-listen", "127.0.0.1:0", "--bearer-on-api-host", "--legacy-operator-env", "--create-delay", "2s",
		"--organisation", "orga_a,orga_b", "--private-plan", "orga_a:postgresql-addon:xxl_custom", "--consumer-key=", "--consumer-secret=", "--delete-during-provisioning"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.bridgeListen != "127.0.0.1:0" || !c.opts.BearerOnAPIHost || !c.opts.DeleteDuringProvisioning || !c.opts.LegacyOperatorEnv || c.opts.CreateDelay != 2*time.Second ||
		strings.Join(c.opts.Organisations, ",") != "orga_a,orga_b" || len(c.privatePlans.values) != 1 {
		t.Fatalf("parsed: %+v", c)
	}
	if cr := c.opts.Credentials; len(cr) != 1 || cr[0].ConsumerKey != "" || cr[0].Token != defaultToken {
		t.Fatalf("token-only credential: %+v", cr)
	}
	for _, bad := range [][]string{{"--create-delay", "-1s"}, {"--organisation", "user_x"}, {"--private-plan", "orga_a:pg"}} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: want error", bad)
		}
	}
}

func TestPrintEnvBridge(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"--print-env", "--listen", "127.0.0.1:9000", "--bridge-listen", ":9001"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "export CLEVER_OPERATOR_API_BRIDGE_ENDPOINT='http://127.0.0.1:9001'") {
		t.Fatalf("no bridge endpoint in\n%s", out.String())
	}
}

// TestServeBothHosts runs the binary's server on free ports and checks each
// host accepts only its own scheme.
func TestServeBothHosts(t *testing.T) {
	dir := t.TempDir()
	apiReady, bridgeReady := filepath.Join(dir, "api"), filepath.Join(dir, "bridge")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runContext(ctx, []string{"--listen", "127.0.0.1:0", "--ready-file", apiReady, "--bridge-listen", "127.0.0.1:0",
			"--bridge-ready-file", bridgeReady, "--bearer-token", "bt", "--log-level", "error",
			"--private-plan", "orga_a:postgresql-addon:xxl_custom"}, &bytes.Buffer{}, &bytes.Buffer{})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	read := func(path string) string {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(path); err == nil {
				return "http://" + strings.TrimSpace(string(b))
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("no ready file %s", path)
		return ""
	}
	api, bridge := read(apiReady), read(bridgeReady)
	get := func(base, auth string) int {
		req, _ := http.NewRequest("GET", base+"/v2/products/addonproviders?orgaId=orga_a", nil)
		req.Header.Set("Authorization", auth)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode == 200 && !strings.Contains(string(body), `"slug":"xxl_custom"`) {
			t.Errorf("private plan not listed for orga_a")
		}
		return res.StatusCode
	}
	plaintext := `OAuth oauth_consumer_key="fake-consumer-key", oauth_token="fake-token", oauth_signature_method="PLAINTEXT", oauth_signature="fake-consumer-secret%26fake-secret"`
	for _, tc := range []struct {
		name, base, auth string
		want             int
	}{
		{"bearer on the bridge", bridge, "Bearer bt", 200},
		{"bearer on the API host", api, "Bearer bt", 401},
		{"OAuth1 on the API host", api, plaintext, 200},
		{"OAuth1 on the bridge", bridge, plaintext, 401},
	} {
		if got := get(tc.base, tc.auth); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
