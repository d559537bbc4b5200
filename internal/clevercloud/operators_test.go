package clevercloud

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var opCred atomic.Int64

func operatorTestClient(t *testing.T, url string) *Client {
	t.Helper()
	n := opCred.Add(1)
	c, err := New(Config{Endpoint: url, RateLimit: -1, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
		Credentials: Credentials{ConsumerKey: "op-ck-" + string(rune('a'+n%26)), ConsumerSecret: "cs", Token: "tk" + time.Now().String(), Secret: "ts"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// keycloakAnswer is the shape clever-client.js keycloak-transform.ts reads and the Go SDK's
// models/keycloak.go declares.
const keycloakAnswer = `{"resourceId":"keycloak_1","addonId":"addon_1","name":"kc","ownerId":"orga_1","plan":"BASE",
 "version":"26.2.5","javaVersion":"21","accessUrl":"https://kc.example","availableVersions":["26.1.0","26.2.5"],
 "resources":{"entrypoint":"app_1","fsbucketId":"bucket_1","pgsqlId":"postgresql_1"},
 "features":{"networkGroup":null},"initialCredentials":{"user":"admin","password":"pw"},"envVars":{"A":"b"}}`

const otoroshiAnswer = `{"resourceId":"otoroshi_1","addonId":"addon_2","name":"oto","ownerId":"orga_1","plan":"BASE",
 "version":"17.0.0","javaVersion":"21","accessUrl":"https://oto.example","availableVersions":["17.0.0"],
 "resources":{"entrypoint":"app_2","redisId":"redis_1","pulsarId":null,"elasticId":null},
 "features":{"networkGroup":{"id":"ng_1"}},
 "api":{"url":"https://api.oto.example","user":"client","secret":"sec","openapi":"https://o/openapi.json","swaggerUrl":"https://o/swagger"},
 "initialCredentials":{"user":"admin","password":"pw2"}}`

func TestOperatorRoutesAndShapes(t *testing.T) {
	type seen struct{ method, path, query, body string }
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Method, r.URL.Path, r.URL.RawQuery, string(b)})
		switch {
		case r.URL.Path == "/v4/addon-providers/addon-keycloak/addons/keycloak_1" && r.Method == http.MethodGet:
			_, _ = io.WriteString(w, keycloakAnswer)
		case r.URL.Path == "/v4/addon-providers/addon-otoroshi/addons/otoroshi_1" && r.Method == http.MethodGet:
			_, _ = io.WriteString(w, otoroshiAnswer)
		case strings.HasSuffix(r.URL.Path, "/version/check"):
			_, _ = io.WriteString(w, `{"installed":"26.1.0","available":["26.1.0","26.2.5"],"latest":"26.2.5","needUpdate":true}`)
		case strings.HasSuffix(r.URL.Path, "/version/update"):
			_, _ = io.WriteString(w, keycloakAnswer)
		case strings.HasSuffix(r.URL.Path, "/reboot"), strings.HasSuffix(r.URL.Path, "/rebuild"):
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, `{"message":"ok"}`)
		case r.URL.Path == "/v2/products/addonproviders":
			_, _ = io.WriteString(w, `[]`)
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"id":4004,"message":"Not Found","type":"error"}`)
		}
	}))
	defer srv.Close()
	c := operatorTestClient(t, srv.URL)
	ctx := context.Background()

	kc, err := c.GetOperator(ctx, "addon-keycloak", "keycloak_1")
	if err != nil {
		t.Fatal(err)
	}
	if kc.AccessURL != "https://kc.example" || kc.InitialCredentials == nil || kc.InitialCredentials.User != "admin" ||
		kc.Resources.Entrypoint != "app_1" || kc.Resources.PgsqlID != "postgresql_1" || kc.Resources.FsbucketID != "bucket_1" ||
		kc.Version != "26.2.5" || len(kc.AvailableVersions) != 2 || kc.EnvVars["A"] != "b" || kc.API != nil {
		t.Fatalf("keycloak decoded as %+v", kc)
	}
	oto, err := c.GetOperator(ctx, "addon-otoroshi", "otoroshi_1")
	if err != nil {
		t.Fatal(err)
	}
	if oto.API == nil || oto.API.URL != "https://api.oto.example" || oto.API.User != "client" || oto.API.Secret != "sec" ||
		oto.Resources.PulsarID != "" || oto.Features.NetworkGroup == nil || oto.Features.NetworkGroup.ID != "ng_1" {
		t.Fatalf("otoroshi decoded as %+v", oto)
	}
	if _, err := c.GetOperator(ctx, "addon-matomo", "matomo_x"); !IsNotFound(err) {
		t.Fatalf("unknown operator: want 404, got %v", err)
	} else if strings.Contains(err.Error(), "pw") {
		t.Fatalf("error leaks a body: %v", err)
	}
	vc, err := c.CheckOperatorVersion(ctx, "addon-keycloak", "keycloak_1")
	if err != nil || !vc.NeedUpdate || vc.Latest != "26.2.5" || vc.Installed != "26.1.0" {
		t.Fatalf("version check: %+v %v", vc, err)
	}
	if _, err := c.UpdateOperatorVersion(ctx, "addon-keycloak", "keycloak_1", "26.2.5"); err != nil {
		t.Fatal(err)
	}
	if err := c.RebootOperator(ctx, "addon-metabase", "metabase_1"); err != nil {
		t.Fatal(err)
	}
	if err := c.RebuildOperator(ctx, "addon-matomo", "matomo_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListProvidersForOwner(ctx, "orga_42"); err != nil {
		t.Fatal(err)
	}
	want := []seen{
		{"GET", "/v4/addon-providers/addon-keycloak/addons/keycloak_1", "", ""},
		{"GET", "/v4/addon-providers/addon-otoroshi/addons/otoroshi_1", "", ""},
		{"GET", "/v4/addon-providers/addon-matomo/addons/matomo_x", "", ""},
		{"GET", "/v4/addon-providers/addon-keycloak/addons/keycloak_1/version/check", "", ""},
		{"POST", "/v4/addon-providers/addon-keycloak/addons/keycloak_1/version/update", "", `{"targetVersion":"26.2.5"}`},
		{"POST", "/v4/addon-providers/addon-metabase/addons/metabase_1/reboot", "", ""},
		{"POST", "/v4/addon-providers/addon-matomo/addons/matomo_1/rebuild", "", ""},
		{"GET", "/v2/products/addonproviders", "orgaId=orga_42", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("requests %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Every operator provider named in the table has its v4 segment.
	for v2, v4 := range OperatorProviders {
		if !strings.HasPrefix(v4, "addon-") || v2 == "" {
			t.Errorf("OperatorProviders[%q] = %q", v2, v4)
		}
	}
	var round OperatorInfo
	if err := json.Unmarshal([]byte(`{"resources":{"pgsqlId":null}}`), &round); err != nil || round.Resources.PgsqlID != "" {
		t.Fatalf("null ids: %+v %v", round, err)
	}
}
