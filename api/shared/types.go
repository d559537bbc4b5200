/*
Copyright 2026 The clever-operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package shared

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Instance says where a Clever Cloud add-on runs and how big it is. The region cannot change;
// a plan change runs a migration for ElasticSearch and has no effect on the other kinds.
// +kubebuilder:validation:XValidation:rule="self.region == oldSelf.region",message="spec.instance.region is immutable: Clever Cloud cannot migrate this kind of add-on to another region; create a new resource"
type Instance struct {
	// Region is the Clever Cloud region (zone) code the add-on is created in,
	// for example `par` (Paris), `grahds`, `rbx`, `rbxhds`, `scw`, `mtl`,
	// `sgp`, `syd` or `wsw`. It is sent as is to the Clever Cloud API.
	// Immutable: an add-on cannot move between regions.
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region"`

	// Plan selects the Clever Cloud plan (size) of the add-on. It accepts a plan
	// slug such as `s_sml` or `xs_sml`, a plan name, or a plan id `plan_<uuid>`;
	// slugs and names are resolved against the provider's plan list when the
	// add-on is created. The operator never rewrites this field: the resolved
	// plan id is reported in `status.plan`.
	// +kubebuilder:validation:MaxLength=128
	Plan string `json:"plan"`
}

// RegionInstance says where a Clever Cloud add-on whose plan is fixed by the
// operator (Pulsar, KV) runs.
// +kubebuilder:validation:XValidation:rule="self.region == oldSelf.region",message="spec.instance.region is immutable"
type RegionInstance struct {
	// Region is the Clever Cloud region (zone) code the add-on is created in,
	// for example `par` (Paris), the only region where this add-on is offered
	// today. It is sent as is to the Clever Cloud API.
	// Immutable: an add-on cannot move between regions.
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region"`
}

// MigratableInstance is the instance of the databases Clever Cloud can migrate between
// regions (PostgreSQL, MySQL, MongoDB, Redis): changing region or plan runs a migration.
type MigratableInstance struct {
	// Region is the Clever Cloud region (zone) code, for example `par`, `grahds`,
	// `rbx`, `rbxhds`, `scw`, `mtl`, `sgp`, `syd` or `wsw`. Changing it on an
	// existing add-on runs a Clever Cloud migration to that region.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region"`

	// Plan selects the Clever Cloud plan (size): a slug such as `s_sml`, a plan
	// name, or a plan id `plan_<uuid>`. Changing it on an existing add-on runs a
	// Clever Cloud migration. The operator never rewrites this field; the
	// resolved plan id is reported in `status.plan`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Plan string `json:"plan"`
}

// SecretSpec shapes what the operator publishes from the add-on's credentials (its
// environment variables). Every field is optional; without the block the operator writes
// `<metadata.name>-secrets` with the add-on's raw keys, as the Rust operator did.
// +kubebuilder:validation:XValidation:rule="!has(self.templates) || self.templates.all(k, k.matches('^[-._a-zA-Z0-9]+$'))",message="spec.secret.templates keys must be valid Secret keys (letters, digits, '-', '_', '.')"
// +kubebuilder:validation:XValidation:rule="!has(self.labels) || self.labels.all(k, !k.startsWith('api.clever-cloud.com/') && !k.startsWith('app.kubernetes.io/'))",message="spec.secret.labels cannot set api.clever-cloud.com/ or app.kubernetes.io/ labels: the operator owns them"
// +kubebuilder:validation:XValidation:rule="!has(self.annotations) || self.annotations.all(k, !k.startsWith('api.clever-cloud.com/') && !k.startsWith('meta.helm.sh/'))",message="spec.secret.annotations cannot set api.clever-cloud.com/ or meta.helm.sh/ annotations: the operator owns them"
type SecretSpec struct {
	// Name is the name of the Secret holding the credentials, in the namespace
	// of this resource; default `<metadata.name>-secrets`. Set it when two
	// resources of different kinds share a name in one namespace, since their
	// default Secret names would collide. Must be a DNS subdomain name. Changing
	// it moves the credentials: the new Secret is written before the old one is
	// removed.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`

	// Disabled publishes no credentials Secret (nor the service binding Secret),
	// for consumers that only observe the add-on or read its credentials elsewhere.
	// The ConfigMap (when asked for) is still published. The operator keeps its
	// own internal copy (`<metadata.name>-<kind>-source`).
	// +optional
	Disabled bool `json:"disabled,omitempty"`

	// Labels are added to the published Secret (and ConfigMap). Keys under
	// `api.clever-cloud.com/` and `app.kubernetes.io/` are reserved.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && size(self[k]) <= 63)",message="spec.secret.labels: a key is at most 317 characters (prefix/name) and a value at most 63"
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations are added to the published Secret (and ConfigMap). Keys under
	// `api.clever-cloud.com/` and `meta.helm.sh/` are reserved.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && size(self[k]) <= 4096)",message="spec.secret.annotations: a key is at most 317 characters (prefix/name) and a value at most 4096"
	Annotations map[string]string `json:"annotations,omitempty"`

	// KeyPrefix is put in front of every key taken from the add-on (for example
	// `APP_` turns `POSTGRESQL_ADDON_HOST` into `APP_POSTGRESQL_ADDON_HOST`), in
	// the Secret and the ConfigMap. Template keys are used as written.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]*$`
	KeyPrefix string `json:"keyPrefix,omitempty"`

	// Templates adds keys whose values are Go templates (with the sprig
	// functions Helm offers) over the add-on's raw keys, for example
	// `DATABASE_URL: "postgresql://{{ .POSTGRESQL_ADDON_USER }}:{{ .POSTGRESQL_ADDON_PASSWORD }}@{{ .POSTGRESQL_ADDON_HOST }}:{{ .POSTGRESQL_ADDON_PORT }}/{{ .POSTGRESQL_ADDON_DB }}"`.
	// A template that does not parse, or names a key the add-on does not have,
	// sets Ready=False with reason `SecretTemplateInvalid` and leaves the
	// published Secret as it was. A template key overrides an add-on key of the
	// same name. Templates cannot read the cluster or the operator's environment
	// (`lookup`, `env`, `expandenv`, `getHostByName` are refused), cannot render
	// other templates (`include`, `tpl`, `define`, `block`, `template`), and are
	// bounded: at most 1 MiB of output in all, and a work budget for loops and
	// functions (docs/security.md). At most 64 keys of 253 characters, each
	// template at most 8192 characters and 65536 in all.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 253 && size(self[k]) <= 8192)",message="spec.secret.templates: a key is at most 253 characters and a template at most 8192"
	// +kubebuilder:validation:XValidation:rule="self.map(k, size(self[k])).sum() <= 65536",message="spec.secret.templates: the templates are at most 65536 characters in all"
	Templates map[string]string `json:"templates,omitempty"`

	// ConfigMap, when set, also publishes the non-secret part of the
	// credentials (host, port, database name, version, URLs without
	// passwords; see docs/kinds.md) in a ConfigMap.
	// +optional
	ConfigMap *ConfigMapSpec `json:"configMap,omitempty"`

	// Rollout restarts workloads when the credentials change: the Deployments
	// and StatefulSets of this namespace whose labels match get their pod
	// template annotated with the new credentials hash. Workloads can also opt
	// in with the annotation `api.clever-cloud.com/rollout-on-secret-change`
	// listing Secret names.
	// +optional
	Rollout *RolloutSpec `json:"rollout,omitempty"`
}

// ConfigMapSpec asks for a ConfigMap with the non-secret part of the credentials.
type ConfigMapSpec struct {
	// Name of the ConfigMap; default `<metadata.name>-config`.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`
}

// RolloutSpec selects the workloads to restart when the credentials change.
type RolloutSpec struct {
	// MatchLabels selects the Deployments and StatefulSets of this namespace
	// that carry all these labels.
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && size(self[k]) <= 63)",message="spec.secret.rollout.matchLabels: a key is at most 317 characters (prefix/name) and a value at most 63"
	MatchLabels map[string]string `json:"matchLabels"`
}

// BindingStatus points at the Secret of a Service Binding (servicebinding.io)
// Provisioned Service.
type BindingStatus struct {
	// Name of the Secret, in this namespace, of type `servicebinding.io/<type>`.
	Name string `json:"name"`
}

// CredentialsStatus tells when the published credentials last changed, without
// their values.
type CredentialsStatus struct {
	// Hash is a content hash of the add-on's credentials (also the annotation
	// api.clever-cloud.com/credentials-hash on the Secret).
	// +optional
	Hash string `json:"hash,omitempty"`

	// LastChangedAt is when the operator last saw the credentials change
	// (first publication included).
	// +optional
	LastChangedAt *metav1.Time `json:"lastChangedAt,omitempty"`

	// RolledOutHash is the hash the opted-in workloads were last restarted for.
	// +optional
	RolledOutHash string `json:"rolledOutHash,omitempty"`

	// LastRotationRequest is the value of the
	// api.clever-cloud.com/rotate-requested-at annotation the operator last
	// acted on.
	// +optional
	LastRotationRequest string `json:"lastRotationRequest,omitempty"`

	// RevokedKeyHash is a hash (never the value) of the credentials the last
	// rotation revoked: a read of the add-on that still shows them is stale
	// and is not published. Cleared once new credentials are published.
	// +optional
	RevokedKeyHash string `json:"revokedKeyHash,omitempty"`
}

// OfferedVersion is a version Clever Cloud offers for an add-on, as it names it
// (for example `26.2.5`).
type OfferedVersion string

// OperatorStatus is what Clever Cloud serves at v4 about its "operator" add-ons
// (Keycloak, Metabase, Matomo, Otoroshi) that is not secret, and the actions
// the operator took on them.
type OperatorStatus struct {
	// AccessURL is the add-on's public URL (v4 `accessUrl`).
	// +optional
	AccessURL string `json:"accessUrl,omitempty"`

	// AvailableVersions are the versions Clever Cloud offers for this add-on
	// (v4 `availableVersions`); `spec.version` must be one of them.
	// +optional
	AvailableVersions []OfferedVersion `json:"availableVersions,omitempty"`

	// LastVersionUpdate is the `<version>@<generation>` of the last version
	// update the operator asked Clever Cloud for.
	// +optional
	LastVersionUpdate string `json:"lastVersionUpdate,omitempty"`

	// LastHandledRebootAt is the value of the
	// api.clever-cloud.com/reboot-requested-at annotation last acted on.
	// +optional
	LastHandledRebootAt string `json:"lastHandledRebootAt,omitempty"`

	// LastHandledRebuildAt is the value of the
	// api.clever-cloud.com/rebuild-requested-at annotation last acted on.
	// +optional
	LastHandledRebuildAt string `json:"lastHandledRebuildAt,omitempty"`
}

// ConditionStatus is the status of a condition: True, False or Unknown.
// +kubebuilder:validation:Enum=True;False;Unknown
type ConditionStatus string

// Condition status values.
const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

// Condition is one observation of the resource's state. Its shape matches the
// conditions written by the Helm reconciler (helm-operator-plugins), whose
// reason and message are often empty, which is why only type and status are
// required (metav1.Condition requires both and would reject those writes).
type Condition struct {
	// Type of the condition, e.g. `Ready`, `AddonReady` (written by the add-on
	// controller) or `Initialized`, `Deployed`, `ReleaseFailed`,
	// `Irreconcilable`, `Paused` (written by the Helm reconciler).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	Type string `json:"type"`

	// Status of the condition: `True`, `False` or `Unknown`.
	Status ConditionStatus `json:"status"`

	// Reason is a short CamelCase machine-readable cause of the last transition,
	// e.g. `Provisioned`, `ProvisionFailed` or `InstallSuccessful`. May be empty.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Message is a human-readable explanation of the last transition, e.g. the
	// error returned by the Clever Cloud API. May be empty.
	// +optional
	Message string `json:"message,omitempty"`

	// LastTransitionTime is when the condition last changed status.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`

	// ObservedGeneration is the metadata.generation the condition was computed from.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// DeployedRelease names the Helm release that renders this resource's Secret.
// It deliberately declares only `name`: the Helm reconciler also writes
// `manifest` (the rendered manifest, credentials included), which the API
// server prunes because it is not in the schema.
type DeployedRelease struct {
	// Name of the Helm release (stored as Secrets in this namespace).
	// +optional
	Name string `json:"name,omitempty"`
}

// CommonStatus holds the status fields every kind has. It is embedded inline
// in each kind's status.
type CommonStatus struct {
	// ObservedGeneration is the metadata.generation last handled by the add-on
	// controller. kstatus reads the resource as in progress while it is lower
	// than metadata.generation; a new resource starts at 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Addon is the id of the Clever Cloud add-on backing this resource
	// (`addon_<uuid>`), as returned by the Clever Cloud API. Empty until the
	// add-on is created.
	// +optional
	Addon string `json:"addon,omitempty"`

	// Plan is the Clever Cloud plan id (`plan_<uuid>`) the add-on was created
	// with, i.e. `spec.instance.plan` resolved from a slug or name, or the plan
	// the operator chooses for kinds without a plan field.
	// +optional
	Plan string `json:"plan,omitempty"`

	// SecretName is the name of the Secret, in this namespace, that holds the
	// add-on's credentials (`spec.secret.name`, default `<metadata.name>-secrets`).
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// Binding is the Service Binding (servicebinding.io) Secret of database-like
	// kinds: a Secret of type `servicebinding.io/<type>` with the well-known
	// entries (`type`, `provider`, `host`, `port`, `username`, `password`,
	// `database`, `uri` as applicable).
	// +optional
	Binding *BindingStatus `json:"binding,omitempty"`

	// ConfigMapName is the ConfigMap with the non-secret part of the
	// credentials, when spec.secret.configMap asks for one.
	// +optional
	ConfigMapName string `json:"configMapName,omitempty"`

	// Credentials tells when the credentials last changed (no values).
	// +optional
	Credentials *CredentialsStatus `json:"credentials,omitempty"`

	// Conditions are the latest observations of the resource's state. `Ready`
	// summarises them; the Helm reconciler's conditions are kept alongside.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []Condition `json:"conditions,omitempty"`

	// DeployedRelease is the Helm release that renders the credentials Secret.
	// +optional
	DeployedRelease *DeployedRelease `json:"deployedRelease,omitempty"`

	// Adopted is true when this resource is bound to an add-on it did not create
	// (spec.addonId, the api.clever-cloud.com/addon-id annotation, or an add-on
	// found by its kubernetes::<Kind>::<uid> name).
	// +optional
	Adopted bool `json:"adopted,omitempty"`

	// Version is the add-on's version as the Clever Cloud API names it (e.g. `17`,
	// `8.4`, `7.2.4`), as created or last migrated to.
	// +optional
	Version string `json:"version,omitempty"`

	// Migration is the last migration the operator started to apply a change of
	// plan, version or region.
	// +optional
	Migration *MigrationStatus `json:"migration,omitempty"`

	// LastHandledReconcileAt is the value of the
	// api.clever-cloud.com/reconcile-requested-at annotation the operator last
	// acted on (a forced refresh).
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`

	// Price is what the add-on's plan costs, from Clever Cloud's price system
	// (read a few times a day, never once per resource). Informative: a price
	// that cannot be had leaves the amounts empty with a reason and never holds
	// up provisioning.
	// +optional
	Price *PriceStatus `json:"price,omitempty"`
}

// PriceStatus is the price of an add-on's plan. Amounts are decimal strings
// in Currency, excluding VAT, as Clever Cloud lists them.
type PriceStatus struct {
	// Hourly is the price per hour (e.g. `0.0270833`).
	// +optional
	Hourly string `json:"hourly,omitempty"`

	// Per30Days is the hourly price × 720, rounded to the cent (e.g. `19.50`):
	// what the Clever Cloud console shows as "30 days".
	// +optional
	Per30Days string `json:"per30Days,omitempty"`

	// Currency of the amounts (ISO 4217, e.g. `EUR`).
	// +optional
	Currency string `json:"currency,omitempty"`

	// Source is where the price came from: `Organisation` (the organisation's
	// price system), `List` (Clever Cloud's list price system, when the
	// organisation has none) or `Catalogue` (the plan's price in the add-on
	// catalogue, euros per 30 days, when no price system lists the plan).
	// +optional
	// +kubebuilder:validation:Enum=Organisation;List;Catalogue
	Source string `json:"source,omitempty"`

	// Plan is the plan id (`plan_<uuid>`) priced.
	// +optional
	Plan string `json:"plan,omitempty"`

	// Zone is the region whose prices apply (e.g. `par`).
	// +optional
	Zone string `json:"zone,omitempty"`

	// CheckedAt is when the operator last looked the price up.
	// +optional
	CheckedAt *metav1.Time `json:"checkedAt,omitempty"`

	// Reason says why the amounts are empty: `UsageBased` (the add-on is billed
	// by use, e.g. Cellar storage and traffic), `PlanNotListed` (the catalogue
	// no longer lists the plan) or `PriceUnavailable` (no price could be read;
	// Message says why).
	// +optional
	Reason string `json:"reason,omitempty"`

	// Message details Reason.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// BackupsStatus is what Clever Cloud lists of the add-on's backups
// (GET /v2/backups/{ownerId}/{realId}), read at the refresh period. Download
// URLs and restore commands are credentials: they are never copied here.
type BackupsStatus struct {
	// Count is the number of backups Clever Cloud keeps for the add-on.
	// +kubebuilder:validation:Minimum=0
	Count int32 `json:"count"`

	// Last is the newest backup; absent when there is none.
	// +optional
	Last *BackupInfo `json:"last,omitempty"`
}

// BackupInfo describes one backup, without its download URL.
type BackupInfo struct {
	// Time is when Clever Cloud took the backup (its creation_date).
	Time metav1.Time `json:"time"`

	// ID is Clever Cloud's backup id (a UUID; `clever database backups` lists it).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ID string `json:"id,omitempty"`

	// Status is the backup's status as Clever Cloud reports it.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Status string `json:"status,omitempty"`
}

// MigrationStatus is a Clever Cloud add-on migration driven by the operator.
type MigrationStatus struct {
	// ID is the Clever Cloud migration id (`migration_…`).
	ID string `json:"id"`
	// Status is the migration's status at Clever Cloud: RUNNING, OK, FAILED,
	// ABORTED, RECOVERING or RECOVERED.
	Status string `json:"status"`
	// Step is the step running (or that failed).
	// +optional
	Step string `json:"step,omitempty"`
	// Message is Clever Cloud's message about a failure.
	// +optional
	Message string `json:"message,omitempty"`
	// Generation is the metadata.generation whose spec the migration applies.
	Generation int64 `json:"generation"`
	// Target describes the requested plan, region and version.
	// +optional
	Target string `json:"target,omitempty"`
}

// DeletionPolicy says what happens to the Clever Cloud add-on when the resource
// is deleted.
// +kubebuilder:validation:Enum=Delete;Orphan
type DeletionPolicy string

const (
	// DeletionPolicyDelete deletes the add-on at Clever Cloud (the default).
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyOrphan keeps the add-on and only removes the resource.
	DeletionPolicyOrphan DeletionPolicy = "Orphan"
)

// ManagementPolicy says which Clever Cloud calls the operator may make.
// +kubebuilder:validation:Enum=Full;ObserveOnly
type ManagementPolicy string

const (
	// ManagementPolicyFull creates, updates and deletes the add-on (the default).
	ManagementPolicyFull ManagementPolicy = "Full"
	// ManagementPolicyObserveOnly only reads an existing add-on and publishes its
	// credentials; it never creates, changes or deletes it.
	ManagementPolicyObserveOnly ManagementPolicy = "ObserveOnly"
)

// Lifecycle are the fields, common to every kind, that control how the operator
// manages the add-on's life. All are optional and additive to the Rust
// operator's schema.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.addonId) || (has(self.addonId) && self.addonId == oldSelf.addonId)",message="spec.addonId cannot be changed or removed once set; create a new resource to bind another add-on"
// +kubebuilder:validation:XValidation:rule="has(self.credentialsRef) == has(oldSelf.credentialsRef) && (!has(self.credentialsRef) || (self.credentialsRef.name == oldSelf.credentialsRef.name && (has(self.credentialsRef.kind) ? self.credentialsRef.kind : 'CleverCredentials') == (has(oldSelf.credentialsRef.kind) ? oldSelf.credentialsRef.kind : 'CleverCredentials')))",message="spec.credentialsRef is immutable: the add-on belongs to the identity that created it"
type Lifecycle struct {
	// AddonID binds this resource to an existing Clever Cloud add-on
	// (`addon_<uuid>`) in spec.organisation instead of creating one. The
	// annotation api.clever-cloud.com/addon-id does the same. Immutable once set.
	// +optional
	// +kubebuilder:validation:Pattern=`^addon_[A-Za-z0-9-]+$`
	// +kubebuilder:validation:MaxLength=64
	AddonID string `json:"addonId,omitempty"`

	// DeletionPolicy is what happens to the add-on when this resource is
	// deleted: `Delete` (default) deletes it at Clever Cloud, `Orphan` keeps it.
	// When unset, the namespace annotation api.clever-cloud.com/deletion-policy,
	// then the operator's --default-deletion-policy, decide.
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// ManagementPolicy is `Full` (default: create, update, delete) or
	// `ObserveOnly`: read an existing add-on (spec.addonId, the addon-id
	// annotation, or its kubernetes::<Kind>::<uid> name) and publish its
	// credentials, never create, change or delete it.
	// +optional
	ManagementPolicy ManagementPolicy `json:"managementPolicy,omitempty"`

	// CredentialsRef selects the Clever Cloud credentials this resource uses: a
	// CleverCredentials of its namespace or a ClusterCleverCredentials that
	// allows its namespace. Unset: the namespace's override Secret
	// (`clever-operator`) when there is one, else the ClusterCleverCredentials
	// `default` (the operator's own credentials). Immutable: the add-on belongs
	// to the identity that created it.
	// +optional
	CredentialsRef *CredentialsRef `json:"credentialsRef,omitempty"`
}

// CredentialsRef names a CleverCredentials (in the resource's namespace) or a
// ClusterCleverCredentials.
type CredentialsRef struct {
	// Kind is `CleverCredentials` (default) or `ClusterCleverCredentials`.
	// +optional
	// +kubebuilder:validation:Enum=CleverCredentials;ClusterCleverCredentials
	Kind string `json:"kind,omitempty"`

	// Name of the credentials object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// NetworkGroupRef names a Clever Cloud Network Group an add-on joins: a NetworkGroup
// resource of the same namespace (its metadata.name), or the id (`ng_<uuid>`) of a group
// made elsewhere (console, `clever ng create`, Terraform).
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^(ng_[0-9a-fA-F-]{36}|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$`
type NetworkGroupRef string

// NetworkGroupMembership is the add-on's membership of one Network Group.
type NetworkGroupMembership struct {
	// Ref is the spec.networkGroups entry this membership answers.
	Ref string `json:"ref"`

	// ID is the Network Group's id (`ng_<uuid>`).
	ID string `json:"id"`

	// Member is the add-on's member id in the group (its real id,
	// `postgresql_<uuid>`, ...).
	Member string `json:"member"`

	// PrivateHost is the name that resolves to the add-on inside the group
	// (`<member>.m.<id>.cc-ng.cloud`). The first group's is published in the
	// Secret as `<PREFIX>_PRIVATE_HOST`. Empty while Clever Cloud is still
	// adding the member.
	// +optional
	PrivateHost string `json:"privateHost,omitempty"`
}
