package main

import (
	"bytes"
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
