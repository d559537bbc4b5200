package main

import (
	"io"
	"strings"
	"testing"

	"github.com/clever-operator/clever-operator/internal/config/configtest"
	"github.com/clever-operator/clever-operator/internal/tracing"
)

// run reads the tracing settings at start-up (after the configuration, before the cluster):
// an unsupported exporter or protocol stops it with one line; a valid endpoint goes on.
func TestRunTracingSettings(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
	}{
		{"unsupported exporter", []string{"--tracing"}, map[string]string{tracing.EnvTracesExporter: "zipkin"}, "OTEL_TRACES_EXPORTER=zipkin is not supported"},
		{"unsupported protocol", nil, map[string]string{tracing.EnvEndpoint: "http://127.0.0.1:1", tracing.EnvProtocol: "http/json"}, `OTLP protocol "http/json" is not supported`},
		{"endpoint: tracing on, start-up goes on", nil, map[string]string{tracing.EnvEndpoint: "http://127.0.0.1:1"}, "loading watches.yaml"},
		{"off", nil, nil, "loading watches.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			configtest.CleanEnv(t)
			for _, k := range []string{tracing.EnvEndpoint, tracing.EnvTracesEndpoint, tracing.EnvProtocol, tracing.EnvTracesProtocol, tracing.EnvTracesExporter, tracing.EnvSDKDisabled} {
				t.Setenv(k, "")
			}
			t.Setenv("CLEVER_OPERATOR_API_BEARER_TOKEN", "tok-tracing")
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			err := run(append(c.args, "--watches-file", "watches.yaml"), io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("run = %v, want an error containing %q", err, c.wantErr)
			}
			if tracing.On() {
				t.Fatal("tracing still on after run returned")
			}
		})
	}
}
