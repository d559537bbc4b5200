// Package configtest helps the tests of what reads the operator's configuration: a clean
// environment, and the check every configuration error must pass (one line, no credential).
package configtest

import (
	"strings"
	"testing"
)

// CleanEnv unsets every variable the configuration reads, aliases included, and gives the
// test a HOME and a working directory of its own (no configuration file found by search).
func CleanEnv(t *testing.T) {
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

// ExpectError fails the test unless err contains want, is one line, and shows none of the
// values set in env (endpoints excepted: they are no secret).
func ExpectError(t *testing.T, err error, want string, env map[string]string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error containing %q", err, want)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error is not one line: %q", err)
	}
	for k, v := range env {
		if strings.Contains(k, "ENDPOINT") {
			continue
		}
		if len(v) > 2 && strings.Contains(err.Error(), v) {
			t.Fatalf("error reveals a credential value: %q", err)
		}
	}
}
