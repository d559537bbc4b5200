package clevercloud

import (
	"bytes"
	"encoding/json"
	"slices"
)

// JSON shapes of the Clever Cloud API as the operator uses them
// (../shared/docs/clever-cloud-api.md §4.5). Field order and names are the wire contract;
// the fake server (pkg/fakeapi) has its own types and shares none of these.

// Provider is an add-on provider (GET /v2/products/addonproviders items, Addon.provider).
type Provider struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Website        string   `json:"website"`
	SupportEmail   string   `json:"supportEmail"`
	GooglePlusName string   `json:"googlePlusName"`
	TwitterName    string   `json:"twitterName"`
	AnalyticsID    string   `json:"analyticsId"`
	ShortDesc      string   `json:"shortDesc"`
	LongDesc       string   `json:"longDesc"`
	LogoURL        string   `json:"logoUrl"`
	Status         string   `json:"status"`
	OpenInNewTab   bool     `json:"openInNewTab"`
	CanUpgrade     bool     `json:"canUpgrade"`
	Regions        []string `json:"regions"`
	Plans          []Plan   `json:"plans"`
}

// Plan is one plan of a provider.
type Plan struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Slug     string        `json:"slug"`
	Price    float32       `json:"price"`
	PriceID  *string       `json:"price_id"`
	Features []PlanFeature `json:"features"`
	Zones    []string      `json:"zones"`
}

// PlanFeature describes one feature of a plan.
type PlanFeature struct {
	Name            string  `json:"name"`
	Type            string  `json:"type"`
	Value           string  `json:"value"`
	ComputableValue *string `json:"computable_value"`
	NameCode        *string `json:"name_code"`
}

// Addon is an add-on instance (GET/POST /v2/organisations/{owner}/addons...).
type Addon struct {
	ID           string   `json:"id"`
	Name         *string  `json:"name"`
	RealID       string   `json:"realId"`
	Region       string   `json:"region"`
	Provider     Provider `json:"provider"`
	Plan         Plan     `json:"plan"`
	CreationDate uint64   `json:"creationDate"`
	ConfigKeys   []string `json:"configKeys"`
}

// AddonName returns the add-on's name, or "" when it has none.
func (a *Addon) AddonName() string {
	if a.Name == nil {
		return ""
	}
	return *a.Name
}

// CreateOpts is the body of POST /v2/organisations/{owner}/addons.
type CreateOpts struct {
	Name       string  `json:"name"`
	Region     string  `json:"region"`
	ProviderID string  `json:"providerId"`
	Plan       string  `json:"plan"`
	Options    Options `json:"options"`
}

// Options are the create options; every key is omitted when empty.
type Options struct {
	Version    string `json:"version,omitempty"`
	Encryption string `json:"encryption,omitempty"`
	// Kibana and APM ask for the ElasticSearch add-on's Kibana and APM services: flat option
	// keys with the value "true", as the Terraform provider sends them
	// (pkg/resources/database/elasticsearch/crud.go) and clever-tools' --option kibana=true
	// (src/models/addon.js parseAddonOptions); omitted when not wanted.
	Kibana string `json:"kibana,omitempty"`
	APM    string `json:"apm,omitempty"`
	// Services is no longer sent by the operator (it once carried kibana/apm as a JSON
	// string, which the API does not read); kept for older callers.
	Services string `json:"services,omitempty"`
	// Extra are options passed through as they are (the generic Addon kind's spec.options,
	// as clever-tools' `addon create --option key=value` sends them): flat string keys, sent
	// next to the fields above. A field above wins over an Extra key of the same name.
	Extra map[string]string `json:"-"`
}

