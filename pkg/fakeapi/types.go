package fakeapi

import "github.com/clever-operator/clever-operator/internal/clevercloud"

// Aliases of the wire types, so code outside this module can name what the Server returns.
type (
	Addon       = clevercloud.Addon
	Provider    = clevercloud.Provider
	Plan        = clevercloud.Plan
	PlanFeature = clevercloud.PlanFeature
	Variable    = clevercloud.Variable
	Self        = clevercloud.Self
	CreateOpts  = clevercloud.CreateOpts
	ErrorBody   = clevercloud.ErrorBody
)

// Aliases of the migration and provider-info wire types.
type (
	Migration        = clevercloud.Migration
	MigrationStep    = clevercloud.MigrationStep
	MigrationRequest = clevercloud.MigrationRequest
	ProviderInfo     = clevercloud.ProviderInfo
)
