package kinds

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/api/shared"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

// privateHostKeys: the Secret key of the private host name, per provider (the prefix of the
// provider's own ..._HOST variable).
var privateHostKeys = map[string]string{
	"postgresql-addon": "POSTGRESQL_ADDON_PRIVATE_HOST",
	"mysql-addon":      "MYSQL_ADDON_PRIVATE_HOST",
	"mongodb-addon":    "MONGODB_ADDON_PRIVATE_HOST",
	"redis-addon":      "REDIS_PRIVATE_HOST",
	"es-addon":         "ES_ADDON_PRIVATE_HOST",
}

// PrivateHostKey is the Secret key holding the private host name of an add-on of provider
// ("" for a provider that cannot join a Network Group).
func PrivateHostKey(provider string) string {
	if _, ok := clevercloud.NetworkGroupProviders[provider]; !ok {
		return ""
	}
	return privateHostKeys[provider]
}

// JoinsNetworkGroups says whether resources of the kind may have spec.networkGroups.
func (k *Kind) JoinsNetworkGroups() bool {
	return k.Generic || PrivateHostKey(k.ProviderID) != ""
}

var SpecNetworkGroups = Path{"spec", "networkGroups"}

func WantedGroups(u *unstructured.Unstructured) []string {
	v, _, _ := unstructured.NestedStringSlice(u.Object, SpecNetworkGroups...)
	return v
}

// WithPrivateHost returns data (a copy when it adds or drops the key) with the private host
// of the first group of spec.networkGroups the add-on is a member of (have: its memberships,
// status.networkGroups).
func (k *Kind) WithPrivateHost(u *unstructured.Unstructured, have []shared.NetworkGroupMembership, data map[string]string) map[string]string {
	key := PrivateHostKey(k.Provider(u))
	if key == "" {
		return data
	}
	host := ""
	for _, ref := range WantedGroups(u) {
		if i := slices.IndexFunc(have, func(m shared.NetworkGroupMembership) bool { return m.Ref == ref && m.PrivateHost != "" }); i >= 0 {
			host = have[i].PrivateHost
			break
		}
	}
	if data[key] == host {
		return data
	}
	out := make(map[string]string, len(data)+1)
	for k, v := range data {
		out[k] = v
	}
	if host == "" {
		delete(out, key)
	} else {
		out[key] = host
	}
	return out
}
