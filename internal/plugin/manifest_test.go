package plugin

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

func TestSanitizeName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"my-db", "my-db"},
		{"My DB (prod)", "my-db-prod"},
		{"  __weird__name__  ", "weird-name"},
		{"Base de données", "base-de-donn-es"},
		{"kubernetes::PostgreSql::1234", "kubernetes-postgresql-1234"},
		{"---", "fallback"},
		{"", "fallback"},
		{"123", "123"},
		{strings.Repeat("a", 70), strings.Repeat("a", 63)},
		{strings.Repeat("a", 62) + "-b", strings.Repeat("a", 62)},
	} {
		got := SanitizeName(tc.in, "fallback")
		if got != tc.want {
			t.Errorf("SanitizeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
			t.Errorf("SanitizeName(%q) = %q is not a DNS-1123 label: %v", tc.in, got, errs)
		}
	}
}

func TestUniqueNames(t *testing.T) {
	u := names{}
	long := strings.Repeat("x", 63)
	for _, tc := range []struct{ in, want string }{
		{"db", "db"}, {"db", "db-2"}, {"db", "db-3"}, {"cache", "cache"},
		{long, long}, {long, strings.Repeat("x", 61) + "-2"},
	} {
		if got := u.unique(tc.in); got != tc.want {
			t.Errorf("unique(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func ptr(s string) *string { return &s }

func addonOf(id, name, provider, slug, region string) clevercloud.Addon {
	a := clevercloud.Addon{ID: id, RealID: "real-" + id, Region: region, Provider: clevercloud.Provider{ID: provider}, Plan: clevercloud.Plan{ID: "plan_" + slug, Slug: slug}}
	if name != "" {
		a.Name = ptr(name)
	}
	return a
}

func TestBuildManifest(t *testing.T) {
	opts := Options{Namespace: "team-a", Organisation: "orga_1", DeletionPolicy: "Orphan"}
	for _, tc := range []struct {
		name     string
		obs      Observed
		opts     *Options
		wantName string
		want     map[string]any // spec paths (dot separated) → value; nil value: absent
		comment  string
	}{
		{"postgresql: plan slug, region, major version code", Observed{
			Addon: addonOf("addon_pg", "Billing DB", "postgresql-addon", "xs_sml", "par"), Version: "17.10",
			Announced: []string{"15", "16", "17"}}, nil, "billing-db",
			map[string]any{"spec.addonId": "addon_pg", "spec.organisation": "orga_1", "spec.deletionPolicy": "Orphan",
				"spec.instance.plan": "xs_sml", "spec.instance.region": "par", "spec.options.version": int64(17), "spec.options.encryption": false,
				"spec.credentialsRef": nil, "spec.managementPolicy": nil}, "encryption: not readable"},
		{"mysql: minor code from the announced version", Observed{
			Addon: addonOf("addon_my", "shop", "mysql-addon", "s_sml", "rbx"), Version: "8.4.3", Announced: []string{"5.7", "8.0", "8.4"}}, nil, "shop",
			map[string]any{"spec.options.version": int64(84), "spec.instance.region": "rbx"}, ""},
		{"redis: no announced versions, the digits the kind formats back", Observed{
			Addon: addonOf("addon_rd", "cache", "redis-addon", "s_mono", "par"), Version: "7.2.4"}, nil, "cache",
			map[string]any{"spec.options.version": int64(724)}, ""},
		{"mysql without announced versions: 8.4.3 is 84", Observed{
			Addon: addonOf("addon_my2", "shop2", "mysql-addon", "s_sml", "par"), Version: "8.4.3"}, nil, "shop2",
			map[string]any{"spec.options.version": int64(84)}, ""},
		{"a version the provider no longer announces is kept, with a warning", Observed{
			Addon: addonOf("addon_pg3", "old", "postgresql-addon", "xs_sml", "par"), Version: "11.22", Announced: []string{"15", "16", "17"}}, nil, "old",
			map[string]any{"spec.options.version": int64(11)}, "WARNING: the add-on runs 11.22, which postgresql-addon no longer announces (15, 16, 17)"},
		{"no published version: the provider's default, said in a comment", Observed{
			Addon: addonOf("addon_pg2", "x", "postgresql-addon", "dev", "par"), DefaultVersion: "16"}, nil, "x",
			map[string]any{"spec.options.version": int64(16)}, "provider's default"},
		{"elasticsearch: kibana and apm from the variables' names", Observed{
			Addon: addonOf("addon_es", "search", "es-addon", "xs", "par"), Version: "8.19.9", Announced: []string{"7", "8"},
			EnvKeys: []string{"ES_ADDON_HOST", "ES_ADDON_KIBANA_HOST"}}, nil, "search",
			map[string]any{"spec.options.version": int64(8), "spec.options.kibana": true, "spec.options.apm": false}, ""},
		{"keycloak: spec.version, no options", Observed{
			Addon: addonOf("addon_kc", "sso", "keycloak", "base", "par"), Version: "26.2.5"}, nil, "sso",
			map[string]any{"spec.version": "26.2.5", "spec.instance.plan": "base", "spec.options": nil}, "spec.version pins the version the add-on runs (26.2.5)"},
		{"pulsar: fixed plan, region only", Observed{
			Addon: addonOf("addon_pu", "events", "addon-pulsar", "beta", "par")}, nil, "events",
			map[string]any{"spec.instance.region": "par", "spec.instance.plan": nil, "spec.options": nil}, ""},
		{"config provider: observe only, no value copied", Observed{
			Addon: addonOf("addon_cp", "settings", "config-provider", "std", "par")}, nil, "settings",
			map[string]any{"spec.managementPolicy": "ObserveOnly", "spec.variables": map[string]any{}, "spec.instance": nil}, "ObserveOnly"},
		{"an add-on the operator created is flagged", Observed{
			Addon: addonOf("addon_k8s", "kubernetes::Redis::0c1d-uid", "redis-addon", "s_mono", "par"), Version: "7.2.4"}, nil, "redis-k8s",
			map[string]any{"spec.addonId": "addon_k8s"}, "created by clever-operator for a Redis with uid 0c1d-uid"},
		{"credentials reference and deletion policy", Observed{
			Addon: addonOf("addon_kv", "kv1", "kv", "", "par")}, &Options{Organisation: "orga_1", DeletionPolicy: "Delete", CredentialsRefKind: "ClusterCleverCredentials", CredentialsRefName: "import"}, "kv1",
			map[string]any{"spec.deletionPolicy": "Delete", "spec.credentialsRef": map[string]any{"kind": "ClusterCleverCredentials", "name": "import"}, "metadata.namespace": nil}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := kindByProvider(tc.obs.Addon.Provider.ID)
			if k == nil {
				t.Fatalf("no kind for %s", tc.obs.Addon.Provider.ID)
			}
			o := opts
			if tc.opts != nil {
				o = *tc.opts
			}
			name := names{}.unique(baseName(k, &tc.obs.Addon))
			if name != tc.wantName {
				t.Errorf("name = %q, want %q", name, tc.wantName)
			}
			m, err := BuildManifest(k, &tc.obs, name, o)
			if err != nil {
				t.Fatal(err)
			}
			if m.Object.GetKind() != k.GVK.Kind || m.Object.GetAPIVersion() != k.GVK.GroupVersion().String() {
				t.Errorf("GVK = %s", m.Object.GroupVersionKind())
			}
			for p, want := range tc.want {
				got, found, _ := unstructured.NestedFieldNoCopy(m.Object.Object, strings.Split(p, ".")...)
				if want == nil {
					if found {
						t.Errorf("%s = %v, want absent", p, got)
					}
					continue
				}
				if !found || !equal(got, want) {
					t.Errorf("%s = %#v, want %#v", p, got, want)
				}
			}
			b, err := Render(m.Comments, m.Object)
			if err != nil {
				t.Fatal(err)
			}
			if tc.comment != "" && !strings.Contains(string(b), "# ") || !strings.Contains(string(b), tc.comment) {
				t.Errorf("rendered manifest lacks comment %q:\n%s", tc.comment, b)
			}
		})
	}
}

func equal(a, b any) bool {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		if len(am) != len(bm) {
			return false
		}
		for k := range am {
			if !equal(am[k], bm[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func TestVersionUnknown(t *testing.T) {
	k := kindByProvider("postgresql-addon")
	if _, err := BuildManifest(k, &Observed{Addon: addonOf("addon_x", "x", "postgresql-addon", "dev", "par"), Version: "beta"}, "x", Options{}); err == nil {
		t.Fatal("a version that is no code and no default was accepted")
	}
}

func TestGrant(t *testing.T) {
	g := Grant("import", "team-a", "team-a-clever", "orga_1", []string{"addon_a", "addon_b"})
	b, err := Render(nil, g)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: CleverCredentials", "namespace: team-a", "name: team-a-clever", "- orga_1", "- addon_a", "- addon_b"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("grant lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "any") {
		t.Errorf("grant allows any add-on:\n%s", b)
	}
}

func TestEnvVersion(t *testing.T) {
	env := []clevercloud.Variable{{Name: "POSTGRESQL_ADDON_PASSWORD", Value: "pw"}, {Name: "POSTGRESQL_ADDON_VERSION", Value: "17"}}
	if v := envVersion(env); v != "17" {
		t.Errorf("envVersion = %q", v)
	}
	if v := envVersion(nil); v != "" {
		t.Errorf("envVersion(nil) = %q", v)
	}
}
