// Package rbac compares the operator's generated roles with the allow-list checked into the
// repository, and checks that the per-kind roles users get never reach Secrets.
package rbac

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

func root(p ...string) string { return filepath.Join(append([]string{"..", ".."}, p...)...) }

func readRules(t *testing.T, path string) (string, []rbacv1.PolicyRule) {
	t.Helper()
	b, err := os.ReadFile(root(path))
	if err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Rules []rbacv1.PolicyRule `json:"rules"`
	}
	if err := yaml.Unmarshal(b, &obj); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj.Metadata.Name, obj.Rules
}

// grants flattens rules into "group/resource: verb,verb" lines, the allow-list's format.
func grants(t *testing.T, rules []rbacv1.PolicyRule) []string {
	t.Helper()
	m := map[string]map[string]bool{}
	for _, r := range rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("unexpected resourceNames/nonResourceURLs rule: %+v", r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if g == "*" || res == "*" || v == "*" {
						t.Errorf("wildcard in rule %+v", r)
					}
					k := g + "/" + res
					if m[k] == nil {
						m[k] = map[string]bool{}
					}
					m[k][v] = true
				}
			}
		}
	}
	var out []string
	for k, vs := range m {
		var verbs []string
		for v := range vs {
			verbs = append(verbs, v)
		}
		sort.Strings(verbs)
		out = append(out, k+": "+strings.Join(verbs, ","))
	}
	sort.Strings(out)
	return out
}

func TestOperatorRolesMatchTheAllowList(t *testing.T) {
	b, err := os.ReadFile("allowlist.yaml")
	if err != nil {
		t.Fatal(err)
	}
	allow := map[string][]string{}
	if err := yaml.Unmarshal(b, &allow); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"config/rbac/role.yaml", "config/rbac/leader_election_role.yaml"} {
		name, rules := readRules(t, path)
		got := grants(t, rules)
		want := append([]string(nil), allow[name]...)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s (%s) differs from test/rbac/allowlist.yaml:\n got:\n  %s\n want:\n  %s",
				name, path, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
	if len(allow) != 2 {
		t.Errorf("allow-list has %d roles, want 2", len(allow))
	}
}

func TestPerKindRolesNeverGrantSecrets(t *testing.T) {
	files, err := filepath.Glob(root("config", "rbac", "*_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		base := filepath.Base(f)
		if !strings.HasSuffix(base, "_editor_role.yaml") && !strings.HasSuffix(base, "_viewer_role.yaml") {
			continue
		}
		n++
		_, rules := readRules(t, filepath.Join("config", "rbac", base))
		for _, g := range grants(t, rules) {
			if !strings.HasPrefix(g, "api.clever-cloud.com/") {
				t.Errorf("%s grants %s: per-kind roles cover only the custom resources", base, g)
			}
			if strings.HasSuffix(base, "_viewer_role.yaml") {
				for _, v := range []string{"create", "update", "patch", "delete"} {
					if strings.Contains(g, v) {
						t.Errorf("%s (a viewer) grants %s", base, g)
					}
				}
			}
		}
	}
	if n != 32 {
		t.Fatalf("found %d per-kind roles, want 32 (an editor and a viewer for each of the 14 add-on kinds and the 2 credentials kinds)", n)
	}
}
