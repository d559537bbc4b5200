// Package crdsizes checks, without a cluster, that every user-settable field of every
// CustomResourceDefinition in config/crd/bases is bounded, so that one resource cannot bloat
// etcd or the operator's memory: every string has a maxLength (or is an enum), every map a
// maxProperties, every list a maxItems, and a map of strings bounds its values too (a
// maxLength on the values, or a CEL rule on the map checking size(self[k])). status is
// excluded (the operator writes it), and so is metadata (the API server bounds names, labels
// and annotations itself).
package crdsizes

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func TestEveryUserFieldIsBounded(t *testing.T) {
	files, err := filepath.Glob("../../config/crd/bases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs: %v", err)
	}
	var problems []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				problems = append(problems, fmt.Sprintf("%s %s: no schema", crd.Name, v.Name))
				continue
			}
			for name, prop := range v.Schema.OpenAPIV3Schema.Properties {
				switch name {
				case "status", "metadata", "apiVersion", "kind":
					continue
				}
				for _, p := range unbounded(crd.Spec.Names.Kind+"."+v.Name+"."+name, &prop) {
					if !exempt(p) {
						problems = append(problems, p)
					}
				}
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// exempt: ClusterCleverCredentials is cluster-scoped (only cluster admins write it) and its
// spec.namespaces.selector is a metav1.LabelSelector, whose generated schema carries no bounds.
func exempt(problem string) bool {
	return strings.HasPrefix(problem, "ClusterCleverCredentials.v1alpha1.spec.namespaces.selector.")
}

// unbounded lists the fields under s that are not bounded.
func unbounded(path string, s *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		out = append(out, path+": preserves unknown fields (unbounded)")
	}
	switch s.Type {
	case "string":
		if s.MaxLength == nil && len(s.Enum) == 0 {
			out = append(out, path+": string without maxLength or enum")
		}
	case "array":
		if s.MaxItems == nil {
			out = append(out, path+": list without maxItems")
		}
		if s.Items != nil && s.Items.Schema != nil {
			out = append(out, unbounded(path+"[]", s.Items.Schema)...)
		}
	case "object":
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			if s.MaxProperties == nil {
				out = append(out, path+": map without maxProperties")
			}
			if !hasRule(s, "size(k)") {
				out = append(out, path+": map keys without a CEL rule on size(k)")
			}
			vs := s.AdditionalProperties.Schema
			if vs.Type == "string" && vs.MaxLength == nil && len(vs.Enum) == 0 && !hasRule(s, "size(self[k])") {
				out = append(out, path+": map values without maxLength (or a CEL rule on size(self[k]))")
			} else if vs.Type != "string" {
				out = append(out, unbounded(path+"{}", vs)...)
			}
		}
		for name, p := range s.Properties {
			out = append(out, unbounded(path+"."+name, &p)...)
		}
	}
	return out
}

func hasRule(s *apiextensionsv1.JSONSchemaProps, part string) bool {
	for _, r := range s.XValidations {
		if strings.Contains(r.Rule, part) {
			return true
		}
	}
	return false
}

// TestWalkerFlagsUnboundedFields: the walker itself finds each kind of unbounded field.
func TestWalkerFlagsUnboundedFields(t *testing.T) {
	n := int64(8)
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	bounded := apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: &n}
	schema := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"s":    str,
		"ok":   bounded,
		"enum": {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"a"`)}}},
		"list": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &bounded}},
		"map":  {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Schema: &str}},
		"okmap": {Type: "object", MaxProperties: &n, AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Schema: &str},
			XValidations: apiextensionsv1.ValidationRules{{Rule: "self.all(k, size(k) <= 8 && size(self[k]) <= 8)"}}},
	}}
	got := strings.Join(unbounded("X", &schema), "\n")
	for _, want := range []string{"X.s: string without maxLength", "X.list: list without maxItems", "X.map: map without maxProperties",
		"X.map: map keys without a CEL rule", "X.map: map values without maxLength"} {
		if !strings.Contains(got, want) {
			t.Errorf("walker missed %q; got:\n%s", want, got)
		}
	}
	for _, ok := range []string{"X.ok:", "X.enum:", "X.okmap:"} {
		if strings.Contains(got, ok) {
			t.Errorf("walker flagged a bounded field %q:\n%s", ok, got)
		}
	}
}
