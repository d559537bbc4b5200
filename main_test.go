package main

import (
	"io"
	"strings"
	"testing"
)

// TestRun: run's own steps, in order. The flags' checks are internal/operator's
// (TestValidate, TestBindFlags), the configuration's and --check's internal/config/check's.
func TestRun(t *testing.T) {
	clean := func(t *testing.T) {
		cleanEnv(t)
		t.Setenv("HOME", t.TempDir())
		t.Chdir(t.TempDir())
	}
	cases := []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
	}{
		{"no credentials", nil, []string{"--check"}, "no usable Clever Cloud credentials"},
		{"bad flag", nil, []string{"--no-such-flag"}, "flag provided but not defined"},
		{"stray argument", nil, []string{"daemon"}, `unexpected argument "daemon"`},
		{"flags are validated first", map[string]string{"WATCH_SELECTOR": "=a"}, []string{"--check"}, `--watch-selector "=a"`},
		{"flags are read", nil, []string{"--api-bearer-token", "tok-flag", "--api-bridge-endpoint", "http://127.0.0.1:1/v2", "--check"}, "at http://127.0.0.1:1:"},
		{"version", nil, []string{"--version"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clean(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			err := run(c.args, io.Discard)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("run(%v) = %v, want success", c.args, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("run(%v) = %v, want error containing %q", c.args, err, c.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			for k, v := range c.env {
				if strings.Contains(k, "ENDPOINT") {
					continue
				}
				if len(v) > 2 && strings.Contains(err.Error(), v) {
					t.Fatalf("error reveals a credential value: %q", err)
				}
			}
		})
	}
}

// cleanEnv unsets every variable the configuration reads, aliases included.
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"ENDPOINT", "TOKEN", "SECRET", "CONSUMER_KEY", "CONSUMER_SECRET", "BEARER_TOKEN", "BRIDGE_ENDPOINT", "TOKEN_EXPIRATION"} {
		t.Setenv("CLEVER_OPERATOR_API_"+k, "")
	}
	t.Setenv("CLEVER_OPERATOR_CLEVER_TOOLS_CONFIG", "")
	t.Setenv("clever-tools.json", "")
	for _, k := range []string{"CLEVER_TOKEN", "CLEVER_SECRET", "CC_OAUTH_TOKEN", "CC_OAUTH_SECRET", "CC_CONSUMER_KEY", "CC_CONSUMER_SECRET",
		"CLEVER_API_TOKEN", "CC_API_TOKEN", "CLEVER_API_HOST", "CLEVER_AUTH_BRIDGE_HOST"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", t.TempDir())
	t.Chdir(t.TempDir())
}
