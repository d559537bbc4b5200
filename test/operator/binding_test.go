package operator_test

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/test/kube"
)

// allowBinding gives resource cr the privilege to bind the add-ons ids although its namespace
// did not create them: a ClusterCleverCredentials of its own (the operator's credentials,
// allowing only cr's namespace and listing ids), referenced by cr. It is deleted with the spec.
func allowBinding(cr *unstructured.Unstructured, ids ...string) {
	GinkgoHelper()
	name := "bind-" + cr.GetNamespace()
	var list []any
	for _, id := range ids {
		list = append(list, id)
	}
	cc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "api.clever-cloud.com/v1alpha1", "kind": "ClusterCleverCredentials",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"namespaces": map[string]any{"names": []any{cr.GetNamespace()}},
			"binding":    map[string]any{"addonIds": list},
		},
	}}
	Expect(k8s.Create(context.Background(), cc)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(context.Background(), cc) })
	Expect(unstructured.SetNestedMap(cr.Object, map[string]any{"kind": "ClusterCleverCredentials", "name": name}, "spec", "credentialsRef")).To(Succeed())
}

var _ = Describe("binding an existing add-on is a privilege", func() {
	ctx := context.Background()

	It("refuses to bind an add-on the namespace did not create without the credentials' permission", func() {
		ns := suite.NewNamespace()
		pre := preexisting(ns, "postgresql-addon", "dev")
		calls := suite.CountCalls(ns)
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, pre.ID, "spec", "addonId")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/BindingNotAllowed"))
		cur := suite.Get(cr)
		Expect(kube.Condition(cur, "Stalled")).To(Equal("True/BindingNotAllowed"))
		Expect(kube.StatusString(cur, "addon")).To(BeEmpty())
		Eventually(func() []string { return suite.Warnings(ns, cr.GetName()) }).Should(ContainElement(ContainSubstring("BindingNotAllowed")))
		Expect(suite.Secret(ns, "postgresql-secrets")).To(BeNil(), "no credentials published")
		Expect(calls.Route("POST /v2/organisations/{ownerId}/addons")).To(BeZero())
		Expect(calls.Route("GET /v2/organisations/{ownerId}/addons/{addonId}/env")).To(BeZero(), "the add-on's credentials are never read")

		// Deleting it leaves the add-on alone (whatever the deletion policy).
		Expect(k8s.Delete(ctx, suite.Get(cr))).To(Succeed())
		Eventually(suite.GetOf(cr)).Should(BeNil())
		Expect(kube.AddonExists(fake, pre.ID)).To(BeTrue())
		Expect(calls.Matching("DELETE")).To(BeZero())
	})

	It("gives a restored resource (new UID, no status) its own add-on back through the signed claim, and refuses the claim copied into another namespace", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		var backup *unstructured.Unstructured
		Eventually(func() string {
			cur := suite.Get(cr)
			backup = kube.Manifest(cur, ns)
			return cur.GetAnnotations()[kinds.AnnotationAddonClaim]
		}).ShouldNot(BeEmpty(), "the operator signs the add-on it created")
		id := kube.StatusString(suite.Get(cr), "addon")
		Expect(strings.Split(backup.GetAnnotations()[kinds.AnnotationAddonClaim], "/")[1]).To(Equal(id))

		// The namespace is lost (the add-on kept), then restored from the backup.
		suite.Mutate(cr, func(live *unstructured.Unstructured) {
			Expect(unstructured.SetNestedField(live.Object, "Orphan", "spec", "deletionPolicy")).To(Succeed())
		})
		Expect(k8s.Delete(ctx, suite.Get(cr))).To(Succeed())
		Eventually(suite.GetOf(cr)).Should(BeNil())
		Expect(kube.AddonExists(fake, id)).To(BeTrue())

		calls := suite.CountCalls(ns)
		restored := backup.DeepCopy()
		Expect(k8s.Create(ctx, restored)).To(Succeed())
		// Recreated under the same name at once: the old resource's Helm uninstall stops
		// waiting for the name to disappear as soon as it holds the new UID (StatusClient.Get).
		Eventually(suite.ReadyOf(restored)).Should(Equal("True/Provisioned"))
		cur := suite.Get(restored)
		Expect(kube.StatusString(cur, "addon")).To(Equal(id), "the same add-on")
		adopted, _, _ := unstructured.NestedBool(cur.Object, "status", "adopted")
		Expect(adopted).To(BeFalse(), "its own add-on: the claim names this kind and name")
		Expect(calls.Route("POST /v2/organisations/{ownerId}/addons")).To(BeZero(), "no new add-on")

		// The same manifest applied in another namespace does not verify there.
		other := suite.NewNamespace()
		otherCalls := suite.CountCalls(other)
		copied := kube.Manifest(cur, other)
		Expect(k8s.Create(ctx, copied)).To(Succeed())
		Eventually(suite.ReadyOf(copied)).Should(Equal("False/BindingNotAllowed"))
		Expect(kube.StatusString(suite.Get(copied), "addon")).To(BeEmpty())
		Expect(otherCalls.Matching("POST")).To(BeZero())

		// Deleting the restored resource deletes its own add-on (default policy Delete).
		Expect(k8s.Delete(ctx, suite.Get(restored))).To(Succeed())
		Eventually(suite.GetOf(restored)).Should(BeNil())
		Expect(kube.AddonExists(fake, id)).To(BeFalse())
	})

	It("refuses a second resource claiming an add-on already bound, naming the first", func() {
		ns := suite.NewNamespace()
		pre := preexisting(ns, "redis-addon", "s_mono")
		first := suite.Sample("api_v1_redis.yaml", ns)
		first.SetName("first")
		allowBinding(first, pre.ID)
		Expect(unstructured.SetNestedField(first.Object, pre.ID, "spec", "addonId")).To(Succeed())
		Expect(k8s.Create(ctx, first)).To(Succeed())
		Eventually(suite.ReadyOf(first)).Should(Equal("True/Provisioned"))

		second := suite.Sample("api_v1_redis.yaml", ns)
		second.SetName("second")
		Expect(unstructured.SetNestedField(second.Object, pre.ID, "spec", "addonId")).To(Succeed())
		Expect(unstructured.SetNestedMap(second.Object, map[string]any{"kind": "ClusterCleverCredentials", "name": "bind-" + ns}, "spec", "credentialsRef")).To(Succeed())
		Expect(unstructured.SetNestedMap(second.Object, map[string]any{"name": "second-secrets"}, "spec", "secret")).To(Succeed())
		Expect(k8s.Create(ctx, second)).To(Succeed())
		Eventually(suite.ReadyOf(second)).Should(Equal("False/AddonClaimed"))
		Expect(kube.ConditionMessage(suite.Get(second), "Ready")).To(ContainSubstring(ns + "/first"))
		Expect(suite.Secret(ns, "second-secrets")).To(BeNil())

		// The first goes (its bound add-on is orphaned by default): the second gets it.
		Expect(k8s.Delete(ctx, suite.Get(first))).To(Succeed())
		Eventually(suite.GetOf(first)).Should(BeNil())
		Expect(kube.AddonExists(fake, pre.ID)).To(BeTrue(), "a bound add-on is orphaned by default")
		suite.Annotate(second, map[string]string{kinds.AnnotationReconcileRequestedAt: metav1.Now().String()})
		Eventually(suite.ReadyOf(second)).Should(Equal("True/Provisioned"))
	})
})
