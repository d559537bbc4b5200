package chart_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/clever-operator/clever-operator/test/kube"
)

// makeVar returns the default of a `NAME ?= value` variable of the Makefile.
func makeVar(name string) string {
	GinkgoHelper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	Expect(err).NotTo(HaveOccurred())
	m := regexp.MustCompile(`(?m)^` + name + ` \?= (.+)$`).FindSubmatch(raw)
	Expect(m).NotTo(BeNil(), "no %s ?= in the Makefile", name)
	return strings.TrimSpace(string(m[1]))
}

// runMake runs make in the repository root with bin/helm, returning its combined output.
func runMake(args ...string) (string, error) {
	cmd := exec.Command("make", append([]string{"--no-print-directory", "HELM=" + helmBin}, args...)...)
	cmd.Dir = repoRoot
	cmd.Env = helmEnv
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tgzFiles lists the files of a chart package and returns their contents.
func tgzFiles(path string) map[string][]byte {
	GinkgoHelper()
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	gz, err := gzip.NewReader(f)
	Expect(err).NotTo(HaveOccurred())
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		Expect(err).NotTo(HaveOccurred())
		b, err := io.ReadAll(tr)
		Expect(err).NotTo(HaveOccurred())
		files[h.Name] = b
	}
	return files
}

var _ = Describe("the chart package (make chart-package, make chart-push)", Ordered, func() {
	var dir, pkg, version string

	BeforeAll(func() {
		var chart struct{ Version, AppVersion string }
		readYAML(filepath.Join("dist", "chart", "Chart.yaml"), &chart)
		version = chart.Version
		Expect(version).NotTo(BeEmpty())
		Expect(chart.AppVersion).To(Equal(makeVar("VERSION")), "Chart.yaml's appVersion is the operator's VERSION, so a plain `helm package` agrees with make")

		dir = GinkgoT().TempDir()
		out, err := runMake("chart-package", "CHART_DIST="+dir)
		Expect(err).NotTo(HaveOccurred(), out)
		pkg = filepath.Join(dir, "clever-operator-"+version+".tgz")
		Expect(out).To(ContainSubstring("Successfully packaged chart and saved it to: " + pkg))
	})

	It("is named after Chart.yaml's version, with the operator's VERSION as appVersion and image tag", func() {
		out, err := runHelmStdout("show", "chart", pkg)
		Expect(err).NotTo(HaveOccurred(), out)
		var meta struct{ Name, Version, AppVersion, KubeVersion string }
		Expect(yaml.Unmarshal([]byte(out), &meta)).To(Succeed())
		Expect(meta.Name).To(Equal("clever-operator"))
		Expect(meta.Version).To(Equal(version))
		Expect(meta.AppVersion).To(Equal(makeVar("VERSION")))
		Expect(meta.KubeVersion).To(BeEmpty(), "no kubeVersion: it would refuse offline renders (render_test.go)")

		files := tgzFiles(pkg)
		for _, f := range []string{"Chart.yaml", "values.yaml", "values.schema.json", "README.md", "files/default-values.yaml", "templates/deployment.yaml"} {
			Expect(files).To(HaveKey("clever-operator/"+f), "the package holds %s", f)
		}
		Expect(files).NotTo(HaveKey("clever-operator/README.md.gotmpl"), ".helmignore leaves the README's source out")
		readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(files["clever-operator/README.md"])).To(Equal(string(readme)))
	})

	It("lints and renders from the .tgz with no values and no --kube-version", func() {
		out, err := runHelm("lint", "--strict", pkg)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("0 chart(s) failed"))
		out, err = runHelmStdout("template", "x", pkg)
		Expect(err).NotTo(HaveOccurred(), out)
		d := &appsv1.Deployment{}
		toTyped(findOne(kube.Decode([]byte(out)), "Deployment", "x-clever-operator"), d)
		// IMG's tag: $(IMAGE_TAG_BASE):v$(VERSION).
		Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(makeVar("IMAGE_TAG_BASE") + ":v" + makeVar("VERSION")))
	})

	It("refuses chart-push without CHART_REGISTRY", func() {
		out, err := runMake("chart-push", "CHART_DIST="+dir)
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("set CHART_REGISTRY=oci://<registry>/<path>"))
	})

	It("pushes to an OCI registry with make chart-push, from which helm installs it", func() {
		reg := newOCIRegistry()
		srv := httptest.NewServer(reg)
		DeferCleanup(srv.Close)
		host := strings.TrimPrefix(srv.URL, "http://")

		out, err := runMake("chart-push", "CHART_DIST="+dir, "CHART_REGISTRY=oci://"+host+"/charts", "CHART_PUSH_FLAGS=--plain-http")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("Pushed: " + host + "/charts/clever-operator:" + version))

		// What helm stored: a Helm chart artifact whose one layer is the package itself.
		manifest, mediaType, ok := reg.manifest("charts/clever-operator", version)
		Expect(ok).To(BeTrue(), "no manifest charts/clever-operator:%s", version)
		Expect(mediaType).To(Equal("application/vnd.oci.image.manifest.v1+json"))
		Expect(manifest["config"]).To(HaveKeyWithValue("mediaType", "application/vnd.cncf.helm.config.v1+json"))
		layers, _ := manifest["layers"].([]any)
		Expect(layers).To(HaveLen(1))
		layer, _ := layers[0].(map[string]any)
		Expect(layer).To(HaveKeyWithValue("mediaType", "application/vnd.cncf.helm.chart.content.v1.tar+gzip"))
		stored, ok := reg.blob(layer["digest"].(string))
		Expect(ok).To(BeTrue())
		local, err := os.ReadFile(pkg)
		Expect(err).NotTo(HaveOccurred())
		Expect(bytes.Equal(stored, local)).To(BeTrue(), "the pushed layer is the package")

		// And a user renders it from the registry, as `helm install oci://…` would.
		out, err = runHelmStdout("template", "x", "oci://"+host+"/charts/clever-operator", "--version", version, "--plain-http")
		Expect(err).NotTo(HaveOccurred(), out)
		objs := kube.Decode([]byte(out))
		Expect(find(objs, "Deployment")).To(HaveLen(1))
		Expect(find(objs, "CustomResourceDefinition")).To(HaveLen(nKinds()))
	})
})
