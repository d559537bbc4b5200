// Package kinds is the table of kinds: every fact about each custom resource kind the
// operator manages (its provider, plan and region fields, create options, Secret keys,
// names, capabilities), and where a resource keeps its fields. The engine (internal/addon)
// is generic; what differs between kinds is here.
package kinds

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

// Group is the API group of every kind.
const Group = "api.clever-cloud.com"

// Kind describes one custom resource kind: everything the engine needs to provision it.
// Adding a kind is adding a row to Kinds (plus its API type, a watches.yaml entry and a
// sample: docs/design.md, "Adding a kind"). The capability fields (Operator, Migrations,
// ConfigProvider, Backups; Network Groups follow from the provider) are read in one place,
// internal/addon's capabilitiesOf, which turns them into the hooks the pass calls.
type Kind struct {
	GVK schema.GroupVersionKind
	// FinalizerSuffix names the finalizer api.clever-cloud.com/<suffix> (as the Rust operator).
	FinalizerSuffix string
	// ProviderID is the Clever Cloud add-on provider ("" for the generic kind: see Generic).
	ProviderID string
	// Generic marks the generic Addon kind: the provider is spec.providerId, the region and
	// plan are spec.region and spec.plan, spec.options is passed through as the create
	// options, and provider, plan and region are checked against the live catalogue before
	// the add-on is created (ProviderNotFound, PlanNotFound, RegionNotAvailable). Nothing
	// else in the engine differs: the Secret holds the add-on's env as it is.
	Generic bool
	// FixedPlan is sent instead of spec.instance.plan when set.
	FixedPlan string
	// FixedRegion is sent instead of spec.instance.region when set (ConfigProvider: par).
	FixedRegion string
	// VersionCode turns the integer spec.options.version into the API's version string when
	// the provider announces no versions to match it against (nil when the kind has no
	// version). The versions themselves are never listed here: they are what the provider
	// announces at GET /v4/addon-providers/{id} (see versions.go).
	VersionCode func(code int64) string
	// Encryption sends spec.options.encryption as options.encryption.
	Encryption bool
	// ElasticServices sends spec.options.kibana/apm as the flat option keys kibana and apm.
	ElasticServices bool
	// CreateOptions are the kind's other create options (issue #18 §4): spec fields sent as
	// flat option keys, as Clever Cloud's clients send them (create_options.go).
	CreateOptions []CreateOption
	// Operator is the v4 provider segment of Clever Cloud's "operator" add-ons (Keycloak,
	// Metabase, Matomo, Otoroshi: addon-<name>): their URLs and credentials come from
	// GET /v4/addon-providers/<Operator>/addons/<realId> (see operators.go).
	Operator string
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
	Renew func(ctx context.Context, api Renewer, ownerID, realID string) error
	// Backups: Clever Cloud backs the add-on up (GET /v2/backups/{ownerId}/{realId});
	// status.backups and the BackupStale condition report them (backups.go).
	Backups bool
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
	{GVK: v("v1", "PostgreSql"), FinalizerSuffix: "postgresql", ProviderID: "postgresql-addon", Migrations: true, RegionMigrations: true, Noun: "postgresql", Encryption: true, Backups: true,
		PublicKeys: dbPublic("POSTGRESQL_ADDON"), Binding: dbBinding("postgresql", "POSTGRESQL_ADDON"),
		VersionCode: majorCode, CreateOptions: []CreateOption{optDirectHostOnly, optBackups, {Field: "locale", Key: "locale", Dedicated: true}}},
	{GVK: v("v1", "Redis"), FinalizerSuffix: "redis", ProviderID: "redis-addon", Migrations: true, RegionMigrations: true, Noun: "redis", Encryption: true, Backups: true,
		PublicKeys:  []string{"REDIS_HOST", "REDIS_PORT", "REDIS_VERSION"},
		Binding:     &Binding{Type: "redis", Entries: map[string]string{"host": "REDIS_HOST", "port": "REDIS_PORT", "password": "REDIS_PASSWORD", "uri": "REDIS_URL"}},
		VersionCode: digitsCode},
	{GVK: v("v1", "MySql"), FinalizerSuffix: "mysql", ProviderID: "mysql-addon", Migrations: true, RegionMigrations: true, Noun: "mysql", Encryption: true, Backups: true,
		PublicKeys: dbPublic("MYSQL_ADDON"), Binding: dbBinding("mysql", "MYSQL_ADDON"),
		VersionCode: minorCode, CreateOptions: []CreateOption{optDirectHostOnly, optBackups, {Field: "skipLogBin", Key: "skip-log-bin"}}},
	{GVK: v("v1", "MongoDb"), FinalizerSuffix: "mongodb", ProviderID: "mongodb-addon", Migrations: true, RegionMigrations: true, Noun: "mongodb", Encryption: true, Backups: true,
		PublicKeys: dbPublic("MONGODB_ADDON"), Binding: dbBinding("mongodb", "MONGODB_ADDON"),
		VersionCode: digitsCode, CreateOptions: []CreateOption{optDirectHostOnly}},
	{GVK: v("v1", "ElasticSearch"), FinalizerSuffix: "elasticsearch", ProviderID: "es-addon", Migrations: true, Noun: "elasticsearch", Encryption: true, Backups: true, ElasticServices: true,
		PublicKeys:  []string{"ES_ADDON_HOST", "ES_ADDON_VERSION", "ES_ADDON_KIBANA_HOST", "ES_ADDON_APM_HOST"},
		Binding:     &Binding{Type: "elasticsearch", Entries: map[string]string{"host": "ES_ADDON_HOST", "username": "ES_ADDON_USER", "password": "ES_ADDON_PASSWORD", "uri": "ES_ADDON_URI", "uris": "ES_ADDON_URI"}},
		VersionCode: majorCode, CreateOptions: []CreateOption{{Field: "plugins", Key: "plugins"}}},
	{GVK: v("v1beta1", "Pulsar"), FinalizerSuffix: "pulsar", ProviderID: "addon-pulsar", Noun: "pulsar",
		PublicKeys: []string{"ADDON_PULSAR_HOSTNAME", "ADDON_PULSAR_BINARY_PORT", "ADDON_PULSAR_BINARY_URL", "ADDON_PULSAR_HTTP_PORT", "ADDON_PULSAR_HTTP_URL", "ADDON_PULSAR_TENANT", "ADDON_PULSAR_NAMESPACE"},
		FixedPlan:  "plan_3ad3c5be-5c1e-4dae-bf9a-87120b88fc13"},
	{GVK: v("v1", "ConfigProvider"), FinalizerSuffix: "config-provider", ProviderID: "config-provider", Noun: "configuration provider",
		FixedPlan: "plan_5d8e9596-dd73-4b73-84d9-e165372c5324", FixedRegion: "par", ConfigProvider: true},
	{GVK: v("v1alpha1", "KV"), FinalizerSuffix: "materia-kv", ProviderID: "kv", Noun: "KV",
		PublicKeys: []string{"KV_HOST", "KV_PORT", "REDIS_HOST", "REDIS_PORT"},
		Binding:    &Binding{Type: "redis", Entries: map[string]string{"host": "KV_HOST", "port": "KV_PORT", "password": "KV_TOKEN", "uri": "REDIS_URL"}},
		FixedPlan:  "plan_53a1728d-4b9e-4254-94c4-b19163af587b"},
	{GVK: v("v1", "Metabase"), FinalizerSuffix: "metabase", ProviderID: "metabase", Noun: "metabase", Operator: "addon-metabase",
		PublicKeys: []string{"METABASE_URL"},
		URLStatus:  map[string]string{"url": "METABASE_URL"}},
	{GVK: v("v1", "Keycloak"), FinalizerSuffix: "keycloak", ProviderID: "keycloak", Noun: "keycloak", Operator: "addon-keycloak",
		PublicKeys:    []string{"CC_KEYCLOAK_URL", "CC_KEYCLOAK_ADMIN_URL"},
		URLStatus:     map[string]string{"url": "CC_KEYCLOAK_URL", "admin_url": "CC_KEYCLOAK_ADMIN_URL"},
		CreateOptions: []CreateOption{{Field: "accessDomain", Key: "access-domain"}}},
	{GVK: v("v1", "Matomo"), FinalizerSuffix: "matomo", ProviderID: "addon-matomo", Noun: "matomo", Operator: "addon-matomo",
		PublicKeys: []string{"MATOMO_URL"},
		URLStatus:  map[string]string{"url": "MATOMO_URL"}},
	{GVK: v("v1", "Otoroshi"), FinalizerSuffix: "otoroshi", ProviderID: "otoroshi", Noun: "otoroshi", Operator: "addon-otoroshi",
		PublicKeys: []string{"CC_OTOROSHI_URL", "CC_OTOROSHI_API_URL", "CC_OTOROSHI_SSO_URL"},
		URLStatus:  map[string]string{"url": "CC_OTOROSHI_URL"}},
	{GVK: v("v1", "Azimutt"), FinalizerSuffix: "azimutt", ProviderID: "azimutt", Noun: "azimutt"},
	{GVK: v("v1", "Cellar"), FinalizerSuffix: "cellar", ProviderID: "cellar-addon", Noun: "cellar",
		PublicKeys: []string{"CELLAR_ADDON_HOST"}, Renew: renewCellar,
		URLStatus: map[string]string{"url": "CELLAR_ADDON_HOST"}},
	// The generic kind: any provider, named in spec.providerId (docs/kinds.md#addon).
	{GVK: v("v1alpha1", "Addon"), FinalizerSuffix: "addon", Generic: true, Noun: "add-on"},
}

