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

// CellarRef names the Cellar add-on a bucket lives in: a Cellar resource of the same
// namespace, or an existing Cellar add-on by id.
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.addonId)",message="set spec.cellar.name (a Cellar resource of this namespace) or spec.cellar.addonId (an existing add-on), not both"
// +kubebuilder:validation:XValidation:rule="!has(self.addonId) || has(self.organisation)",message="spec.cellar.addonId needs spec.cellar.organisation"
type CellarRef struct {
	// Name of a Cellar resource in this namespace; the bucket uses the keys its
	// add-on publishes.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`

	// AddonID of an existing Cellar add-on (`addon_<uuid>`), read with the
	// resource's credentials (spec.credentialsRef, the namespace's, or the
	// default's) in Organisation.
	// +optional
	// +kubebuilder:validation:Pattern=`^addon_[A-Za-z0-9-]+$`
	// +kubebuilder:validation:MaxLength=64
	AddonID string `json:"addonId,omitempty"`

	// Organisation of AddonID (`orga_<uuid>` or `user_<uuid>`).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Organisation string `json:"organisation,omitempty"`
}

// BucketPolicy is the bucket's access policy: public read of its objects, or a policy
// document of your own.
// +kubebuilder:validation:XValidation:rule="!(has(self.publicRead) && self.publicRead && has(self.raw))",message="spec.policy: set publicRead or raw, not both"
type BucketPolicy struct {
	// PublicRead lets anyone read the bucket's objects (s3:GetObject for
	// every principal), as `s3cmd setpolicy` with the public-read example of
	// Clever Cloud's Cellar documentation does.
	// +optional
	PublicRead bool `json:"publicRead,omitempty"`

	// Raw is an S3 bucket policy document (JSON), applied as it is.
	// +optional
	// +kubebuilder:validation:MaxLength=20480
	Raw string `json:"raw,omitempty"`
}

// CellarBucketSpec is the desired Cellar bucket.
// +kubebuilder:validation:XValidation:rule="self.cellar == oldSelf.cellar",message="spec.cellar is immutable: a bucket cannot move to another Cellar; create a new resource"
// +kubebuilder:validation:XValidation:rule="has(self.bucketName) == has(oldSelf.bucketName) && (!has(self.bucketName) || self.bucketName == oldSelf.bucketName)",message="spec.bucketName is immutable: S3 cannot rename a bucket; create a new resource"
type CellarBucketSpec struct {
	// Cellar is the add-on the bucket lives in. Immutable.
	Cellar CellarRef `json:"cellar"`

	// BucketName is the bucket's name (3-63 lower-case letters, digits, dots
	// and dashes). Bucket names are shared by every Cellar user of the region:
	// default `<metadata.name>-<the first 8 characters of metadata.uid>`.
	// Immutable.
	// +optional
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`
	BucketName string `json:"bucketName,omitempty"`

	// Versioning keeps every version of every object. Turning it off
	// suspends it (S3 keeps the versions already made).
	// +optional
	Versioning bool `json:"versioning,omitempty"`

	// Policy is the bucket's access policy; unset: none (private).
	// +optional
	Policy *BucketPolicy `json:"policy,omitempty"`

	// DeletionPolicy is what happens to the bucket when this resource is
	// deleted. Unset: an empty bucket is deleted, one holding objects is kept
	// (never deleted silently). `Delete`: deleted; one holding objects keeps
	// the resource Terminating (reason BucketNotEmpty) until it is emptied, or
	// until the annotation api.clever-cloud.com/delete-bucket-contents=true
	// asks the operator to delete its objects. `Orphan`: kept.
	// +optional
	DeletionPolicy shared.DeletionPolicy `json:"deletionPolicy,omitempty"`

	// SecretName is the Secret receiving BUCKET_NAME, BUCKET_HOST, BUCKET_URL
	// and the Cellar keys; default `<metadata.name>-bucket`.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName,omitempty"`

	// CredentialsRef selects the Clever Cloud credentials used to read an
	// add-on named by spec.cellar.addonId (as on the add-on kinds). Immutable.
	// +optional
	CredentialsRef *shared.CredentialsRef `json:"credentialsRef,omitempty"`
}

// CellarBucketStatus is the observed state of a CellarBucket.
type CellarBucketStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []shared.Condition `json:"conditions,omitempty"`

	// BucketName is the bucket's name.
	// +optional
	BucketName string `json:"bucketName,omitempty"`

	// Host is the Cellar endpoint (S3 API) the bucket is reached at.
	// +optional
	Host string `json:"host,omitempty"`

	// Versioning is `Enabled`, `Suspended`, or empty when never enabled.
	// +optional
	Versioning string `json:"versioning,omitempty"`

	// PolicyHash identifies the policy the operator applied ("" none).
	// +optional
	PolicyHash string `json:"policyHash,omitempty"`

	// SecretName is the Secret holding the bucket's name, host and keys.
	// +optional
	SecretName string `json:"secretName,omitempty"`
}

// CellarBucket is a bucket in a Clever Cloud Cellar (S3) add-on, created and deleted through
// Cellar's S3 API with the add-on's keys. Its Secret carries the bucket's name, the Cellar host
// and keys. A bucket holding objects is never deleted silently (spec.deletionPolicy).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=cellarbuckets,singular=cellarbucket,scope=Namespaced,categories=clever,shortName=ccb
// +kubebuilder:printcolumn:name="bucket",type="string",JSONPath=".status.bucketName",description="Bucket name"
// +kubebuilder:printcolumn:name="host",type="string",JSONPath=".status.host",description="Cellar host"
// +kubebuilder:printcolumn:name="versioning",type="string",JSONPath=".status.versioning",description="Versioning"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the bucket exists and its Secret is written"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Reason of the Ready condition"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type CellarBucket struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired bucket.
	Spec CellarBucketSpec `json:"spec"`

	// Status is the observed state of the bucket, written by the operator.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status CellarBucketStatus `json:"status,omitempty"`
}

// CellarBucketList is a list of CellarBucket.
//
// +kubebuilder:object:root=true
type CellarBucketList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the CellarBucket resources.
	Items []CellarBucket `json:"items"`
}

func init() {
	SchemeBuilder.Register(&CellarBucket{}, &CellarBucketList{})
}
