package operator_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
)

// The generic Addon kind (#18 §1): any provider, named in spec.providerId, through the one
// engine and chart every typed kind uses. FS Bucket (fs-bucket) has no typed kind.
var _ = Describe("the generic Addon kind", func() {
	ctx := context.Background()
	const createRoute = "POST /v2/organisations/{ownerId}/addons"

	It("provisions an FS Bucket with the provider, plan, region and options asked for, publishes its env as is, and deletes it", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1alpha1_addon.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, "Basic", "spec", "plan")).To(Succeed()) // a plan name resolves too
		Expect(unstructured.SetNestedField(cr.Object, "rbx", "spec", "region")).To(Succeed())
		Expect(unstructured.SetNestedStringMap(cr.Object, map[string]string{"my-option": "a=b", "encryption": "false"}, "spec", "options")).To(Succeed())
		calls := suite.CountCalls(ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(calls.Route(createRoute)).To(Equal(1))

		cur := suite.Get(cr)
		addons := addonsNamed(addonName(cur))
		Expect(addons).To(HaveLen(1), "exactly one add-on at Clever Cloud")
		a := addons[0]
		Expect(cur.GetFinalizers()).To(ContainElement("api.clever-cloud.com/addon"))
		// What the create request carried, as the fake checked and stored it.
		Expect(a.Provider.ID).To(Equal("fs-bucket"))
		Expect(a.Plan.ID).To(Equal(fake.PlanID("fs-bucket", "s")))
		Expect(a.Region).To(Equal("rbx"))
		Expect(fake.CreateOptions(a.ID)).To(Equal(map[string]any{"my-option": "a=b", "encryption": "false"}), "spec.options passed through as they are")
		Expect(kube.StatusString(cur, "addon")).To(Equal(a.ID))
		Expect(kube.StatusString(cur, "plan")).To(Equal(a.Plan.ID))
		plan, _, _ := unstructured.NestedString(cur.Object, "spec", "plan")
		Expect(plan).To(Equal("Basic"), "spec never rewritten")

		// Every env variable of the add-on, under its own name.
		env := envMap(fake.Env(a.ID))
		Expect(env).To(HaveKey("BUCKET_HOST"))
		Expect(env).To(HaveKey("BUCKET_FTP_USERNAME"))
		Expect(env).To(HaveKey("BUCKET_FTP_PASSWORD"))
		Eventually(func() map[string]string { return kube.SecretData(suite.Secret(ns, cur.GetName()+"-secrets")) }).Should(Equal(env))

		Expect(k8s.Delete(ctx, cur)).To(Succeed())
		Eventually(suite.GetOf(cr)).Should(BeNil())
		Expect(addonsNamed(addonName(cur))).To(BeEmpty(), "add-on deleted at Clever Cloud")
		Eventually(func() *corev1.Secret { return suite.Secret(ns, cur.GetName()+"-secrets") }).Should(BeNil())
	})

	DescribeTable("checks provider, plan and region against the live catalogue: a clear condition, a Warning, no create, no hot loop",
		func(field, value, reason string, inMessage []string) {
			ns := suite.NewNamespace()
			cr := suite.Sample("api_v1alpha1_addon.yaml", ns)
			Expect(unstructured.SetNestedField(cr.Object, value, "spec", field)).To(Succeed())
			calls := suite.CountCalls(ns)
			Expect(k8s.Create(ctx, cr)).To(Succeed())
			Eventually(suite.ReadyOf(cr)).Should(Equal("False/" + reason))
			cur := suite.Get(cr)
			Expect(kube.Condition(cur, "Stalled")).To(Equal("True/" + reason))
			msg := kube.ConditionMessage(cur, "Ready")
			for _, m := range inMessage {
				Expect(msg).To(ContainSubstring(m))
			}
			Eventually(func() []string { return suite.Warnings(ns, cr.GetName()) }).Should(ContainElement(reason))
			Expect(calls.Route(createRoute)).To(BeZero(), "nothing created")
			Expect(addonsNamed(addonName(cur))).To(BeEmpty())
			// Terminal: the resource waits for the user (or the resync period), no retry loop.
			n := calls.Matching("")
			Consistently(func() int { return calls.Matching("") }, 3*time.Second).Should(Equal(n))

			// Deleting it needs no Clever Cloud call and leaves nothing behind.
			Expect(k8s.Delete(ctx, cur)).To(Succeed())
			Eventually(suite.GetOf(cr)).Should(BeNil())
			Expect(calls.Route(createRoute)).To(BeZero())
		},
		Entry("unknown provider", "providerId", "fs-buckets", "ProviderNotFound", []string{`"fs-buckets"`, "fs-bucket", "cellar-addon"}),
		Entry("unknown plan", "plan", "xxl", "PlanNotFound", []string{`"xxl"`, "s (Basic)"}),
		Entry("region the provider is not offered in", "region", "scw", "RegionNotAvailable", []string{`"scw"`, "mtl, par, rbx, rbxhds, sgp, syd, wsw"}),
	)

	It("refuses changes of provider, plan, region and options at admission", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1alpha1_addon.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, "Basic", "spec", "plan")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		for field, v := range map[string]any{
			"providerId": "cellar-addon", "plan": "s", "region": "rbx",
			"options": map[string]any{"encryption": "true"},
		} {
			live := suite.Get(cr)
			orig := live.DeepCopy()
			Expect(unstructured.SetNestedField(live.Object, v, "spec", field)).To(Succeed())
			err := k8s.Patch(ctx, live, client.MergeFrom(orig)) // no resourceVersion: no conflict with status writes
			Expect(err).To(HaveOccurred(), field)
			Expect(err.Error()).To(ContainSubstring("spec."+field), field)
		}
		Expect(k8s.Delete(ctx, cr)).To(Succeed())
		Eventually(suite.GetOf(cr)).Should(BeNil())
	})
})
