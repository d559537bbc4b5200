package chart_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/clever-operator/clever-operator/test/kube"
)

// The chart as renderers call it (issue #19 §5): Kustomize's helmCharts, CI linters and chart
// catalogues run `helm lint` and `helm template` with no values and no --kube-version. bin/helm
// (built with `go install`, without Helm's release ldflags) then renders for Kubernetes v1.20.0,
// the oldest default any Helm 3 build has.
var _ = Describe("the chart as renderers call it: no values, no --kube-version", func() {
	It("passes helm lint and helm lint --strict", func() {
		for _, args := range [][]string{{"lint", chartDir}, {"lint", "--strict", chartDir}} {
			out, err := runHelm(args...)
			Expect(err).NotTo(HaveOccurred(), "helm %v:\n%s", args, out)
			Expect(out).To(ContainSubstring("1 chart(s) linted, 0 chart(s) failed"), "helm %v", args)
		}
	})

	It("renders with helm template: the operator's Deployment reading the default credentials Secret", func() {
		out, err := runHelmStdout("template", "x", chartDir)
		Expect(err).NotTo(HaveOccurred(), out)
		objs := kube.Decode([]byte(out))
		d := findOne(objs, "Deployment", "x-clever-operator")
		Expect(d.GetNamespace()).To(Equal("default"))
		Expect(find(objs, "CustomResourceDefinition")).To(HaveLen(nKinds()))
		Expect(find(objs, "Secret")).To(BeEmpty(), "no credentials in the rendered release")
	})

	It("renders through Kustomize's helmCharts (kustomize build --enable-helm), which calls helm template without --kube-version", func() {
		kustomize := filepath.Join(repoRoot, "bin", "kustomize")
		if _, err := os.Stat(kustomize); err != nil {
			Fail(kustomize + " not found: run `make kustomize` (it builds the pinned kustomize into bin/)")
		}
		dir := GinkgoT().TempDir()
		Expect(os.CopyFS(filepath.Join(dir, "charts", "clever-operator"), os.DirFS(chartDir))).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(`helmGlobals:
  chartHome: charts
helmCharts:
- name: clever-operator
  releaseName: clever-operator
  namespace: clever-operator
`), 0o600)).To(Succeed())
		cmd := exec.Command(kustomize, "build", "--enable-helm", "--helm-command", helmBin, dir)
		cmd.Env = helmEnv
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		Expect(cmd.Run()).To(Succeed(), stderr.String())
		objs := kube.Decode(stdout.Bytes())
		d := findOne(objs, "Deployment", "clever-operator")
		Expect(d.GetNamespace()).To(Equal("clever-operator"))
	})

	It("renders offline for any --kube-version: the Kubernetes version is only checked against a cluster", func() {
		for _, v := range []string{"1.20.0", "1.29.0", "1.35.4"} {
			out, err := runHelmStdout("template", "x", chartDir, "--kube-version", v)
			Expect(err).NotTo(HaveOccurred(), "--kube-version %s:\n%s", v, out)
			Expect(find(kube.Decode([]byte(out)), "Deployment")).To(HaveLen(1))
		}
	})

	It("still refuses contradictory values and values the schema rejects", func() {
		out, err := runHelm("template", "x", chartDir, "--set", "credentials.create=true", "--set-string", "credentials.bearerToken=t",
			"--set", "credentials.existingSecret=mine")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("set either credentials.existingSecret or credentials.create=true, not both"))

		out, err = runHelm("lint", chartDir, "--set", "credentials.create=true")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("credentials"))

		out, err = runHelm("template", "x", chartDir, "--set", "replicas=2")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("additional properties 'replicas' not allowed"))
	})
})

