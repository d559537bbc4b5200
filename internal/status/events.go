package status

// Reasons of the conditions of the kinds that are not add-ons, of credentials objects, and of
// status.price; every other condition reason is in status.go.
const (
	// NetworkGroup.
	ReasonCreating            = "Creating"
	ReasonAvailable           = "Available"
	ReasonNetworkGroupMissing = "NetworkGroupMissing"

	// CellarBucket.
	ReasonCellarNotFound  = "CellarNotFound"
	ReasonCellarNotReady  = "CellarNotReady"
	ReasonBucketNameTaken = "BucketNameTaken"
	ReasonBucketNotEmpty  = "BucketNotEmpty"
	ReasonS3Error         = "S3Error"

	// CleverCredentials and ClusterCleverCredentials: ReasonAuthenticated, GET /v2/self
	// answered with these credentials; ReasonCheckFailed, Clever Cloud could not be asked
	// (unavailable, throttled), retried.
	ReasonAuthenticated = "Authenticated"
	ReasonCheckFailed   = "CheckFailed"

	// status.price.reason of an add-on.
	ReasonPriceUsageBased    = "UsageBased"
	ReasonPricePlanNotListed = "PlanNotListed"
	ReasonPriceUnavailable   = "PriceUnavailable"
)

// Event reasons: Normal events when something changed; Warning events carry a condition's
// reason, or one of the Warning reasons below.
const (
	// Add-ons.
	EventAddonCreated       = "AddonCreated"
	EventAddonAdopted       = "AddonAdopted"
	EventAddonDeleted       = "AddonDeleted"
	EventAddonLeftBehind    = "AddonLeftBehind"
	EventAddonMissing       = "AddonMissing"
	EventAddonOrphaned      = "AddonOrphaned"  // the resource went, its add-on is kept
	EventAddonTakenOver     = "AddonTakenOver" // a restored resource renamed its add-on
	EventCredentialsWritten = "CredentialsWritten"
	EventCredentialsUpdated = "CredentialsUpdated"
	EventSecretReadopted    = "SecretReadopted"
	// EventSecretAdopted: a Secret the Rust operator wrote for the resource was handed over to
	// the Helm release.
	EventSecretAdopted      = "SecretAdopted"
	EventVariablesPushed    = "VariablesPushed"
	EventNetworkGroupJoined = "NetworkGroupJoined"
	EventNetworkGroupLeft   = "NetworkGroupLeft"
	// Operator add-ons' actions (their condition is VersionUpdate).
	EventAddonRebooted  = "AddonRebooted"
	EventAddonRebuilt   = "AddonRebuilt"
	EventVersionUpdated = "VersionUpdated"
	// BackupStale (Warning) when the condition turns True, BackupRecent (Normal) when False.
	EventBackupStale  = "BackupStale"
	EventBackupRecent = "BackupRecent"
	// Rotation and rollout.
	EventCredentialsRotated = "CredentialsRotated"
	EventRotationNotSupport = "RotationNotSupported"
	EventRolloutTriggered   = "RolloutTriggered"
	EventRolloutFailed      = "RolloutFailed"
	// Migrations (their condition is Migrating). EventMigrationPrice tells, before a move to
	// another plan or region, what the add-on costs now and will cost after.
	EventMigrationStarted   = "MigrationStarted"
	EventMigrationSucceeded = "MigrationSucceeded"
	EventMigrationFailed    = "MigrationFailed"
	EventMigrationPrice     = "MigrationPrice"

	// NetworkGroup.
	EventNetworkGroupCreated  = "NetworkGroupCreated"
	EventNetworkGroupDeleted  = "NetworkGroupDeleted"
	EventNetworkGroupOrphaned = "NetworkGroupOrphaned"

	// CellarBucket.
	EventBucketCreated = "BucketCreated"
	EventBucketDeleted = "BucketDeleted"
	EventBucketKept    = "BucketKept"
	EventBucketEmptied = "BucketEmptied"

	// Warning events of the operator: credentials near or past their expiry; a Helm release
	// record refused (forged or altered).
	ReasonCredentialsExpiring  = "CredentialsExpiring"
	ReasonCredentialsExpired   = "CredentialsExpired"
	ReasonReleaseRecordRefused = "ReleaseRecordRefused"
)
