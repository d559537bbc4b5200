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

// ConfigProviderSpec is the desired configuration provider add-on.
// +kubebuilder:validation:XValidation:rule="self.organisation == oldSelf.organisation",message="spec.organisation is immutable: the add-on lives in that organisation; create a new resource to move it"
type ConfigProviderSpec struct {
	// Organisation is the Clever Cloud owner of the add-on: an organisation id
	// (`orga_<uuid>`) or a user id (`user_<uuid>`). The credentials the operator
	// runs with must have access to it. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Organisation string `json:"organisation"`

	// Variables are the environment variables (name to value) held by the
	// config-provider add-on. The operator pushes them to the add-on, where
	// Clever Cloud applications linked to it receive them, and copies them into
	// the credentials Secret. The add-on always lives in region `par` on the
	// fixed config-provider plan.
	// +kubebuilder:validation:MaxProperties=256
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 253 && size(self[k]) <= 262144)",message="spec.variables: a name is at most 253 characters and a value at most 262144"
	// +kubebuilder:validation:XValidation:rule="self.map(k, size(k) + size(self[k])).sum() <= 786432",message="spec.variables: the names and values are at most 786432 bytes in all (the credentials Secret holds at most 1 MiB)"
	Variables map[string]string `json:"variables"`

	// Lifecycle controls adoption, deletion and how much the operator may change.
	shared.Lifecycle `json:",inline"`

	// Secret customises the Kubernetes Secret that receives the add-on's
	// credentials; by default it is named `<metadata.name>-secrets`.
	// +optional
	Secret *shared.SecretSpec `json:"secret,omitempty"`
}

// ConfigProviderStatus is the observed state of a ConfigProvider.
type ConfigProviderStatus struct {
	shared.CommonStatus `json:",inline"`
}

// ConfigProvider is a Clever Cloud configuration provider (add-on provider `config-provider`) managed from Kubernetes.
// The operator creates the add-on in `spec.organisation`, names it
// `kubernetes::ConfigProvider::<metadata.uid>`, and writes its credentials to a Secret
// (`<metadata.name>-secrets` unless `spec.secret.name` says otherwise).
// Deleting the resource deletes the add-on.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=configproviders,singular=configprovider,scope=Namespaced,categories=clever,shortName=cp
// +kubebuilder:printcolumn:name="organisation",type="string",JSONPath=".spec.organisation",description="Organisation"
// +kubebuilder:printcolumn:name="addon",type="string",JSONPath=".status.addon",description="Addon"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the add-on exists at Clever Cloud and its credentials Secret is up to date"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Reason of the Ready condition"
// +kubebuilder:printcolumn:name="Price/30d",type="string",JSONPath=".status.price.per30Days",description="What the add-on's plan costs per 30 days (status.price.currency, excluding VAT)"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name must be at most 63 characters (it is used in label values and Helm release names)"
type ConfigProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired Clever Cloud add-on.
	Spec ConfigProviderSpec `json:"spec"`

	// Status is the observed state of the add-on, written by the operator.
	// It defaults to `{observedGeneration: 0}` so that a new resource reads
	// as in progress (kstatus) until the operator has handled it.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status ConfigProviderStatus `json:"status,omitempty"`
}

// ConfigProviderList is a list of ConfigProvider.
//
// +kubebuilder:object:root=true
type ConfigProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ConfigProvider resources.
	Items []ConfigProvider `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ConfigProvider{}, &ConfigProviderList{})
}

var _ shared.Object = &ConfigProvider{}

// GetCommonStatus implements shared.Object.
func (in *ConfigProvider) GetCommonStatus() *shared.CommonStatus { return &in.Status.CommonStatus }

// GetSecretSpec implements shared.Object.
func (in *ConfigProvider) GetSecretSpec() *shared.SecretSpec { return in.Spec.Secret }
