package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Operator add-ons (Keycloak, Metabase, Matomo, Otoroshi) are served at v4,
// keyed by realId, under /v4/addon-providers/addon-<name>/addons/{realId}
// (clever-tools src/clever-client/operators.js; clever-client.js
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
// By default their v2 env is empty (Options.LegacyOperatorEnv restores it).

// operatorState is the v4 state of an operator add-on. Guarded by Server.mu.
type operatorState struct {
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

// operatorVersioned lists the operators with version/check and version/update
// (the Go SDK and clever-client.js have none for Matomo).
var operatorVersioned = []string{"keycloak", "metabase", "otoroshi"}

// operatorNetworkGroup lists the operators with a networkgroup endpoint.
var operatorNetworkGroup = []string{"keycloak", "otoroshi"}

// newOperatorState builds the v4 data of a new operator add-on from the
// values its (legacy) v2 env was generated with. Caller holds s.mu.
func (s *Server) newOperatorState(k *kind, addonID, realID, name, owner, version string, legacy []Variable) *operatorState {
	env := map[string]string{}
	for _, v := range legacy {
		env[v.Name] = v.Value
	}
	st := &operatorState{
		operator: k.spec.operator, providerID: k.spec.providerID, addonID: addonID, realID: realID,
		name: name, owner: owner, version: version, runtimeVersion: "21", calls: map[string]int{},
		envVars: map[string]string{},
	}
	app := "app_" + s.newUUID()
	switch k.spec.operator {
	case "keycloak":
		st.accessURL = env["CC_KEYCLOAK_URL"]
		st.user, st.password = env["CC_KEYCLOAK_ADMIN"], env["CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"]
		st.resources = map[string]any{"entrypoint": env["CC_KEYCLOAK_JAVA_APPID"], "fsbucketId": env["CC_KEYCLOAK_FSBUCKET_ID"], "pgsqlId": env["CC_KEYCLOAK_POSTGRES_ID"]}
		st.envVars = map[string]string{"CC_KEYCLOAK_VERSION": version, "CC_JAVA_VERSION": "21"}
	case "metabase":
		st.accessURL = env["METABASE_URL"]
		st.resources = map[string]any{"entrypoint": app, "pgsqlId": "postgresql_" + s.newUUID()}
		st.envVars = map[string]string{"CC_METABASE_VERSION": version, "CC_JAVA_VERSION": "21"}
	case "matomo":
		st.runtimeVersion = "8.3"
		st.accessURL = env["MATOMO_URL"]
		st.resources = map[string]any{"entrypoint": app, "mysqlId": "mysql_" + s.newUUID(), "redisId": "redis_" + s.newUUID()}
		st.envVars = map[string]string{"CC_MATOMO_VERSION": version, "CC_PHP_VERSION": "8.3"}
	case "otoroshi":
		st.accessURL = env["CC_OTOROSHI_URL"]
		st.user, st.password = env["CC_OTOROSHI_INITIAL_ADMIN_LOGIN"], env["CC_OTOROSHI_INITIAL_ADMIN_PASSWORD"]
		apiURL := env["CC_OTOROSHI_API_URL"]
		st.api = map[string]string{
			"url": apiURL, "user": "cc-api-" + s.randString(lowerAlnum, 8), "secret": s.randString(alnum, 32),
			"openapi": apiURL + "/apis/openapi.json", "swaggerUrl": apiURL + "/apis/swagger-ui",
		}
		st.resources = map[string]any{"entrypoint": app, "redisId": "redis_" + s.newUUID()}
	}
	return st
}

// view renders the GET answer. versions are the provider's offered versions.
func (st *operatorState) view(versions []string) map[string]any {
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
		"availableVersions": nonNil(slices.Clone(versions)),
		"resources":         cloneOptions(st.resources),
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
	if slices.Contains(operatorNetworkGroup, st.operator) {
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

func (s *Server) operatorRoutes() {
	for _, ks := range kindSpecs {
		op := ks.operator
		if op == "" {
			continue
		}
		base := "/v4/addon-providers/addon-" + op + "/addons/{realId}"
		s.handle("GET "+base, s.operatorHandler(op, s.getOperator))
		s.handle("POST "+base+"/reboot", s.operatorHandler(op, s.operatorAction("reboot")))
		s.handle("POST "+base+"/rebuild", s.operatorHandler(op, s.operatorAction("rebuild")))
		if slices.Contains(operatorVersioned, op) {
			s.handle("GET "+base+"/version/check", s.operatorHandler(op, s.checkOperatorVersion))
			s.handle("POST "+base+"/version/update", s.operatorHandler(op, s.updateOperatorVersion))
		}
		if slices.Contains(operatorNetworkGroup, op) {
			s.handle("POST "+base+"/networkgroup", s.operatorHandler(op, s.enableNetworkGroup))
			s.handle("DELETE "+base+"/networkgroup", s.operatorHandler(op, s.disableNetworkGroup))
		}
	}
}

// operatorHandler finds the add-on of operator op named by {realId} (404
// for an unknown realId, an addon_ id, or another kind's realId) and calls h
// with s.mu held.
func (s *Server) operatorHandler(op string, h func(http.ResponseWriter, *http.Request, *addonRecord)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.lockState()
		defer s.mu.Unlock()
		rec := s.byRealID[r.PathValue("realId")]
		if rec == nil || rec.op == nil || rec.op.operator != op {
			writeError(w, http.StatusNotFound, errIDNotFound, "addon not found")
			return
		}
		h(w, r, rec)
	}
}

// operatorVersions is the provider's offered versions. Caller holds s.mu.
func (s *Server) operatorVersions(rec *addonRecord) []string {
	vs, _ := s.versionSpecOf(rec.kind.spec.providerID)
	return vs.offered
}

func (s *Server) getOperator(w http.ResponseWriter, r *http.Request, rec *addonRecord) {
	writeJSON(w, http.StatusOK, rec.op.view(s.operatorVersions(rec)))
}

func (s *Server) operatorAction(action string) func(http.ResponseWriter, *http.Request, *addonRecord) {
	return func(w http.ResponseWriter, r *http.Request, rec *addonRecord) {
		rec.op.calls[action]++
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) checkOperatorVersion(w http.ResponseWriter, r *http.Request, rec *addonRecord) {
	versions := s.operatorVersions(rec)
	latest := rec.op.version
	for _, v := range versions {
		if compareVersions(v, latest) > 0 {
			latest = v
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"installed":  rec.op.version,
		"available":  nonNil(slices.Clone(versions)),
		"latest":     latest,
		"needUpdate": compareVersions(rec.op.version, latest) < 0,
	})
}

func (s *Server) updateOperatorVersion(w http.ResponseWriter, r *http.Request, rec *addonRecord) {
	data, ok := readObjectBody(w, r)
	if !ok {
		return
	}
	var body struct {
		TargetVersion string `json:"targetVersion"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		writeError(w, http.StatusBadRequest, errIDBadRequest, jsonErrorMessage(err))
		return
	}
	versions := s.operatorVersions(rec)
	if body.TargetVersion == "" || !slices.Contains(versions, body.TargetVersion) {
		writeFieldsError(w, fmt.Sprintf("targetVersion %q is not available (available: %s)", body.TargetVersion, strings.Join(versions, ", ")),
			map[string]string{"targetVersion": "not available"})
		return
	}
	rec.op.calls["version/update"]++
	rec.op.version = body.TargetVersion
	rec.version = body.TargetVersion
	for k := range rec.op.envVars {
		if strings.HasSuffix(k, "_VERSION") && k != "CC_JAVA_VERSION" && k != "CC_PHP_VERSION" {
			rec.op.envVars[k] = body.TargetVersion
		}
	}
	writeJSON(w, http.StatusOK, rec.op.view(versions))
}

func (s *Server) enableNetworkGroup(w http.ResponseWriter, r *http.Request, rec *addonRecord) {
	if rec.op.networkGroup == "" {
		rec.op.networkGroup = "ng_" + s.newUUID()
	}
	rec.op.calls["networkgroup"]++
	writeJSON(w, http.StatusOK, rec.op.view(s.operatorVersions(rec)))
}

func (s *Server) disableNetworkGroup(w http.ResponseWriter, r *http.Request, rec *addonRecord) {
	rec.op.networkGroup = ""
	rec.op.calls["networkgroup"]++
	w.WriteHeader(http.StatusNoContent)
}

// ---- accessors (for tests) ----

// OperatorAddon returns the v4 answer of an operator add-on (by realId) as
// GET /v4/addon-providers/addon-<name>/addons/{realId} serves it now, decoded
// from its JSON; false when realId is not an operator add-on.
func (s *Server) OperatorAddon(realID string) (map[string]any, bool) {
	s.lockState()
	rec := s.byRealID[realID]
	if rec == nil || rec.op == nil {
		s.mu.Unlock()
		return nil, false
	}
	view := rec.op.view(s.operatorVersions(rec))
	s.mu.Unlock()
	data, err := json.Marshal(view)
	if err != nil {
		return nil, false
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, false
	}
	return out, true
}

// OperatorCalls returns how many times the state-changing v4 endpoints were
// called for an operator add-on (by realId): keys "reboot", "rebuild",
// "version/update", "networkgroup"; nil when realId is not an operator add-on.
func (s *Server) OperatorCalls(realID string) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.byRealID[realID]
	if rec == nil || rec.op == nil {
		return nil
	}
	out := make(map[string]int, len(rec.op.calls))
	for k, v := range rec.op.calls {
		out[k] = v
	}
	return out
}
