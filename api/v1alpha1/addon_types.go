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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clever-operator/clever-operator/api/shared"
)

// AddonSpec is the desired add-on of any Clever Cloud provider, named by its id.
// +kubebuilder:validation:XValidation:rule="self.organisation == oldSelf.organisation",message="spec.organisation is immutable: the add-on lives in that organisation; create a new resource to move it"
// +kubebuilder:validation:XValidation:rule="self.providerId == oldSelf.providerId",message="spec.providerId is immutable: an add-on cannot change provider; create a new resource"
// +kubebuilder:validation:XValidation:rule="self.plan == oldSelf.plan",message="spec.plan is immutable on an Addon: the generic kind does not migrate add-ons (use the typed kind where Clever Cloud can migrate, e.g. PostgreSql); create a new resource"
// +kubebuilder:validation:XValidation:rule="self.region == oldSelf.region",message="spec.region is immutable: the generic kind does not migrate add-ons between regions; create a new resource"
// +kubebuilder:validation:XValidation:rule="has(self.options) == has(oldSelf.options) && (!has(self.options) || self.options == oldSelf.options)",message="spec.options are sent when the add-on is created and cannot change; create a new resource"
type AddonSpec struct {
	// Organisation is the Clever Cloud owner of the add-on: an organisation id
	// (`orga_<uuid>`) or a user id (`user_<uuid>`). The credentials the operator
	// runs with must have access to it. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Organisation string `json:"organisation"`

	// ProviderID is the Clever Cloud add-on provider, as the catalogue
	// (`GET /v2/products/addonproviders`) and `clever addon providers` name it:
	// `fs-bucket` (FS Bucket), or any provider Clever Cloud offers, including
	// those this operator has no typed kind for. It is checked against the
	// live catalogue before the add-on is created: an unknown one sets
	// Ready=False, reason `ProviderNotFound`, listing the providers on offer.
	// Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9][-_.a-zA-Z0-9]*$`
	ProviderID string `json:"providerId"`

	// Plan selects the provider's plan: a slug such as `s`, a plan name, or a
	// plan id `plan_<uuid>`. Slugs and names are resolved against the
	// provider's plans in the live catalogue (reason `PlanNotFound` lists
	// them); the resolved id is reported in `status.plan`, this field is never
	// rewritten. Immutable: the generic kind does not run Clever Cloud
	// migrations.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Plan string `json:"plan"`

	// Region is the Clever Cloud region (zone) code the add-on is created in,
	// for example `par`. It must be one the provider and the plan are offered
	// in (reason `RegionNotAvailable` lists them). Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region"`

	// Options are passed through, as they are, as the `options` of the create
	// request (`POST /v2/organisations/{id}/addons`), as
	// `clever addon create --option key=value` sends them: for example
	// `version`, `encryption: "true"`. The operator neither checks nor
	// interprets them; Clever Cloud refuses those it does not accept (reason
	// `InvalidSpec`, with its message). Used only when the add-on is created,
	// so immutable.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 128 && size(self[k]) <= 4096)",message="spec.options: a key is at most 128 characters and a value at most 4096"
	Options map[string]string `json:"options,omitempty"`

	// NetworkGroups are the Clever Cloud Network Groups the add-on joins: a
	// NetworkGroup resource of this namespace (by name) or a group id
	// (`ng_<uuid>`). Clever Cloud offers them to the providers
	// `postgresql-addon`, `mysql-addon`, `mongodb-addon`, `redis-addon` and
	// `es-addon` on dedicated plans; others get the condition NetworkGroups=False,
	// reason `NetworkGroupsNotSupported`. The first group's private host name is
	// published as `<PREFIX>_PRIVATE_HOST` (the prefix of the provider's
	// `..._HOST` variable).
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	NetworkGroups []shared.NetworkGroupRef `json:"networkGroups,omitempty"`

	// Lifecycle controls adoption, deletion and how much the operator may change.
	shared.Lifecycle `json:",inline"`

	// Secret customises the Kubernetes Secret that receives the add-on's
	// environment variables (every one, under its own name); by default it is
	// named `<metadata.name>-secrets`.
	// +optional
	Secret *shared.SecretSpec `json:"secret,omitempty"`
}

// AddonStatus is the observed state of an Addon.
type AddonStatus struct {
	shared.CommonStatus `json:",inline"`

	// NetworkGroups are the add-on's memberships of the groups in
	// spec.networkGroups.
	// +optional
	// +listType=atomic
	NetworkGroups []shared.NetworkGroupMembership `json:"networkGroups,omitempty"`
}

// Addon is a Clever Cloud add-on of any provider (`spec.providerId`) managed from
// Kubernetes: the generic kind, for providers the operator has no typed kind for
// (FS Bucket `fs-bucket`, or one Clever Cloud adds next) without an operator release.
// Prefer the typed kind when there is one (PostgreSql, Redis, ...): they check their
// options, migrate plan, version or region changes, and publish service bindings.
// The operator creates the add-on in `spec.organisation`, names it
// `kubernetes::Addon::<metadata.uid>`, and writes every environment variable of the
// add-on, as it is, to a Secret (`<metadata.name>-secrets` unless `spec.secret.name`
// says otherwise). Deleting the resource deletes the add-on.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=addons,singular=addon,scope=Namespaced,categories=clever,shortName=cca
// +kubebuilder:printcolumn:name="organisation",type="string",JSONPath=".spec.organisation",description="Organisation"
// +kubebuilder:printcolumn:name="addon",type="string",JSONPath=".status.addon",description="Addon"
// +kubebuilder:printcolumn:name="provider",type="string",JSONPath=".spec.providerId",description="Clever Cloud add-on provider"
// +kubebuilder:printcolumn:name="region",type="string",JSONPath=".spec.region",description="Region"
// +kubebuilder:printcolumn:name="plan",type="string",JSONPath=".spec.plan",description="Plan"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the add-on exists at Clever Cloud and its credentials Secret is up to date"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Reason of the Ready condition"
// +kubebuilder:printcolumn:name="Price/30d",type="string",JSONPath=".status.price.per30Days",description="What the add-on's plan costs per 30 days (status.price.currency, excluding VAT)"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name must be at most 63 characters (it is used in label values and Helm release names)"
type Addon struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired Clever Cloud add-on.
	Spec AddonSpec `json:"spec"`

	// Status is the observed state of the add-on, written by the operator.
	// It defaults to `{observedGeneration: 0}` so that a new resource reads
	// as in progress (kstatus) until the operator has handled it.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status AddonStatus `json:"status,omitempty"`
}

// AddonList is a list of Addon.
//
// +kubebuilder:object:root=true
type AddonList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Addon resources.
	Items []Addon `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Addon{}, &AddonList{})
}

var _ shared.Object = &Addon{}

// GetCommonStatus implements shared.Object.
func (in *Addon) GetCommonStatus() *shared.CommonStatus { return &in.Status.CommonStatus }

// GetSecretSpec implements shared.Object.
func (in *Addon) GetSecretSpec() *shared.SecretSpec { return in.Spec.Secret }
