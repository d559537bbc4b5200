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
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultSecretSuffix is appended to metadata.name to name the credentials
// Secret when spec.secret.name is not set (the reference operator's naming).
const DefaultSecretSuffix = "-secrets"

// Status field names (JSON) of the URL fields some kinds publish. They are the
// keys of URLObject.URLEnvVars and of the map given to SetURLs.
const (
	URLField      = "url"
	AdminURLField = "admin_url"
)

// Object is implemented by every custom resource kind of api.clever-cloud.com
// (pointer receivers), so a generic engine can handle them without reflection.
// +kubebuilder:object:generate=false
type Object interface {
	client.Object

	// GetCommonStatus returns a pointer to the status fields every kind shares;
	// writes through it change the object. Never nil.
	GetCommonStatus() *CommonStatus

	// GetSecretSpec returns spec.secret, or nil when it is not set.
	GetSecretSpec() *SecretSpec
}

// URLObject is implemented by the kinds whose status publishes the URL of the
// service behind the add-on: Metabase, Keycloak, Matomo, Otoroshi and Cellar.
// +kubebuilder:object:generate=false
type URLObject interface {
	Object

	// GetURLStatus returns a pointer to status.url; writes through it change
	// the object. Never nil.
	GetURLStatus() *string

	// URLEnvVars maps each URL status field this kind has ("url", and
	// "admin_url" for Keycloak) to the add-on environment variable it is read
	// from, e.g. {"url": "METABASE_URL"}.
	URLEnvVars() map[string]string
}

// AdminURLObject is implemented by the kinds whose status also publishes an
// administration URL: Keycloak (status.admin_url).
// +kubebuilder:object:generate=false
type AdminURLObject interface {
	URLObject

	// GetAdminURLStatus returns a pointer to status.admin_url; writes through
	// it change the object. Never nil.
	GetAdminURLStatus() *string
}

// SecretName returns the name of the Secret that holds obj's credentials:
// spec.secret.name when set, otherwise <metadata.name>-secrets.
func SecretName(obj Object) string {
	if s := obj.GetSecretSpec(); s != nil && s.Name != "" {
		return s.Name
	}
	return obj.GetName() + DefaultSecretSuffix
}

// URLFields returns pointers to the URL status fields of obj, keyed by JSON
// field name ("url", "admin_url"). It is empty for kinds without URL fields.
func URLFields(obj Object) map[string]*string {
	fields := map[string]*string{}
	if u, ok := obj.(URLObject); ok {
		fields[URLField] = u.GetURLStatus()
	}
	if a, ok := obj.(AdminURLObject); ok {
		fields[AdminURLField] = a.GetAdminURLStatus()
	}
	return fields
}

// SetURLs sets the URL status fields of obj from urls, keyed by JSON field
// name ("url", "admin_url"). A field missing from urls is cleared; keys that
// obj has no field for are ignored. It reports whether anything changed, and
// is a no-op returning false for kinds without URL fields.
func SetURLs(obj Object, urls map[string]string) bool {
	changed := false
	for name, field := range URLFields(obj) {
		if v := urls[name]; *field != v {
			*field = v
			changed = true
		}
	}
	return changed
}

// URLsFromEnv picks obj's URL status values out of the add-on environment
// (variable name to value), using URLObject.URLEnvVars. The result is keyed by
// status field name, ready for SetURLs. It is nil for kinds without URL fields.
func URLsFromEnv(obj Object, env map[string]string) map[string]string {
	u, ok := obj.(URLObject)
	if !ok {
		return nil
	}
	urls := map[string]string{}
	for field, envVar := range u.URLEnvVars() {
		if v, found := env[envVar]; found {
			urls[field] = v
		}
	}
	return urls
}

// FindCondition returns the condition of the given type in conds, or nil.
func FindCondition(conds []Condition, condType string) *Condition {
	for i := range conds {
		if conds[i].Type == condType {
			return &conds[i]
		}
	}
	return nil
}

// SetCondition adds cond to *conds, or updates the condition of the same type.
// LastTransitionTime is set to now when the status changes (or the condition
// is new) and kept otherwise. It reports whether anything changed.
func SetCondition(conds *[]Condition, cond Condition, now metav1.Time) bool {
	existing := FindCondition(*conds, cond.Type)
	if existing == nil {
		cond.LastTransitionTime = now
		*conds = append(*conds, cond)
		return true
	}
	if existing.Status != cond.Status {
		cond.LastTransitionTime = now
	} else {
		cond.LastTransitionTime = existing.LastTransitionTime
	}
	if existing.Status == cond.Status && existing.Reason == cond.Reason &&
		existing.Message == cond.Message && existing.ObservedGeneration == cond.ObservedGeneration &&
		existing.LastTransitionTime.Equal(&cond.LastTransitionTime) {
		return false
	}
	*existing = cond
	return true
}