var _ = Describe("a real install against a cluster", func() {
	// versionProxy serves envtest's API server to helm over plain HTTP (authenticating upstream
	// as the envtest admin) and answers /version with the given Kubernetes version, which is
	// where helm reads .Capabilities.KubeVersion from on install and upgrade. Everything else
	// (discovery, lookup, the objects) is the real API server's.
	versionProxy := func(version string) string {
		GinkgoHelper()
		upstream, err := url.Parse(restCfg.Host)
		Expect(err).NotTo(HaveOccurred())
		transport, err := rest.TransportFor(restCfg)
		Expect(err).NotTo(HaveOccurred())
		proxy := httputil.NewSingleHostReverseProxy(upstream)
		proxy.Transport = transport
		minor := strings.Split(version, ".")[1]
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/version" {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"major":"1","minor":%q,"gitVersion":"v%s","platform":"linux/amd64"}`, minor, version)
				return
			}
			proxy.ServeHTTP(w, r)
		}))
		DeferCleanup(srv.Close)
		kc := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, srv.URL)), 0o600)).To(Succeed())
		return kc
	}

	It("refuses Kubernetes below 1.30 as the cluster reports it, and accepts 1.30", func() {
		old := versionProxy("1.29.7")
		out, err := runHelm("install", "old", chartDir, "--kubeconfig", old, "--namespace", "default", "--set", "crds.install=false")
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("clever-operator needs Kubernetes 1.30 or later (ValidatingAdmissionPolicy in admissionregistration.k8s.io/v1); this cluster runs v1.29.7"))
		// Nothing was installed.
		out, err = runHelm("list", "--kubeconfig", old, "--namespace", "default", "--all", "-q")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.TrimSpace(out)).To(BeEmpty())
		// The same refusal for a server-side dry run and `helm template --validate`.
		out, err = runHelm("install", "old", chartDir, "--kubeconfig", old, "--namespace", "default", "--dry-run=server")
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("needs Kubernetes 1.30 or later"))
		out, err = runHelm("template", "old", chartDir, "--kubeconfig", old, "--namespace", "default", "--validate")
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("needs Kubernetes 1.30 or later"))

		// Control: the same cluster reporting 1.30 passes the same check.
		current := versionProxy("1.30.0")
		out, err = runHelm("install", "current", chartDir, "--kubeconfig", current, "--namespace", "default", "--dry-run=server", "--set", "crds.install=false")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("kind: Deployment"))
	})

	It("installs with --dry-run=client and no credentials value: NOTES name the Secret to create, the pod reads it as optional, as the chart README says", func() {
		// Helm 3's --dry-run=client still asks a cluster for its version and API versions
		// (pkg/action/install.go: not ClientOnly): envtest's. Its CRDs may already belong to
		// another spec's release, which Helm checks even in a dry run: leave them out.
		out, err := runHelm("install", release, chartDir, "--dry-run=client", "--namespace", "ops", "--kubeconfig", kubeconfig, "--set", "crds.install=false")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("NOTES:"))
		// What the chart README's "Rendering without a cluster" promises: NOTES says which
		// Secret to create, nothing is required at render time, the pod starts without it.
		Expect(out).To(ContainSubstring("Clever Cloud API credentials are read from the Secret ops/clever-operator-credentials, which this chart does not manage (the default credentials.existingSecret). Create it if you have not:"))
		Expect(out).To(ContainSubstring("kubectl -n ops create secret generic clever-operator-credentials \\\n    --from-literal=CLEVER_OPERATOR_API_BEARER_TOKEN=..."))
		Expect(out).NotTo(ContainSubstring("WARNING"))
		_, manifest, _ := strings.Cut(out, "MANIFEST:")
		manifest, _, _ = strings.Cut(manifest, "NOTES:")
		c := deployment(kube.Decode([]byte(manifest))).Spec.Template.Spec.Containers[0]
		Expect(c.EnvFrom).To(Equal([]corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "clever-operator-credentials"}, Optional: ptr.To(true)}}}),
			"an optional Secret: the pod starts, and the operator logs which credentials are missing (main_test.go, \"no credentials\")")

		readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(readme)).To(ContainSubstring("NOTES says which Secret to create"))
		Expect(string(readme)).To(ContainSubstring("The default Secret is read as `optional`"))
	})

	It("refuses contradictory values and unknown values on install", func() {
		kc := versionProxy("1.35.4")
		out, err := runHelm("install", "bad", chartDir, "--kubeconfig", kc, "--namespace", "default", "--dry-run=server",
			"--set", "credentials.create=true", "--set-string", "credentials.bearerToken=t", "--set", "credentials.existingSecret=mine")
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("set either credentials.existingSecret or credentials.create=true, not both"))

		out, err = runHelm("install", "bad", chartDir, "--kubeconfig", kc, "--namespace", "default", "--dry-run=server",
			"--set", "credentials.create=true")
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("credentials"))

		out, err = runHelm("install", "bad", chartDir, "--kubeconfig", kc, "--namespace", "default", "--dry-run=server", "--set", "replicas=2")
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("additional properties 'replicas' not allowed"))
	})
})
