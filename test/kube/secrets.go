package kube

import (
	"context"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Secret reads a Secret; nil when it does not exist.
func (s *Suite) Secret(ns, name string) *corev1.Secret {
	GinkgoHelper()
	sec := &corev1.Secret{}
	err := s.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, sec)
	if apierrors.IsNotFound(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	return sec
}

// SecretData returns a Secret's data as strings (empty, not nil, for a nil Secret).
func SecretData(sec *corev1.Secret) map[string]string {
	m := map[string]string{}
	if sec == nil {
		return m
	}
	for k, v := range sec.Data {
		m[k] = string(v)
	}
	return m
}

// SecretKeys returns a Secret's data keys, sorted (nil for a nil Secret).
func SecretKeys(sec *corev1.Secret) []string {
	if sec == nil {
		return nil
	}
	keys := make([]string, 0, len(sec.Data))
	for k := range sec.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
