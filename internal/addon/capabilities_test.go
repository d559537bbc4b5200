package addon

import (
	"fmt"
	"strings"
	"testing"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

// Every row of the table gets, from capabilitiesOf alone, the source and the capabilities its
// fields say, in the order the pass calls them.
func TestCapabilitiesOf(t *testing.T) {
	want := map[string]string{
		"PostgreSql":     "addon.envSource: migrations.Capability backups.Capability *memberships.Syncer",
		"Redis":          "addon.envSource: migrations.Capability backups.Capability *memberships.Syncer",
		"MySql":          "addon.envSource: migrations.Capability backups.Capability *memberships.Syncer",
		"MongoDb":        "addon.envSource: migrations.Capability backups.Capability *memberships.Syncer",
		"ElasticSearch":  "addon.envSource: migrations.Capability backups.Capability *memberships.Syncer",
		"Pulsar":         "addon.envSource:",
		"ConfigProvider": "configprovider.Source:",
		"KV":             "addon.envSource:",
		"Metabase":       "operatoraddons.Source: operatoraddons.Capability",
		"Keycloak":       "operatoraddons.Source: operatoraddons.Capability",
		"Matomo":         "operatoraddons.Source: operatoraddons.Capability",
		"Otoroshi":       "operatoraddons.Source: operatoraddons.Capability",
		"Azimutt":        "addon.envSource:",
		"Cellar":         "addon.envSource:",
		"Addon":          "addon.envSource: *memberships.Syncer",
	}
	for i := range kinds.Kinds {
		k := &kinds.Kinds[i]
		r := &Reconciler{Kind: k}
		src, caps := r.capabilities()
		got := []string{fmt.Sprintf("%T:", src)}
		for _, c := range caps {
			got = append(got, fmt.Sprintf("%T", c))
		}
		if g := strings.Join(got, " "); g != want[k.GVK.Kind] {
			t.Errorf("%s: %s, want %s", k.GVK.Kind, g, want[k.GVK.Kind])
		}
	}
	if len(want) != len(kinds.Kinds) {
		t.Errorf("%d rows in the table, %d here", len(kinds.Kinds), len(want))
	}
}
