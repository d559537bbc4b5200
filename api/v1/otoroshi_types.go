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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clever-operator/clever-operator/api/shared"
)

// OtoroshiOptions are the settings of the Otoroshi add-on. Clever Cloud offers none
// today: the object is kept, empty, for compatibility with existing manifests.
type OtoroshiOptions struct{}

// OtoroshiSpec is the desired Otoroshi (API gateway) service add-on.
// +kubebuilder:validation:XValidation:rule="self.organisation == oldSelf.organisation",message="spec.organisation is immutable: the add-on lives in that organisation; create a new resource to move it"
type OtoroshiSpec struct {
	// Organisation is the Clever Cloud owner of the add-on: an organisation id
	// (`orga_<uuid>`) or a user id (`user_<uuid>`). The credentials the operator
	// runs with must have access to it. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Organisation string `json:"organisation"`

	// Options are the add-on settings; none exist today, so it is always `{}`.
	// +optional
	// +kubebuilder:default={}
	Options OtoroshiOptions `json:"options,omitempty"`

	// Instance is the region and plan of the add-on.
	Instance shared.Instance `json:"instance"`

	// Version is the Otoroshi version to run, as Clever Cloud names it (for
	// example one of `status.availableVersions`). Set at creation it is sent
	// as the create option `version`; changed later, the operator asks Clever
	// Cloud to update the add-on to it (POST …/version/update) when Clever
	// Cloud offers it, and otherwise reports the offered versions in the
	// VersionUpdate condition. Empty: Clever Cloud's default, never changed.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version,omitempty"`

	// Lifecycle controls adoption, deletion and how much the operator may change.
	shared.Lifecycle `json:",inline"`

	// Secret customises the Kubernetes Secret that receives the add-on's
	// credentials; by default it is named `<metadata.name>-secrets`.
	// +optional
	Secret *shared.SecretSpec `json:"secret,omitempty"`
}

// OtoroshiStatus is the observed state of a Otoroshi.
type OtoroshiStatus struct {
	shared.CommonStatus `json:",inline"`

	// Facts Clever Cloud serves at v4 for this add-on (version is status.version).
	shared.OperatorStatus `json:",inline"`

	// URL is the URL of the Otoroshi gateway,
	// read from the add-on's `CC_OTOROSHI_URL` environment variable.
	// +optional
	URL string `json:"url,omitempty"`
}

// Otoroshi is a Clever Cloud Otoroshi (API gateway) service (add-on provider `otoroshi`) managed from Kubernetes.
// The operator creates the add-on in `spec.organisation`, names it
// `kubernetes::Otoroshi::<metadata.uid>`, and writes its credentials to a Secret
// (`<metadata.name>-secrets` unless `spec.secret.name` says otherwise).
// Deleting the resource deletes the add-on.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=otoroshis,singular=otoroshi,scope=Namespaced,categories=clever
// +kubebuilder:printcolumn:name="organisation",type="string",JSONPath=".spec.organisation",description="Organisation"
// +kubebuilder:printcolumn:name="addon",type="string",JSONPath=".status.addon",description="Addon"
// +kubebuilder:printcolumn:name="region",type="string",JSONPath=".spec.instance.region",description="Region"
// +kubebuilder:printcolumn:name="instance",type="string",JSONPath=".spec.instance.plan",description="Instance"
// +kubebuilder:printcolumn:name="url",type="string",JSONPath=".status.url",description="Url"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the add-on exists at Clever Cloud and its credentials Secret is up to date"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Reason of the Ready condition"
// +kubebuilder:printcolumn:name="Price/30d",type="string",JSONPath=".status.price.per30Days",description="What the add-on's plan costs per 30 days (status.price.currency, excluding VAT)"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name must be at most 63 characters (it is used in label values and Helm release names)"
type Otoroshi struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired Clever Cloud add-on.
	Spec OtoroshiSpec `json:"spec"`

	// Status is the observed state of the add-on, written by the operator.
	// It defaults to `{observedGeneration: 0}` so that a new resource reads
	// as in progress (kstatus) until the operator has handled it.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status OtoroshiStatus `json:"status,omitempty"`
}

// OtoroshiList is a list of Otoroshi.
//
// +kubebuilder:object:root=true
type OtoroshiList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Otoroshi resources.
	Items []Otoroshi `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Otoroshi{}, &OtoroshiList{})
}

var _ shared.Object = &Otoroshi{}

// GetCommonStatus implements shared.Object.
func (in *Otoroshi) GetCommonStatus() *shared.CommonStatus { return &in.Status.CommonStatus }

// GetSecretSpec implements shared.Object.
func (in *Otoroshi) GetSecretSpec() *shared.SecretSpec { return in.Spec.Secret }

var _ shared.URLObject = &Otoroshi{}

// GetURLStatus implements shared.URLObject.
func (in *Otoroshi) GetURLStatus() *string { return &in.Status.URL }

// URLEnvVars implements shared.URLObject.
func (in *Otoroshi) URLEnvVars() map[string]string {
	return map[string]string{shared.URLField: "CC_OTOROSHI_URL"}
}
