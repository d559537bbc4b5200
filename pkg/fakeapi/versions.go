package fakeapi

import (
	"net/http"
	"slices"

	"github.com/google/uuid"
)

// versionSpec is what the fake knows of a provider's versions
// (clever-cloud-api-more.md §3.1-3.2). Only the database providers have one;
// GET /v4/addon-providers/{providerId} is 404 for the others, and they cannot
// be migrated.
type versionSpec struct {
	// offered are the dedicated versions (keys of "dedicated"), oldest first.
	offered []string
	// legacy versions are no longer offered but existing add-ons may run them:
	// a migration may keep such a version (same plan/region change, or a
	// refresh) but never move to one.
	legacy []string
	// features are the option names every dedicated version accepts.
	features []string
	// sharedVersion is the version of the shared clusters hosting the "dev"
	// plan ("" when the provider has no shared plan).
	sharedVersion string
	// regionChange is false when a migration cannot change the region (the
	// docs send Elasticsearch users to support).
	regionChange bool
	// noMigration: the provider cannot be migrated (operator add-ons change
	// version through their v4 version/update endpoint instead).
	noMigration bool
	// defaultVersion overrides the kind's default version ("" = keep it).
	defaultVersion string
}

var providerVersions = map[string]versionSpec{
	"postgresql-addon": {
		offered:  []string{"14", "15", "16", "17", "18"},
		legacy:   []string{"11", "12", "13"},
		features: []string{"encryption", "direct-host-only", "do-backup", "locale"}, sharedVersion: "15", regionChange: true,
	},
	"mysql-addon": {
		offered:  []string{"5.7", "8.0", "8.4"},
		features: []string{"encryption", "direct-host-only", "do-backup", "skip-log-bin"}, sharedVersion: "8.0", regionChange: true,
	},
	"redis-addon": {
		offered:  []string{"7.2.4", "8.8.0"},
		features: []string{"encryption"}, regionChange: true,
	},
	"mongodb-addon": {
		offered:  []string{"4.0.3"},
		features: []string{"encryption", "direct-host-only"}, sharedVersion: "4.0.3", regionChange: true,
	},
	"es-addon": {
		offered:  []string{"7", "8", "9"},
		features: []string{"kibana", "apm", "encryption"}, regionChange: false,
	},
	// Operator add-ons: GET /v4/addon-providers/{keycloak|metabase|otoroshi|addon-matomo}
	// (Go SDK services/*/get_*_provider_information.go). The version strings
	// are illustrative: no public source lists the versions offered today.
	"keycloak":     {offered: []string{"25.0.6", "26.1.4", "26.2.5"}, features: []string{"access-domain"}, noMigration: true},
	"metabase":     {offered: []string{"0.54.9", "0.55.6", "0.56.3"}, features: []string{}, noMigration: true},
	"otoroshi":     {offered: []string{"16.23.2", "17.5.0"}, features: []string{}, noMigration: true},
	"addon-matomo": {offered: []string{"5.3.2"}, features: []string{}, noMigration: true},
}

func cloneVersionSpecs(in map[string]versionSpec) map[string]versionSpec {
	out := make(map[string]versionSpec, len(in))
	for k, v := range in {
		v.offered = slices.Clone(v.offered)
		v.legacy = slices.Clone(v.legacy)
		v.features = slices.Clone(v.features)
		out[k] = v
	}
	return out
}

// versionSpecOf returns the version information of a provider (false when
// it has none). It takes verMu only.
func (s *Server) versionSpecOf(providerID string) (versionSpec, bool) {
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
	if s.catalog.byID[providerID] == nil {
		return
	}
	if defaultVersion == "" && len(versions) > 0 {
		defaultVersion = versions[len(versions)-1]
	}
	s.verMu.Lock()
	defer s.verMu.Unlock()
	vs := s.versions[providerID]
	if vs.features == nil {
		vs.features = []string{}
	}
	vs.offered = slices.Clone(versions)
	vs.defaultVersion = defaultVersion
	if _, had := s.versions[providerID]; !had {
		vs.noMigration = true
	}
	s.versions[providerID] = vs
}

// defaultVersionOf is the version a new add-on of k gets when it asks for none.
func (s *Server) defaultVersionOf(k *kind) string {
	if vs, ok := s.versionSpecOf(k.spec.providerID); ok && vs.defaultVersion != "" {
		return vs.defaultVersion
	}
	return k.spec.defaultVersion
}

// ProviderVersions returns the dedicated versions the fake offers for a
// provider, oldest first (nil for a provider without version info).
func (s *Server) ProviderVersions(providerID string) []string {
	vs, _ := s.versionSpecOf(providerID)
	return slices.Clone(vs.offered)
}

// clusterNamespace derives stable shared-cluster ids.
var clusterNamespace = uuid.MustParse("6f0d2c4e-71a3-5b8e-9c42-1e5d7a3b9f10")

// providerInfo builds the GET /v4/addon-providers/{providerId} answer.
func (s *Server) providerInfo(k *kind) (ProviderInfo, bool) {
	vs, ok := s.versionSpecOf(k.spec.providerID)
	if !ok {
		return ProviderInfo{}, false
	}
	info := ProviderInfo{
		ProviderID:              k.spec.providerID,
		Clusters:                []ProviderCluster{},
		Dedicated:               map[string]DedicatedVersion{},
		DefaultDedicatedVersion: s.defaultVersionOf(k),
	}
	for _, v := range vs.offered {
		fs := make([]ProviderFeature, 0, len(vs.features))
		for _, f := range vs.features {
			fs = append(fs, ProviderFeature{Name: f, Enabled: f == "do-backup"})
		}
		info.Dedicated[v] = DedicatedVersion{Features: fs}
	}
	if vs.sharedVersion != "" {
		for _, pl := range k.provider.Plans {
			if pl.Slug != "dev" {
				continue
			}
			for _, zone := range pl.Zones {
				info.Clusters = append(info.Clusters, ProviderCluster{
					ID:       "cluster_" + uuid.NewSHA1(clusterNamespace, []byte(k.spec.providerID+"/"+zone)).String(),
					Label:    zone + "-" + k.spec.family + "-c1",
					Zone:     zone,
					Version:  vs.sharedVersion,
					Features: []ProviderFeature{},
				})
			}
		}
	}
	return info, true
}

func (s *Server) getProviderInfo(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("providerId")
	k := s.catalog.byID[id]
	if k == nil {
		writeError(w, http.StatusNotFound, errIDNotFound, "provider not found")
		return
	}
	info, ok := s.providerInfo(k)
	if !ok {
		writeError(w, http.StatusNotFound, errIDNotFound, "no version information for provider "+id)
		return
	}
	writeJSON(w, http.StatusOK, info)
}
