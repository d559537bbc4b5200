package kube

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NewNamespace creates a fresh namespace (<NamespacePrefix>-<n>) so every spec is isolated.
func (s *Suite) NewNamespace() string {
	GinkgoHelper()
	name := fmt.Sprintf("%s-%d", s.NamespacePrefix, s.Next())
	s.CreateNamespace(name)
	return name
}

// CreateNamespace creates namespace name if it does not exist yet.
func (s *Suite) CreateNamespace(name string) {
	GinkgoHelper()
	err := s.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}
