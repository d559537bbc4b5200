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

// grants flattens rules into "group/resource: verb,verb" lines, the allow-list's format; a rule
// naming objects gives "group/resource[name,name]: verbs", a non-resource URL "url: verbs".
func grants(t *testing.T, rules []rbacv1.PolicyRule) []string {
	t.Helper()
	m := map[string]map[string]bool{}
	add := func(k string, verbs []string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		for _, v := range verbs {
			if v == "*" {
				t.Errorf("wildcard verb for %s", k)
			}
			m[k][v] = true
		}
	}
	for _, r := range rules {
		for _, u := range r.NonResourceURLs {
			if strings.Contains(u, "*") {
				t.Errorf("wildcard in non-resource URL %q", u)
			}
			add(u, r.Verbs)
		}
		names := ""
		if len(r.ResourceNames) > 0 {
			names = "[" + strings.Join(r.ResourceNames, ",") + "]"
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				if g == "*" || res == "*" {
					t.Errorf("wildcard in rule %+v", r)
				}
				add(g+"/"+res+names, r.Verbs)
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

// operatorRoles are the roles the operator (or its scraper) is given, checked against the
// allow-list.
var operatorRoles = []string{
	"config/rbac/role.yaml",                 // cluster-scoped needs, bound cluster-wide in every mode
	"config/rbac/namespaced-role/role.yaml", // what it needs in the watched namespaces
	"config/rbac/leader_election_role.yaml", // its own namespace
	"config/rbac/metrics_reader_role.yaml",  // for Prometheus
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
	for _, path := range operatorRoles {
		name, rules := readRules(t, path)
		got := grants(t, rules)
		want := append([]string(nil), allow[name]...)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s (%s) differs from test/rbac/allowlist.yaml:\n got:\n  %s\n want:\n  %s",
				name, path, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
	if len(allow) != len(operatorRoles) {
		t.Errorf("allow-list has %d roles, want %d", len(allow), len(operatorRoles))
	}
}

// The ClusterRole bound cluster-wide whatever the watched namespaces must not reach Secrets,
// ConfigMaps, workloads or the add-on kinds: those are in manager-namespaced-role, bound per
// watched namespace in a namespaced install.
func TestClusterWideRoleGrantsNoNamespacedData(t *testing.T) {
	_, rules := readRules(t, "config/rbac/role.yaml")
	for _, g := range grants(t, rules) {
		for _, bad := range []string{"/secrets", "/configmaps", "apps/", "api.clever-cloud.com/postgresqls", "/events"} {
			if strings.Contains(g, bad) {
				t.Errorf("config/rbac/role.yaml (bound cluster-wide in every mode) grants %s: move it to internal/rbac/namespaced", g)
			}
		}
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
	crds, err := filepath.Glob(root("config", "crd", "bases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if n != 2*len(crds) || n < 28 {
		t.Fatalf("found %d per-kind roles, want %d (an editor and a viewer for each of the %d kinds)", n, 2*len(crds), len(crds))
	}
}
