package fakeapi

import (
	"net/http"
	"slices"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/catalog"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// versionSpecOf returns the version information of a provider (false when
// it has none). It takes verMu only.
func (s *Server) versionSpecOf(providerID string) (catalog.VersionSpec, bool) {
	s.verMu.Lock()
	defer s.verMu.Unlock()
	vs, ok := s.versions[providerID]
	return vs, ok
}

// SetProviderVersions replaces the versions GET /v4/addon-providers/{providerId}
// announces for a provider (its "dedicated" keys, oldest first as given) and
// its defaultDedicatedVersion ("" = the last of versions). For an operator
// add-on (keycloak, metabase, otoroshi, addon-matomo) they are also the
// availableVersions of its add-ons. Existing add-ons keep their version.
// It does nothing for an unknown provider.
func (s *Server) SetProviderVersions(providerID string, versions []string, defaultVersion string) {
	if s.catalog.ByID[providerID] == nil {
		return
	}
	if defaultVersion == "" && len(versions) > 0 {
		defaultVersion = versions[len(versions)-1]
	}
	s.verMu.Lock()
	defer s.verMu.Unlock()
	vs := s.versions[providerID]
	if vs.Features == nil {
		vs.Features = []string{}
	}
	vs.Offered = slices.Clone(versions)
	vs.DefaultVersion = defaultVersion
	if _, had := s.versions[providerID]; !had {
		vs.NoMigration = true
	}
	s.versions[providerID] = vs
}

// defaultVersionOf is the version a new add-on of k gets when it asks for none.
func (s *Server) defaultVersionOf(k *catalog.Kind) string {
	if vs, ok := s.versionSpecOf(k.Spec.ProviderID); ok && vs.DefaultVersion != "" {
		return vs.DefaultVersion
	}
	return k.Spec.DefaultVersion
}

// ProviderVersions returns the dedicated versions the fake offers for a
// provider, oldest first (nil for a provider without version info).
func (s *Server) ProviderVersions(providerID string) []string {
	vs, _ := s.versionSpecOf(providerID)
	return slices.Clone(vs.Offered)
}

// providerInfo builds the GET /v4/addon-providers/{providerId} answer.
func (s *Server) providerInfo(k *catalog.Kind) (ProviderInfo, bool) {
	vs, ok := s.versionSpecOf(k.Spec.ProviderID)
	if !ok {
		return ProviderInfo{}, false
	}
	return catalog.ProviderInfo(k, vs, s.defaultVersionOf(k)), true
}

func (s *Server) getProviderInfo(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("providerId")
	k := s.catalog.ByID[id]
	if k == nil {
		wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "provider not found")
		return
	}
	info, ok := s.providerInfo(k)
	if !ok {
		wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "no version information for provider "+id)
		return
	}
	wire.WriteJSON(w, http.StatusOK, info)
}
