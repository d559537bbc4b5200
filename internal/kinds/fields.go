package kinds

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clever-operator/clever-operator/api/shared"
)

// Typed access to the spec of a resource (as Cluster API's internal/contract): every spec
// field the engine reads is a path below, and this is the only file of the engine that
// reaches into an unstructured object's spec by path (status.go is the one for its status).
// The resources stay unstructured (both controllers share one unstructured cache; see
// docs/design.md), but the rest of the engine speaks in these typed accessors.

// path is the location of one field of a resource.
type Path []string

// Spec fields.
var (
	SpecOrganisation     = Path{"spec", "organisation"}
	SpecAddonID          = Path{"spec", "addonId"}
	SpecManagementPolicy = Path{"spec", "managementPolicy"}
	SpecDeletionPolicy   = Path{"spec", "deletionPolicy"}
	SpecRegion           = Path{"spec", "instance", "region"}
	SpecPlan             = Path{"spec", "instance", "plan"}
	SpecProviderID       = Path{"spec", "providerId"}         // the generic Addon kind
	SpecFlatRegion       = Path{"spec", "region"}             // the generic Addon kind
	SpecFlatPlan         = Path{"spec", "plan"}               // the generic Addon kind
	SpecOptions          = Path{"spec", "options"}            // the generic Addon kind: passed through
	SpecOptionsVersion   = Path{"spec", "options", "version"} // an integer version code
	SpecEncryption       = Path{"spec", "options", "encryption"}
	SpecKibana           = Path{"spec", "options", "kibana"}
	SpecAPM              = Path{"spec", "options", "apm"}
	SpecVersion          = Path{"spec", "version"} // operator add-ons: a version string
	SpecVariables        = Path{"spec", "variables"}
	SpecSecret           = Path{"spec", "secret"}

	SpecCredentialsRefKind = Path{"spec", "credentialsRef", "kind"}
	SpecCredentialsRefName = Path{"spec", "credentialsRef", "name"}
)

func (p Path) String(u *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(u.Object, p...)
	return v
}

func (p Path) Bool(u *unstructured.Unstructured) bool {
	v, _, _ := unstructured.NestedBool(u.Object, p...)
	return v
}

func (p Path) Int64(u *unstructured.Unstructured) int64 {
	v, _, _ := unstructured.NestedInt64(u.Object, p...)
	return v
}

// Value is the raw value (nil, false when absent).
func (p Path) Value(u *unstructured.Unstructured) (any, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(u.Object, p...)
	return v, found && err == nil
}

func (p Path) StringMap(u *unstructured.Unstructured) map[string]string {
	v, _, _ := unstructured.NestedStringMap(u.Object, p...)
	return v
}

func (p Path) Map(u *unstructured.Unstructured) (map[string]any, bool) {
	v, found, _ := unstructured.NestedMap(u.Object, p...)
	return v, found
}

func (p Path) Set(u *unstructured.Unstructured, v any) {
	if s, ok := v.([]string); ok {
		vs := make([]any, len(s))
		for i := range s {
			vs[i] = s[i]
		}
		v = vs
	}
	_ = unstructured.SetNestedField(u.Object, v, p...)
}

// SetOrRemove sets a string field, or removes it when v is empty.
func (p Path) SetOrRemove(u *unstructured.Unstructured, v string) {
	if v == "" {
		p.Remove(u)
		return
	}
	p.Set(u, v)
}

func (p Path) Remove(u *unstructured.Unstructured) { unstructured.RemoveNestedField(u.Object, p...) }

// SecretSpecOf decodes spec.secret into the shared API type (zero value when not set).
func SecretSpecOf(u *unstructured.Unstructured) shared.SecretSpec {
	var s shared.SecretSpec
	if m, found := SpecSecret.Map(u); found && m != nil {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &s)
	}
	return s
}
