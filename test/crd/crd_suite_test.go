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

// Package crd_test checks the generated CustomResourceDefinitions of
// api.clever-cloud.com (config/crd/bases) on a real kube-apiserver + etcd
// (envtest): drop-in compatibility with the reference operator's manifests,
// CEL and OpenAPI validation, pruning, status shape and printer columns.
//
// Run with KUBEBUILDER_ASSETS pointing at kube-apiserver and etcd, e.g.
//
//	KUBEBUILDER_ASSETS=$PWD/bin/envtest/1.35.4 go test ./test/crd/ -count=1
package crd_test

import (
	"context"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiv1 "github.com/clever-operator/clever-operator/api/v1"
	apiv1alpha1 "github.com/clever-operator/clever-operator/api/v1alpha1"
	apiv1beta1 "github.com/clever-operator/clever-operator/api/v1beta1"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestCRDs(t *testing.T) {
	kube.RunSuite(t, "CRD suite", 0, 0)
}

const (
	// samplesNamespace receives config/samples; validationNamespace the
	// hand-written cases. The reference examples keep their own `default`.
	samplesNamespace    = "samples"
	validationNamespace = "validation"
)

var (
	k8s client.Client
	ctx = context.Background()
	// suite is this suite's client for the shared helpers (test/kube).
	suite *kube.Suite
)

var _ = BeforeSuite(func() {
	env, err := kube.NewEnvironment(filepath.Join("..", "..", "config", "crd", "bases"))
	Expect(err).NotTo(HaveOccurred())
	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	Expect(apiv1.AddToScheme(scheme)).To(Succeed())
	Expect(apiv1beta1.AddToScheme(scheme)).To(Succeed())
	Expect(apiv1alpha1.AddToScheme(scheme)).To(Succeed())
	_, k8s = kube.StartEnvironment(env, client.Options{Scheme: scheme})
	suite = &kube.Suite{Name: "test/crd", Client: k8s}

	for _, ns := range []string{samplesNamespace, validationNamespace} {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
})
