// Package envtestutil starts the real control plane (kube-apiserver + etcd built by
// `make envtest-bins`) for the Ginkgo suites.
package envtestutil

import (
	"fmt"
	"os"
	"path/filepath"

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
