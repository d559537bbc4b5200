package fakeapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/faults"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// The /admin/ endpoints are for tests and scripts only: they need no
// authentication, are never counted and never see injected faults.
//
//	GET    /admin/healthz              {"status":"ok"}
//	GET    /admin/counts               {"<route key>": n}
//	GET    /admin/counts/status        {"<route key>": {"<status>": n}}
//	DELETE /admin/counts               reset both counters
//	GET    /admin/faults               current faults (durations as Go duration strings)
//	PUT    /admin/faults               replace the faults; {"outageFor":"60s"} starts an outage now
//	DELETE /admin/faults               clear every fault
//	GET    /admin/addons               {"<owner id>": [Addon...]}
//	GET    /admin/addons/{addonId}/env full env, ignoring the provisioning delay
//	PUT    /admin/addons/{addonId}/env replace the env (simulates a rotation)
//	DELETE /admin/addons/{addonId}     out-of-band deletion
//	GET    /admin/addons/{addonId}/migrations  migrations, newest first
//	GET    /admin/migrations/fail      {"count":n,"message":"…"} failures still to inject
//	PUT    /admin/migrations/fail      {"count":n,"message":"…"}: the next n migrations fail
//	DELETE /admin/migrations/fail      cancel them
//	GET    /admin/counts/owners/{ownerId}       CountsFor(ownerId)
//	GET    /admin/addons/{addonId}/options      the create request's options, as sent (CreateOptions)
//	GET    /admin/operators/{realId}            {"info": <v4 answer>, "calls": {"reboot": n, …}}
//	POST   /admin/private-plans                 {"owner","providerId","slug"} -> {"planId"} (AddPrivatePlan)
//	PUT    /admin/providers/{providerId}/versions  {"versions":[…],"default":"…"} (SetProviderVersions)
//	GET    /admin/addons/{addonId}/backups      what GET /v2/backups/{ownerId}/{ref} answers (Backups)
//	PUT    /admin/addons/{addonId}/backups      {"times":["<RFC 3339>",…]}: its backups from now on (SetBackups; [] for none)
func (s *Server) adminRoutes() {
	m := s.admin
	m.HandleFunc("GET /admin/healthz", func(w http.ResponseWriter, r *http.Request) {
		wire.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	m.HandleFunc("GET /admin/counts", func(w http.ResponseWriter, r *http.Request) {
		wire.WriteJSON(w, http.StatusOK, s.Counts())
	})
	m.HandleFunc("GET /admin/counts/status", func(w http.ResponseWriter, r *http.Request) {
		wire.WriteJSON(w, http.StatusOK, s.CountsByStatus())
	})
	m.HandleFunc("DELETE /admin/counts", func(w http.ResponseWriter, r *http.Request) {
		s.ResetCounts()
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("GET /admin/faults", func(w http.ResponseWriter, r *http.Request) {
		wire.WriteJSON(w, http.StatusOK, faults.ToJSON(s.Faults()))
	})
	m.HandleFunc("PUT /admin/faults", func(w http.ResponseWriter, r *http.Request) {
		data, ok := wire.ReadBody(w, r)
		if !ok {
			return
		}
		f, err := faults.FromJSON(data, s.now())
		if err != nil {
			wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, err.Error())
			return
		}
		s.SetFaults(f)
		wire.WriteJSON(w, http.StatusOK, faults.ToJSON(s.Faults()))
	})
	m.HandleFunc("DELETE /admin/faults", func(w http.ResponseWriter, r *http.Request) {
		s.SetFaults(Faults{})
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("GET /admin/addons", func(w http.ResponseWriter, r *http.Request) {
		wire.WriteJSON(w, http.StatusOK, s.AllAddons())
	})
	m.HandleFunc("GET /admin/addons/{addonId}/env", func(w http.ResponseWriter, r *http.Request) {
		env := s.Env(r.PathValue("addonId"))
		if env == nil {
			wire.AddonNotFound(w)
			return
		}
		wire.WriteJSON(w, http.StatusOK, env)
	})
	m.HandleFunc("PUT /admin/addons/{addonId}/env", func(w http.ResponseWriter, r *http.Request) {
		data, ok := wire.ReadBody(w, r)
		if !ok {
			return
		}
		var vars []Variable
		if err := json.Unmarshal(data, &vars); err != nil {
			wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, wire.JSONErrorMessage(err))
			return
		}
		if err := wire.ValidateVars(vars); err != nil {
			wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, err.Error())
			return
		}
		id := r.PathValue("addonId")
		if err := s.SetEnv(id, vars); err != nil {
			wire.AddonNotFound(w)
			return
		}
		wire.WriteJSON(w, http.StatusOK, s.Env(id))
	})
	m.HandleFunc("DELETE /admin/addons/{addonId}", func(w http.ResponseWriter, r *http.Request) {
		if err := s.DeleteAddonOutOfBand("", r.PathValue("addonId")); err != nil {
			wire.AddonNotFound(w)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("GET /admin/addons/{addonId}/migrations", func(w http.ResponseWriter, r *http.Request) {
		ms := s.Migrations(r.PathValue("addonId"))
		if ms == nil {
			wire.AddonNotFound(w)
			return
		}
		wire.WriteJSON(w, http.StatusOK, ms)
	})
	m.HandleFunc("GET /admin/migrations/fail", func(w http.ResponseWriter, r *http.Request) {
		n, msg := s.pendingMigrationFailures()
		wire.WriteJSON(w, http.StatusOK, migrationFailJSON{Count: n, Message: msg})
	})
	m.HandleFunc("PUT /admin/migrations/fail", func(w http.ResponseWriter, r *http.Request) {
		data, ok := wire.ReadBody(w, r)
		if !ok {
			return
		}
		var in migrationFailJSON
		if err := json.Unmarshal(data, &in); err != nil {
			wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, wire.JSONErrorMessage(err))
			return
		}
		if in.Count < 0 {
			wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, "count: must not be negative")
			return
		}
		s.FailNextMigrations(in.Count, in.Message)
		n, msg := s.pendingMigrationFailures()
		wire.WriteJSON(w, http.StatusOK, migrationFailJSON{Count: n, Message: msg})
	})
	m.HandleFunc("DELETE /admin/migrations/fail", func(w http.ResponseWriter, r *http.Request) {
		s.FailNextMigrations(0, "")
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("GET /admin/counts/owners/{ownerId}", func(w http.ResponseWriter, r *http.Request) {
		wire.WriteJSON(w, http.StatusOK, s.CountsFor(r.PathValue("ownerId")))
	})
	m.HandleFunc("GET /admin/addons/{addonId}/options", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("addonId")
		s.mu.Lock()
		known := s.find(id) != nil
		s.mu.Unlock()
		if !known {
			wire.AddonNotFound(w)
			return
		}
		opts := s.CreateOptions(id)
		if opts == nil {
			opts = map[string]any{}
		}
		wire.WriteJSON(w, http.StatusOK, opts)
	})
	m.HandleFunc("GET /admin/operators/{realId}", func(w http.ResponseWriter, r *http.Request) {
		info, ok := s.OperatorAddon(r.PathValue("realId"))
		if !ok {
			wire.AddonNotFound(w)
			return
		}
		wire.WriteJSON(w, http.StatusOK, map[string]any{"info": info, "calls": s.OperatorCalls(r.PathValue("realId"))})
	})
	m.HandleFunc("POST /admin/private-plans", func(w http.ResponseWriter, r *http.Request) {
		data, ok := wire.ReadObjectBody(w, r)
		if !ok {
			return
		}
		var in struct {
			Owner      string `json:"owner"`
			ProviderID string `json:"providerId"`
			Slug       string `json:"slug"`
		}
		if err := json.Unmarshal(data, &in); err != nil {
			wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, wire.JSONErrorMessage(err))
			return
		}
		if !wire.ValidOwner(in.Owner) {
			wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, "owner: not an owner id (orga_… or user_…)")
			return
		}
		id := s.AddPrivatePlan(in.Owner, in.ProviderID, in.Slug)
		if id == "" {
			wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, "unknown provider or empty slug")
			return
		}
		wire.WriteJSON(w, http.StatusOK, map[string]string{"planId": id})
	})
	m.HandleFunc("PUT /admin/providers/{providerId}/versions", func(w http.ResponseWriter, r *http.Request) {
		data, ok := wire.ReadObjectBody(w, r)
		if !ok {
			return
		}
		var in struct {
			Versions []string `json:"versions"`
			Default  string   `json:"default"`
		}
		if err := json.Unmarshal(data, &in); err != nil {
			wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, wire.JSONErrorMessage(err))
			return
		}
		id := r.PathValue("providerId")
		if s.catalog.ByID[id] == nil {
			wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "provider not found")
			return
		}
		if len(in.Versions) == 0 || (in.Default != "" && !slices.Contains(in.Versions, in.Default)) {
			wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, "versions: at least one, and default must be one of them")
			return
		}
		s.SetProviderVersions(id, in.Versions, in.Default)
		wire.WriteJSON(w, http.StatusOK, map[string]any{"versions": s.ProviderVersions(id)})
	})
	m.HandleFunc("GET /admin/addons/{addonId}/backups", func(w http.ResponseWriter, r *http.Request) {
		bs := s.Backups(r.PathValue("addonId"))
		if bs == nil {
			wire.AddonNotFound(w)
			return
		}
		wire.WriteJSON(w, http.StatusOK, bs)
	})
	m.HandleFunc("PUT /admin/addons/{addonId}/backups", func(w http.ResponseWriter, r *http.Request) {
		data, ok := wire.ReadObjectBody(w, r)
		if !ok {
			return
		}
		var in struct {
			Times []time.Time `json:"times"`
		}
		if err := json.Unmarshal(data, &in); err != nil {
			wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, wire.JSONErrorMessage(err))
			return
		}
		id := r.PathValue("addonId")
		if err := s.SetBackups(id, in.Times); err != nil {
			wire.AddonNotFound(w)
			return
		}
		wire.WriteJSON(w, http.StatusOK, s.Backups(id))
	})
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "Not Found (admin)")
	})
}

// migrationFailJSON is the body of /admin/migrations/fail.
type migrationFailJSON struct {
	Count   int    `json:"count"`
	Message string `json:"message"`
}

func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w}
	s.admin.ServeHTTP(rec, r)
	s.logger.Debug("fakeapi admin request", "method", r.Method, "path", r.URL.Path, "status", rec.status,
		"duration", time.Since(start).Round(time.Microsecond))
}
