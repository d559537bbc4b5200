package fakeapi

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestNoSecretsInLogs checks that request logs carry neither credentials nor env values.
func TestNoSecretsInLogs(t *testing.T) {
	var buf bytes.Buffer
	var mu syncWriter
	mu.w = &buf
	logger := slog.New(slog.NewTextHandler(&mu, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, c := newTest(t, Options{Logger: logger, BearerTokens: []string{"bearer-secret-value"}})
	a := c.create(t, testOwner, createBody(s, "postgresql-addon", "xs_sml", "par"))
	c.do("GET", "/v2/organisations/"+testOwner+"/addons/"+a.ID+"/env", nil)
	cp := c.create(t, testOwner, createBody(s, "config-provider", "std", "par"))
	c.do("PUT", "/v4/addon-providers/config-provider/addons/"+cp.RealID+"/env", []Variable{{Name: "K", Value: "config-value-secret"}})
	bad := *c
	bad.cred.Secret = "wrong-secret-value"
	bad.do("GET", "/v2/self", nil)
	bad.auth = "bearer:bearer-secret-value"
	bad.do("GET", "/v2/self", nil)
	c.do("GET", "/admin/addons", nil)

	logs := mu.String()
	if !strings.Contains(logs, `route="GET /v2/organisations/{ownerId}/addons/{addonId}/env"`) || !strings.Contains(logs, "status=401") {
		t.Fatalf("missing request lines:\n%s", logs)
	}
	secrets := []string{testCred.ConsumerSecret, testCred.Secret, testCred.Token, "wrong-secret-value", "bearer-secret-value", "config-value-secret", "oauth_signature", "Authorization"}
	for _, v := range s.Env(a.ID) {
		if len(v.Value) >= 8 { // skip ports and versions
			secrets = append(secrets, v.Value)
		}
	}
	for _, sec := range secrets {
		if strings.Contains(logs, sec) {
			t.Fatalf("logs contain %q:\n%s", sec, logs)
		}
	}
}
