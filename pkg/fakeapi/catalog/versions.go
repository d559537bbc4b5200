package catalog

import (
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// VersionSpec is what the fake knows of a provider's versions
// (clever-cloud-api-more.md §3.1-3.2). Only the database providers have one;
// GET /v4/addon-providers/{providerId} is 404 for the others, and they cannot
// be migrated.
type VersionSpec struct {
	// Offered are the dedicated versions (keys of "dedicated"), oldest first.
	Offered []string
	// Legacy versions are no longer offered but existing add-ons may run them:
	// a migration may keep such a version (same plan/region change, or a
	// refresh) but never move to one.
	Legacy []string
	// Features are the option names every dedicated version accepts.
	Features []string
	// SharedVersion is the version of the shared clusters hosting the "dev"
	// plan ("" when the provider has no shared plan).
	SharedVersion string
	// RegionChange is false when a migration cannot change the region (the
	// docs send Elasticsearch users to support).
	RegionChange bool
	// NoMigration: the provider cannot be migrated (operator add-ons change
	// version through their v4 version/update endpoint instead).
	NoMigration bool
	// DefaultVersion overrides the kind's default version ("" = keep it).
	DefaultVersion string
}

var providerVersions = map[string]VersionSpec{
	"postgresql-addon": {
		Offered:  []string{"14", "15", "16", "17", "18"},
		Legacy:   []string{"11", "12", "13"},
		Features: []string{"encryption", "direct-host-only", "do-backup", "locale"}, SharedVersion: "15", RegionChange: true,
	},
	"mysql-addon": {
		Offered:  []string{"5.7", "8.0", "8.4"},
		Features: []string{"encryption", "direct-host-only", "do-backup", "skip-log-bin"}, SharedVersion: "8.0", RegionChange: true,
	},
	"redis-addon": {
		Offered:  []string{"7.2.4", "8.8.0"},
		Features: []string{"encryption"}, RegionChange: true,
	},
	"mongodb-addon": {
		Offered:  []string{"4.0.3"},
		Features: []string{"encryption", "direct-host-only"}, SharedVersion: "4.0.3", RegionChange: true,
	},
	"es-addon": {
		Offered:  []string{"7", "8", "9"},
		Features: []string{"kibana", "apm", "encryption"}, RegionChange: false,
	},
	// Operator add-ons: GET /v4/addon-providers/{keycloak|metabase|otoroshi|addon-matomo}
	// (Go SDK services/*/get_*_provider_information.go). The version strings
	// are illustrative: no public source lists the versions offered today.
	"keycloak":     {Offered: []string{"25.0.6", "26.1.4", "26.2.5"}, Features: []string{"access-domain"}, NoMigration: true},
	"metabase":     {Offered: []string{"0.54.9", "0.55.6", "0.56.3"}, Features: []string{}, NoMigration: true},
	"otoroshi":     {Offered: []string{"16.23.2", "17.5.0"}, Features: []string{}, NoMigration: true},
	"addon-matomo": {Offered: []string{"5.3.2"}, Features: []string{}, NoMigration: true},
}

// Versions returns a copy of the version table, by provider id: what the
// server starts with (it may change through SetProviderVersions).
func Versions() map[string]VersionSpec {
	out := make(map[string]VersionSpec, len(providerVersions))
	for k, v := range providerVersions {
		v.Offered = slices.Clone(v.Offered)
		v.Legacy = slices.Clone(v.Legacy)
		v.Features = slices.Clone(v.Features)
		out[k] = v
	}
	return out
}

// CompareVersions compares dotted versions numerically segment by segment
// ("8.0" < "8.4" < "17"; a missing segment counts as 0).
func CompareVersions(a, b string) int {
	as := strings.Split(strings.TrimPrefix(strings.TrimSpace(a), "v"), ".")
	bs := strings.Split(strings.TrimPrefix(strings.TrimSpace(b), "v"), ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		x, y := "0", "0"
		if i < len(as) && as[i] != "" {
			x = as[i]
		}
		if i < len(bs) && bs[i] != "" {
			y = bs[i]
		}
		xn, xerr := strconv.ParseUint(x, 10, 64)
		yn, yerr := strconv.ParseUint(y, 10, 64)
		switch {
		case xerr == nil && yerr == nil:
			if xn != yn {
				if xn < yn {
					return -1
				}
				return 1
			}
		case xerr == nil:
			return -1
		case yerr == nil:
			return 1
		default:
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
		}
	}
	return 0
}

// VersionPrefixLess reports whether target is older than current, comparing
// only as many segments as target has ("8" is not older than "8.19.9").
func VersionPrefixLess(target, current string) bool {
	n := strings.Count(target, ".") + 1
	parts := strings.Split(current, ".")
	if len(parts) > n {
		current = strings.Join(parts[:n], ".")
	}
	return CompareVersions(target, current) < 0
}

// clusterNamespace derives stable shared-cluster ids.
var clusterNamespace = uuid.MustParse("6f0d2c4e-71a3-5b8e-9c42-1e5d7a3b9f10")

// ProviderInfo builds the GET /v4/addon-providers/{providerId} answer of k
// from its versions vs and the version new add-ons get (defaultVersion).
func ProviderInfo(k *Kind, vs VersionSpec, defaultVersion string) wire.ProviderInfo {
	info := wire.ProviderInfo{
		ProviderID:              k.Spec.ProviderID,
		Clusters:                []wire.ProviderCluster{},
		Dedicated:               map[string]wire.DedicatedVersion{},
		DefaultDedicatedVersion: defaultVersion,
	}
	for _, v := range vs.Offered {
		fs := make([]wire.ProviderFeature, 0, len(vs.Features))
		for _, f := range vs.Features {
			fs = append(fs, wire.ProviderFeature{Name: f, Enabled: f == "do-backup"})
		}
		info.Dedicated[v] = wire.DedicatedVersion{Features: fs}
	}
	if vs.SharedVersion != "" {
		for _, pl := range k.Provider.Plans {
			if pl.Slug != "dev" {
				continue
			}
			for _, zone := range pl.Zones {
				info.Clusters = append(info.Clusters, wire.ProviderCluster{
					ID:       "cluster_" + uuid.NewSHA1(clusterNamespace, []byte(k.Spec.ProviderID+"/"+zone)).String(),
					Label:    zone + "-" + k.Spec.Family + "-c1",
					Zone:     zone,
					Version:  vs.SharedVersion,
					Features: []wire.ProviderFeature{},
				})
			}
		}
	}
	return info
}
