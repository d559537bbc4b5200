package smoke_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
)

func TestSmoke(t *testing.T) {
	kube.RunSuite(t, "Control plane smoke suite", 0, 0)
}

var (
	cfg *rest.Config
	k8s client.Client
)

var _ = BeforeSuite(func() {
	env, err := kube.NewEnvironment()
	Expect(err).NotTo(HaveOccurred())
	env.CRDs = []*apiextensionsv1.CustomResourceDefinition{smokeCRD()}
	cfg, k8s = kube.StartEnvironment(env, client.Options{})
})

var _ = Describe("the envtest control plane built from Go modules", func() {
	ctx := context.Background()

	It("is the pinned kube-apiserver version, not a master build", func() {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		v, err := dc.ServerVersion()
		Expect(err).NotTo(HaveOccurred())
		Expect(v.GitVersion).To(HavePrefix("v1.35."))
		Expect(v.Minor).To(Equal("35"))
	})

	It("stores and returns a Secret", func() {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: "default"},
			StringData: map[string]string{"KEY": "value"},
		}
		Expect(k8s.Create(ctx, s)).To(Succeed())
		got := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), got)).To(Succeed())
		Expect(got.Data).To(HaveKeyWithValue("KEY", []byte("value")))
		Expect(got.UID).NotTo(BeEmpty())
	})

	It("serves an installed CRD and validates it", func() {
		gvk := schema.GroupVersionKind{Group: "smoke.clever-cloud.com", Version: "v1", Kind: "Widget"}
		ok := &unstructured.Unstructured{}
		ok.SetGroupVersionKind(gvk)
		ok.SetName("w1")
		ok.SetNamespace("default")
		Expect(unstructured.SetNestedField(ok.Object, int64(3), "spec", "size")).To(Succeed())
		Expect(k8s.Create(ctx, ok)).To(Succeed())

		bad := &unstructured.Unstructured{}
		bad.SetGroupVersionKind(gvk)
		bad.SetName("w2")
		bad.SetNamespace("default")
		Expect(unstructured.SetNestedField(bad.Object, "big", "spec", "size")).To(Succeed())
		err := k8s.Create(ctx, bad)
		Expect(err).To(HaveOccurred())
		Expect(strings.Contains(err.Error(), "spec.size")).To(BeTrue(), err.Error())
	})
})

func smokeCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.smoke.clever-cloud.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "smoke.clever-cloud.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}},
					},
				}},
			}},
		},
	}
}
