package addon

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clever-operator/clever-operator/internal/catalog"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

func apiErr(code int) error {
	return &clevercloud.APIError{StatusCode: code, Message: http.StatusText(code)}
}

func TestMatchVersion(t *testing.T) {
	info := func(vs ...string) *clevercloud.ProviderInfo {
		p := &clevercloud.ProviderInfo{Dedicated: map[string]clevercloud.DedicatedVersion{}}
		for _, v := range vs {
			p.Dedicated[v] = clevercloud.DedicatedVersion{}
		}
		return p
	}
	cases := []struct {
		kind      string
		code      int64
		announced *clevercloud.ProviderInfo
		want      string
		wantErr   string
	}{
		{"PostgreSql", 17, info("14", "15", "16", "17", "18"), "17", ""},
		{"PostgreSql", 13, info("14", "15", "16", "17", "18"), "", "spec.options.version 13 (13) is not offered by Clever Cloud for postgresql-addon; available: 14 (14), 15 (15), 16 (16), 17 (17), 18 (18)"},
		{"PostgreSql", 19, info("17", "18", "19"), "19", ""}, // a new major needs no operator release
		{"MySql", 84, info("5.7", "8.0", "8.4"), "8.4", ""},
		{"Redis", 724, info("8.8.0"), "", "available: 880 (8.8.0)"},
		{"Redis", 880, info("8.8.0"), "8.8.0", ""},
		{"MongoDb", 403, info("4.0.3"), "4.0.3", ""},
		{"ElasticSearch", 9, info("7", "8", "9"), "9", ""},
		{"PostgreSql", 15, info(), "15", ""}, // nothing announced: sent as is, the API validates
	}
	for _, c := range cases {
		k := kind(t, c.kind)
		got, err := matchVersion(k, k.VersionCode(c.code), c.announced)
		if c.wantErr != "" {
			var se *kinds.SpecError
			if !errors.As(err, &se) || se.Reason != status.ReasonVersionNotAvailable || !strings.Contains(se.Msg, c.wantErr) {
				t.Errorf("%s %d: err %v, want VersionNotAvailable containing %q", c.kind, c.code, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s %d = %q, %v; want %q", c.kind, c.code, got, err, c.want)
		}
	}
}

func TestSharedPlan(t *testing.T) {
	str := func(s string) *string { return &s }
	cases := []struct {
		name string
		plan clevercloud.Plan
		want bool
	}{
		{"type feature shared (clever-tools)", clevercloud.Plan{Slug: "xs_sml", Price: 10, Features: []clevercloud.PlanFeature{{Name: "TYPE", Value: "SHARED"}}}, true},
		{"type feature dedicated", clevercloud.Plan{Slug: "dev", Price: 0, Features: []clevercloud.PlanFeature{{Name: "type", Value: "Dedicated"}}}, false},
		{"is-dedicated name code (Terraform)", clevercloud.Plan{Slug: "x", Price: 5, Features: []clevercloud.PlanFeature{{Name: "Is dedicated", NameCode: str("is-dedicated"), Value: "Shared", ComputableValue: str("Shared")}}}, true},
		{"no feature: dev slug", clevercloud.Plan{Slug: "DEV", Price: 3}, true},
		{"no feature: free", clevercloud.Plan{Slug: "free", Price: 0}, true},
		{"no feature: paid", clevercloud.Plan{Slug: "xs_sml", Price: 17.5}, false},
	}
	for _, c := range cases {
		if got := catalog.SharedPlan(c.plan); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// confirmAPI answers the calls that confirm a 404.
type confirmAPI struct {
	credentials.API
	list    []clevercloud.Addon
	listErr error
	selfErr error
	calls   []string
}

func (a *confirmAPI) ListAddons(context.Context, string) ([]clevercloud.Addon, error) {
	a.calls = append(a.calls, "list")
	return a.list, a.listErr
}

func (a *confirmAPI) Self(context.Context) (*clevercloud.Self, error) {
	a.calls = append(a.calls, "self")
	if a.selfErr != nil {
		return nil, a.selfErr
	}
	return &clevercloud.Self{ID: "user_1"}, nil
}

func TestConfirmGone(t *testing.T) {
	cases := []struct {
		name  string
		api   *confirmAPI
		gone  bool
		calls string
	}{
		{"list answers without the add-on", &confirmAPI{list: []clevercloud.Addon{{ID: "addon_other"}}}, true, "list"},
		{"list still has it (the 404 was not Clever Cloud's)", &confirmAPI{list: []clevercloud.Addon{{ID: "addon_1"}}}, false, "list"},
		{"list has it by realId", &confirmAPI{list: []clevercloud.Addon{{ID: "addon_x", RealID: "addon_1"}}}, false, "list"},
		{"everything 404s (wrong path, proxy)", &confirmAPI{listErr: apiErr(404), selfErr: apiErr(404)}, false, "list,self"},
		{"organisation unknown to a real API", &confirmAPI{listErr: apiErr(404)}, true, "list,self"},
		{"list fails", &confirmAPI{listErr: apiErr(503)}, false, "list"},
		{"list unauthorised", &confirmAPI{listErr: apiErr(401)}, false, "list"},
	}
	for _, c := range cases {
		gone, why := confirmGone(context.Background(), c.api, "orga_1", "addon_1")
		if gone != c.gone || strings.Join(c.api.calls, ",") != c.calls {
			t.Errorf("%s: gone=%v (%s) calls=%v; want %v, %s", c.name, gone, why, c.api.calls, c.gone, c.calls)
		}
		if !gone && why == "" {
			t.Errorf("%s: no explanation", c.name)
		}
	}
}

func TestDeletionRefusedAndBackoff(t *testing.T) {
	for code, want := range map[int]bool{400: true, 409: true, 423: true, 412: true, 422: true, 401: false, 403: false, 404: false, 429: false, 500: false, 503: false} {
		if got := deletionRefused(apiErr(code)); got != want {
			t.Errorf("deletionRefused(%d) = %v, want %v", code, got, want)
		}
	}
	if deletionRefused(errors.New("dial tcp: refused")) {
		t.Error("a transport error is not a refusal")
	}
	prev := time.Duration(0)
	for _, waited := range []time.Duration{0, time.Second, 20 * time.Second, time.Minute, 10 * time.Minute, time.Hour} {
		d := deletionBackoff(waited)
		if d < prev || d < time.Second || d > 5*time.Minute {
			t.Errorf("deletionBackoff(%v) = %v (previous %v)", waited, d, prev)
		}
		prev = d
	}
}

func TestStaleAfterRotation(t *testing.T) {
	cellar := kind(t, "Cellar")
	old := map[string]string{"CELLAR_ADDON_HOST": "h", "CELLAR_ADDON_KEY_ID": "OLDID", "CELLAR_ADDON_KEY_SECRET": "oldsecret"}
	fresh := map[string]string{"CELLAR_ADDON_HOST": "h", "CELLAR_ADDON_KEY_ID": "NEWID", "CELLAR_ADDON_KEY_SECRET": "newsecret"}
	revoked := revokedKeyHash(cellar, old)
	if revoked == "" || strings.Contains(revoked, "old") {
		t.Fatalf("revoked hash %q", revoked)
	}
	var st kinds.Status
	if staleAfterRotation(cellar, &st, old) {
		t.Fatal("no rotation recorded: nothing is stale")
	}
	st.EnsureCreds().RevokedKeyHash = revoked
	if !staleAfterRotation(cellar, &st, old) {
		t.Fatal("a read still showing the revoked key must not be published")
	}
	if staleAfterRotation(cellar, &st, fresh) {
		t.Fatal("the renewed key is not stale")
	}
	if revokedKeyHash(kind(t, "PostgreSql"), old) != "" {
		t.Fatal("only kinds with renewable credentials have rotated keys")
	}
}
