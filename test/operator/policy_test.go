package operator_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

// preexisting creates an add-on in namespace ns's organisation at the fake, outside the
// operator (console, Terraform...).
func preexisting(ns, provider, slug string) *clevercloud.Addon {
	a, err := newClient().CreateAddon(context.Background(), suite.OrgOf(ns), clevercloud.CreateOpts{
		Name: "made-elsewhere", Region: "par", ProviderID: provider, Plan: fake.PlanID(provider, slug),
		Options: clevercloud.Options{Version: "17", Encryption: "false"},
	})
	Expect(err).NotTo(HaveOccurred())
	time.Sleep(400 * time.Millisecond) // past the fake's provisioning delay
	return a
}

var _ = Describe("adoption and observe-only", func() {
	ctx := context.Background()

	It("binds to an existing add-on by spec.addonId without creating anything, and says so", func() {
		ns := suite.NewNamespace()
		pre := preexisting(ns, "postgresql-addon", "dev")
		calls := suite.CountCalls(ns)
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, pre.ID, "spec", "addonId")).To(Succeed())
		allowBinding(cr, pre.ID)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		cur := suite.Get(cr)
		Expect(kube.StatusString(cur, "addon")).To(Equal(pre.ID))
		adopted, _, _ := unstructured.NestedBool(cur.Object, "status", "adopted")
		Expect(adopted).To(BeTrue())
		Expect(calls.Route("POST /v2/organisations/{ownerId}/addons")).To(BeZero(), "adoption makes zero create calls")
		Eventually(func() map[string]string { return kube.SecretData(suite.Secret(ns, "postgresql-secrets")) }).Should(Equal(envMap(fake.Env(pre.ID))))

		// spec.addonId cannot be changed afterwards (CEL, server-side).
		Expect(unstructured.SetNestedField(cur.Object, "addon_00000000-0000-0000-0000-000000000000", "spec", "addonId")).To(Succeed())
		err := k8s.Update(ctx, cur)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.addonId cannot be changed"))

		// A bound add-on this resource did not create is orphaned by default.
		Expect(k8s.Delete(ctx, suite.Get(cr))).To(Succeed())
		Eventually(suite.GetOf(cr)).Should(BeNil())
		Expect(kube.AddonExists(fake, pre.ID)).To(BeTrue())
		Eventually(func() []string { return suite.EventsByName(ns, "", cr.GetName()) }).Should(ContainElement("Normal AddonOrphaned"))
		Expect(calls.Matching("DELETE")).To(BeZero())
	})

	It("binds by the api.clever-cloud.com/addon-id annotation too", func() {
		ns := suite.NewNamespace()
		pre := preexisting(ns, "redis-addon", "s_mono")
		cr := suite.Sample("api_v1_redis.yaml", ns)
		cr.SetAnnotations(map[string]string{"api.clever-cloud.com/addon-id": pre.ID})
		allowBinding(cr, pre.ID)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(kube.StatusString(suite.Get(cr), "addon")).To(Equal(pre.ID))
		Expect(addonsNamed(addonName(suite.Get(cr)))).To(BeEmpty(), "nothing created under the resource's name")
	})

	It("reports AddonNotFound for an unknown bound id and never creates one", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_redis.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, "addon_ffffffff-0000-0000-0000-000000000000", "spec", "addonId")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/AddonNotFound"))
		Expect(kube.Condition(suite.Get(cr), "Stalled")).To(Equal("True/AddonNotFound"))
		Expect(addonsNamed(addonName(suite.Get(cr)))).To(BeEmpty())
	})

	It("observes without writing: publishes the Secret, never pushes variables, never deletes", func() {
		ns := suite.NewNamespace()
		pre := preexisting(ns, "config-provider", "std")
		Expect(fake.SetEnv(pre.ID, []fakeapi.Variable{{Name: "REMOTE", Value: "kept"}})).To(Succeed())
		calls := suite.CountCalls(ns)
		cr := suite.Sample("api_v1_configprovider.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, pre.ID, "spec", "addonId")).To(Succeed())
		Expect(unstructured.SetNestedField(cr.Object, "ObserveOnly", "spec", "managementPolicy")).To(Succeed())
		allowBinding(cr, pre.ID)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Eventually(func() map[string]string { return kube.SecretData(suite.Secret(ns, "config-provider-secrets")) }).Should(Equal(map[string]string{"REMOTE": "kept"}))
		Expect(envMap(fake.Env(pre.ID))).To(Equal(map[string]string{"REMOTE": "kept"}), "spec.variables not pushed")
		Expect(calls.Matching("PUT")).To(BeZero())
		Expect(calls.Matching("POST")).To(BeZero())

		Expect(k8s.Delete(ctx, suite.Get(cr))).To(Succeed())
		Eventually(suite.GetOf(cr)).Should(BeNil())
		Expect(kube.AddonExists(fake, pre.ID)).To(BeTrue(), "ObserveOnly never deletes")
		Expect(calls.Matching("DELETE")).To(BeZero())
		Eventually(func() []string { return suite.EventsByName(ns, "", cr.GetName()) }).Should(ContainElement("Normal AddonOrphaned"))
	})

	It("reports AddonNotFound for ObserveOnly when there is nothing to observe", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_mysql.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, "ObserveOnly", "spec", "managementPolicy")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/AddonNotFound"))
		Expect(addonsNamed(addonName(suite.Get(cr)))).To(BeEmpty())
	})
})

