package olm_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// upgradeCatalog is a catalog holding two versions of the bundle, the second replacing the
// first, as the next release's `make catalog` plus the previous entry would make it:
//
//   - v1: catalog/'s own olm.bundle, byte for byte what we ship (image bundleImage, its
//     unpacked content bundle/), and its channel entry;
//   - v2: a copy of bundle/ whose CSV is bumped to the next patch version (metadata.name,
//     spec.version, spec.replaces v1, the operator image's tag and containerImage), rendered
//     with `opm render` and given its bundle image (bundleImage with v2's tag), as
//     hack/gen-catalog.sh does; its channel entry replaces v1 (and skips below v2, as
//     gen-catalog.sh's skipRange would).
//
// It returns the catalog directory and the bundle directory of v2; `opm validate` accepts it.
type upgradeCatalog struct {
	Dir                string
	V1, V2             string // CSV names
	V1Image, V2Image   string // bundle images
	V2Bundle           string // the directory v2's image would hold
	V2OperatorImage    string
	v1Version, version string
}

func buildUpgradeCatalog(workDir string) *upgradeCatalog {
	GinkgoHelper()
	opm := filepath.Join("bin", "opm")
	uc := &upgradeCatalog{Dir: filepath.Join(workDir, "upgrade-catalog"), V2Bundle: filepath.Join(workDir, "bundle-next"), V1: csvName, V1Image: bundleImage}

	// v2's bundle: bundle/ with the CSV bumped.
	Expect(os.CopyFS(uc.V2Bundle, os.DirFS("bundle"))).To(Succeed())
	csvPath := filepath.Join(uc.V2Bundle, "manifests", pkg+".clusterserviceversion.yaml")
	b, err := os.ReadFile(csvPath)
	Expect(err).NotTo(HaveOccurred())
	csv := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal(b, &csv.Object)).To(Succeed())
	uc.v1Version = field(csv, "spec", "version")
	Expect(csv.GetName()).To(Equal(pkg + ".v" + uc.v1Version))
	uc.version = nextPatch(uc.v1Version)
	uc.V2 = pkg + ".v" + uc.version
	csv.SetName(uc.V2)
	Expect(unstructured.SetNestedField(csv.Object, uc.version, "spec", "version")).To(Succeed())
	Expect(unstructured.SetNestedField(csv.Object, uc.V1, "spec", "replaces")).To(Succeed())
	deps, _, _ := unstructured.NestedSlice(csv.Object, "spec", "install", "spec", "deployments")
	Expect(deps).To(HaveLen(1))
	ctrs, _, _ := unstructured.NestedSlice(deps[0].(map[string]any), "spec", "template", "spec", "containers")
	for _, c := range ctrs {
		c := c.(map[string]any)
		img := c["image"].(string)
		Expect(img).To(HaveSuffix(":v" + uc.v1Version))
		uc.V2OperatorImage = strings.TrimSuffix(img, uc.v1Version) + uc.version
		c["image"] = uc.V2OperatorImage
	}
	Expect(unstructured.SetNestedSlice(deps[0].(map[string]any), ctrs, "spec", "template", "spec", "containers")).To(Succeed())
	Expect(unstructured.SetNestedSlice(csv.Object, deps, "spec", "install", "spec", "deployments")).To(Succeed())
	ann := csv.GetAnnotations()
	ann["containerImage"] = uc.V2OperatorImage
	csv.SetAnnotations(ann)
	b, err = yaml.Marshal(csv.Object)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(csvPath, b, 0o644)).To(Succeed())
	Expect(uc.V1Image).To(HaveSuffix(":v" + uc.v1Version))
	uc.V2Image = strings.TrimSuffix(uc.V1Image, uc.v1Version) + uc.version

	// The catalog: catalog/'s package, channel and bundle, then v2.
	docs := readDocs(filepath.Join("catalog", pkg, "index.yaml"))
	var out []*unstructured.Unstructured
	for _, d := range docs {
		if d.Object["schema"] == "olm.channel" {
			entries, _, _ := unstructured.NestedSlice(d.Object, "entries")
			Expect(entries).To(HaveLen(1))
			Expect(entries[0].(map[string]any)["name"]).To(Equal(uc.V1))
			entries = append(entries, map[string]any{"name": uc.V2, "replaces": uc.V1, "skipRange": "<" + uc.version})
			Expect(unstructured.SetNestedSlice(d.Object, entries, "entries")).To(Succeed())
		}
		out = append(out, d)
	}
	rendered, err := exec.Command(opm, "render", uc.V2Bundle, "-o", "yaml").Output()
	Expect(err).NotTo(HaveOccurred(), "opm render %s: %s", uc.V2Bundle, stderr(err))
	next := readDocsBytes(rendered)
	Expect(next).To(HaveLen(1))
	Expect(str(next[0], "name")).To(Equal(uc.V2))
	Expect(field(next[0], "image")).To(BeEmpty(), "opm render of a directory leaves the image empty")
	next[0].Object["image"] = uc.V2Image
	related, _, _ := unstructured.NestedSlice(next[0].Object, "relatedImages")
	next[0].Object["relatedImages"] = append([]any{map[string]any{"image": uc.V2Image, "name": ""}}, related...)
	out = append(out, next[0])

	var buf bytes.Buffer
	for _, d := range out {
		y, err := yaml.Marshal(d.Object)
		Expect(err).NotTo(HaveOccurred())
		buf.WriteString("---\n")
		buf.Write(y)
	}
	Expect(os.MkdirAll(filepath.Join(uc.Dir, pkg), 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(uc.Dir, pkg, "index.yaml"), buf.Bytes(), 0o644)).To(Succeed())
	vout, err := exec.Command(opm, "validate", uc.Dir).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "opm validate %s: %s", uc.Dir, vout)
	return uc
}

// nextPatch returns version with its patch number incremented ("0.1.0" → "0.1.1").
func nextPatch(version string) string {
	GinkgoHelper()
	parts := strings.Split(version, ".")
	Expect(parts).To(HaveLen(3), "version %q", version)
	var patch int
	_, err := fmt.Sscanf(parts[2], "%d", &patch)
	Expect(err).NotTo(HaveOccurred())
	return fmt.Sprintf("%s.%s.%d", parts[0], parts[1], patch+1)
}

func readDocs(path string) []*unstructured.Unstructured {
	GinkgoHelper()
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return readDocsBytes(b)
}

func readDocsBytes(b []byte) []*unstructured.Unstructured {
	GinkgoHelper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out
		}
		Expect(err).NotTo(HaveOccurred())
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

func stderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}
