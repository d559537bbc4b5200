// Package addon is the generic provisioning engine: one reconciler, driven by the table of
// kinds below, does every Clever Cloud API call for every custom resource kind.
package addon

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

// Group is the API group of every kind.
const Group = "api.clever-cloud.com"

// Kind describes one custom resource kind: everything the engine needs to provision it.
// Adding a kind is adding a row to Kinds (plus its API type and a watches.yaml entry).
type Kind struct {
	GVK schema.GroupVersionKind
	// FinalizerSuffix names the finalizer api.clever-cloud.com/<suffix> (as the Rust operator).
	FinalizerSuffix string
	// ProviderID is the Clever Cloud add-on provider.
	ProviderID string
	// FixedPlan is sent instead of spec.instance.plan when set.
	FixedPlan string
	// FixedRegion is sent instead of spec.instance.region when set (ConfigProvider: par).
	FixedRegion string
	// Versions maps the integer spec.options.version to the API string; nil when the kind
	// has no version.
	Versions map[int64]string
	// Encryption sends spec.options.encryption as options.encryption.
	Encryption bool
	// ElasticServices sends spec.options.kibana/apm as the options.services JSON string.
	ElasticServices bool
	// URLStatus maps a status field to the env variable it mirrors (status.url, ...).
	URLStatus map[string]string
	// Migrations: changing the plan (or version) of an existing add-on runs a Clever Cloud
	// migration; RegionMigrations: changing the region does too.
	Migrations, RegionMigrations bool
	// ConfigProvider kinds push spec.variables and publish them as the Secret data.
	ConfigProvider bool
	// Noun is used in event messages ("managed postgresql instance").
	Noun string
	// PublicKeys are the add-on keys that hold no secret: the content of the optional
	// ConfigMap (spec.secret.configMap).
	PublicKeys []string
	// Binding describes the servicebinding.io Secret of database-like kinds (nil: none).
	Binding *Binding
	// Renew asks Clever Cloud to regenerate the add-on's credentials (the
	// rotate-requested-at annotation); nil when the API offers no way to do it.
	Renew func(ctx context.Context, api API, ownerID, realID string) error
}

// Binding maps a kind's add-on keys to the well-known entries of a servicebinding.io
// Provisioned Service Secret (type servicebinding.io/<Type>).
type Binding struct {
	// Type is the binding type (the Secret type suffix and the `type` entry).
	Type string
	// Entries maps a well-known entry (host, port, username, password, database, uri, ...)
	// to the add-on key holding its value.
	Entries map[string]string
}

// BindingProvider is the `provider` entry of every binding Secret.
const BindingProvider = "clever-cloud"

func dbBinding(typ, prefix string) *Binding {
	return &Binding{Type: typ, Entries: map[string]string{
		"host": prefix + "_HOST", "port": prefix + "_PORT", "username": prefix + "_USER",
		"password": prefix + "_PASSWORD", "database": prefix + "_DB", "uri": prefix + "_URI",
	}}
}

func dbPublic(prefix string) []string {
	return []string{prefix + "_HOST", prefix + "_PORT", prefix + "_DB", prefix + "_VERSION"}
}

func v(version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: Group, Version: version, Kind: kind}
}

