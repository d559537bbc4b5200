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

// Package shared holds the Go types shared by every custom resource of the
// api.clever-cloud.com group (api/v1, api/v1beta1, api/v1alpha1): the
// instance sub-structures, the Secret override, the status shape written by
// both the Go add-on controllers and the Helm reconciler, and the Object
// interface a generic engine uses to handle every kind without reflection.
//
// It is not an API group version itself: it has no groupName and registers
// nothing in a scheme.
//
// +kubebuilder:object:generate=true
package shared
