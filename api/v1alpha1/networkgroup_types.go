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

// NetworkGroupSpec is the desired Clever Cloud Network Group.
// +kubebuilder:validation:XValidation:rule="self.organisation == oldSelf.organisation",message="spec.organisation is immutable: the group lives in that organisation; create a new resource to move it"
// +kubebuilder:validation:XValidation:rule="has(self.label) == has(oldSelf.label) && (!has(self.label) || self.label == oldSelf.label) && has(self.description) == has(oldSelf.description) && (!has(self.description) || self.description == oldSelf.description) && has(self.tags) == has(oldSelf.tags) && (!has(self.tags) || self.tags == oldSelf.tags)",message="spec.label, spec.description and spec.tags are immutable: Clever Cloud has no way to change a Network Group; create a new resource"
// +kubebuilder:validation:XValidation:rule="has(self.credentialsRef) == has(oldSelf.credentialsRef) && (!has(self.credentialsRef) || (self.credentialsRef.name == oldSelf.credentialsRef.name && (has(self.credentialsRef.kind) ? self.credentialsRef.kind : 'CleverCredentials') == (has(oldSelf.credentialsRef.kind) ? oldSelf.credentialsRef.kind : 'CleverCredentials')))",message="spec.credentialsRef is immutable: the group belongs to the identity that created it"
type NetworkGroupSpec struct {
	// Organisation is the Clever Cloud owner of the group: an organisation id
	// (`orga_<uuid>`) or a user id (`user_<uuid>`). Add-ons join it only from
	// the same organisation. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Organisation string `json:"organisation"`

	// Label is the group's name at Clever Cloud (`clever ng` shows it);
	// default: `<namespace>/<metadata.name>`. Immutable.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Label string `json:"label,omitempty"`

	// Description of the group. Immutable.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`

	// Tags of the group. Immutable.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=128
	// +listType=atomic
	Tags []string `json:"tags,omitempty"`

	// DeletionPolicy is what happens to the group when this resource is
	// deleted: `Delete` (default) deletes it at Clever Cloud, with its
	// memberships; `Orphan` keeps it.
	// +optional
	DeletionPolicy shared.DeletionPolicy `json:"deletionPolicy,omitempty"`

	// CredentialsRef selects the Clever Cloud credentials, as on the add-on
	// kinds: a CleverCredentials of this namespace or a ClusterCleverCredentials
	// that allows it; unset, the namespace's override Secret, else the
	// ClusterCleverCredentials `default`. Immutable.
	// +optional
	CredentialsRef *shared.CredentialsRef `json:"credentialsRef,omitempty"`
}

// NetworkGroupMember is one member of a Network Group, as Clever Cloud lists it.
type NetworkGroupMember struct {
	// ID of the member: an add-on's real id (`postgresql_<uuid>`, ...), an
	// application (`app_<uuid>`) or an external member (`external_<uuid>`).
	ID string `json:"id"`

	// Kind is `ADDON`, `APPLICATION` or `EXTERNAL`.
	Kind string `json:"kind"`

	// DomainName resolves to the member inside the group.
	// +optional
	DomainName string `json:"domainName,omitempty"`

	// Label of the member.
	// +optional
	Label string `json:"label,omitempty"`
}

// NetworkGroupStatus is the observed state of a NetworkGroup.
type NetworkGroupStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready (True once the group exists at Clever Cloud), Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []shared.Condition `json:"conditions,omitempty"`

	// ID is the group's id (`ng_<uuid>`), chosen by the operator before it asks
	// Clever Cloud for the group, so a retry never makes a second one.
	// +optional
	ID string `json:"id,omitempty"`

	// Network is the group's private network (CIDR).
	// +optional
	Network string `json:"network,omitempty"`

	// Members are the group's members.
	// +optional
	// +listType=atomic
	Members []NetworkGroupMember `json:"members,omitempty"`

	// Peers is the number of WireGuard peers of the group.
	// +optional
	Peers int32 `json:"peers,omitempty"`
}

// NetworkGroup is a Clever Cloud Network Group: a private WireGuard network joining
// applications, add-ons and external peers (`clever ng`). Add-ons join it through their
// `spec.networkGroups`, and publish their private host name in their Secret. The
// operator creates the group in `spec.organisation` and deletes it when the resource is
// deleted (`spec.deletionPolicy`).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=networkgroups,singular=networkgroup,scope=Namespaced,categories=clever,shortName=ccng
// +kubebuilder:printcolumn:name="organisation",type="string",JSONPath=".spec.organisation",description="Organisation"
// +kubebuilder:printcolumn:name="id",type="string",JSONPath=".status.id",description="Network Group id"
// +kubebuilder:printcolumn:name="network",type="string",JSONPath=".status.network",description="Private network"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the group exists at Clever Cloud"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Reason of the Ready condition"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type NetworkGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired Network Group.
	Spec NetworkGroupSpec `json:"spec"`

	// Status is the observed state of the group, written by the operator.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status NetworkGroupStatus `json:"status,omitempty"`
}

// NetworkGroupList is a list of NetworkGroup.
//
// +kubebuilder:object:root=true
type NetworkGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the NetworkGroup resources.
	Items []NetworkGroup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NetworkGroup{}, &NetworkGroupList{})
}
