package kube

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// ReadStrict decodes a YAML file into a typed object, failing on unknown fields (a typo in a
// manifest would otherwise be dropped silently, here and by the API server).
func ReadStrict(path string, into any) {
	GinkgoHelper()
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.UnmarshalStrict(b, into)).To(Succeed(), path)
}

// ReadYAML reads a YAML file as plain data (no defaulting, no typed round trip): what is
// written, exactly.
func ReadYAML(path string) map[string]any {
	GinkgoHelper()
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	m := map[string]any{}
	Expect(yaml.Unmarshal(b, &m)).To(Succeed(), path)
	return m
}

// SamplesByKind loads every config/samples/api_*.yaml of the repository, by kind.
func SamplesByKind() map[string]*unstructured.Unstructured {
	GinkgoHelper()
	root, err := RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(root, "config", "samples")
	files, err := filepath.Glob(filepath.Join(dir, "api_*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	objs, err := loadSamples(dir, files)
	Expect(err).NotTo(HaveOccurred())
	out := map[string]*unstructured.Unstructured{}
	for _, u := range objs {
		out[u.GetKind()] = u
	}
	return out
}

// HelmTemplate renders the operator's chart (dist/chart) with bin/helm as release "co" in
// namespace clever-system for envtest's Kubernetes version, with an existing credentials
// Secret and the extra arguments given, and decodes its output.
func HelmTemplate(args ...string) []*unstructured.Unstructured {
	GinkgoHelper()
	root, err := RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	bin := filepath.Join(root, "bin", "helm")
	_, err = os.Stat(bin)
	Expect(err).NotTo(HaveOccurred(), "bin/helm missing: run `make helm`")
	args = append([]string{"template", "co", filepath.Join(root, "dist", "chart"), "--namespace", "clever-system", "--kube-version", "1.35.4",
		"--set", "credentials.existingSecret=x"}, args...)
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "helm %v: %s", args, stderr.String())
	return Decode(out)
}