// Renewer is the Clever Cloud call a kind's Renew hook makes.
type Renewer interface {
	RenewCellarCredentials(ctx context.Context, ownerID, realID string) error
}

func renewCellar(ctx context.Context, api Renewer, ownerID, realID string) error {
	return api.RenewCellarCredentials(ctx, ownerID, realID)
}

// MustNamed is Named for a name known to be in the table (tests); it panics otherwise.
func MustNamed(name string) *Kind {
	k, ok := Named(name)
	if !ok {
		panic("no kind " + name)
	}
	return k
}

// Named is the row of the kind named name (PostgreSql, Addon, ...).
func Named(name string) (*Kind, bool) {
	for i := range Kinds {
		if Kinds[i].GVK.Kind == name {
			return &Kinds[i], true
		}
	}
	return nil, false
}

// KindFor returns the table row of a GVK.
func KindFor(gvk schema.GroupVersionKind) (*Kind, bool) { return Lookup(Kinds, gvk) }

// Lookup returns the row of a GVK in table (Kinds, or a copy of it with a row added: tests).
func Lookup(table []Kind, gvk schema.GroupVersionKind) (*Kind, bool) {
	for i := range table {
		if table[i].GVK == gvk {
			return &table[i], true
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

// PlanFromSpec says whether the plan comes from the spec (spec.instance.plan, or spec.plan
// for the generic kind) and needs resolving.
func (k *Kind) PlanFromSpec() bool { return k.FixedPlan == "" }

// Provider returns the Clever Cloud provider of obj: the kind's, or spec.providerId for the
// generic kind.
func (k *Kind) Provider(obj *unstructured.Unstructured) string {
	if k.Generic {
		return SpecProviderID.String(obj)
	}
	return k.ProviderID
}

// regionPath and planPath are where the kind keeps its region and plan.
func (k *Kind) regionPath() (Path, string) {
	if k.Generic {
		return SpecFlatRegion, "spec.region"
	}
	return SpecRegion, "spec.instance.region"
}

func (k *Kind) planPath() (Path, string) {
	if k.Generic {
		return SpecFlatPlan, "spec.plan"
	}
	return SpecPlan, "spec.instance.plan"
}

// PlanField is the spec field the user writes the plan in (for messages).
func (k *Kind) PlanField() string { _, f := k.planPath(); return f }

// SpecError is a problem with the resource's spec that only the user can fix.
type SpecError struct {
	Msg string
	// Reason is the condition reason to report (default InvalidSpec, or PlanNotFound where
	// a plan is resolved).
	Reason string
}

func (e *SpecError) Error() string { return e.Msg }

// Region returns the region to create the add-on in.
func (k *Kind) Region(obj *unstructured.Unstructured) (string, error) {
	if k.FixedRegion != "" {
		return k.FixedRegion, nil
	}
	p, field := k.regionPath()
	r := p.String(obj)
	if r == "" {
		return "", &SpecError{Msg: field + " is required"}
	}
	return r, nil
}

// SpecPlan returns spec.instance.plan (spec.plan for the generic kind) as written by the user.
func (k *Kind) SpecPlan(obj *unstructured.Unstructured) string {
	p, _ := k.planPath()
	return p.String(obj)
}

// Options builds the create options from the spec. The version is turned into the API's
// string with VersionCode; the engine then matches it against what the provider announces
// (Reconciler.options), and drops version and encryption on shared (DEV) plans.
func (k *Kind) Options(obj *unstructured.Unstructured) (clevercloud.Options, error) {
	var o clevercloud.Options
	if k.Generic {
		// Passed through as they are: the operator neither checks nor interprets them.
		o.Extra = SpecOptions.StringMap(obj)
		return o, nil
	}
	if k.VersionCode != nil {
		ver, found := SpecOptionsVersion.Value(obj)
		if !found {
			return o, &SpecError{Msg: "spec.options.version is required"}
		}
		code, ok := toInt64(ver)
		if !ok || code <= 0 {
			return o, &SpecError{Msg: fmt.Sprintf("spec.options.version %v is not a version code of %s", ver, k.GVK.Kind)}
		}
		o.Version = k.VersionCode(code)
	}
	if k.HasSpecVersion() {
		// spec.version (a version string as Clever Cloud names it, e.g. 26.2.5): chosen at
		// creation with options.version; an unknown one is refused by the API, whose message
		// lists the versions it offers.
		o.Version = SpecVersion.String(obj)
	}
	if k.Encryption {
		o.Encryption = fmt.Sprintf("%t", SpecEncryption.Bool(obj))
	}
	if k.ElasticServices {
		if SpecKibana.Bool(obj) {
			o.Kibana = "true"
		}
		if SpecAPM.Bool(obj) {
			o.APM = "true"
		}
	}
	o.Extra = k.createOptions(obj)
	return o, nil
}

// majorCode: the code is the major version as the API names it (PostgreSQL 17 → "17",
// ElasticSearch 8 → "8").
func majorCode(code int64) string { return strconv.FormatInt(code, 10) }

// minorCode: the last digit is the minor version (MySQL 84 → "8.4", 57 → "5.7").
func minorCode(code int64) string {
	s := strconv.FormatInt(code, 10)
	if len(s) < 2 {
		return s
	}
	return s[:len(s)-1] + "." + s[len(s)-1:]
}

// digitsCode: each digit is one part (Redis 724 → "7.2.4", MongoDB 403 → "4.0.3").
func digitsCode(code int64) string {
	s := strconv.FormatInt(code, 10)
	return strings.Join(strings.Split(s, ""), ".")
}

// VersionCodeOf is the integer code of an API version string: its digits ("8.4" → 84).
func VersionCodeOf(v string) (int64, bool) {
	n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(v), ".", ""), 10, 64)
	return n, err == nil
}

// HasSpecVersion says whether the kind chooses its version with spec.version, a version
// string as Clever Cloud names it (the operator add-ons), rather than spec.options.version.
func (k *Kind) HasSpecVersion() bool { return k.Operator != "" }

// HasVariables says whether the kind's spec.variables are the add-on's variables and its
// Secret data (ConfigProvider).
func (k *Kind) HasVariables() bool { return k.ConfigProvider }

// Variables returns spec.variables of a ConfigProvider.
func (k *Kind) Variables(obj *unstructured.Unstructured) map[string]string {
	vars := SpecVariables.StringMap(obj)
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
