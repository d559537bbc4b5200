package catalog

import (
	"testing"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

func TestCheckOptions(t *testing.T) {
	shared := &wire.Plan{Slug: "dev", Features: []wire.PlanFeature{TypeFeature(false)}}
	dedicated := &wire.Plan{Slug: "xs_sml", Features: []wire.PlanFeature{TypeFeature(true)}}
	for _, c := range []struct {
		provider string
		plan     *wire.Plan
		opts     map[string]any
		field    string
	}{
		{"postgresql-addon", dedicated, map[string]any{"direct-host-only": "true", "do-backup": "false", "locale": "fr_FR", "encryption": "true", "version": "17"}, ""},
		{"postgresql-addon", shared, map[string]any{"direct-host-only": "false", "do-backup": "true"}, ""},
		{"postgresql-addon", shared, map[string]any{"direct-host-only": "true"}, "options.direct-host-only"},
		{"postgresql-addon", shared, map[string]any{"locale": "fr_FR"}, "options.locale"},
		{"postgresql-addon", dedicated, map[string]any{"locale": "french"}, "options.locale"},
		{"postgresql-addon", dedicated, map[string]any{"do-backup": "yes"}, "options.do-backup"},
		{"postgresql-addon", dedicated, map[string]any{"skip-log-bin": "true"}, "options.skip-log-bin"},
		{"mysql-addon", dedicated, map[string]any{"skip-log-bin": "true", "direct-host-only": "true"}, ""},
		{"es-addon", dedicated, map[string]any{"plugins": "analysis-icu,mapper-size", "kibana": "true"}, ""},
		{"es-addon", dedicated, map[string]any{"plugins": "analysis-icu,nope"}, "options.plugins"},
		{"keycloak", dedicated, map[string]any{"access-domain": "auth.example.com"}, ""},
		{"keycloak", dedicated, map[string]any{"access-domain": "not a domain"}, "options.access-domain"},
		{"fs-bucket", dedicated, map[string]any{"my-option": "a=b"}, ""},
	} {
		if field, msg := CheckOptions(c.provider, c.plan, c.opts); field != c.field {
			t.Errorf("%s %s %v: field %q (%s); want %q", c.provider, c.plan.Slug, c.opts, field, msg, c.field)
		}
	}
}
