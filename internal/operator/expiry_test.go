package operator

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/clever-operator/clever-operator/internal/config"
)

func drain(r *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestExpiryWatcher(t *testing.T) {
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	reg := prometheus.NewRegistry()
	rec := record.NewFakeRecorder(20)
	enc := base64.RawURLEncoding.EncodeToString
	jwtSoon := enc([]byte(`{"alg":"HS256"}`)) + "." + enc([]byte(`{"exp":`+itoa(now.Add(3*24*time.Hour).Unix())+`}`)) + ".c2ln"
	secrets := []corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "clever-operator"},
			Data: map[string][]byte{"clever-tools.json": []byte(`{"token":"tok-a","secret":"sec-a","expirationDate":"2026-11-26T09:00:00Z"}`)}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "clever-operator"},
			Data: map[string][]byte{"config": []byte("[api]\nbearer-token = \"" + jwtSoon + "\"\n")}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-c", Name: "clever-operator"},
			Data: map[string][]byte{"config": []byte("[api]\ntoken-expiration = \"2027-06-01\"\n")}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-d", Name: "clever-operator"}, Data: map[string][]byte{"other": []byte("x")}},
	}
	w := newExpiryWatcher(Options{
		API:        config.APIConfig{Token: "op-token", Secret: "op-secret", TokenExpiration: "2026-11-20T00:00:00Z"},
		Registerer: reg, Log: logr.Discard(), Pod: "clever-operator-system/manager-0/uid-1",
	}, nil, rec)
	w.secrets = func(context.Context) []corev1.Secret { return secrets }
	w.now = func() time.Time { return now }

	w.check(context.Background())
	events := drain(rec)
	joined := strings.Join(events, "\n")
	if len(events) != 3 {
		t.Fatalf("events = %q, want 3 (operator expired, team-a and team-b expiring)", events)
	}
	for _, want := range []string{"Warning CredentialsExpired The operator's Clever Cloud credentials expired", "Warning CredentialsExpiring The Clever Cloud credentials of this Secret expire at 2026-11-26T09:00:00Z (in 24h0m0s, from config)", "from jwt-claims"} {
		if !strings.Contains(joined, want) {
			t.Errorf("events lack %q: %q", want, events)
		}
	}
	for _, secret := range []string{"op-token", "op-secret", "tok-a", "sec-a", jwtSoon} {
		if strings.Contains(joined, secret) {
			t.Errorf("an event shows a credential: %q", events)
		}
	}
	if got := testutil.ToFloat64(w.gauge.WithLabelValues("secret:team-c/clever-operator", config.ExpiryFromConfig)); got != float64(time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC).Unix()) {
		t.Errorf("team-c expiry metric = %v", got)
	}
	if n := testutil.CollectAndCount(reg, MetricCredentialsExpiry); n != 4 {
		t.Errorf("%d expiry series, want 4 (operator, team-a, team-b, team-c)", n)
	}

	// At most one event per object per day.
	now = now.Add(time.Hour)
	w.check(context.Background())
	if e := drain(rec); len(e) != 0 {
		t.Errorf("events again within the day: %q", e)
	}
	now = now.Add(24 * time.Hour)
	secrets = secrets[2:] // team-a and team-b removed
	w.check(context.Background())
	if e := drain(rec); len(e) != 1 || !strings.Contains(e[0], "operator's") {
		t.Errorf("next day: events = %q, want the operator's again only", e)
	}
	if n := testutil.CollectAndCount(reg, MetricCredentialsExpiry); n != 2 {
		t.Errorf("%d expiry series after the Secrets went, want 2", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
