package catalog

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// ---- create options (POST /v2/organisations/{ownerId}/addons, "options") ----
//
// What the fake checks in the options of a create, from the clients that send them: the
// Terraform provider (pkg/resources/addon/{postgresql,mysql,mongodb,keycloak}/schema.go:
// "do-backup", "encryption", "direct-host-only", "locale", "skip-log-bin", "access-domain";
// pkg/resources/database/elasticsearch/crud.go: "kibana", "apm", "plugins" joined with ","),
// clever-tools src/models/addon.js (parseAddonOptions turns enabled/disabled into
// "true"/"false"; validateAddonVersionAndOptions refuses an option the plan's features at
// GET /v4/addon-providers/{id} do not list: shared clusters list none), and Clever Cloud's
// documentation (content/doc/addons/elastic.md: the plugins on offer). Unknown keys are
// accepted and stored as sent (the generic Addon kind passes options through).

var (
	boolOptions = map[string]bool{"encryption": true, "direct-host-only": true, "do-backup": true, "skip-log-bin": true, "kibana": true, "apm": true}
	// optionProviders: the providers that take each provider-specific key.
	optionProviders = map[string][]string{
		"direct-host-only": {"postgresql-addon", "mysql-addon", "mongodb-addon"},
		"do-backup":        {"postgresql-addon", "mysql-addon"},
		"locale":           {"postgresql-addon"},
		"skip-log-bin":     {"mysql-addon"},
		"plugins":          {"es-addon"},
		"access-domain":    {"keycloak"},
	}
	// dedicatedOptions are offered on dedicated plans only.
	dedicatedOptions = map[string]bool{"direct-host-only": true, "locale": true}
	esPlugins        = []string{"analysis-icu", "analysis-kuromoji", "analysis-nori", "analysis-phonetic", "analysis-smartcn",
		"analysis-stempel", "analysis-ukrainian", "discovery-ec2", "discovery-azure-classic", "discovery-gce",
		"mapper-size", "mapper-murmur3", "mapper-annotated-text"}
	localeRE = regexp.MustCompile(`^[a-z]{2}_[A-Z]{2}$`)
	domainRE = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)+[a-z]{2,63}$`)
)

// planDedicated says whether a plan runs on dedicated instances (its is-dedicated feature).
func planDedicated(p *wire.Plan) bool {
	for _, f := range p.Features {
		if f.NameCode != nil && *f.NameCode == "is-dedicated" && f.ComputableValue != nil {
			return *f.ComputableValue == "dedicated"
		}
	}
	return false
}

// CheckOptions returns the field and message of the first option of a create the API would
// refuse ("" when all are accepted).
func CheckOptions(providerID string, plan *wire.Plan, opts map[string]any) (field, msg string) {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		var v string
		switch t := opts[key].(type) {
		case string:
			v = t
		case bool:
			v = fmt.Sprint(t)
		default:
			continue
		}
		if ps, ok := optionProviders[key]; ok && !slices.Contains(ps, providerID) {
			return "options." + key, fmt.Sprintf("option %q is not available for provider %s", key, providerID)
		}
		switch {
		case boolOptions[key] && v != "true" && v != "false":
			return "options." + key, fmt.Sprintf("option %q must be \"true\" or \"false\"", key)
		case key == "locale" && !localeRE.MatchString(v):
			return "options.locale", "option \"locale\" must be language_COUNTRY, e.g. fr_FR"
		case key == "access-domain" && !domainRE.MatchString(v):
			return "options.access-domain", "option \"access-domain\" must be a domain name"
		case key == "plugins":
			for _, p := range strings.Split(v, ",") {
				if !slices.Contains(esPlugins, p) {
					return "options.plugins", fmt.Sprintf("plugin %q is not available (available: %s)", p, strings.Join(esPlugins, ", "))
				}
			}
		}
		if dedicatedOptions[key] && v != "false" && !planDedicated(plan) {
			return "options." + key, fmt.Sprintf("option %q is not available on plan %s (dedicated plans only)", key, plan.Slug)
		}
	}
	return "", ""
}
