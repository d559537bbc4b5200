package hybrid

import (
	"errors"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/clever-operator/clever-operator/internal/templates"
)

// TestChartNeverExecutesTemplates: the chart copies the templates' results the operator
// rendered; a template string that reached the values as is would be published verbatim,
// never executed by Helm (no tpl), so Helm's engine runs no tenant template at all.
func TestChartNeverExecutesTemplates(t *testing.T) {
	t.Setenv("CLEVER_OPERATOR_TEST_ENV_SECRET", "operator-env-S3cret")
	ch, err := loader.Load("../../helm-charts/clever-addon")
	if err != nil {
		t.Fatal(err)
	}
	vals, err := Values(pgKind(t), pgObject(nil), &corev1.Secret{}, pgData)
	if err != nil {
		t.Fatal(err)
	}
	raw := map[string]string{
		"E": `{{ env "CLEVER_OPERATOR_TEST_ENV_SECRET" }}`,
		"I": `{{ include "clever-addon.annotations" . }}`,
		"R": `{{ range until 100000000 }}x{{ end }}`,
	}
	// Bypass the operator: hand the strings straight to the chart.
	vals["templates"] = map[string]any{"E": raw["E"], "I": raw["I"], "R": raw["R"]}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "r", Namespace: "ns"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range files {
		if strings.Contains(f, "operator-env-S3cret") {
			t.Fatalf("%s: the environment leaked", name)
		}
	}
	objs := map[string]map[string]any{}
	for name, content := range files {
		if strings.TrimSpace(content) == "" || strings.HasSuffix(name, ".tpl") {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(content), &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		objs[m["kind"].(string)+"/"+m["metadata"].(map[string]any)["name"].(string)] = m
	}
	got := decoded(t, objs["Secret/db-secrets"])
	for k, v := range raw {
		if got[k] != v {
			t.Fatalf("%s: published %q, want the string as is %q", k, got[k], v)
		}
	}
}

// TestHelmEngineHasNoEnvFunctions proves what Helm v3's pkg/engine does for any chart: its
// function map deletes sprig's env and expandenv (a second line of defence; this operator's
// chart runs no tenant template anyway).
func TestHelmEngineHasNoEnvFunctions(t *testing.T) {
	t.Setenv("CLEVER_OPERATOR_TEST_ENV_SECRET", "operator-env-S3cret")
	for _, tmpl := range []string{`{{ env "CLEVER_OPERATOR_TEST_ENV_SECRET" }}`, `{{ expandenv "$CLEVER_OPERATOR_TEST_ENV_SECRET" }}`} {
		ch := &chart.Chart{
			Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "probe", Version: "0.1.0"},
			Templates: []*chart.File{{Name: "templates/probe.yaml", Data: []byte("value: " + tmpl + "\n")}},
		}
		rv, err := chartutil.ToRenderValues(ch, map[string]any{}, chartutil.ReleaseOptions{Name: "r", Namespace: "ns"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		files, err := engine.Render(ch, rv)
		if err == nil || !strings.Contains(err.Error(), "not defined") {
			t.Fatalf("%s: Helm's engine rendered it (err %v)", tmpl, err)
		}
		for _, f := range files {
			if strings.Contains(f, "operator-env-S3cret") {
				t.Fatalf("%s: the environment leaked", tmpl)
			}
		}
	}
}

// TestValuesRefuseHostileTemplates: the translator (what the Helm side renders from) refuses
// the templates that try the cluster, the environment, other templates or huge outputs, so
// Helm never renders them.
func TestValuesRefuseHostileTemplates(t *testing.T) {
	t.Setenv("CLEVER_OPERATOR_TEST_ENV_SECRET", "operator-env-S3cret")
	cases := map[string]string{
		"lookup":            `{{ (lookup "v1" "Secret" "other-namespace" "creds").data | toJson }}`,
		"include":           `{{ include "clever-addon.annotations" . }}`,
		"template":          `{{ template "clever-addon.labels" . }}`,
		"recursion":         `{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}`,
		"env":               `{{ env "CLEVER_OPERATOR_TEST_ENV_SECRET" }}`,
		"expandenv":         `{{ expandenv "${CLEVER_OPERATOR_TEST_ENV_SECRET}" }}`,
		"huge output":       `{{ repeat 100000000 "x" }}`,
		"nested range":      `{{ range until 60000 }}{{ range until 60000 }}x{{ end }}{{ end }}`,
		"range over an int": `{{ range 100000000000 }}{{ end }}`,
	}
	for name, tmpl := range cases {
		t.Run(name, func(t *testing.T) {
			obj := pgObject(map[string]any{"templates": map[string]any{"BAD": tmpl}})
			vals, err := Values(pgKind(t), obj, &corev1.Secret{}, pgData)
			var te *templates.Error
			if !errors.As(err, &te) || vals != nil {
				t.Fatalf("want a Error and no values, got %v", err)
			}
			if !strings.HasPrefix(err.Error(), "spec.secret.templates[BAD] ") {
				t.Fatalf("message does not name the key: %s", err)
			}
			for _, v := range append([]string{"operator-env-S3cret"}, mapValues(pgData)...) {
				if len(v) >= 3 && strings.Contains(err.Error(), v) {
					t.Fatalf("message leaks a value: %s", err)
				}
			}
		})
	}
}

func mapValues(m map[string]string) []string {
	out := []string{}
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
