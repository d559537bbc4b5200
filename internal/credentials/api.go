package credentials

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

// API is the small per-resource client the engine drives (crossplane-runtime's
// ExternalClient, reduced to the Clever Cloud calls). *clevercloud.Client implements it.
type API interface {
	// ListProvidersForOwner is the catalogue as the owner sees it (?orgaId=): with the plans
	// private to that organisation.
	ListProvidersForOwner(ctx context.Context, ownerID string) ([]clevercloud.Provider, error)
	// GetProviderInfo is what a provider announces at v4: its versions and options.
	GetProviderInfo(ctx context.Context, providerID string) (*clevercloud.ProviderInfo, error)
	// Self is the current user: a call only the real API answers (confirms a 404).
	Self(ctx context.Context) (*clevercloud.Self, error)
	GetAddon(ctx context.Context, ownerID, addonID string) (*clevercloud.Addon, error)
	ListAddons(ctx context.Context, ownerID string) ([]clevercloud.Addon, error)
	CreateAddon(ctx context.Context, ownerID string, opts clevercloud.CreateOpts) (*clevercloud.Addon, error)
	DeleteAddon(ctx context.Context, ownerID, addonID string) error
	// RenameAddon marks an add-on as this resource's (kubernetes::<Kind>::<uid>) when a
	// restored resource takes its add-on back.
	RenameAddon(ctx context.Context, ownerID, addonID, name string) (*clevercloud.Addon, error)
	GetAddonEnv(ctx context.Context, ownerID, addonID string) ([]clevercloud.Variable, error)
	GetConfigProviderEnv(ctx context.Context, realID string) ([]clevercloud.Variable, error)
	PutConfigProviderEnv(ctx context.Context, realID string, vars []clevercloud.Variable) ([]clevercloud.Variable, error)
	StartMigration(ctx context.Context, ownerID, addonID string, req clevercloud.MigrationRequest) (*clevercloud.Migration, error)
	GetMigration(ctx context.Context, ownerID, addonID, migrationID string) (*clevercloud.Migration, error)
	ListMigrations(ctx context.Context, ownerID, addonID string) ([]clevercloud.Migration, error)
	RenewCellarCredentials(ctx context.Context, ownerID, realID string) error
	// ListBackups lists the backups of a kind Clever Cloud backs up, newest first (404: none).
	ListBackups(ctx context.Context, ownerID, realID string) ([]clevercloud.Backup, error)
	// The v4 calls of the operator add-ons (Keycloak, Metabase, Matomo, Otoroshi).
	GetOperator(ctx context.Context, provider, realID string) (*clevercloud.OperatorInfo, error)
	CheckOperatorVersion(ctx context.Context, provider, realID string) (*clevercloud.OperatorVersionCheck, error)
	UpdateOperatorVersion(ctx context.Context, provider, realID, target string) (*clevercloud.OperatorInfo, error)
	RebootOperator(ctx context.Context, provider, realID string) error
	RebuildOperator(ctx context.Context, provider, realID string) error
}

// Credentials resolves what a resource's credentials allow (docs/operator.md, "Credentials
// objects"): its spec.credentialsRef, else its namespace's override Secret, else the default
// ClusterCleverCredentials. A refusal is a *RefusedError (reason and message for the
// condition); other errors are transient.
type Credentials interface {
	Resolve(ctx context.Context, obj *unstructured.Unstructured) (*Grant, error)
}
