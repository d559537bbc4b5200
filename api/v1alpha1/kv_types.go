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

// KVSpec is the desired Materia KV (key-value) database add-on.
// +kubebuilder:validation:XValidation:rule="self.organisation == oldSelf.organisation",message="spec.organisation is immutable: the add-on lives in that organisation; create a new resource to move it"
type KVSpec struct {
	// Organisation is the Clever Cloud owner of the add-on: an organisation id
	// (`orga_<uuid>`) or a user id (`user_<uuid>`). The credentials the operator
	// runs with must have access to it. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Organisation string `json:"organisation"`

	// Instance is the region of the add-on; the plan is fixed by the operator
	// (`plan_53a1728d-4b9e-4254-94c4-b19163af587b`), so there is none to choose.
	Instance shared.RegionInstance `json:"instance"`

	// Lifecycle controls adoption, deletion and how much the operator may change.
	shared.Lifecycle `json:",inline"`

	// Secret customises the Kubernetes Secret that receives the add-on's
	// credentials; by default it is named `<metadata.name>-secrets`.
	// +optional
	Secret *shared.SecretSpec `json:"secret,omitempty"`
}

// KVStatus is the observed state of a KV.
type KVStatus struct {
	shared.CommonStatus `json:",inline"`
}

// KV is a Clever Cloud Materia KV (key-value) database (add-on provider `kv`) managed from Kubernetes.
// The operator creates the add-on in `spec.organisation`, names it
// `kubernetes::KV::<metadata.uid>`, and writes its credentials to a Secret
// (`<metadata.name>-secrets` unless `spec.secret.name` says otherwise).
// Deleting the resource deletes the add-on.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=kvs,singular=kv,scope=Namespaced,categories=clever
// +kubebuilder:printcolumn:name="organisation",type="string",JSONPath=".spec.organisation",description="Organisation"
// +kubebuilder:printcolumn:name="addon",type="string",JSONPath=".status.addon",description="Addon"
// +kubebuilder:printcolumn:name="region",type="string",JSONPath=".spec.instance.region",description="Region"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the add-on exists at Clever Cloud and its credentials Secret is up to date"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Reason of the Ready condition"
// +kubebuilder:printcolumn:name="Price/30d",type="string",JSONPath=".status.price.per30Days",description="What the add-on's plan costs per 30 days (status.price.currency, excluding VAT)"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name must be at most 63 characters (it is used in label values and Helm release names)"
type KV struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired Clever Cloud add-on.
	Spec KVSpec `json:"spec"`

	// Status is the observed state of the add-on, written by the operator.
	// It defaults to `{observedGeneration: 0}` so that a new resource reads
	// as in progress (kstatus) until the operator has handled it.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status KVStatus `json:"status,omitempty"`
}

// KVList is a list of KV.
//
// +kubebuilder:object:root=true
type KVList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the KV resources.
	Items []KV `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KV{}, &KVList{})
}

var _ shared.Object = &KV{}

// GetCommonStatus implements shared.Object.
func (in *KV) GetCommonStatus() *shared.CommonStatus { return &in.Status.CommonStatus }

// GetSecretSpec implements shared.Object.
func (in *KV) GetSecretSpec() *shared.SecretSpec { return in.Spec.Secret }
