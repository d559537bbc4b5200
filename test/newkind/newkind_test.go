// Package newkind_test adds a kind to the operator with nothing but what docs/design.md's
// "Adding a kind" lists: a Go type, one row in the table of kinds, a watches.yaml entry and a
// sample. A resource of it goes Ready, with its Secret published, against the fake Clever
// Cloud API: no engine code knows the kind (what it can do beyond the generic pass comes
// from its row: internal/addon/capabilities.go).
package newkind_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/clever-operator/clever-operator/api/shared"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestNewKind(t *testing.T) {
	kube.RunSuite(t, "Adding a kind (envtest + fake Clever Cloud API)", 30*time.Second, 100*time.Millisecond)
}

// 1. The Go type (api/<version>/widget_types.go in a real addition): an add-on of a provider
// the fake knows (Cellar's, cellar-addon) under a new kind, with the fields every kind has.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec `json:"spec"`
}

type WidgetSpec struct {
	Organisation     string          `json:"organisation"`
	Instance         shared.Instance `json:"instance"`
	shared.Lifecycle `json:",inline"`
	Secret           *shared.SecretSpec `json:"secret,omitempty"`
}

// 2. Its row in the table of kinds.
var widget = kinds.Kind{
	GVK:             schema.GroupVersionKind{Group: kinds.Group, Version: "v1alpha1", Kind: "Widget"},
	FinalizerSuffix: "widget", ProviderID: "cellar-addon", Noun: "widget",
}

// 3. Its watches.yaml entry.
const watchesEntry = `- group: api.clever-cloud.com
  version: v1alpha1
  kind: Widget
  chart: helm-charts/clever-addon
  watchDependentResources: false
`

// 4. Its sample (config/samples/api_v1alpha1_widget.yaml).
const sample = `apiVersion: api.clever-cloud.com/v1alpha1
kind: Widget
metadata:
  name: widget
spec:
  organisation: orga_00000000-0000-0000-0000-000000000001
  instance:
    region: par
    plan: S
`

var creds = fakeapi.Credential{ConsumerKey: "ck-newkind", ConsumerSecret: "cs-newkind-3e9a7c21", Token: "tk-newkind-6d0b5f84", Secret: "ts-newkind-a41c9e02"}

var (
	suite *kube.Suite
	mgr   *kube.Manager
)

var _ = BeforeSuite(func() {
	suite = kube.StartSuite(kube.SuiteOptions{Name: "test/newkind", NamespacePrefix: "nk", Fake: fakeapi.Options{
		Credentials: []fakeapi.Credential{creds}, ProvisioningDelay: 300 * time.Millisecond, Seed: 7,
	}})
	// The CRD make manifests writes for the Go type: Cellar's, whose fields Widget has.
	Expect(envtest.InstallCRDs(suite.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD()}})).NotTo(BeEmpty())
	watchesFile := filepath.Join(GinkgoT().TempDir(), "watches.yaml")
	Expect(os.WriteFile(watchesFile, []byte(watchesEntry), 0o600)).To(Succeed())
	mgr = suite.StartManager(kube.ManagerOptions{
		API:     suite.APIConfig(creds),
		Watches: watchesFile,
		Kinds:   append(slices.Clone(kinds.Kinds), widget),
	})
	DeferCleanup(mgr.Stop)
})

// widgetCRD is Cellar's CRD (config/crd/bases) renamed Widget, at the row's version.
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	GinkgoHelper()
	raw, err := os.ReadFile(filepath.Join("config", "crd", "bases", "api.clever-cloud.com_cellars.yaml"))
	Expect(err).NotTo(HaveOccurred())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	Expect(yaml.Unmarshal(raw, crd)).To(Succeed())
	crd.Name = "widgets." + kinds.Group
	crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList", Categories: []string{"clever"}}
	Expect(crd.Spec.Versions).To(HaveLen(1))
	crd.Spec.Versions[0].Name = widget.GVK.Version
	return crd
}

var _ = Describe("a kind added with a Go type, a row, a watches.yaml entry and a sample", func() {
	ctx := context.Background()

	It("provisions the add-on, publishes its Secret, and deletes it with the resource", func() {
		ns := suite.NewNamespace()
		var w Widget
		Expect(yaml.UnmarshalStrict([]byte(sample), &w)).To(Succeed(), "the sample is a Widget")
		w.Namespace, w.Spec.Organisation = ns, suite.OrgOf(ns)
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&w)
		Expect(err).NotTo(HaveOccurred())
		cr := &unstructured.Unstructured{Object: obj}
		Expect(suite.Client.Create(ctx, cr)).To(Succeed())

		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		cur := suite.Get(cr)
		id := kube.StatusString(cur, "addon")
		addons := suite.Fake.Addons(suite.OrgOf(ns))
		Expect(addons).To(HaveLen(1), "exactly one add-on at Clever Cloud")
		Expect(addons[0].ID).To(Equal(id))
		Expect(addons[0].AddonName()).To(Equal("kubernetes::Widget::" + string(cur.GetUID())))
		Expect(addons[0].Provider.ID).To(Equal("cellar-addon"))
		Expect(cur.GetFinalizers()).To(ContainElement(kinds.Group + "/widget"))

		want := map[string]string{}
		for _, v := range suite.Fake.Env(id) {
			want[v.Name] = v.Value
		}
		Expect(want).To(HaveKey("CELLAR_ADDON_KEY_SECRET"))
		Eventually(func() map[string]string { return kube.SecretData(suite.Secret(ns, "widget-secrets")) }).Should(Equal(want))

		Expect(suite.Client.Delete(ctx, cur)).To(Succeed())
		Eventually(func() *unstructured.Unstructured { return suite.Get(cr) }).Should(BeNil())
		Expect(suite.Fake.Addons(suite.OrgOf(ns))).To(BeEmpty(), "add-on deleted at Clever Cloud")
	})
})
