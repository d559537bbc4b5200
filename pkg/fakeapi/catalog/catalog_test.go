package catalog

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated part of docs/fake-api.md")

const (
	docsPath    = "../../../docs/fake-api.md"
	beginMarker = "<!-- BEGIN GENERATED CATALOG (go test ./pkg/fakeapi/catalog -run TestDocsCatalog -update-docs) -->"
	endMarker   = "<!-- END GENERATED CATALOG -->"
)

func TestDocumentedPlanIDs(t *testing.T) {
	c := New()
	for _, tc := range []struct{ provider, slug, id string }{
		{"postgresql-addon", "s_sml", "plan_f1f39547-be55-4be0-96d0-5140da25c138"},
		{"postgresql-addon", "dev", "plan_d2ada71a-aa8e-4ead-8cb9-28314664437e"},
		{"mysql-addon", "xxs_sml", "plan_7ab494e2-c319-4330-8170-35d78738c1ee"},
		{"mongodb-addon", "M_big", "plan_e8036bc6-5341-4c6e-b843-f4c60d442198"},
		{"mongodb-addon", "m_big", "plan_e8036bc6-5341-4c6e-b843-f4c60d442198"}, // case-insensitive fallback
		{"es-addon", "4xl", "plan_31ea6328-7df8-4208-a18d-137d2941f16d"},
		{"config-provider", "std", "plan_5d8e9596-dd73-4b73-84d9-e165372c5324"},
		{"addon-pulsar", "beta", "plan_3ad3c5be-5c1e-4dae-bf9a-87120b88fc13"},
		{"kv", "alpha", "plan_53a1728d-4b9e-4254-94c4-b19163af587b"},
		{"metabase", "base", "plan_2925d534-7155-4521-8052-d068d7ce8915"},
		{"keycloak", "base", "plan_3819e4b3-cc6d-4847-9f02-0db93212956c"},
		{"addon-matomo", "beta", "plan_87283ba6-617c-420d-8e37-3350a2fcdd66"},
		{"otoroshi", "base", "plan_d738ee0f-8720-499a-8067-2fca53a2665a"},
		{"cellar-addon", "S", "plan_84c85ee3-5fdb-4aca-a727-298ddc14b766"},
		{"cellar-addon", "s", "plan_84c85ee3-5fdb-4aca-a727-298ddc14b766"},
		{"redis-addon", "s_mono", GeneratedPlanID("redis-addon", "s_mono")},
		{"azimutt", "free", GeneratedPlanID("azimutt", "free")},
		{"nope", "s", ""},
		{"postgresql-addon", "nope", ""},
	} {
		if got := c.PlanID(tc.provider, tc.slug); got != tc.id {
			t.Errorf("PlanID(%s, %s) = %q, want %q", tc.provider, tc.slug, got, tc.id)
		}
	}
	// Generated ids are stable: pin one so a namespace change is noticed.
	if got := GeneratedPlanID("redis-addon", "s_mono"); got != pinnedRedisSMono {
		t.Errorf("GeneratedPlanID(redis-addon, s_mono) = %s, want %s", got, pinnedRedisSMono)
	}
	// Every slug the docs list exists.
	for prov, slugs := range map[string]string{
		"postgresql-addon": "dev xxs_sml xxs_med xxs_big xs_tin xs_tny xs_sml xs_med xs_big s_sml s_med s_big s_hug m_sml m_med m_big l_sml l_med l_big xl_sml xl_med xl_big xl_hug xxl_sml xxl_med xxl_big xxl_hug xxxl_sml xxxl_med xxxl_big",
		"mysql-addon":      "dev xxs_sml xxs_med xxs_big xs_tin xs_tny xs_sml xs_med xs_big s_sml s_med s_big m_sml m_med m_big l_sml l_med l_big xl_sml xl_med xl_big xxl_sml xxl_med xxl_big xxl_hug",
		"redis-addon":      "s_mono m_mono l_mono xl_mono xxl_mono xxxl_mono xxxxl_mono",
		"mongodb-addon":    "dev xs_sml xs_med xs_big s_sml s_med s_big m_sml m_med M_big m_hug l_sml l_med l_big xl_sml xl_med xl_big xxl_sml xxl_med xxl_big",
		"es-addon":         "xs s m l xl xxl xxxl xxxxl xxxxxl 4xl 5xl",
	} {
		for _, slug := range strings.Fields(slugs) {
			if c.PlanID(prov, slug) == "" {
				t.Errorf("%s has no plan %s", prov, slug)
			}
		}
	}
}

