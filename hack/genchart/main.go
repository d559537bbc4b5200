// Command genchart regenerates the parts of the operator's Helm chart (dist/chart) that
// are derived from config/, so that the chart and `make deploy` cannot drift:
//
//   - dist/chart/templates/crds/<file>.yaml: every CRD of config/crd/bases, guarded by
//     `.Values.crds.install` and annotated `helm.sh/resource-policy: keep` (unless
//     `.Values.crds.keep` is false);
//   - dist/chart/templates/rbac/manager-clusterrole.yaml: the operator's ClusterRole, whose
//     rules are those of config/rbac/role.yaml (written by controller-gen from the
//     +kubebuilder:rbac markers of main.go);
//   - dist/chart/templates/rbac/leader-election.yaml: the leader-election Role (rules of
//     config/rbac/leader_election_role.yaml) and its RoleBinding, in the release namespace;
//   - dist/chart/templates/rbac/kind-clusterroles.yaml: the per-kind editor and viewer
//     ClusterRoles of config/rbac/*_{editor,viewer}_role.yaml (rules and aggregate-to-*
//     labels), guarded by `.Values.rbac.aggregateRoles`; every CRD must have both.
//
// Run it from the repository root (hack/gen-chart.sh does). It is idempotent: files are
// only written when their content changes, and stale generated CRD templates are removed.
// With -check it writes nothing and exits 1 when a generated file is missing, stale or
// extra.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

const (
	keepAnnotation = "helm.sh/resource-policy"
	// keepLine is how yaml.Marshal writes the keep annotation under metadata.annotations;
	// it is replaced by a block conditional on .Values.crds.keep.
	keepLine  = "    " + keepAnnotation + ": keep\n"
	keepBlock = "    {{- if .Values.crds.keep }}\n" + keepLine + "    {{- end }}\n"
)

func main() {
	root := flag.String("root", ".", "repository root")
	check := flag.Bool("check", false, "write nothing; exit 1 if a generated file is missing, stale or extra")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "genchart: "+err.Error())
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	crdDir := filepath.Join(root, "config", "crd", "bases")
	rbacDir := filepath.Join(root, "config", "rbac")
	roleFile := filepath.Join(rbacDir, "role.yaml")
	templates := filepath.Join(root, "dist", "chart", "templates")
	outCRDs := filepath.Join(templates, "crds")

	want := map[string][]byte{} // path -> content
	crdFiles, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil {
		return err
	}
	if len(crdFiles) == 0 {
		return fmt.Errorf("no CRDs in %s: run `make manifests`", crdDir)
	}
	sort.Strings(crdFiles)
	var kinds []kindInfo
	for _, f := range crdFiles {
		content, k, err := crdTemplate(f, root)
		if err != nil {
			return err
		}
		want[filepath.Join(outCRDs, filepath.Base(f))] = content
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Plural < kinds[j].Plural })

	role, err := managerRoleTemplate(roleFile, root)
	if err != nil {
		return err
	}
	want[filepath.Join(templates, "rbac", "manager-clusterrole.yaml")] = role
	leader, err := leaderElectionTemplate(filepath.Join(rbacDir, "leader_election_role.yaml"), root)
	if err != nil {
		return err
	}
	want[filepath.Join(templates, "rbac", "leader-election.yaml")] = leader
	kindRoles, err := kindRolesTemplate(rbacDir, root, kinds)
	if err != nil {
		return err
	}
	want[filepath.Join(templates, "rbac", "kind-clusterroles.yaml")] = kindRoles

	// Every *.yaml under templates/crds is generated: anything not wanted is stale.
	existing, err := filepath.Glob(filepath.Join(outCRDs, "*.yaml"))
	if err != nil {
		return err
	}
	var extra []string
	for _, f := range existing {
		if _, ok := want[f]; !ok {
			extra = append(extra, f)
		}
	}

	paths := make([]string, 0, len(want))
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	if check {
		var problems []string
		for _, p := range paths {
			got, err := os.ReadFile(p)
			switch {
			case errors.Is(err, os.ErrNotExist):
				problems = append(problems, "missing "+rel(root, p))
			case err != nil:
				return err
			case !bytes.Equal(got, want[p]):
				problems = append(problems, "stale "+rel(root, p))
			}
		}
		for _, f := range extra {
			problems = append(problems, "extra "+rel(root, f))
		}
		if len(problems) > 0 {
			return fmt.Errorf("the chart is out of date with config/ (run hack/gen-chart.sh):\n  %s", strings.Join(problems, "\n  "))
		}
		return nil
	}

	for _, p := range paths {
		got, err := os.ReadFile(p)
		if err == nil && bytes.Equal(got, want[p]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, want[p], 0o644); err != nil {
			return err
		}
		fmt.Println("wrote " + rel(root, p))
	}
	for _, f := range extra {
		if err := os.Remove(f); err != nil {
			return err
		}
		fmt.Println("removed " + rel(root, f))
	}
	return nil
}

