package kinds

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clever-operator/clever-operator/api/shared"
)

// Typed access to the fields of a resource (as Cluster API's internal/contract): every field
// name the engine reads or writes is a path below, and this is the only file of the engine
// that reaches into an unstructured object by path. The resources stay unstructured (both
// controllers share one unstructured cache; see docs/design.md), but the rest of the engine
// speaks in these typed accessors.

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

// Status fields the engine owns (internal/hybrid keeps them through the Helm side's writes).
var (
	StatusAddon                  = Path{"status", "addon"}
	StatusPlan                   = Path{"status", "plan"}
	StatusSecretName             = Path{"status", "secretName"}
	StatusConfigMapName          = Path{"status", "configMapName"}
	StatusBinding                = Path{"status", "binding"}
	StatusBindingName            = Path{"status", "binding", "name"}
	StatusAdopted                = Path{"status", "adopted"}
	StatusVersion                = Path{"status", "version"}
	StatusObservedGeneration     = Path{"status", "observedGeneration"}
	StatusLastHandledReconcileAt = Path{"status", "lastHandledReconcileAt"}
	StatusMigration              = Path{"status", "migration"}
	StatusAccessURL              = Path{"status", "accessUrl"}
	StatusAvailableVersions      = Path{"status", "availableVersions"}
	StatusLastVersionUpdate      = Path{"status", "lastVersionUpdate"}
	StatusLastHandledRebootAt    = Path{"status", "lastHandledRebootAt"}
	StatusLastHandledRebuildAt   = Path{"status", "lastHandledRebuildAt"}
	StatusBackups                = Path{"status", "backups"}
	StatusBackupsLastTime        = Path{"status", "backups", "last", "time"}
	StatusPrice                  = Path{"status", "price"}
	StatusPriceHourly            = Path{"status", "price", "hourly"}
	StatusPriceCurrency          = Path{"status", "price", "currency"}

	CredHash                = Path{"status", "credentials", "hash"}
	CredLastChangedAt       = Path{"status", "credentials", "lastChangedAt"}
	CredRolledOutHash       = Path{"status", "credentials", "rolledOutHash"}
	CredLastRotationRequest = Path{"status", "credentials", "lastRotationRequest"}
	CredRevokedKeyHash      = Path{"status", "credentials", "revokedKeyHash"}
)

// StatusField is a top-level status field by its JSON name (the kinds' URL fields).
func StatusField(name string) Path { return Path{"status", name} }

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

// MigrationOf decodes status.migration into the shared API type.
func MigrationOf(u *unstructured.Unstructured) (shared.MigrationStatus, bool) {
	var m shared.MigrationStatus
	raw, found := StatusMigration.Map(u)
	if !found {
		return m, false
	}
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &m)
	return m, true
}

// SetMigration encodes m as status.migration.
func SetMigration(u *unstructured.Unstructured, m shared.MigrationStatus) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&m)
	if err == nil {
		StatusMigration.Set(u, raw)
	}
}
