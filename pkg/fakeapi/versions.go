package fakeapi

import (
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
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
}

// ProviderVersions returns the dedicated versions the fake offers for a
// provider, oldest first (nil for a provider without version info).
func (s *Server) ProviderVersions(providerID string) []string {
	return slices.Clone(providerVersions[providerID].offered)
}

// clusterNamespace derives stable shared-cluster ids.
var clusterNamespace = uuid.MustParse("6f0d2c4e-71a3-5b8e-9c42-1e5d7a3b9f10")

// providerInfo builds the GET /v4/addon-providers/{providerId} answer.
func (s *Server) providerInfo(k *kind) (clevercloud.ProviderInfo, bool) {
	vs, ok := providerVersions[k.spec.providerID]
	if !ok {
		return clevercloud.ProviderInfo{}, false
	}
	info := clevercloud.ProviderInfo{
		ProviderID:              k.spec.providerID,
		Clusters:                []clevercloud.ProviderCluster{},
		Dedicated:               map[string]clevercloud.DedicatedVersion{},
		DefaultDedicatedVersion: k.spec.defaultVersion,
	}
	for _, v := range vs.offered {
		fs := make([]clevercloud.ProviderFeature, 0, len(vs.features))
		for _, f := range vs.features {
			fs = append(fs, clevercloud.ProviderFeature{Name: f, Enabled: f == "do-backup"})
		}
		info.Dedicated[v] = clevercloud.DedicatedVersion{Features: fs}
	}
	if vs.sharedVersion != "" {
		for _, pl := range k.provider.Plans {
			if pl.Slug != "dev" {
				continue
			}
			for _, zone := range pl.Zones {
				info.Clusters = append(info.Clusters, clevercloud.ProviderCluster{
					ID:       "cluster_" + uuid.NewSHA1(clusterNamespace, []byte(k.spec.providerID+"/"+zone)).String(),
					Label:    zone + "-" + k.spec.family + "-c1",
					Zone:     zone,
					Version:  vs.sharedVersion,
					Features: []clevercloud.ProviderFeature{},
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
