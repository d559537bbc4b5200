package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/catalog"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/operatoraddon"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// Operator add-ons (Keycloak, Metabase, Matomo, Otoroshi) are served at v4, keyed by
// realId, under /v4/addon-providers/addon-<name>/addons/{realId}; their state and its
// rendering are pkg/fakeapi/operatoraddon's (one State per add-on, addonRecord.op).

func (s *Server) operatorRoutes() {
	for _, k := range s.catalog.Kinds {
		op := k.Spec.Operator
		if op == "" {
			continue
		}
		base := "/v4/addon-providers/addon-" + op + "/addons/{realId}"
		s.handle("GET "+base, s.operatorHandler(op, s.getOperator))
		s.handle("POST "+base+"/reboot", s.operatorHandler(op, s.operatorAction("reboot")))
		s.handle("POST "+base+"/rebuild", s.operatorHandler(op, s.operatorAction("rebuild")))
		if operatoraddon.Versioned(op) {
			s.handle("GET "+base+"/version/check", s.operatorHandler(op, s.checkOperatorVersion))
			s.handle("POST "+base+"/version/update", s.operatorHandler(op, s.updateOperatorVersion))
		}
		if operatoraddon.HasNetworkGroup(op) {
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
		if rec == nil || rec.op == nil || rec.op.Operator() != op {
			wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "addon not found")
			return
		}
		h(w, r, rec)
	}
}

// operatorVersions is the provider's offered versions. Caller holds s.mu.
func (s *Server) operatorVersions(rec *addonRecord) []string {
	vs, _ := s.versionSpecOf(rec.kind.Spec.ProviderID)
	return vs.Offered
}

func (s *Server) getOperator(w http.ResponseWriter, r *http.Request, rec *addonRecord) {
	wire.WriteJSON(w, http.StatusOK, rec.op.View(s.operatorVersions(rec)))
}

func (s *Server) operatorAction(action string) func(http.ResponseWriter, *http.Request, *addonRecord) {
	return func(w http.ResponseWriter, r *http.Request, rec *addonRecord) {
		rec.op.Count(action)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) checkOperatorVersion(w http.ResponseWriter, r *http.Request, rec *addonRecord) {
	versions := s.operatorVersions(rec)
	latest := rec.op.Version()
	for _, v := range versions {
		if catalog.CompareVersions(v, latest) > 0 {
			latest = v
		}
	}
	wire.WriteJSON(w, http.StatusOK, map[string]any{
		"installed":  rec.op.Version(),
		"available":  wire.NonNil(slices.Clone(versions)),
		"latest":     latest,
		"needUpdate": catalog.CompareVersions(rec.op.Version(), latest) < 0,
	})
}

func (s *Server) updateOperatorVersion(w http.ResponseWriter, r *http.Request, rec *addonRecord) {
	data, ok := wire.ReadObjectBody(w, r)
	if !ok {
		return
	}
	var body struct {
		TargetVersion string `json:"targetVersion"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, wire.JSONErrorMessage(err))
		return
	}
	versions := s.operatorVersions(rec)
	if body.TargetVersion == "" || !slices.Contains(versions, body.TargetVersion) {
		wire.WriteFieldsError(w, fmt.Sprintf("targetVersion %q is not available (available: %s)", body.TargetVersion, strings.Join(versions, ", ")),
			map[string]string{"targetVersion": "not available"})
		return
	}
	rec.op.UpdateVersion(body.TargetVersion)
	rec.version = body.TargetVersion
	wire.WriteJSON(w, http.StatusOK, rec.op.View(versions))
}

func (s *Server) enableNetworkGroup(w http.ResponseWriter, r *http.Request, rec *addonRecord) {
	rec.op.EnableNetworkGroup(s.rng)
	wire.WriteJSON(w, http.StatusOK, rec.op.View(s.operatorVersions(rec)))
}

func (s *Server) disableNetworkGroup(w http.ResponseWriter, r *http.Request, rec *addonRecord) {
	rec.op.DisableNetworkGroup()
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
	view := rec.op.View(s.operatorVersions(rec))
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
	return rec.op.Calls()
}
