// Package operatoraddon is the v4 data of the fake Clever Cloud API's operator
// add-ons (Keycloak, Metabase, Matomo, Otoroshi): their state, how it renders
// and which endpoints each operator has. They are served at v4, keyed by
// realId, under /v4/addon-providers/addon-<name>/addons/{realId} (clever-tools src/clever-client/operators.js; clever-client.js
// src/clients/cc-api/commands/{keycloak,metabase,matomo,otoroshi}/*.ts; Go SDK
// services/{keycloak,metabase,matomo,otoroshi}/*.go and models/keycloak.go,
// metabase.go, matomo.go, otoroshi.go give the answer's keys):
//
//	GET    …/addons/{realId}                 info (all four)
//	GET    …/addons/{realId}/version/check   {installed, available, latest, needUpdate} (keycloak, metabase, otoroshi)
//	POST   …/addons/{realId}/version/update  {"targetVersion": "…"} -> info (keycloak, metabase, otoroshi)
//	POST   …/addons/{realId}/reboot          (all four)
//	POST   …/addons/{realId}/rebuild         (all four)
//	POST   …/addons/{realId}/networkgroup    -> info (keycloak, otoroshi)
//	DELETE …/addons/{realId}/networkgroup    (keycloak, otoroshi)
//
// By default their v2 env is empty (fakeapi.Options.LegacyOperatorEnv restores it).
// pkg/fakeapi keeps one State per such add-on and serves its routes.
package operatoraddon

