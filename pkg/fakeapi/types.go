package fakeapi

import (
	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// The fake's own wire types live in pkg/fakeapi/wire, written from Clever
// Cloud's public clients (docs/api-sources.md), NOT from internal/clevercloud.
// They are re-exported here under the same names, so that the Server's
// methods and its callers speak of fakeapi.Addon, fakeapi.Variable, …
type (
	// Provider is an item of GET /v2/products/addonproviders (wire.Provider).
	Provider = wire.Provider
	// ProviderFeatureView is an item of Provider.features.
	ProviderFeatureView = wire.ProviderFeatureView
	// AddonProvider is Addon.provider.
	AddonProvider = wire.AddonProvider
	// Plan is one plan of a provider.
	Plan = wire.Plan
	// PlanFeature is one feature of a plan.
	PlanFeature = wire.PlanFeature
	// Addon is an add-on (GET/POST /v2/organisations/{ownerId}/addons[/{addonId}]).
	Addon = wire.Addon
	// Variable is one environment variable.
	Variable = wire.Variable
	// Self is GET /v2/self.
	Self = wire.Self
	// Organisation is one item of GET /v2/organisations.
	Organisation = wire.Organisation
	// ErrorBody is the body of every non-2xx v2 answer.
	ErrorBody = wire.ErrorBody
	// MessageBody is the 200 JSON body of a successful v2 DELETE.
	MessageBody = wire.MessageBody
	// MigrationRequest is the body of POST …/addons/{addonId}/migrations.
	MigrationRequest = wire.MigrationRequest
	// Migration is one migration.
	Migration = wire.Migration
	// MigrationStep is one step of a Migration.
	MigrationStep = wire.MigrationStep
	// ProviderInfo is GET /v4/addon-providers/{providerId}.
	ProviderInfo = wire.ProviderInfo
	// ProviderCluster is a shared cluster of a provider.
	ProviderCluster = wire.ProviderCluster
	// DedicatedVersion lists the options accepted with one dedicated version.
	DedicatedVersion = wire.DedicatedVersion
	// ProviderFeature is a create option and its default.
	ProviderFeature = wire.ProviderFeature
)

// Migration statuses (wire.Migration…).
const (
	MigrationRunning    = wire.MigrationRunning
	MigrationOK         = wire.MigrationOK
	MigrationFailed     = wire.MigrationFailed
	MigrationAborted    = wire.MigrationAborted
	MigrationRecovering = wire.MigrationRecovering
	MigrationRecovered  = wire.MigrationRecovered
)