const pinnedRedisSMono = "plan_cc233c46-15c4-5bb3-a843-155c0f26c9be" // = python3 uuid.uuid5(PlanIDNamespace, "redis-addon/s_mono")

// catalogMarkdown renders the seeded catalogue as Markdown tables.
func catalogMarkdown(c *Catalog) string {
	var b strings.Builder
	b.WriteString("| Provider id | realId prefix | Regions | Env keys |\n|---|---|---|---|\n")
	for _, k := range c.Kinds {
		keys := "—"
		if len(k.Spec.EnvKeys) > 0 {
			keys = "`" + strings.Join(sortedCopy(k.Spec.EnvKeys), "`, `") + "`"
		}
		if k.Spec.ProviderID == "config-provider" {
			keys = "whatever was PUT (starts empty)"
		}
		fmt.Fprintf(&b, "| `%s` | `%s_` | %s | %s |\n", k.Spec.ProviderID, k.Spec.Prefix, strings.Join(k.Provider.Regions, ", "), keys)
	}
	b.WriteString("\n| Provider id | Slug | Name | Plan id | Price | Zones | Id source |\n|---|---|---|---|---|---|---|\n")
	for _, k := range c.Kinds {
		for _, pl := range k.Provider.Plans {
			src := "documented"
			if pl.ID == GeneratedPlanID(k.Spec.ProviderID, pl.Slug) {
				src = "generated (UUIDv5)"
			}
			zones := "all"
			if strings.Join(pl.Zones, ",") != strings.Join(k.Provider.Regions, ",") {
				zones = strings.Join(pl.Zones, ", ")
			}
			fmt.Fprintf(&b, "| `%s` | `%s` | %s | `%s` | %g | %s | %s |\n", k.Spec.ProviderID, pl.Slug, pl.Name, pl.ID, pl.Price, zones, src)
		}
	}
	return b.String()
}

func sortedCopy(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
}

func TestDocsCatalog(t *testing.T) {
	data, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, beginMarker), strings.Index(doc, endMarker)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated-catalog markers", docsPath)
	}
	want := beginMarker + "\n\n" + catalogMarkdown(New()) + "\n" + endMarker
	got := doc[i : j+len(endMarker)]
	if got == want {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(docsPath, []byte(doc[:i]+want+doc[j+len(endMarker):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s is out of date: run go test ./pkg/fakeapi/catalog -run TestDocsCatalog -update-docs", docsPath)
}

func TestCatalogInvariants(t *testing.T) {
	seen := map[string]string{}
	for _, k := range New().Kinds {
		p := k.Provider
		names := map[string]bool{}
		for _, pl := range p.Plans {
			if other, dup := seen[pl.ID]; dup {
				t.Errorf("plan id %s used by %s and %s/%s", pl.ID, other, p.ID, pl.Slug)
			}
			seen[pl.ID] = p.ID + "/" + pl.Slug
			if names[strings.ToLower(pl.Name)] {
				t.Errorf("%s: duplicate plan name %q", p.ID, pl.Name)
			}
			names[strings.ToLower(pl.Name)] = true
			if pl.PriceID == nil || len(pl.Features) == 0 {
				t.Errorf("%s/%s incomplete", p.ID, pl.Slug)
			}
			for _, z := range pl.Zones {
				if !strings.Contains(","+strings.Join(p.Regions, ",")+",", ","+z+",") {
					t.Errorf("%s/%s zone %s not a provider region", p.ID, pl.Slug, z)
				}
			}
		}
	}
}
