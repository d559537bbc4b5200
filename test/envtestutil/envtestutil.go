// Package envtestutil starts the real control plane (kube-apiserver + etcd built by
// `make envtest-bins`) for the Ginkgo suites.
package envtestutil

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// AssetsDir returns the directory holding kube-apiserver and etcd, or an error telling the
// reader how to build them. Suites fail (never skip) when the binaries are missing.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		return "", fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the tests with `make test`, which builds kube-apiserver and etcd into bin/envtest")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("%s not found in KUBEBUILDER_ASSETS=%s: run `make envtest-bins`", bin, dir)
		}
	}
	return dir, nil
}

// New returns an envtest environment on our own binaries with the given CRD directories.
func New(crdDirs ...string) (*envtest.Environment, error) {
	dir, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	return &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDDirectoryPaths:     crdDirs,
		ErrorIfCRDPathMissing: len(crdDirs) > 0,
	}, nil
}

// LogBuffer collects log output safely from many goroutines (suites read it to prove that
// no credential is logged).
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Sample loads config/samples/<file> (paths relative to the repository root) into namespace ns.
func Sample(file, ns string) (*unstructured.Unstructured, error) {
	b, err := os.ReadFile(filepath.Join("config", "samples", file))
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	u.SetNamespace(ns)
	return u, nil
}
