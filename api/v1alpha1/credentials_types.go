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
)

// CredentialsSecretRef names the Secret holding a Clever Cloud configuration document, in the
// same format as the Rust operator's per-namespace override Secret: key `config` (TOML-like
// `token`, `secret`, `consumer-key`, `consumer-secret`, `bearer-token`, `endpoint`, …) and/or
// clever-tools' login file under `clever-tools.json`.
type CredentialsSecretRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// Key of the configuration document in the Secret; default `config`. The key
	// `clever-tools.json` is read too, as in the override Secret.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// ClusterCredentialsSecretRef names a Secret for cluster-scoped credentials.
type ClusterCredentialsSecretRef struct {
	CredentialsSecretRef `json:",inline"`

	// Namespace of the Secret; default: the operator's namespace. Keep it a
	// namespace only cluster admins can read.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
}

// BindingPolicy says which existing add-ons resources using these credentials may bind (with
// spec.addonId, the addon-id annotation or managementPolicy ObserveOnly) although their own
// namespace did not create them. An add-on a namespace created can always be bound again from
// that namespace (after a restore from backup, for example), whatever this says.
type BindingPolicy struct {
	// Any allows binding any add-on of the allowed organisations.
	// +optional
	Any bool `json:"any,omitempty"`

	// AddonIDs allows binding these add-ons (`addon_<uuid>`).
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +listType=set
	AddonIDs []AddonID `json:"addonIds,omitempty"`
}

// AddonID is a Clever Cloud add-on id.
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:Pattern=`^addon_[A-Za-z0-9-]+$`
type AddonID string

// OrganisationID is a Clever Cloud owner id: an organisation (`orga_<uuid>`) or a user
// (`user_<uuid>`).
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:Pattern=`^(orga|user)_[A-Za-z0-9-]+$`
type OrganisationID string

// NamespaceSelection says which namespaces may use cluster-scoped credentials: those named,
// and those whose labels match the selector. Nothing set: no namespace. An empty selector
// (`selector: {}`) matches every namespace.
type NamespaceSelection struct {
	// Names of the namespaces allowed.
	// +optional
	// +kubebuilder:validation:MaxItems=1024
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=63
	Names []string `json:"names,omitempty"`

	// Selector matches the labels of the namespaces allowed.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// CleverCredentialsSpec is a namespace's own Clever Cloud identity.
type CleverCredentialsSpec struct {
	// SecretRef is the Secret, in this namespace, holding the credentials.
	SecretRef CredentialsSecretRef `json:"secretRef"`

	// Organisations these credentials may act in; empty: any organisation they
	// reach. A resource whose spec.organisation is not listed is refused before
	// any Clever Cloud call.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +listType=set
	Organisations []OrganisationID `json:"organisations,omitempty"`

	// Binding allows binding existing add-ons this namespace did not create.
	// +optional
	Binding BindingPolicy `json:"binding,omitempty"`
}

// ClusterCleverCredentialsSpec is a Clever Cloud identity an admin shares with some
// namespaces.
type ClusterCleverCredentialsSpec struct {
	// SecretRef is the Secret holding the credentials. Unset: the operator's own
	// credentials (its flags, environment and configuration files), which is what
	// the `default` object the operator creates at start-up uses.
	// +optional
	SecretRef *ClusterCredentialsSecretRef `json:"secretRef,omitempty"`

	// Namespaces that may use these credentials.
	Namespaces NamespaceSelection `json:"namespaces"`

	// Organisations these credentials may act in; empty: any organisation they
	// reach. A resource whose spec.organisation is not listed is refused before
	// any Clever Cloud call (and by the ValidatingAdmissionPolicy
	// clever-operator-credentials, when installed).
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +listType=set
	Organisations []OrganisationID `json:"organisations,omitempty"`

	// Binding allows binding existing add-ons the resource's namespace did not
	// create.
	// +optional
	Binding BindingPolicy `json:"binding,omitempty"`
}

// CredentialsUser is who the credentials authenticate as (GET /v2/self).
type CredentialsUser struct {
	// ID is the Clever Cloud user id.
	ID string `json:"id"`
	// Name is the user's display name.
	// +optional
	Name string `json:"name,omitempty"`
}

// ReachableOrganisation is an organisation the credentials can act in (GET /v2/organisations).
type ReachableOrganisation struct {
	// ID is the organisation id.
	ID string `json:"id"`
	// Name is its display name.
	// +optional
	Name string `json:"name,omitempty"`
}

// CleverCredentialsStatus says whether credentials work, who they are, and what they reach.
type CleverCredentialsStatus struct {
	// Conditions: Ready (True when the last check authenticated).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// User is who the credentials authenticate as.
	// +optional
	User *CredentialsUser `json:"user,omitempty"`

	// Organisations the credentials reach (the user's personal space is the user id).
	// +optional
	Organisations []ReachableOrganisation `json:"organisations,omitempty"`

	// LastCheckedAt is when the operator last called Clever Cloud with them.
	// +optional
	LastCheckedAt *metav1.Time `json:"lastCheckedAt,omitempty"`

	// ObservedGeneration is the generation the last check used.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// CleverCredentials is a namespace's own Clever Cloud credentials (like cert-manager's Issuer
// or External Secrets' SecretStore). Resources of this namespace use them with
// `spec.credentialsRef: {kind: CleverCredentials, name: <name>}`.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clevercredentials,singular=clevercredentials,scope=Namespaced,categories=clever,shortName=ccred
// +kubebuilder:printcolumn:name="User",type="string",JSONPath=".status.user.id"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason"
// +kubebuilder:printcolumn:name="Checked",type="date",JSONPath=".status.lastCheckedAt"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type CleverCredentials struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CleverCredentialsSpec   `json:"spec"`
	Status CleverCredentialsStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CleverCredentialsList is a list of CleverCredentials.
type CleverCredentialsList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CleverCredentials `json:"items"`
}

// ClusterCleverCredentials is admin-managed Clever Cloud credentials that the namespaces it
// selects may use (like cert-manager's ClusterIssuer or External Secrets'
// ClusterSecretStore), restricted to a list of organisations. The operator's own credentials
// are the one named `default` (created at start-up, allowing every namespace and
// organisation: restrict it to restrict them). Resources use one with
// `spec.credentialsRef: {kind: ClusterCleverCredentials, name: <name>}`; without a reference,
// `default` (or the namespace's override Secret).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clusterclevercredentials,singular=clusterclevercredentials,scope=Cluster,categories=clever,shortName=cccred
// +kubebuilder:printcolumn:name="User",type="string",JSONPath=".status.user.id"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason"
// +kubebuilder:printcolumn:name="Checked",type="date",JSONPath=".status.lastCheckedAt"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ClusterCleverCredentials struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterCleverCredentialsSpec `json:"spec"`
	Status CleverCredentialsStatus      `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterCleverCredentialsList is a list of ClusterCleverCredentials.
type ClusterCleverCredentialsList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterCleverCredentials `json:"items"`
}

func init() {
	SchemeBuilder.Register(&CleverCredentials{}, &CleverCredentialsList{}, &ClusterCleverCredentials{}, &ClusterCleverCredentialsList{})
}
