package kinds

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
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
	// The 14 typed kinds and the generic Addon.
	if len(Kinds) != 15 {
		t.Fatalf("%d kinds, want 15", len(Kinds))
	}
	seen := map[string]bool{}
	for _, k := range Kinds {
		if (k.ProviderID == "") != k.Generic || k.FinalizerSuffix == "" || k.Noun == "" {
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
			if err != nil || !reflect.DeepEqual(got, c.want) {
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

// The generic Addon is one row of the table: its provider, region and plan come from
// spec.providerId, spec.region and spec.plan, and spec.options is passed through as is.
func TestGenericAddonRow(t *testing.T) {
	k, ok := KindFor(v("v1alpha1", "Addon"))
	if !ok || !k.Generic || k.ProviderID != "" || k.FixedPlan != "" || k.FixedRegion != "" {
		t.Fatalf("Addon row %+v", k)
	}
	if k.Finalizer() != "api.clever-cloud.com/addon" || k.AddonName("u-1") != "kubernetes::Addon::u-1" || k.Lower() != "addon" {
		t.Fatalf("Addon names: %s %s %s", k.Finalizer(), k.AddonName("u-1"), k.Lower())
	}
	if k.Migrations || k.RegionMigrations || k.VersionCode != nil || k.Binding != nil || k.Operator != "" || k.Backups || k.ConfigProvider {
		t.Fatalf("Addon must use no kind-specific engine path: %+v", k)
	}
	o := obj(map[string]any{
		"providerId": "fs-bucket", "region": "rbx", "plan": "s",
		"instance": map[string]any{"region": "par", "plan": "xs_sml"}, // not the generic kind's fields
		"options":  map[string]any{"version": "2", "my-option": "a=b", "encryption": "true"},
	})
	if got := k.Provider(o); got != "fs-bucket" {
		t.Errorf("Provider = %q", got)
	}
	if got, err := k.Region(o); err != nil || got != "rbx" {
		t.Errorf("Region = %q, %v", got, err)
	}
	if got := k.SpecPlan(o); got != "s" {
		t.Errorf("SpecPlan = %q", got)
	}
	if !k.PlanFromSpec() {
		t.Error("the plan must come from the spec")
	}
	got, err := k.Options(o)
	want := clevercloud.Options{Extra: map[string]string{"version": "2", "my-option": "a=b", "encryption": "true"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Options = %+v, %v; want %+v", got, err, want)
	}
	// On the wire: one flat object, every key as written.
	b, _ := json.Marshal(clevercloud.CreateOpts{Name: "n", Region: "rbx", ProviderID: "fs-bucket", Plan: "plan_x", Options: got})
	if s := string(b); s != `{"name":"n","region":"rbx","providerId":"fs-bucket","plan":"plan_x","options":{"encryption":"true","my-option":"a=b","version":"2"}}` {
		t.Fatalf("create body %s", s)
	}
	if got, err := k.Options(obj(map[string]any{"providerId": "fs-bucket"})); err != nil || len(got.Extra) != 0 {
		t.Fatalf("no options: %+v, %v", got, err)
	}
	if _, err := k.Region(obj(map[string]any{"instance": map[string]any{"region": "par"}})); err == nil || !strings.Contains(err.Error(), "spec.region is required") {
		t.Fatalf("missing spec.region: %v", err)
	}
	// A typed kind's provider is its own, whatever the spec says.
	if got := kind(t, "Cellar").Provider(o); got != "cellar-addon" {
		t.Errorf("Cellar provider %q", got)
	}
}

// The typed kinds' options are sent exactly as before Extra existed (field order kept).
func TestOptionsWireForm(t *testing.T) {
	for _, c := range []struct {
		o    clevercloud.Options
		want string
	}{
		{clevercloud.Options{}, `{}`},
		{clevercloud.Options{Version: "15", Encryption: "false"}, `{"version":"15","encryption":"false"}`},
		{clevercloud.Options{Version: "8", Encryption: "true", Kibana: "true", APM: "true"}, `{"version":"8","encryption":"true","kibana":"true","apm":"true"}`},
		{clevercloud.Options{Version: "8", Extra: map[string]string{"version": "9", "z": "1", "a": "<&>"}}, `{"version":"8","a":"\u003c\u0026\u003e","z":"1"}`},
	} {
		b, err := json.Marshal(c.o)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v: %s, %v; want %s", c.o, b, err, c.want)
		}
	}
}

// Create options (#18 §4): each set field under its API key and wire form; unset ones absent.
func TestCreateOptions(t *testing.T) {
	for _, c := range []struct {
		kind    string
		options map[string]any
		want    string
	}{
		{"PostgreSql", map[string]any{"version": int64(17), "encryption": false}, `{"version":"17","encryption":"false"}`},
		{"PostgreSql", map[string]any{"version": int64(17), "encryption": true, "directHostOnly": true, "backups": false, "locale": "fr_FR"},
			`{"version":"17","encryption":"true","direct-host-only":"true","do-backup":"false","locale":"fr_FR"}`},
		{"MySql", map[string]any{"version": int64(84), "encryption": false, "skipLogBin": true}, `{"version":"8.4","encryption":"false","skip-log-bin":"true"}`},
		{"ElasticSearch", map[string]any{"version": int64(8), "encryption": false, "kibana": true, "apm": false, "plugins": []any{"analysis-icu", "mapper-size"}},
			`{"version":"8","encryption":"false","kibana":"true","plugins":"analysis-icu,mapper-size"}`},
		{"ElasticSearch", map[string]any{"version": int64(8), "encryption": false, "plugins": []any{}}, `{"version":"8","encryption":"false"}`},
		{"Keycloak", map[string]any{"accessDomain": "auth.example.com"}, `{"access-domain":"auth.example.com"}`},
		{"Keycloak", map[string]any{}, `{}`},
	} {
		var k *Kind
		for i := range Kinds {
			if Kinds[i].GVK.Kind == c.kind {
				k = &Kinds[i]
			}
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"options": c.options}}}
		o, err := k.Options(obj)
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		b, _ := json.Marshal(o)
		if string(b) != c.want {
			t.Errorf("%s %v: %s; want %s", c.kind, c.options, b, c.want)
		}
	}
}

// On a shared plan a dedicated-only option set to false is dropped, one asked for refused.
func TestDropDedicatedOptions(t *testing.T) {
	var pg *Kind
	for i := range Kinds {
		if Kinds[i].GVK.Kind == "PostgreSql" {
			pg = &Kinds[i]
		}
	}
	o := clevercloud.Options{Extra: map[string]string{"direct-host-only": "false", "do-backup": "true"}}
	if err := pg.DropDedicatedOptions(&o, "dev"); err != nil || len(o.Extra) != 1 || o.Extra["do-backup"] != "true" {
		t.Fatalf("%v, %v", o.Extra, err)
	}
	o = clevercloud.Options{Extra: map[string]string{"locale": "fr_FR"}}
	err := pg.DropDedicatedOptions(&o, "dev")
	var se *SpecError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "spec.options.locale") || !strings.Contains(se.Msg, "dev") {
		t.Fatalf("%v", err)
	}
}
