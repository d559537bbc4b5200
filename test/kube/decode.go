package kube

import (
	"bytes"
	"errors"
	"io"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Decode returns the objects of a multi-document YAML or JSON stream (kustomize build, helm
// template, a bundle file), skipping empty documents; every object must have a kind.
func Decode(manifest []byte) []*unstructured.Unstructured {
	GinkgoHelper()
	var objs []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for {
		var m map[string]any
		err := d.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs
		}
		Expect(err).NotTo(HaveOccurred(), "decoding a manifest")
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		Expect(u.GetKind()).NotTo(BeEmpty(), "a document has no kind: %v", m)
		objs = append(objs, u)
	}
}
