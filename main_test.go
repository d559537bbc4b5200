package main

import (
	"strings"
	"testing"
)

func TestRunConfigErrors(t *testing.T) {
	clean := func(t *testing.T) {
		for _, k := range []string{"ENDPOINT", "TOKEN", "SECRET", "CONSUMER_KEY", "CONSUMER_SECRET", "BEARER_TOKEN"} {
			t.Setenv("CLEVER_OPERATOR_API_"+k, "")
		}
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
		{"half oauth1", map[string]string{"CLEVER_OPERATOR_API_TOKEN": "t", "CLEVER_OPERATOR_API_CONSUMER_KEY": "ck"}, []string{"--check"}, "api.secret"},
		{"lone token is a bearer token (Rust operator compatibility)", map[string]string{"CLEVER_OPERATOR_API_TOKEN": "tok-only"}, []string{"--check"}, ""},
		{"bad flag", nil, []string{"--no-such-flag"}, "flag provided but not defined"},
		{"stray argument", nil, []string{"daemon"}, `unexpected argument "daemon"`},
		{"missing config file", nil, []string{"--config", "/nonexistent/config.toml", "--check"}, "/nonexistent/config.toml"},
		{"bearer is enough", map[string]string{"CLEVER_OPERATOR_API_BEARER_TOKEN": "tok-123456"}, []string{"--check"}, ""},
		{"oauth1 is enough", map[string]string{"CLEVER_OPERATOR_API_TOKEN": "t1", "CLEVER_OPERATOR_API_SECRET": "s1",
			"CLEVER_OPERATOR_API_CONSUMER_KEY": "ck", "CLEVER_OPERATOR_API_CONSUMER_SECRET": "cs"}, []string{"--check"}, ""},
		{"flags are enough", nil, []string{"--api-bearer-token", "tok-flag", "--api-endpoint", "http://127.0.0.1:1", "--check"}, ""},
		{"bad endpoint", map[string]string{"CLEVER_OPERATOR_API_BEARER_TOKEN": "tok"}, []string{"--api-endpoint", "not a url", "--check"}, "endpoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clean(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			err := run(c.args)
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
			for _, v := range c.env {
				if len(v) > 2 && strings.Contains(err.Error(), v) {
					t.Fatalf("error reveals a credential value: %q", err)
				}
			}
		})
	}
}
