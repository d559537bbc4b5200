package addon

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

func obj(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
}

func kind(t *testing.T, name string) *Kind {
	t.Helper()
	for i := range Kinds {
		if Kinds[i].GVK.Kind == name {
			return &Kinds[i]
		}
	}
	t.Fatalf("no kind %s", name)
	return nil
}

func TestKindsTableIsComplete(t *testing.T) {
	if len(Kinds) != 14 {
		t.Fatalf("%d kinds, want 14", len(Kinds))
	}
	seen := map[string]bool{}
	for _, k := range Kinds {
		if k.ProviderID == "" || k.FinalizerSuffix == "" || k.Noun == "" {
			t.Errorf("%s: incomplete row %+v", k.GVK.Kind, k)
		}
		if seen[k.Finalizer()] {
			t.Errorf("duplicate finalizer %s", k.Finalizer())
		}
		seen[k.Finalizer()] = true
	}
	if got := kind(t, "KV").Finalizer(); got != "api.clever-cloud.com/materia-kv" {
		t.Errorf("KV finalizer %s", got)
	}
	if got := kind(t, "ConfigProvider").Finalizer(); got != "api.clever-cloud.com/config-provider" {
		t.Errorf("ConfigProvider finalizer %s", got)
	}
	if got := kind(t, "PostgreSql").AddonName("u-1"); got != "kubernetes::PostgreSql::u-1" {
		t.Errorf("add-on name %s", got)
	}
}