import (
	"maps"
	"slices"
	"strings"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/catalog"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// State is the v4 state of an operator add-on. It has no lock: the server guards it
// with its state.
type State struct {
	operator       string // keycloak, metabase, matomo, otoroshi
	providerID     string
	addonID        string
	realID         string
	name           string
	owner          string
	version        string
	runtimeVersion string // javaVersion (phpVersion for Matomo)
	accessURL      string
	user, password string            // initialCredentials (keycloak, otoroshi)
	api            map[string]string // otoroshi management API
	resources      map[string]any
	envVars        map[string]string
	networkGroup   string
	calls          map[string]int // reboot, rebuild, version/update, networkgroup
}

// versioned lists the operators with version/check and version/update
// (the Go SDK and clever-client.js have none for Matomo).
var versioned = []string{"keycloak", "metabase", "otoroshi"}

// withNetworkGroup lists the operators with a networkgroup endpoint.
var withNetworkGroup = []string{"keycloak", "otoroshi"}

// Versioned reports whether operator op has the version/check and
// version/update endpoints.
func Versioned(op string) bool { return slices.Contains(versioned, op) }

// HasNetworkGroup reports whether operator op has the networkgroup endpoint.
func HasNetworkGroup(op string) bool { return slices.Contains(withNetworkGroup, op) }

// New builds the v4 data of a new operator add-on of kind k from the values
// its (legacy) v2 env was generated with, drawing the rest from r.
func New(k *catalog.Kind, r catalog.Rand, addonID, realID, name, owner, version string, legacy []wire.Variable) *State {
	env := map[string]string{}
	for _, v := range legacy {
		env[v.Name] = v.Value
	}
	st := &State{
		operator: k.Spec.Operator, providerID: k.Spec.ProviderID, addonID: addonID, realID: realID,
		name: name, owner: owner, version: version, runtimeVersion: "21", calls: map[string]int{},
		envVars: map[string]string{},
	}
	app := "app_" + catalog.RandUUID(r)
	switch k.Spec.Operator {
	case "keycloak":
		st.accessURL = env["CC_KEYCLOAK_URL"]
		st.user, st.password = env["CC_KEYCLOAK_ADMIN"], env["CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"]
		st.resources = map[string]any{"entrypoint": env["CC_KEYCLOAK_JAVA_APPID"], "fsbucketId": env["CC_KEYCLOAK_FSBUCKET_ID"], "pgsqlId": env["CC_KEYCLOAK_POSTGRES_ID"]}
		st.envVars = map[string]string{"CC_KEYCLOAK_VERSION": version, "CC_JAVA_VERSION": "21"}
	case "metabase":
		st.accessURL = env["METABASE_URL"]
		st.resources = map[string]any{"entrypoint": app, "pgsqlId": "postgresql_" + catalog.RandUUID(r)}
		st.envVars = map[string]string{"CC_METABASE_VERSION": version, "CC_JAVA_VERSION": "21"}
	case "matomo":
		st.runtimeVersion = "8.3"
		st.accessURL = env["MATOMO_URL"]
		st.resources = map[string]any{"entrypoint": app, "mysqlId": "mysql_" + catalog.RandUUID(r), "redisId": "redis_" + catalog.RandUUID(r)}
		st.envVars = map[string]string{"CC_MATOMO_VERSION": version, "CC_PHP_VERSION": "8.3"}
	case "otoroshi":
		st.accessURL = env["CC_OTOROSHI_URL"]
		st.user, st.password = env["CC_OTOROSHI_INITIAL_ADMIN_LOGIN"], env["CC_OTOROSHI_INITIAL_ADMIN_PASSWORD"]
		apiURL := env["CC_OTOROSHI_API_URL"]
		st.api = map[string]string{
			"url": apiURL, "user": "cc-api-" + catalog.RandString(r, catalog.LowerAlnum, 8), "secret": catalog.RandString(r, catalog.Alnum, 32),
			"openapi": apiURL + "/apis/openapi.json", "swaggerUrl": apiURL + "/apis/swagger-ui",
		}
		st.resources = map[string]any{"entrypoint": app, "redisId": "redis_" + catalog.RandUUID(r)}
	}
	return st
}

// View renders the GET answer. versions are the provider's offered versions.
func (st *State) View(versions []string) map[string]any {
	plan := "BASE"
	if st.operator == "matomo" {
		plan = "BETA"
	}
	out := map[string]any{
		"resourceId":        st.realID,
		"addonId":           st.addonID,
		"name":              st.name,
		"ownerId":           st.owner,
		"plan":              plan,
		"version":           st.version,
		"accessUrl":         st.accessURL,
		"availableVersions": wire.NonNil(slices.Clone(versions)),
		"resources":         maps.Clone(st.resources),
	}
	if st.operator == "matomo" {
		out["phpVersion"] = st.runtimeVersion
	} else {
		out["javaVersion"] = st.runtimeVersion
	}
	if st.operator != "otoroshi" { // the Go SDK's Otoroshi model has no envVars
		env := make(map[string]any, len(st.envVars))
		for k, v := range st.envVars {
			env[k] = v
		}
		out["envVars"] = env
	}
	if HasNetworkGroup(st.operator) {
		features := map[string]any{}
		if st.networkGroup != "" {
			features["networkGroup"] = map[string]any{"id": st.networkGroup}
		}
		out["features"] = features
	}
	if st.operator == "keycloak" || st.operator == "otoroshi" {
		out["initialCredentials"] = map[string]any{"user": st.user, "password": st.password}
	}
	if st.operator == "otoroshi" {
		api := map[string]any{}
		for k, v := range st.api {
			api[k] = v
		}
		out["api"] = api
	}
	return out
}

// Operator is the add-on's operator: keycloak, metabase, matomo or otoroshi.
func (st *State) Operator() string { return st.operator }

// Version is the add-on's version.
func (st *State) Version() string { return st.version }

// Count counts a call of a state-changing endpoint (reboot, rebuild, …).
func (st *State) Count(action string) { st.calls[action]++ }

// Calls returns how many times each state-changing endpoint was called.
func (st *State) Calls() map[string]int {
	out := make(map[string]int, len(st.calls))
	for k, v := range st.calls {
		out[k] = v
	}
	return out
}

// UpdateVersion is a version/update to v: counted, the version and the
// version env vars (not the runtime's) become v.
func (st *State) UpdateVersion(v string) {
	st.calls["version/update"]++
	st.version = v
	for k := range st.envVars {
		if strings.HasSuffix(k, "_VERSION") && k != "CC_JAVA_VERSION" && k != "CC_PHP_VERSION" {
			st.envVars[k] = v
		}
	}
}

// EnableNetworkGroup is a POST …/networkgroup: counted, and a group (id drawn
// from r) when the add-on has none.
func (st *State) EnableNetworkGroup(r catalog.Rand) {
	if st.networkGroup == "" {
		st.networkGroup = "ng_" + catalog.RandUUID(r)
	}
	st.calls["networkgroup"]++
}

// DisableNetworkGroup is a DELETE …/networkgroup: counted, the group gone.
func (st *State) DisableNetworkGroup() {
	st.networkGroup = ""
	st.calls["networkgroup"]++
}
