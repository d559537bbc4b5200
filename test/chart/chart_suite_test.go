// Package chart_test checks the operator's own Helm chart (dist/chart) with the real tools:
// bin/helm (lint, template, install/upgrade/uninstall) and a real kube-apiserver + etcd
// (envtest) that receives the rendered objects in a server-side dry-run apply. It also
// fails when the chart drifted from config/ (CRDs, the operator's RBAC).
//
// Run with the pinned helm (`make helm`) and KUBEBUILDER_ASSETS pointing at kube-apiserver
// and etcd (`make envtest-bins`), e.g.
//
//	KUBEBUILDER_ASSETS=$PWD/bin/envtest/1.35.4 go test ./test/chart/ -count=1
package chart_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
)

func TestChart(t *testing.T) {
	kube.RunSuite(t, "Operator Helm chart suite (helm + envtest)", 0, 0)
}

const (
	// release and namespace of every `helm template`: the full name is
	// "<release>-clever-operator".
	release   = "co"
	namespace = "clever-system"
	fullname  = release + "-clever-operator"
	// kubeVersion is given to most `helm template`/`helm lint` runs, to render for envtest's
	// version; bin/helm (built with `go install`) defaults to Kubernetes v1.20.0, which the
	// chart renders too (render_test.go).
	kubeVersion = "1.35.4"
)

var (
	repoRoot   string
	chartDir   string
	helmBin    string
	helmEnv    []string
	kubeconfig string

	restCfg *rest.Config
	k8s     client.Client
	ctx     = context.Background()
)

var _ = BeforeSuite(func() {
	var err error
	repoRoot, err = filepath.Abs(filepath.Join("..", ".."))
	Expect(err).NotTo(HaveOccurred())
	chartDir = filepath.Join(repoRoot, "dist", "chart")
	helmBin = filepath.Join(repoRoot, "bin", "helm")
	if _, err := os.Stat(helmBin); err != nil {
		Fail(helmBin + " not found: run `make helm` (it builds the pinned helm into bin/)")
	}
	// Keep helm away from the user's home: its cache, config and data go to a temp dir.
	home := GinkgoT().TempDir()
	helmEnv = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"),
	)

	env, err := kube.NewEnvironment() // no CRDs: the chart's own are created by the specs
	Expect(err).NotTo(HaveOccurred())
	restCfg, k8s = kube.StartEnvironment(env, client.Options{Scheme: chartScheme()})
	// A kubeconfig for helm install/upgrade/uninstall against envtest.
	kubeconfig = filepath.Join(home, "kubeconfig")
	_, err = kube.WriteAdminKubeconfig(env, "helm", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
})

// chartScheme reads core objects and CRDs.
func chartScheme() *runtime.Scheme {
	GinkgoHelper()
	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	return scheme
}

// runHelm runs bin/helm and returns its combined output.
func runHelm(args ...string) (string, error) {
	cmd := exec.Command(helmBin, args...)
	cmd.Env = helmEnv
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// runHelmStdout runs bin/helm and returns its standard output (to decode), or with an error
// its standard output and error.
func runHelmStdout(args ...string) (string, error) {
	cmd := exec.Command(helmBin, args...)
	cmd.Env = helmEnv
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// helmTemplate renders the chart as release "co" in namespace "clever-system" with extra args
// (e.g. "--set", "k=v"). It returns stdout only, so the output can be decoded.
func helmTemplate(args ...string) (string, error) {
	all := append([]string{"template", release, chartDir, "--namespace", namespace, "--kube-version", kubeVersion}, args...)
	cmd := exec.Command(helmBin, all...)
	cmd.Env = helmEnv
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// mustTemplate renders the chart and fails the spec on error.
func mustTemplate(args ...string) string {
	GinkgoHelper()
	out, err := helmTemplate(args...)
	Expect(err).NotTo(HaveOccurred(), "helm template failed:\n%s", out)
	return out
}

// find returns the objects of the given kind.
func find(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			found = append(found, o)
		}
	}
	return found
}

// findOne returns the object of the given kind and name, failing when it is absent.
func findOne(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	GinkgoHelper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	Fail("no " + kind + " " + name + " in the rendered chart")
	return nil
}
