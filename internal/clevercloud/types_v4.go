package clevercloud

// JSON shapes of the v4 endpoints of Clever Cloud's "operator" add-ons (Keycloak, Metabase,
// Matomo, Otoroshi). Field names follow clever-client.js
// (src/clients/cc-api/commands/{keycloak,metabase,matomo,otoroshi}/*.types.ts and their
// *-transform.ts, which read the raw answer) and Clever Cloud's Go SDK generated from the
// OpenAPI description (CleverCloud/clevercloud-sdk-go models/keycloak.go, metabase.go,
// matomo.go, otoroshi.go, otoroshi_api.go, basic_credentials.go, *_resources.go,
// keycloak_version_checker.go, metabase_version_check.go).

// OperatorInfo is GET /v4/addon-providers/addon-{name}/addons/{realId}. Fields a kind does
// not have are left empty (Metabase and Matomo have no initialCredentials, only Otoroshi
// has api, Matomo has phpVersion instead of javaVersion).
type OperatorInfo struct {
	ResourceID        string   `json:"resourceId"`
	AddonID           string   `json:"addonId"`
	Name              string   `json:"name"`
	OwnerID           string   `json:"ownerId"`
	Plan              string   `json:"plan"`
	Version           string   `json:"version"`
	JavaVersion       string   `json:"javaVersion,omitempty"`
	PHPVersion        string   `json:"phpVersion,omitempty"`
	AccessURL         string   `json:"accessUrl"`
	AvailableVersions []string `json:"availableVersions,omitempty"`
	// Resources are the ids of what Clever Cloud runs the add-on with; the keys a kind has
	// differ (SDK models/*_resources.go). A null id decodes as "".
	Resources OperatorResources `json:"resources"`
	Features  OperatorFeatures  `json:"features"`
	// InitialCredentials are the first administrator's login (Keycloak, Otoroshi).
	InitialCredentials *BasicCredentials `json:"initialCredentials,omitempty"`
	// API is Otoroshi's management API.
	API *OtoroshiAPI `json:"api,omitempty"`
	// EnvVars is the environment of the add-on's application (a name → value map).
	EnvVars map[string]string `json:"envVars,omitempty"`
}

// OperatorResources are the ids of the add-on's building blocks. Entrypoint is the id of
// the application that serves it (clever-tools opens its logs with it).
type OperatorResources struct {
	Entrypoint string `json:"entrypoint,omitempty"`
	PgsqlID    string `json:"pgsqlId,omitempty"`
	FsbucketID string `json:"fsbucketId,omitempty"`
	MysqlID    string `json:"mysqlId,omitempty"`
	RedisID    string `json:"redisId,omitempty"`
	KvID       string `json:"kvId,omitempty"`
	CellarID   string `json:"cellarId,omitempty"`
	PulsarID   string `json:"pulsarId,omitempty"`
	ElasticID  string `json:"elasticId,omitempty"`
}

// OperatorFeatures are the optional features of an operator add-on.
type OperatorFeatures struct {
	NetworkGroup *OperatorNetworkGroup `json:"networkGroup,omitempty"`
}

// OperatorNetworkGroup is the network group an operator add-on is linked to.
type OperatorNetworkGroup struct {
	ID string `json:"id"`
}

// BasicCredentials is a user and password (SDK models/basic_credentials.go).
type BasicCredentials struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// OtoroshiAPI is Otoroshi's management API (SDK models/otoroshi_api.go): its URL and the
// client id (user) and secret to call it with.
type OtoroshiAPI struct {
	URL        string `json:"url"`
	User       string `json:"user"`
	Secret     string `json:"secret"`
	OpenAPI    string `json:"openapi"`
	SwaggerURL string `json:"swaggerUrl"`
}

// OperatorVersionCheck is GET …/addons/{realId}/version/check
// (clever-client.js check-keycloak-version-command.types.ts; SDK keycloak_version_checker.go).
type OperatorVersionCheck struct {
	Installed  string   `json:"installed"`
	Available  []string `json:"available,omitempty"`
	Latest     string   `json:"latest"`
	NeedUpdate bool     `json:"needUpdate"`
}

// OperatorVersionUpdate is the body of POST …/addons/{realId}/version/update
// (clever-client.js update-keycloak-version-command.ts).
type OperatorVersionUpdate struct {
	TargetVersion string `json:"targetVersion"`
}
