// Package wire holds the fake Clever Cloud API's own wire types: the JSON
// shapes it reads and answers, their deep copies, and how it reads request
// bodies and writes answers and error bodies. They are written from Clever
// Cloud's public clients (docs/api-sources.md names the file each one
// follows), NOT from internal/clevercloud: a field the operator's client
// misnames must show up as a mismatch in internal/clevercloud/contract_test.go,
// not be copied here. Go field names are kept stable for the tests that use
// the accessors. pkg/fakeapi re-exports every type under the same name.
package wire

import (
	"strconv"
	"strings"
)

// Provider is an item of GET /v2/products/addonproviders: the v2 OpenAPI
// AddonProviderInfoFullView (krezreb/openapi-client-clevercloud
// docs/AddonProviderInfoFullView.md), i.e. AddonProvider plus "plans" and
// "features" (clever-client.js addon-provider-transform.ts
// transformAddonProviderFull reads both; Rust SDK src/v2/addon.rs Provider).
type Provider struct {
	// AddonProvider's fields, flattened into the same JSON object.
	AddonProvider
	Plans []Plan `json:"plans"`
	// Features describes the plan features' names and types.
	Features []ProviderFeatureView `json:"features"`
}

// ProviderFeatureView is an item of Provider.features (OpenAPI
// AddonFeatureView: name, type, name_code).
type ProviderFeatureView struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	NameCode *string `json:"name_code"`
}

// AddonProvider is Addon.provider: the v2 OpenAPI AddonProviderInfoView
// (docs/AddonProviderInfoView.md, AddonView.md), without plans or features.
type AddonProvider struct {
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
}

// Plan is one plan of a provider (Rust SDK Plan; clever-components fixture
// src/stories/fixtures/addon-plans.js).
type Plan struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Slug     string        `json:"slug"`
	Price    float32       `json:"price"`
	PriceID  *string       `json:"price_id"`
	Features []PlanFeature `json:"features"`
	Zones    []string      `json:"zones"`
}

// PlanFeature is one feature of a plan (snake_case keys, as in the fixture).
type PlanFeature struct {
	Name            string  `json:"name"`
	Type            string  `json:"type"`
	Value           string  `json:"value"`
	ComputableValue *string `json:"computable_value"`
	NameCode        *string `json:"name_code"`
}

// Addon is an add-on: GET/POST /v2/organisations/{ownerId}/addons[/{addonId}]
// (Rust SDK src/v2/addon.rs Addon; clever-client.js addon-transform.ts).
type Addon struct {
	ID           string        `json:"id"`
	Name         *string       `json:"name"`
	RealID       string        `json:"realId"`
	Region       string        `json:"region"`
	Provider     AddonProvider `json:"provider"`
	Plan         Plan          `json:"plan"`
	CreationDate uint64        `json:"creationDate"`
	ConfigKeys   []string      `json:"configKeys"`
}

// AddonName returns the add-on's name, or "" when it has none.
func (a *Addon) AddonName() string {
	if a.Name == nil {
		return ""
	}
	return *a.Name
}

// CreateRequest is the body of POST /v2/organisations/{ownerId}/addons
// (clever-client.js create-addon-command.ts: name, providerId, region, plan,
// options as a flat string map; Terraform may send "options": null).
type CreateRequest struct {
	Name       string         `json:"name"`
	Region     string         `json:"region"`
	ProviderID string         `json:"providerId"`
	Plan       string         `json:"plan"`
	Options    map[string]any `json:"options"`
}

// Option returns options[key] as a string ("" when absent; non-strings are
// rendered as JSON scalars would be, e.g. true -> "true").
func (c CreateRequest) Option(key string) string {
	v, ok := c.Options[key]
	if !ok || v == nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return ""
	}
}

// Variable is one environment variable (GET …/env items: {name, value}).
type Variable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Self is GET /v2/self (Rust SDK src/v2/myself.rs; clever-client.js
// profile-transform.ts).
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

// Organisation is one item of GET /v2/organisations (clever-client.js
// organisation-transform.ts transformOrganisation reads these keys).
type Organisation struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Description      string `json:"description"`
	BillingEmail     string `json:"billingEmail"`
	Address          string `json:"address"`
	City             string `json:"city"`
	Zipcode          string `json:"zipcode"`
	Country          string `json:"country"`
	Company          string `json:"company"`
	VAT              string `json:"VAT"`
	Avatar           string `json:"avatar"`
	VatState         string `json:"vatState"`
	CustomerFullName string `json:"customerFullName"`
	CanPay           bool   `json:"canPay"`
	CleverEnterprise bool   `json:"cleverEnterprise"`
	EmergencyNumber  string `json:"emergencyNumber"`
	CanSEPA          bool   `json:"canSEPA"`
	IsTrusted        bool   `json:"isTrusted"`
}

// ValidOwner reports whether id is an owner id as the API's paths take it:
// an organisation (orga_…) or a user (user_…).
func ValidOwner(id string) bool {
	return (strings.HasPrefix(id, "orga_") || strings.HasPrefix(id, "user_")) && len(id) > len("orga_")
}

// ErrorBody is the body of every non-2xx v2 answer: {id, message, type}
// (id signed: the API answers -500 for provider errors), plus "fields" on
// validation errors.
type ErrorBody struct {
	ID      int64             `json:"id"`
	Message string            `json:"message"`
	Type    string            `json:"type"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// MessageBody is the 200 JSON body of a successful v2 DELETE (add-on,
// migration abort): same keys as ErrorBody, type "success".
type MessageBody struct {
	ID      int64  `json:"id"`
	Message string `json:"message"`
	Type    string `json:"type"`
}

// Migration statuses (clever-client.js migration.types.ts).
const (
	MigrationRunning    = "RUNNING"
	MigrationOK         = "OK"
	MigrationFailed     = "FAILED"
	MigrationAborted    = "ABORTED"
	MigrationRecovering = "RECOVERING"
	MigrationRecovered  = "RECOVERED"
)

// MigrationRequest is the body of POST …/addons/{addonId}/migrations
// (clever-client.js start-migration-command.ts; Terraform pkg/tmp/addon.go).
type MigrationRequest struct {
	PlanID  string  `json:"planId"`
	Region  string  `json:"region"`
	Version *string `json:"version"`
}

// Migration is one migration (Terraform AddonMigrationResponse;
// clever-client.js migration.types.ts).
type Migration struct {
	MigrationID string          `json:"migrationId"`
	RequestDate string          `json:"requestDate"`
	Status      string          `json:"status"`
	Steps       []MigrationStep `json:"steps"`
}

// MigrationStep is one step of a Migration.
type MigrationStep struct {
	Value     string `json:"value"`
	Status    string `json:"status"`
	StartDate string `json:"startDate"`
	EndDate   string `json:"endDate,omitempty"`
	Message   string `json:"message,omitempty"`
}

// ProviderInfo is GET /v4/addon-providers/{providerId} (Go SDK
// models/provider_infos.go, dedicated.go, cluster_console.go).
type ProviderInfo struct {
	ProviderID              string                      `json:"providerId"`
	Clusters                []ProviderCluster           `json:"clusters"`
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