// MarshalJSON writes the options as one flat JSON object: the struct's non-empty fields as
// their tags say, in declared order (the wire form the struct always had), then the Extra keys
// those fields do not set, sorted. The fields are not listed twice: the struct is marshalled
// through a method-less copy of its type, and what it wrote decides which Extra keys remain.
func (o Options) MarshalJSON() ([]byte, error) {
	type plain Options // same fields and tags, no MarshalJSON; Extra is `json:"-"`
	b, err := json.Marshal(plain(o))
	if err != nil || len(o.Extra) == 0 {
		return b, err
	}
	var set map[string]json.RawMessage
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(o.Extra))
	for k := range o.Extra {
		if _, ok := set[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := bytes.TrimSuffix(b, []byte("}"))
	for i, k := range keys {
		if i > 0 || len(set) > 0 {
			out = append(out, ',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(o.Extra[k])
		out = append(append(append(out, kb...), ':'), vb...)
	}
	return append(out, '}'), nil
}

// Variable is one environment variable of an add-on.
type Variable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// EnvMap is an env list as a map of names to values.
func EnvMap(env []Variable) map[string]string {
	data := make(map[string]string, len(env))
	for _, e := range env {
		data[e.Name] = e.Value
	}
	return data
}

// Self is the current user (GET /v2/self).
type Self struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Email          string   `json:"email"`
	Phone          string   `json:"phone"`
	Address        string   `json:"address"`
	City           string   `json:"city"`
	Zipcode        string   `json:"zipcode"`
	Country        string   `json:"country"`
	Avatar         string   `json:"avatar"`
	CreationDate   uint64   `json:"creationDate"`
	Lang           string   `json:"lang"`
	EmailValidated bool     `json:"emailValidated"`
	OauthApps      []string `json:"oauthApps"`
	Admin          bool     `json:"admin"`
	CanPay         bool     `json:"canPay"`
	PreferredMFA   string   `json:"preferredMFA"`
	HasPassword    bool     `json:"hasPassword"`
}

// ErrorBody is the JSON body of every non-2xx answer.
// ID is signed: the API answers -500 for provider errors (clever-cloud-api-more.md §6.2).
type ErrorBody struct {
	ID      int64             `json:"id"`
	Message string            `json:"message"`
	Type    string            `json:"type"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// ---- add-on migrations (clever-cloud-api-more.md §1) ----

// Migration statuses, used both for a Migration and for each of its steps
// (clever-client.js migration.types.ts).
const (
	MigrationRunning    = "RUNNING"
	MigrationOK         = "OK"
	MigrationFailed     = "FAILED"
	MigrationAborted    = "ABORTED"
	MigrationRecovering = "RECOVERING"
	MigrationRecovered  = "RECOVERED"
)

// MigrationRequest is the body of POST /v2/organisations/{ownerId}/addons/{addonId}/migrations.
// Send all three keys (as Terraform and clever-client.js do), reusing the
// current value for what does not change. PlanID is a plan id (plan_<uuid>),
// not a slug; Region a zone name ("par"); Version a key of the provider's
// dedicated versions ("17", "8.4"). A nil Version is sent as null.
type MigrationRequest struct {
	PlanID  string  `json:"planId"`
	Region  string  `json:"region"`
	Version *string `json:"version"`
}

// Migration is one migration of an add-on (answer of M1, items of M2, M3).
type Migration struct {
	// MigrationID looks like "migration_<uuid>".
	MigrationID string `json:"migrationId"`
	// RequestDate is an ISO 8601 date (a string on the wire, never a number).
	RequestDate string          `json:"requestDate"`
	Status      string          `json:"status"`
	Steps       []MigrationStep `json:"steps"`
}

// MigrationStep is one step of a Migration. Value is the step name
// (e.g. "DUMP_AND_RESTORE"); Status takes the same values as Migration.Status.
type MigrationStep struct {
	Value     string `json:"value"`
	Status    string `json:"status"`
	StartDate string `json:"startDate"`
	EndDate   string `json:"endDate,omitempty"` // absent while the step runs
	Message   string `json:"message,omitempty"`
}

// Done reports whether the migration has stopped moving: every status except
// RUNNING and RECOVERING (a rollback in progress) is final. An unknown status is
// treated as final, like Terraform does.
func (m Migration) Done() bool {
	return m.Status != MigrationRunning && m.Status != MigrationRecovering
}

// Succeeded reports whether the migration finished successfully (status OK).
// Only then have the add-on's plan, region, version and credentials changed.
func (m Migration) Succeeded() bool { return m.Status == MigrationOK }

// FailedStep returns the first step whose status is FAILED (its Message usually
// explains why), and false when there is none.
func (m Migration) FailedStep() (MigrationStep, bool) {
	for _, s := range m.Steps {
		if s.Status == MigrationFailed {
			return s, true
		}
	}
	return MigrationStep{}, false
}

// ---- v4 provider info (clever-cloud-api-more.md §3.1) ----

// ProviderInfo is GET /v4/addon-providers/{providerId}: the versions a provider
// offers and the options each accepts.
type ProviderInfo struct {
	ProviderID string `json:"providerId"`
	// Clusters are the shared clusters hosting the shared (DEV) plans.
	Clusters []ProviderCluster `json:"clusters"`
	// Dedicated maps each version selectable on dedicated plans ("17", "8.4")
	// to the options it accepts.
	Dedicated               map[string]DedicatedVersion `json:"dedicated"`
	DefaultDedicatedVersion string                      `json:"defaultDedicatedVersion"`
}

// ProviderCluster is a shared cluster of a provider.
type ProviderCluster struct {
	ID       string            `json:"id"`
	Label    string            `json:"label"`
	Zone     string            `json:"zone"`
	Version  string            `json:"version"`
	Features []ProviderFeature `json:"features"`
}

// DedicatedVersion lists the options accepted with one dedicated version.
type DedicatedVersion struct {
	Features []ProviderFeature `json:"features"`
}

// ProviderFeature is a create option and its default.
type ProviderFeature struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
}

// Versions returns the keys of Dedicated, oldest first (CompareVersions order).
func (p *ProviderInfo) Versions() []string {
	out := make([]string, 0, len(p.Dedicated))
	for v := range p.Dedicated {
		out = append(out, v)
	}
	slices.SortFunc(out, CompareVersions)
	return out
}

// HasVersion reports whether v is a dedicated version of the provider.
func (p *ProviderInfo) HasVersion(v string) bool {
	_, ok := p.Dedicated[v]
	return ok
}