var _ = Describe("deletion policy", func() {
	ctx := context.Background()

	It("Orphan on the resource keeps the add-on and says so in an event", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_mongodb.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, "Orphan", "spec", "deletionPolicy")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(cr), "addon")
		Expect(k8s.Delete(ctx, suite.Get(cr))).To(Succeed())
		Eventually(suite.GetOf(cr)).Should(BeNil())
		Expect(kube.AddonExists(fake, id)).To(BeTrue())
		Eventually(func() []string { return suite.EventsByName(ns, "", cr.GetName()) }).Should(ContainElement("Normal AddonOrphaned"))
		Expect(suite.Secret(ns, "mongodb-secrets")).To(BeNil(), "the Secret goes with the resource")
	})

	It("Orphan from the namespace annotation applies to resources that do not choose", func() {
		ns := suite.NewNamespace()
		nsObj := &corev1.Namespace{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: ns}, nsObj)).To(Succeed())
		nsObj.SetAnnotations(map[string]string{"api.clever-cloud.com/deletion-policy": "Orphan"})
		Expect(k8s.Update(ctx, nsObj)).To(Succeed())
		keep := suite.Sample("api_v1_redis.yaml", ns)
		del := suite.Sample("api_v1_mysql.yaml", ns)
		Expect(unstructured.SetNestedField(del.Object, "Delete", "spec", "deletionPolicy")).To(Succeed())
		Expect(k8s.Create(ctx, keep)).To(Succeed())
		Expect(k8s.Create(ctx, del)).To(Succeed())
		Eventually(suite.ReadyOf(keep)).Should(Equal("True/Provisioned"))
		Eventually(suite.ReadyOf(del)).Should(Equal("True/Provisioned"))
		keepID, delID := kube.StatusString(suite.Get(keep), "addon"), kube.StatusString(suite.Get(del), "addon")
		Expect(k8s.Delete(ctx, suite.Get(keep))).To(Succeed())
		Expect(k8s.Delete(ctx, suite.Get(del))).To(Succeed())
		Eventually(suite.GetOf(keep)).Should(BeNil())
		Eventually(suite.GetOf(del)).Should(BeNil())
		Expect(kube.AddonExists(fake, keepID)).To(BeTrue(), "namespace default Orphan")
		Expect(kube.AddonExists(fake, delID)).To(BeFalse(), "the resource's own Delete wins")
	})
})

var _ = Describe("pause and forced refresh", func() {
	ctx := context.Background()

	It("a paused resource makes no Clever Cloud writes, shows Paused, resumes when unpaused, and can always be deleted", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_mysql.yaml", ns)
		cr.SetAnnotations(map[string]string{"api.clever-cloud.com/paused": "true"})
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Paused") }).Should(Equal("True/PauseRequested"))
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/PauseRequested"))
		// Other specs' resources may write concurrently: check this resource's add-on only.
		Consistently(func() []fakeapi.Addon { return addonsNamed(addonName(suite.Get(cr))) }, 2*time.Second).Should(BeEmpty())

		suite.Annotate(cr, map[string]string{"api.clever-cloud.com/paused": ""})
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(kube.Condition(suite.Get(cr), "Paused")).To(Equal(""))

		suite.Annotate(cr, map[string]string{"api.clever-cloud.com/paused": "true"})
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Paused") }).Should(Equal("True/PauseRequested"))
		Expect(suite.ReadyOf(cr)()).To(Equal("True/Provisioned"), "a paused Ready resource stays Ready")
		id := kube.StatusString(suite.Get(cr), "addon")
		Expect(k8s.Delete(ctx, suite.Get(cr))).To(Succeed())
		Eventually(suite.GetOf(cr)).Should(BeNil(), "pause never blocks deletion")
		Expect(kube.AddonExists(fake, id)).To(BeFalse())
	})

	It("reconcile-requested-at triggers exactly one read and is recorded", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		time.Sleep(500 * time.Millisecond)
		calls := suite.CountCalls(ns)
		suite.Annotate(cr, map[string]string{"api.clever-cloud.com/reconcile-requested-at": "2026-11-22T10:00:00Z"})
		Eventually(func() string { return kube.StatusString(suite.Get(cr), "lastHandledReconcileAt") }).Should(Equal("2026-11-22T10:00:00Z"))
		Consistently(func() int { return calls.Matching("") }, 2*time.Second).Should(Equal(1))
		Expect(calls.Route("GET /v2/organisations/{ownerId}/addons/{addonId}/env")).To(Equal(1))
	})

	It("reports an add-on deleted out of band instead of recreating it when asked to", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_redis.yaml", ns)
		cr.SetAnnotations(map[string]string{"api.clever-cloud.com/on-addon-missing": "report"})
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(cr), "addon")
		Expect(fake.DeleteAddonOutOfBand(suite.OrgOf(ns), id)).To(Succeed())
		calls := suite.CountCalls(ns)
		suite.Annotate(cr, map[string]string{"api.clever-cloud.com/reconcile-requested-at": "now"})
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/AddonMissing"))
		Expect(kube.ConditionMessage(suite.Get(cr), "Ready")).To(ContainSubstring(id))
		Expect(calls.Matching("POST")).To(BeZero())
		Expect(kube.Condition(suite.Get(cr), "Stalled")).To(Equal("True/AddonMissing"))
	})
})
