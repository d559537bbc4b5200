package ecosystem

import (
	"bytes"
	"flag"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/test/kube"
)

// update rewrites the argocd-cm snippets from config/argocd/health.lua and the kind table:
// go test ./test/ecosystem -run TestArgoCDSnippets -update
var update = flag.Bool("update", false, "rewrite config/argocd/argocd-cm*.yaml")

// The shipped files, relative to the repository root (the envtest suite moves there).
var (
	scriptFile   = filepath.Join("config", "argocd", "health.lua")
	wildcardFile = filepath.Join("config", "argocd", "argocd-cm.yaml")
	perKindFile  = filepath.Join("config", "argocd", "argocd-cm-per-kind.yaml")
)

const wildcardGVKKey = kinds.Group + "/*"

// atRoot makes the test run from the repository root.
func atRoot(t testing.TB) {
	t.Helper()
	root, err := kube.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
}

func healthScript(t testing.TB) string {
	t.Helper()
	atRoot(t)
	b, err := os.ReadFile(scriptFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func indent(s, prefix string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString(prefix)
		}
		b.WriteString(line)
	}
	return b.String()
}

const snippetHeader = `# Generated from config/argocd/health.lua by
#   go test ./test/ecosystem -run TestArgoCDSnippets -update
# DO NOT EDIT. Merge it into Argo CD's argocd-cm ConfigMap (docs/argocd.md).
`

// wildcardSnippet is the argocd-cm data with one health check for every kind of the group:
// Argo CD matches the resource.customizations keys as globs ("api.clever-cloud.com/*"); the
// resource.customizations.health.<group>_<kind> keys cannot hold a "*".
func wildcardSnippet(script string) string {
	return snippetHeader + `apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
  labels:
    app.kubernetes.io/name: argocd-cm
    app.kubernetes.io/part-of: argocd
data:
  resource.customizations: |
    ` + wildcardGVKKey + `:
      health.lua: |
` + indent(script, "        ")
}

// perKindSnippet is the same check under one resource.customizations.health.<group>_<kind>
// key per kind (for argocd-operator's resourceHealthChecks, or an argocd-cm that already uses
// the resource.customizations key for something else).
func perKindSnippet(script string) string {
	var b strings.Builder
	b.WriteString(snippetHeader + `apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
  labels:
    app.kubernetes.io/name: argocd-cm
    app.kubernetes.io/part-of: argocd
data:
`)
	for _, k := range kinds.Kinds {
		b.WriteString("  resource.customizations.health." + k.GVK.Group + "_" + k.GVK.Kind + ": |\n")
		b.WriteString(indent(script, "    "))
	}
	return b.String()
}

func TestArgoCDSnippets(t *testing.T) {
	script := healthScript(t)
	for file, want := range map[string]string{wildcardFile: wildcardSnippet(script), perKindFile: perKindSnippet(script)} {
		if *update {
			if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, []byte(want)) {
			t.Errorf("%s is stale: run go test ./test/ecosystem -run TestArgoCDSnippets -update", file)
		}
	}

	// The snippets, parsed as Argo CD parses argocd-cm, give back the script for every kind.
	var cm struct {
		Data map[string]string `json:"data"`
	}
	b, _ := os.ReadFile(wildcardFile)
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	var overrides map[string]struct {
		HealthLua string `json:"health.lua"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["resource.customizations"]), &overrides); err != nil {
		t.Fatal(err)
	}
	if len(overrides) != 1 || overrides[wildcardGVKKey].HealthLua != script {
		t.Fatalf("resource.customizations does not hold health.lua under %q: %v", wildcardGVKKey, overrides)
	}
	b, _ = os.ReadFile(perKindFile)
	cm.Data = nil
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	if len(cm.Data) != len(kinds.Kinds) {
		t.Errorf("%d keys for %d kinds", len(cm.Data), len(kinds.Kinds))
	}
	for _, k := range kinds.Kinds {
		// Argo CD's key for a GVK (util/lua GetConfigMapKey) is <group>/<kind>; the wildcard
		// key matches it as a glob.
		if ok, _ := path.Match(wildcardGVKKey, k.GVK.Group+"/"+k.GVK.Kind); !ok {
			t.Errorf("%s does not match %s", wildcardGVKKey, k.GVK.Kind)
		}
		if cm.Data["resource.customizations.health."+k.GVK.Group+"_"+k.GVK.Kind] != script {
			t.Errorf("no health check for %s in %s", k.GVK.Kind, perKindFile)
		}
	}
}

// TestHealthEdgeCases covers what the envtest states cannot produce on demand: a resource
// being deleted, a Ready condition of an older generation, and a script that must not rely on
// Lua's standard libraries (Argo CD runs it without them).
func TestHealthEdgeCases(t *testing.T) {
	script := healthScript(t)
	cond := func(typ, status, reason, msg string, gen int64) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "observedGeneration": gen}
	}
	obj := func(gen, observed int64, deleting bool, conds ...map[string]any) map[string]any {
		md := map[string]any{"name": "db", "generation": gen}
		if deleting {
			md["deletionTimestamp"] = "2026-11-25T18:00:00Z"
		}
		list := make([]any, 0, len(conds))
		for _, c := range conds {
			list = append(list, c)
		}
		return map[string]any{"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql", "metadata": md,
			"status": map[string]any{"observedGeneration": observed, "conditions": list}}
	}
	cases := []struct {
		name        string
		obj         map[string]any
		status, msg string
	}{
		{"no status at all", map[string]any{"metadata": map[string]any{"generation": int64(1)}}, "Progressing", "Waiting for clever-operator"},
		{"being deleted", obj(1, 1, true, cond("Ready", "False", "Deleting", "deleting the add-on at Clever Cloud", 1)), "Progressing", "deleting the add-on"},
		{"Ready of an older generation", obj(3, 3, false, cond("Ready", "True", "Provisioned", "", 2)), "Progressing", ""},
		{"Stalled wins over Ready", obj(1, 1, false, cond("Ready", "False", "PlanNotFound", "no plan nope", 1), cond("Stalled", "True", "PlanNotFound", "no plan nope", 1)), "Degraded", "no plan nope"},
		{"Migrating wins over Paused", obj(2, 1, false, cond("Ready", "True", "Provisioned", "", 1), cond("Paused", "True", "PauseRequested", "paused", 1), cond("Migrating", "True", "Migrating", "step X", 2)), "Progressing", "step X"},
		{"Ready without a message", obj(1, 1, false, cond("Ready", "True", "Provisioned", "", 1)), "Healthy", "Ready"},
		{"Ready False, transient", obj(1, 1, false, cond("Ready", "False", "ApiUnavailable", "Clever Cloud answered 503", 1)), "Progressing", "503"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := RunHealth(script, c.obj)
			if err != nil {
				t.Fatal(err)
			}
			if h.Status != c.status || !strings.Contains(h.Message, c.msg) {
				t.Fatalf("health = %+v, want %s with %q", h, c.status, c.msg)
			}
		})
	}
	// The runner refuses what Argo CD refuses: the string library is not loaded, and a
	// status Argo CD does not know reads as Unknown.
	if _, err := RunHealth(`return {status = string.upper("healthy")}`, map[string]any{}); err == nil {
		t.Error("the string library is available: the runner does not run scripts as Argo CD does")
	}
	if h, err := RunHealth(`return {status = "Fine"}`, map[string]any{}); err != nil || h.Status != "Unknown" {
		t.Errorf("invalid status: %+v %v", h, err)
	}
}
