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

package v1

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clever-operator/clever-operator/api/shared"
)

// RedisVersion is the integer code of a Redis version offered by Clever Cloud.
// The operator sends it to the Clever Cloud API as a string: `880` as `"8.8.0"`.
// Not an enum: the versions offered are what Clever Cloud announces for the
// provider (GET /v4/addon-providers/{id}), checked by the operator at reconcile time
// (condition reason VersionNotAvailable lists them).
// +kubebuilder:validation:Minimum=1
type RedisVersion int32

// Examples of Redis version codes.
const (
	RedisVersion724 RedisVersion = 724 // 7.2.4
	RedisVersion880 RedisVersion = 880 // 8.8.0
)

// String returns the version as sent to the Clever Cloud API.
func (v RedisVersion) String() string {
	switch v {
	case RedisVersion724:
		return "7.2.4"
	case RedisVersion880:
		return "8.8.0"
	default:
		return strconv.Itoa(int(v))
	}
}

// RedisOptions are the Redis database settings chosen when the add-on is created.
// +kubebuilder:validation:XValidation:rule="self.encryption == oldSelf.encryption",message="spec.options.encryption is set when the add-on is created and cannot change; create a new resource"
// +kubebuilder:validation:XValidation:rule="self.version >= oldSelf.version",message="spec.options.version cannot go down: Clever Cloud migrations only upgrade"
type RedisOptions struct {
	// Version is the Redis version, as an integer code: `724` (7.2.4), `880` (8.8.0).
	// The code is the digits of the version Clever Cloud names (8.4 → 84, 7.2.4 → 724);
	// the versions on offer are those the API announces today, not a list built into
	// this CRD (an unknown one sets reason VersionNotAvailable, naming them).
	// Raising it on an existing add-on runs a Clever Cloud migration (upgrades only:
	// the API server refuses a lower version).
	Version RedisVersion `json:"version"`

	// Encryption enables at-rest ("cold") encryption of the add-on's storage at
	// Clever Cloud. Chosen when the add-on is created.
	Encryption bool `json:"encryption"`
}

// RedisSpec is the desired Redis database add-on.
// +kubebuilder:validation:XValidation:rule="self.organisation == oldSelf.organisation",message="spec.organisation is immutable: the add-on lives in that organisation; create a new resource to move it"
type RedisSpec struct {
	// Organisation is the Clever Cloud owner of the add-on: an organisation id
	// (`orga_<uuid>`) or a user id (`user_<uuid>`). The credentials the operator
	// runs with must have access to it. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Organisation string `json:"organisation"`

	// Options are the Redis database settings.
	Options RedisOptions `json:"options"`

	// Instance is the region and plan of the add-on.
	Instance shared.MigratableInstance `json:"instance"`

	// Lifecycle controls adoption, deletion and how much the operator may change.
	shared.Lifecycle `json:",inline"`

	// Secret customises the Kubernetes Secret that receives the add-on's
	// credentials; by default it is named `<metadata.name>-secrets`.
	// +optional
	Secret *shared.SecretSpec `json:"secret,omitempty"`

	// NetworkGroups are the Clever Cloud Network Groups the add-on joins: a
	// NetworkGroup resource of this namespace (by name) or a group id
	// (`ng_<uuid>`). Each membership is in status.networkGroups; the first
	// group's private host name is published in the Secret as
	// `REDIS_PRIVATE_HOST`, for workloads on a network that reaches the group
	// (condition NetworkGroups). Removing an entry leaves that group. Clever
	// Cloud offers Network Groups to dedicated plans, not the shared `dev` plan.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	NetworkGroups []shared.NetworkGroupRef `json:"networkGroups,omitempty"`
}

// RedisStatus is the observed state of a Redis.
type RedisStatus struct {
	shared.CommonStatus `json:",inline"`

	// Backups summarises the add-on's backups at Clever Cloud, read at the
	// refresh period (never their download URLs).
	// +optional
	Backups *shared.BackupsStatus `json:"backups,omitempty"`

	// NetworkGroups are the add-on's memberships of the groups in
	// spec.networkGroups.
	// +optional
	// +listType=atomic
	NetworkGroups []shared.NetworkGroupMembership `json:"networkGroups,omitempty"`
}

// Redis is a Clever Cloud Redis database (add-on provider `redis-addon`) managed from Kubernetes.
// The operator creates the add-on in `spec.organisation`, names it
// `kubernetes::Redis::<metadata.uid>`, and writes its credentials to a Secret
// (`<metadata.name>-secrets` unless `spec.secret.name` says otherwise).
// Deleting the resource deletes the add-on.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=redis,singular=redis,scope=Namespaced,categories=clever,shortName=r
// +kubebuilder:printcolumn:name="organisation",type="string",JSONPath=".spec.organisation",description="Organisation"
// +kubebuilder:printcolumn:name="addon",type="string",JSONPath=".status.addon",description="Addon"
// +kubebuilder:printcolumn:name="region",type="string",JSONPath=".spec.instance.region",description="Region"
// +kubebuilder:printcolumn:name="instance",type="string",JSONPath=".spec.instance.plan",description="Instance"
// +kubebuilder:printcolumn:name="version",type="integer",JSONPath=".spec.options.version",description="Version"
// +kubebuilder:printcolumn:name="encrypted",type="boolean",JSONPath=".spec.options.encryption",description="Cold encryption"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the add-on exists at Clever Cloud and its credentials Secret is up to date"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Reason of the Ready condition"
// +kubebuilder:printcolumn:name="Last Backup",type="date",JSONPath=".status.backups.last.time",priority=1,description="When Clever Cloud took the newest backup of the add-on"
// +kubebuilder:printcolumn:name="Price/30d",type="string",JSONPath=".status.price.per30Days",description="What the add-on's plan costs per 30 days (status.price.currency, excluding VAT)"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name must be at most 63 characters (it is used in label values and Helm release names)"
type Redis struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired Clever Cloud add-on.
	Spec RedisSpec `json:"spec"`

	// Status is the observed state of the add-on, written by the operator.
	// It defaults to `{observedGeneration: 0}` so that a new resource reads
	// as in progress (kstatus) until the operator has handled it.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status RedisStatus `json:"status,omitempty"`
}

// RedisList is a list of Redis.
//
// +kubebuilder:object:root=true
type RedisList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Redis resources.
	Items []Redis `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Redis{}, &RedisList{})
}

var _ shared.Object = &Redis{}

// GetCommonStatus implements shared.Object.
func (in *Redis) GetCommonStatus() *shared.CommonStatus { return &in.Status.CommonStatus }

// GetSecretSpec implements shared.Object.
func (in *Redis) GetSecretSpec() *shared.SecretSpec { return in.Spec.Secret }