func TestOptions(t *testing.T) {
	cases := []struct {
		kind    string
		spec    map[string]any
		want    clevercloud.Options
		wantErr string
	}{
		{"PostgreSql", map[string]any{"options": map[string]any{"version": int64(15), "encryption": false}}, clevercloud.Options{Version: "15", Encryption: "false"}, ""},
		{"Redis", map[string]any{"options": map[string]any{"version": int64(724), "encryption": true}}, clevercloud.Options{Version: "7.2.4", Encryption: "true"}, ""},
		{"Redis", map[string]any{"options": map[string]any{"version": int64(880), "encryption": false}}, clevercloud.Options{Version: "8.8.0", Encryption: "false"}, ""},
		{"MySql", map[string]any{"options": map[string]any{"version": int64(84), "encryption": false}}, clevercloud.Options{Version: "8.4", Encryption: "false"}, ""},
		{"MongoDb", map[string]any{"options": map[string]any{"version": int64(403), "encryption": false}}, clevercloud.Options{Version: "4.0.3", Encryption: "false"}, ""},
		{"ElasticSearch", map[string]any{"options": map[string]any{"version": int64(8), "encryption": true, "kibana": true, "apm": false}},
			clevercloud.Options{Version: "8", Encryption: "true", Kibana: "true"}, ""},
		{"ElasticSearch", map[string]any{"options": map[string]any{"version": int64(9), "encryption": false, "kibana": true, "apm": true}},
			clevercloud.Options{Version: "9", Encryption: "false", Kibana: "true", APM: "true"}, ""},
		// No version list in the operator: a code it never heard of is formatted and then
		// matched against what the provider announces (TestMatchVersion).
		{"PostgreSql", map[string]any{"options": map[string]any{"version": int64(19)}}, clevercloud.Options{Version: "19", Encryption: "false"}, ""},
		{"Redis", map[string]any{"options": map[string]any{"version": int64(900), "encryption": false}}, clevercloud.Options{Version: "9.0.0", Encryption: "false"}, ""},
		{"Keycloak", map[string]any{"version": "26.2.5"}, clevercloud.Options{Version: "26.2.5"}, ""},
		{"Otoroshi", map[string]any{}, clevercloud.Options{}, ""},
		{"Metabase", map[string]any{"options": map[string]any{}}, clevercloud.Options{}, ""},
		{"Pulsar", map[string]any{}, clevercloud.Options{}, ""},
		{"PostgreSql", map[string]any{"options": map[string]any{"version": int64(0)}}, clevercloud.Options{}, "not a version code of PostgreSql"},
		{"PostgreSql", map[string]any{}, clevercloud.Options{}, "spec.options.version is required"},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			got, err := kind(t, c.kind).Options(obj(c.spec))
			if c.wantErr != "" {
				var se *SpecError
				if !errors.As(err, &se) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want SpecError containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Options = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestRegion(t *testing.T) {
	if r, _ := kind(t, "ConfigProvider").Region(obj(map[string]any{})); r != "par" {
		t.Fatalf("ConfigProvider region %q", r)
	}
	if r, _ := kind(t, "Redis").Region(obj(map[string]any{"instance": map[string]any{"region": "rbx"}})); r != "rbx" {
		t.Fatalf("Redis region %q", r)
	}
	if _, err := kind(t, "Redis").Region(obj(map[string]any{})); err == nil {
		t.Fatal("missing region accepted")
	}
}

type providersAPI struct {
	API
	calls  atomic.Int32
	ps     []clevercloud.Provider
	owners []string
}

func (p *providersAPI) ListProvidersForOwner(_ context.Context, owner string) ([]clevercloud.Provider, error) {
	p.calls.Add(1)
	p.owners = append(p.owners, owner)
	if owner == "orga_private" {
		// The catalogue as that organisation sees it: its private plan too.
		ps := append([]clevercloud.Provider(nil), p.ps...)
		ps[0].Plans = append(append([]clevercloud.Plan(nil), ps[0].Plans...), clevercloud.Plan{ID: "plan_private", Slug: "private_xl", Name: "Private XL"})
		return ps, nil
	}
	return p.ps, nil
}

func TestPlanCacheResolve(t *testing.T) {
	api := &providersAPI{ps: []clevercloud.Provider{
		{ID: "postgresql-addon", Plans: []clevercloud.Plan{{ID: "plan_a", Slug: "xs_sml", Name: "XS Small Space"}, {ID: "plan_b", Slug: "dev", Name: "DEV"}}},
		{ID: "empty", Plans: nil},
	}}
	c := &PlanCache{}
	ctx := context.Background()
	for _, in := range []string{"xs_sml", "XS_SML", "XS Small Space", "plan_a"} {
		id, err := c.Resolve(ctx, api, "k", "orga_1", "postgresql-addon", in)
		if err != nil || id != "plan_a" {
			t.Fatalf("Resolve(%q) = %q, %v", in, id, err)
		}
	}
	if id, _ := c.Resolve(ctx, api, "k", "orga_1", "postgresql-addon", "plan_unknown"); id != "plan_unknown" {
		t.Fatalf("plan ids pass through, got %q", id)
	}
	if n := api.calls.Load(); n != 1 {
		t.Fatalf("catalogue fetched %d times, want 1 (cached)", n)
	}
	_, err := c.Resolve(ctx, api, "k", "orga_1", "postgresql-addon", "huge")
	var se *SpecError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "dev (DEV), xs_sml (XS Small Space)") {
		t.Fatalf("unknown plan: %v", err)
	}
	if n := api.calls.Load(); n != 2 {
		t.Fatalf("an unknown plan refreshes the catalogue once: %d calls", n)
	}
	if _, err := c.Resolve(ctx, api, "k", "orga_1", "empty", "x"); !errors.As(err, &se) {
		t.Fatalf("provider without plans: %v", err)
	}
	if _, err := c.Resolve(ctx, api, "k", "orga_1", "missing-provider", "x"); err == nil || errors.As(err, &se) {
		t.Fatalf("unknown provider must be an API-side error, got %v", err)
	}
	if _, err := c.Resolve(ctx, api, "other-credentials", "orga_1", "postgresql-addon", "dev"); err != nil || api.calls.Load() < 3 {
		t.Fatalf("cache is per credential set: %v, %d calls", err, api.calls.Load())
	}
	// Per owner: the catalogue is asked for with the organisation, so its private plans resolve.
	before := api.calls.Load()
	if id, err := c.Resolve(ctx, api, "k", "orga_private", "postgresql-addon", "private_xl"); err != nil || id != "plan_private" {
		t.Fatalf("private plan: %q, %v", id, err)
	}
	if api.calls.Load() != before+1 || api.owners[len(api.owners)-1] != "orga_private" {
		t.Fatalf("the private catalogue was not asked for with its owner: %v", api.owners)
	}
	if _, err := c.Resolve(ctx, api, "k", "orga_1", "postgresql-addon", "private_xl"); !errors.As(err, &se) {
		t.Fatalf("another organisation must not see the private plan: %v", err)
	}
}

func TestCredentialsHashStableAndValueFree(t *testing.T) {
	a := CredentialsHash(map[string]string{"A": "1", "B": "secret-value"})
	b := CredentialsHash(map[string]string{"B": "secret-value", "A": "1"})
	if a != b || len(a) != 16 || strings.Contains(a, "secret") {
		t.Fatalf("hash %q / %q", a, b)
	}
	if a == CredentialsHash(map[string]string{"A": "1", "B": "other"}) {
		t.Fatal("hash ignores values")
	}
}

func TestValidOwnerID(t *testing.T) {
	for id, want := range map[string]bool{
		"orga_00000000-0000-0000-0000-000000000001": true, "user_x": true,
		"": false, "orga_": false, "acme-corp": false, "ORGA_1": false, " orga_1": false,
	} {
		if got := ValidOwnerID(id); got != want {
			t.Errorf("ValidOwnerID(%q) = %v, want %v", id, got, want)
		}
	}
}