type kindInfo struct {
	Group, Kind, Plural, Singular string
	Cluster                       bool // cluster-scoped: its roles are not aggregated
}

func header(root, src string) string {
	return fmt.Sprintf("{{- /* Code generated by hack/gen-chart.sh from %s. DO NOT EDIT. */}}\n", filepath.ToSlash(rel(root, src)))
}

// crdTemplate returns the chart template for one CRD file and the names of its kind.
func crdTemplate(file, root string) ([]byte, kindInfo, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, kindInfo{}, err
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return nil, kindInfo{}, fmt.Errorf("%s: %w", file, err)
	}
	if crd["kind"] != "CustomResourceDefinition" {
		return nil, kindInfo{}, fmt.Errorf("%s: not a CustomResourceDefinition", file)
	}
	spec, _ := crd["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	k := kindInfo{Group: str(spec["group"]), Kind: str(names["kind"]), Plural: str(names["plural"]), Singular: str(names["singular"]), Cluster: str(spec["scope"]) == "Cluster"}
	if k.Group == "" || k.Kind == "" || k.Plural == "" || k.Singular == "" {
		return nil, kindInfo{}, fmt.Errorf("%s: spec.group or spec.names.{kind,plural,singular} missing", file)
	}
	meta, _ := crd["metadata"].(map[string]any)
	if meta == nil {
		return nil, kindInfo{}, fmt.Errorf("%s: no metadata", file)
	}
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	if _, ok := ann[keepAnnotation]; ok {
		return nil, kindInfo{}, fmt.Errorf("%s: already has the %s annotation; the chart adds it", file, keepAnnotation)
	}
	ann[keepAnnotation] = "keep"
	body, err := yaml.Marshal(crd)
	if err != nil {
		return nil, kindInfo{}, err
	}
	text := escapeTemplate(string(body))
	if strings.Count(text, keepLine) != 1 {
		return nil, kindInfo{}, fmt.Errorf("%s: cannot place the keep annotation", file)
	}
	text = strings.Replace(text, keepLine, keepBlock, 1)
	var b strings.Builder
	b.WriteString(header(root, file))
	b.WriteString("{{- if .Values.crds.install }}\n")
	b.WriteString(text)
	b.WriteString("{{- end }}\n")
	return []byte(b.String()), k, nil
}

// readRole reads a ClusterRole or Role manifest and returns its labels and marshalled rules.
func readRole(file, kind string) (labels map[string]string, rules []byte, err error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	var role struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name   string            `json:"name"`
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Rules []any `json:"rules"`
	}
	if err := yaml.Unmarshal(raw, &role); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	if role.Kind != kind {
		return nil, nil, fmt.Errorf("%s: not a %s", file, kind)
	}
	if len(role.Rules) == 0 {
		return nil, nil, fmt.Errorf("%s: no rules", file)
	}
	body, err := yaml.Marshal(role.Rules)
	if err != nil {
		return nil, nil, err
	}
	return role.Metadata.Labels, []byte(escapeTemplate(string(body))), nil
}