// Kinds is the table of every kind the operator manages.
var Kinds = []Kind{
	{GVK: v("v1", "PostgreSql"), FinalizerSuffix: "postgresql", ProviderID: "postgresql-addon", Migrations: true, RegionMigrations: true, Noun: "postgresql", Encryption: true,
		PublicKeys: dbPublic("POSTGRESQL_ADDON"), Binding: dbBinding("postgresql", "POSTGRESQL_ADDON"),
		Versions: map[int64]string{11: "11", 12: "12", 13: "13", 14: "14", 15: "15", 16: "16", 17: "17", 18: "18"}},
	{GVK: v("v1", "Redis"), FinalizerSuffix: "redis", ProviderID: "redis-addon", Migrations: true, RegionMigrations: true, Noun: "redis", Encryption: true,
		PublicKeys: []string{"REDIS_HOST", "REDIS_PORT", "REDIS_VERSION"},
		Binding:    &Binding{Type: "redis", Entries: map[string]string{"host": "REDIS_HOST", "port": "REDIS_PORT", "password": "REDIS_PASSWORD", "uri": "REDIS_URL"}},
		Versions:   map[int64]string{724: "7.2.4", 880: "8.8.0"}},
	{GVK: v("v1", "MySql"), FinalizerSuffix: "mysql", ProviderID: "mysql-addon", Migrations: true, RegionMigrations: true, Noun: "mysql", Encryption: true,
		PublicKeys: dbPublic("MYSQL_ADDON"), Binding: dbBinding("mysql", "MYSQL_ADDON"),
		Versions: map[int64]string{57: "5.7", 80: "8.0", 84: "8.4"}},
	{GVK: v("v1", "MongoDb"), FinalizerSuffix: "mongodb", ProviderID: "mongodb-addon", Migrations: true, RegionMigrations: true, Noun: "mongodb", Encryption: true,
		PublicKeys: dbPublic("MONGODB_ADDON"), Binding: dbBinding("mongodb", "MONGODB_ADDON"),
		Versions: map[int64]string{403: "4.0.3"}},
	{GVK: v("v1", "ElasticSearch"), FinalizerSuffix: "elasticsearch", ProviderID: "es-addon", Migrations: true, Noun: "elasticsearch", Encryption: true, ElasticServices: true,
		PublicKeys: []string{"ES_ADDON_HOST", "ES_ADDON_VERSION", "ES_ADDON_KIBANA_HOST", "ES_ADDON_APM_HOST"},
		Binding:    &Binding{Type: "elasticsearch", Entries: map[string]string{"host": "ES_ADDON_HOST", "username": "ES_ADDON_USER", "password": "ES_ADDON_PASSWORD", "uri": "ES_ADDON_URI", "uris": "ES_ADDON_URI"}},
		Versions:   map[int64]string{7: "7", 8: "8", 9: "9"}},
	{GVK: v("v1beta1", "Pulsar"), FinalizerSuffix: "pulsar", ProviderID: "addon-pulsar", Noun: "pulsar",
		PublicKeys: []string{"ADDON_PULSAR_HOSTNAME", "ADDON_PULSAR_BINARY_PORT", "ADDON_PULSAR_BINARY_URL", "ADDON_PULSAR_HTTP_PORT", "ADDON_PULSAR_HTTP_URL", "ADDON_PULSAR_TENANT", "ADDON_PULSAR_NAMESPACE"},
		FixedPlan:  "plan_3ad3c5be-5c1e-4dae-bf9a-87120b88fc13"},
	{GVK: v("v1", "ConfigProvider"), FinalizerSuffix: "config-provider", ProviderID: "config-provider", Noun: "configuration provider",
		FixedPlan: "plan_5d8e9596-dd73-4b73-84d9-e165372c5324", FixedRegion: "par", ConfigProvider: true},
	{GVK: v("v1alpha1", "KV"), FinalizerSuffix: "materia-kv", ProviderID: "kv", Noun: "KV",
		PublicKeys: []string{"KV_HOST", "KV_PORT", "REDIS_HOST", "REDIS_PORT"},
		Binding:    &Binding{Type: "redis", Entries: map[string]string{"host": "KV_HOST", "port": "KV_PORT", "password": "KV_TOKEN", "uri": "REDIS_URL"}},
		FixedPlan:  "plan_53a1728d-4b9e-4254-94c4-b19163af587b"},
	{GVK: v("v1", "Metabase"), FinalizerSuffix: "metabase", ProviderID: "metabase", Noun: "metabase",
		PublicKeys: []string{"METABASE_URL"},
		URLStatus:  map[string]string{"url": "METABASE_URL"}},
	{GVK: v("v1", "Keycloak"), FinalizerSuffix: "keycloak", ProviderID: "keycloak", Noun: "keycloak",
		PublicKeys: []string{"CC_KEYCLOAK_URL", "CC_KEYCLOAK_ADMIN_URL"},
		URLStatus:  map[string]string{"url": "CC_KEYCLOAK_URL", "admin_url": "CC_KEYCLOAK_ADMIN_URL"}},
	{GVK: v("v1", "Matomo"), FinalizerSuffix: "matomo", ProviderID: "addon-matomo", Noun: "matomo",
		PublicKeys: []string{"MATOMO_URL"},
		URLStatus:  map[string]string{"url": "MATOMO_URL"}},
	{GVK: v("v1", "Otoroshi"), FinalizerSuffix: "otoroshi", ProviderID: "otoroshi", Noun: "otoroshi",
		PublicKeys: []string{"CC_OTOROSHI_URL", "CC_OTOROSHI_API_URL", "CC_OTOROSHI_SSO_URL"},
		URLStatus:  map[string]string{"url": "CC_OTOROSHI_URL"}},
	{GVK: v("v1", "Azimutt"), FinalizerSuffix: "azimutt", ProviderID: "azimutt", Noun: "azimutt"},
	{GVK: v("v1", "Cellar"), FinalizerSuffix: "cellar", ProviderID: "cellar-addon", Noun: "cellar",
		PublicKeys: []string{"CELLAR_ADDON_HOST"}, Renew: renewCellar,
		URLStatus: map[string]string{"url": "CELLAR_ADDON_HOST"}},
}

