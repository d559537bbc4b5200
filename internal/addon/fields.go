package addon

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
type path []string

// Spec fields.
var (
	specOrganisation     = path{"spec", "organisation"}
	specAddonID          = path{"spec", "addonId"}
	specManagementPolicy = path{"spec", "managementPolicy"}
	specDeletionPolicy   = path{"spec", "deletionPolicy"}
	specRegion           = path{"spec", "instance", "region"}
	specPlan             = path{"spec", "instance", "plan"}
	specProviderID       = path{"spec", "providerId"}         // the generic Addon kind
	specFlatRegion       = path{"spec", "region"}             // the generic Addon kind
	specFlatPlan         = path{"spec", "plan"}               // the generic Addon kind
	specOptions          = path{"spec", "options"}            // the generic Addon kind: passed through
	specOptionsVersion   = path{"spec", "options", "version"} // an integer version code
	specEncryption       = path{"spec", "options", "encryption"}
	specKibana           = path{"spec", "options", "kibana"}
	specAPM              = path{"spec", "options", "apm"}
	specVersion          = path{"spec", "version"} // operator add-ons: a version string
	specVariables        = path{"spec", "variables"}
	specSecret           = path{"spec", "secret"}

	specCredentialsRefKind = path{"spec", "credentialsRef", "kind"}
	specCredentialsRefName = path{"spec", "credentialsRef", "name"}
)

// Status fields the engine owns (internal/hybrid keeps them through the Helm side's writes).
var (
	statusAddon                  = path{"status", "addon"}
	statusPlan                   = path{"status", "plan"}
	statusSecretName             = path{"status", "secretName"}
	statusConfigMapName          = path{"status", "configMapName"}
	statusBinding                = path{"status", "binding"}
	statusBindingName            = path{"status", "binding", "name"}
	statusAdopted                = path{"status", "adopted"}
	statusVersion                = path{"status", "version"}
	statusObservedGeneration     = path{"status", "observedGeneration"}
	statusLastHandledReconcileAt = path{"status", "lastHandledReconcileAt"}
	statusMigration              = path{"status", "migration"}
	statusAccessURL              = path{"status", "accessUrl"}
	statusAvailableVersions      = path{"status", "availableVersions"}
	statusLastVersionUpdate      = path{"status", "lastVersionUpdate"}
	statusLastHandledRebootAt    = path{"status", "lastHandledRebootAt"}
	statusLastHandledRebuildAt   = path{"status", "lastHandledRebuildAt"}
	statusBackups                = path{"status", "backups"}
	statusBackupsLastTime        = path{"status", "backups", "last", "time"}
	statusPrice                  = path{"status", "price"}
	statusPriceHourly            = path{"status", "price", "hourly"}
	statusPriceCurrency          = path{"status", "price", "currency"}

	credHash                = path{"status", "credentials", "hash"}
	credLastChangedAt       = path{"status", "credentials", "lastChangedAt"}
	credRolledOutHash       = path{"status", "credentials", "rolledOutHash"}
	credLastRotationRequest = path{"status", "credentials", "lastRotationRequest"}
	credRevokedKeyHash      = path{"status", "credentials", "revokedKeyHash"}
)

// statusField is a top-level status field by its JSON name (the kinds' URL fields).
func statusField(name string) path { return path{"status", name} }

func (p path) String(u *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(u.Object, p...)
	return v
}

func (p path) Bool(u *unstructured.Unstructured) bool {
	v, _, _ := unstructured.NestedBool(u.Object, p...)
	return v
}

func (p path) Int64(u *unstructured.Unstructured) int64 {
	v, _, _ := unstructured.NestedInt64(u.Object, p...)
	return v
}

// Value is the raw value (nil, false when absent).
func (p path) Value(u *unstructured.Unstructured) (any, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(u.Object, p...)
	return v, found && err == nil
}

func (p path) StringMap(u *unstructured.Unstructured) map[string]string {
	v, _, _ := unstructured.NestedStringMap(u.Object, p...)
	return v
}

func (p path) Map(u *unstructured.Unstructured) (map[string]any, bool) {
	v, found, _ := unstructured.NestedMap(u.Object, p...)
	return v, found
}

func (p path) Set(u *unstructured.Unstructured, v any) {
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
func (p path) SetOrRemove(u *unstructured.Unstructured, v string) {
	if v == "" {
		p.Remove(u)
		return
	}
	p.Set(u, v)
}

func (p path) Remove(u *unstructured.Unstructured) { unstructured.RemoveNestedField(u.Object, p...) }

// secretSpecOf decodes spec.secret into the shared API type (zero value when not set).
func secretSpecOf(u *unstructured.Unstructured) shared.SecretSpec {
	var s shared.SecretSpec
	if m, found := specSecret.Map(u); found && m != nil {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &s)
	}
	return s
}

// migrationOf decodes status.migration into the shared API type.
func migrationOf(u *unstructured.Unstructured) (shared.MigrationStatus, bool) {
	var m shared.MigrationStatus
	raw, found := statusMigration.Map(u)
	if !found {
		return m, false
	}
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &m)
	return m, true
}

// setMigration encodes m as status.migration.
func setMigration(u *unstructured.Unstructured, m shared.MigrationStatus) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&m)
	if err == nil {
		statusMigration.Set(u, raw)
	}
}
