package main

import (
	"io"
	"testing"

	"github.com/clever-operator/clever-operator/internal/config/configtest"
)

// TestRun: run's own steps, in order. The flags' checks are internal/operator's
// (TestValidate, TestBindFlags), the configuration's and --check's internal/config/check's.
func TestRun(t *testing.T) {
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
			configtest.CleanEnv(t)
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
			configtest.ExpectError(t, err, c.wantErr, c.env)
		})
	}
}