func renewCellar(ctx context.Context, api API, ownerID, realID string) error {
	return api.RenewCellarCredentials(ctx, ownerID, realID)
}

// KindFor returns the table row of a GVK.
func KindFor(gvk schema.GroupVersionKind) (*Kind, bool) {
	for i := range Kinds {
		if Kinds[i].GVK == gvk {
			return &Kinds[i], true
		}
	}
	return nil, false
}

// Finalizer is the engine's finalizer on this kind.
func (k *Kind) Finalizer() string { return Group + "/" + k.FinalizerSuffix }

// Lower is the lower-case kind, used in names (release names, source Secrets, controllers).
func (k *Kind) Lower() string { return strings.ToLower(k.GVK.Kind) }

// AddonName is the deterministic Clever Cloud add-on name, shared with the Rust operator so
// that its add-ons are adopted, never duplicated.
func (k *Kind) AddonName(uid string) string {
	return "kubernetes::" + k.GVK.Kind + "::" + uid
}

// PlanFromSpec says whether the plan comes from spec.instance.plan (and needs resolving).
func (k *Kind) PlanFromSpec() bool { return k.FixedPlan == "" }

// SpecError is a problem with the resource's spec that only the user can fix.
type SpecError struct{ Msg string }

func (e *SpecError) Error() string { return e.Msg }

// Region returns the region to create the add-on in.
func (k *Kind) Region(obj *unstructured.Unstructured) (string, error) {
	if k.FixedRegion != "" {
		return k.FixedRegion, nil
	}
	r, _, _ := unstructured.NestedString(obj.Object, "spec", "instance", "region")
	if r == "" {
		return "", &SpecError{Msg: "spec.instance.region is required"}
	}
	return r, nil
}

// SpecPlan returns spec.instance.plan as written by the user.
func (k *Kind) SpecPlan(obj *unstructured.Unstructured) string {
	p, _, _ := unstructured.NestedString(obj.Object, "spec", "instance", "plan")
	return p
}

// Options builds the create options from the spec.
func (k *Kind) Options(obj *unstructured.Unstructured) (clevercloud.Options, error) {
	var o clevercloud.Options
	if k.Versions != nil {
		ver, found, err := unstructured.NestedFieldNoCopy(obj.Object, "spec", "options", "version")
		if err != nil || !found {
			return o, &SpecError{Msg: "spec.options.version is required"}
		}
		code, ok := toInt64(ver)
		s, known := k.Versions[code]
		if !ok || !known {
			return o, &SpecError{Msg: fmt.Sprintf("spec.options.version %v is not supported for %s; use one of %s", ver, k.GVK.Kind, k.versionList())}
		}
		o.Version = s
	}
	if k.Encryption {
		enc, _, _ := unstructured.NestedBool(obj.Object, "spec", "options", "encryption")
		o.Encryption = fmt.Sprintf("%t", enc)
	}
	if k.ElasticServices {
		kibana, _, _ := unstructured.NestedBool(obj.Object, "spec", "options", "kibana")
		apm, _, _ := unstructured.NestedBool(obj.Object, "spec", "options", "apm")
		type service struct {
			Name    string `json:"name"`
			Enabled bool   `json:"enabled"`
		}
		b, err := json.Marshal([]service{{"kibana", kibana}, {"apm", apm}})
		if err != nil {
			return o, err
		}
		o.Services = string(b)
	}
	return o, nil
}

func (k *Kind) versionList() string {
	codes := make([]int, 0, len(k.Versions))
	for c := range k.Versions {
		codes = append(codes, int(c))
	}
	sort.Ints(codes)
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ", ")
}

// Variables returns spec.variables of a ConfigProvider.
func (k *Kind) Variables(obj *unstructured.Unstructured) map[string]string {
	vars, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "variables")
	if vars == nil {
		vars = map[string]string{}
	}
	return vars
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), float64(int64(n)) == n
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}