// managerRoleTemplate returns the operator's ClusterRole with the rules of role.yaml.
func managerRoleTemplate(file, root string) ([]byte, error) {
	_, rules, err := readRole(file, "ClusterRole")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(header(root, file))
	b.WriteString(`{{- /* The operator's permissions: generated by controller-gen from the +kubebuilder:rbac markers of main.go. */}}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ include "clever-operator.managerRoleName" . }}
  labels:
    {{- include "clever-operator.labels" . | nindent 4 }}
rules:
`)
	b.Write(rules)
	return []byte(b.String()), nil
}

// leaderElectionTemplate returns the leader-election Role (rules of file) and RoleBinding.
func leaderElectionTemplate(file, root string) ([]byte, error) {
	_, rules, err := readRole(file, "Role")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(header(root, file))
	b.WriteString(`{{- /*
Leader election (always on): the Lease clever-operator.api.clever-cloud.com in the release
namespace, and the events recorded about it. Namespaced, so the operator cannot touch
Leases elsewhere.
*/}}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "clever-operator.fullname" . }}-leader-election
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "clever-operator.labels" . | nindent 4 }}
rules:
`)
	b.Write(rules)
	b.WriteString(`---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "clever-operator.fullname" . }}-leader-election
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "clever-operator.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "clever-operator.fullname" . }}-leader-election
subjects:
- kind: ServiceAccount
  name: {{ include "clever-operator.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
`)
	return []byte(b.String()), nil
}

const aggregatePrefix = "rbac.authorization.k8s.io/aggregate-to-"

// kindRolesTemplate returns the per-kind editor and viewer ClusterRoles of
// config/rbac/<singular>_{editor,viewer}_role.yaml, named <fullname>-<name in config>.
func kindRolesTemplate(rbacDir, root string, kinds []kindInfo) ([]byte, error) {
	var b strings.Builder
	b.WriteString(header(root, filepath.Join(rbacDir, "*_editor_role.yaml and *_viewer_role.yaml")))
	b.WriteString(`{{- /*
Per-kind editor and viewer ClusterRoles for users (the operator does not use them), aggregated
into the built-in edit/admin and view ClusterRoles: whoever may edit (view) a namespace may edit
(view) its Clever Cloud resources.
*/}}
{{- if .Values.rbac.aggregateRoles }}
`)
	for _, k := range kinds {
		for _, role := range []string{"editor", "viewer"} {
			file := filepath.Join(rbacDir, k.Singular+"_"+role+"_role.yaml")
			labels, rules, err := readRole(file, "ClusterRole")
			if err != nil {
				return nil, fmt.Errorf("%w (the chart needs an editor and a viewer role per CRD in config/rbac: run hack/gen-kind-roles.sh)", err)
			}
			name, err := roleName(file)
			if err != nil {
				return nil, err
			}
			var aggregate []string
			for l, v := range labels {
				if strings.HasPrefix(l, aggregatePrefix) {
					aggregate = append(aggregate, fmt.Sprintf("    %s: %q\n", l, v))
				}
			}
			if len(aggregate) == 0 && !k.Cluster {
				return nil, fmt.Errorf("%s: no %s* label", file, aggregatePrefix)
			}
			sort.Strings(aggregate)
			fmt.Fprintf(&b, `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ include "clever-operator.fullname" . }}-%s
  labels:
    {{- include "clever-operator.labels" . | nindent 4 }}
%srules:
`, name, strings.Join(aggregate, ""))
			b.Write(rules)
		}
	}
	b.WriteString("{{- end }}\n")
	return []byte(b.String()), nil
}

func roleName(file string) (string, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	var m struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(raw, &m); err != nil || m.Metadata.Name == "" {
		return "", fmt.Errorf("%s: no metadata.name", file)
	}
	return m.Metadata.Name, nil
}

// escapeTemplate makes literal text safe inside a Go template: only "{{" starts an action.
func escapeTemplate(s string) string {
	return strings.ReplaceAll(s, "{{", `{{ "{{" }}`)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}
