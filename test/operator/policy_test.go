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
)

// preexisting creates an add-on in namespace ns's organisation at the fake, outside the
// operator (console, Terraform...).
func preexisting(ns, provider, slug string) *clevercloud.Addon {
	a, err := newClient().CreateAddon(context.Background(), orgOf(ns), clevercloud.CreateOpts{
		Name: "made-elsewhere", Region: "par", ProviderID: provider, Plan: fake.PlanID(provider, slug),
		Options: clevercloud.Options{Version: "17", Encryption: "false"},
	})
	Expect(err).NotTo(HaveOccurred())
	time.Sleep(400 * time.Millisecond) // past the fake's provisioning delay
	return a
}

// addonExists reports whether the fake holds an add-on with that id, in any organisation.
func addonExists(id string) bool {
	for _, list := range fake.AllAddons() {
		for _, a := range list {
			if a.ID == id {
				return true
			}
		}
	}
	return false
}

func annotate(u *unstructured.Unstructured, kv map[string]string) {
	cur := get(u)
	ann := cur.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	for k, v := range kv {
		if v == "" {
			delete(ann, k)
		} else {
			ann[k] = v
		}
	}
	cur.SetAnnotations(ann)
	update(cur)
}

func gone(u *unstructured.Unstructured) func() *unstructured.Unstructured {
	return func() *unstructured.Unstructured { return get(u) }
}

var _ = Describe("adoption and observe-only", func() {
	ctx := context.Background()

	It("binds to an existing add-on by spec.addonId without creating anything, and says so", func() {
		ns := newNamespace()
		pre := preexisting(ns, "postgresql-addon", "dev")
		calls := countCalls(ns)
		cr := sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, pre.ID, "spec", "addonId")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		cur := get(cr)
		Expect(statusString(cur, "addon")).To(Equal(pre.ID))
		adopted, _, _ := unstructured.NestedBool(cur.Object, "status", "adopted")
		Expect(adopted).To(BeTrue())
		Expect(calls.route("POST /v2/organisations/{ownerId}/addons")).To(BeZero(), "adoption makes zero create calls")
		Eventually(func() map[string]string { return secretData(secret(ns, "postgresql-secrets")) }).Should(Equal(envMap(fake.Env(pre.ID))))

		// spec.addonId cannot be changed afterwards (CEL, server-side).
		Expect(unstructured.SetNestedField(cur.Object, "addon_00000000-0000-0000-0000-000000000000", "spec", "addonId")).To(Succeed())
		err := k8s.Update(ctx, cur)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.addonId cannot be changed"))

		// Default policy Delete: deleting the resource deletes the adopted add-on.
		Expect(k8s.Delete(ctx, get(cr))).To(Succeed())
		Eventually(gone(cr)).Should(BeNil())
		Expect(addonExists(pre.ID)).To(BeFalse())
	})

	It("binds by the api.clever-cloud.com/addon-id annotation too", func() {
		ns := newNamespace()
		pre := preexisting(ns, "redis-addon", "s_mono")
		cr := sample("api_v1_redis.yaml", ns)
		cr.SetAnnotations(map[string]string{"api.clever-cloud.com/addon-id": pre.ID})
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(statusString(get(cr), "addon")).To(Equal(pre.ID))
		Expect(addonsNamed(addonName(get(cr)))).To(BeEmpty(), "nothing created under the resource's name")
	})

	It("reports AddonNotFound for an unknown bound id and never creates one", func() {
		ns := newNamespace()
		cr := sample("api_v1_redis.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, "addon_ffffffff-0000-0000-0000-000000000000", "spec", "addonId")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("False/AddonNotFound"))
		Expect(condition(get(cr), "Stalled")).To(Equal("True/AddonNotFound"))
		Expect(addonsNamed(addonName(get(cr)))).To(BeEmpty())
	})

	It("observes without writing: publishes the Secret, never pushes variables, never deletes", func() {
		ns := newNamespace()
		pre := preexisting(ns, "config-provider", "std")
		Expect(fake.SetEnv(pre.ID, []fakeapi.Variable{{Name: "REMOTE", Value: "kept"}})).To(Succeed())
		calls := countCalls(ns)
		cr := sample("api_v1_configprovider.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, pre.ID, "spec", "addonId")).To(Succeed())
		Expect(unstructured.SetNestedField(cr.Object, "ObserveOnly", "spec", "managementPolicy")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		Eventually(func() map[string]string { return secretData(secret(ns, "config-provider-secrets")) }).Should(Equal(map[string]string{"REMOTE": "kept"}))
		Expect(envMap(fake.Env(pre.ID))).To(Equal(map[string]string{"REMOTE": "kept"}), "spec.variables not pushed")
		Expect(calls.matching("PUT")).To(BeZero())
		Expect(calls.matching("POST")).To(BeZero())

		Expect(k8s.Delete(ctx, get(cr))).To(Succeed())
		Eventually(gone(cr)).Should(BeNil())
		Expect(addonExists(pre.ID)).To(BeTrue(), "ObserveOnly never deletes")
		Expect(calls.matching("DELETE")).To(BeZero())
		Expect(eventsByName(ns, cr.GetName())).To(ContainElement("Normal AddonOrphaned"))
	})

	It("reports AddonNotFound for ObserveOnly when there is nothing to observe", func() {
		ns := newNamespace()
		cr := sample("api_v1_mysql.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, "ObserveOnly", "spec", "managementPolicy")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("False/AddonNotFound"))
		Expect(addonsNamed(addonName(get(cr)))).To(BeEmpty())
	})
})

var _ = Describe("deletion policy", func() {
	ctx := context.Background()

	It("Orphan on the resource keeps the add-on and says so in an event", func() {
		ns := newNamespace()
		cr := sample("api_v1_mongodb.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, "Orphan", "spec", "deletionPolicy")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		id := statusString(get(cr), "addon")
		Expect(k8s.Delete(ctx, get(cr))).To(Succeed())
		Eventually(gone(cr)).Should(BeNil())
		Expect(addonExists(id)).To(BeTrue())
		Expect(eventsByName(ns, cr.GetName())).To(ContainElement("Normal AddonOrphaned"))
		Expect(secret(ns, "mongodb-secrets")).To(BeNil(), "the Secret goes with the resource")
	})

	It("Orphan from the namespace annotation applies to resources that do not choose", func() {
		ns := newNamespace()
		nsObj := &corev1.Namespace{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: ns}, nsObj)).To(Succeed())
		nsObj.SetAnnotations(map[string]string{"api.clever-cloud.com/deletion-policy": "Orphan"})
		Expect(k8s.Update(ctx, nsObj)).To(Succeed())
		keep := sample("api_v1_redis.yaml", ns)
		del := sample("api_v1_mysql.yaml", ns)
		Expect(unstructured.SetNestedField(del.Object, "Delete", "spec", "deletionPolicy")).To(Succeed())
		Expect(k8s.Create(ctx, keep)).To(Succeed())
		Expect(k8s.Create(ctx, del)).To(Succeed())
		Eventually(readyOf(keep)).Should(Equal("True/Provisioned"))
		Eventually(readyOf(del)).Should(Equal("True/Provisioned"))
		keepID, delID := statusString(get(keep), "addon"), statusString(get(del), "addon")
		Expect(k8s.Delete(ctx, get(keep))).To(Succeed())
		Expect(k8s.Delete(ctx, get(del))).To(Succeed())
		Eventually(gone(keep)).Should(BeNil())
		Eventually(gone(del)).Should(BeNil())
		Expect(addonExists(keepID)).To(BeTrue(), "namespace default Orphan")
		Expect(addonExists(delID)).To(BeFalse(), "the resource's own Delete wins")
	})
})

var _ = Describe("pause and forced refresh", func() {
	ctx := context.Background()

	It("a paused resource makes no Clever Cloud writes, shows Paused, resumes when unpaused, and can always be deleted", func() {
		ns := newNamespace()
		cr := sample("api_v1_mysql.yaml", ns)
		cr.SetAnnotations(map[string]string{"api.clever-cloud.com/paused": "true"})
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(func() string { return condition(get(cr), "Paused") }).Should(Equal("True/PauseRequested"))
		Eventually(readyOf(cr)).Should(Equal("False/PauseRequested"))
		// Other specs' resources may write concurrently: check this resource's add-on only.
		Consistently(func() []fakeapi.Addon { return addonsNamed(addonName(get(cr))) }, 2*time.Second).Should(BeEmpty())

		annotate(cr, map[string]string{"api.clever-cloud.com/paused": ""})
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(condition(get(cr), "Paused")).To(Equal(""))

		annotate(cr, map[string]string{"api.clever-cloud.com/paused": "true"})
		Eventually(func() string { return condition(get(cr), "Paused") }).Should(Equal("True/PauseRequested"))
		Expect(readyOf(cr)()).To(Equal("True/Provisioned"), "a paused Ready resource stays Ready")
		id := statusString(get(cr), "addon")
		Expect(k8s.Delete(ctx, get(cr))).To(Succeed())
		Eventually(gone(cr)).Should(BeNil(), "pause never blocks deletion")
		Expect(addonExists(id)).To(BeFalse())
	})

	It("reconcile-requested-at triggers exactly one read and is recorded", func() {
		ns := newNamespace()
		cr := sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		time.Sleep(500 * time.Millisecond)
		calls := countCalls(ns)
		annotate(cr, map[string]string{"api.clever-cloud.com/reconcile-requested-at": "2026-11-22T10:00:00Z"})
		Eventually(func() string { return statusString(get(cr), "lastHandledReconcileAt") }).Should(Equal("2026-11-22T10:00:00Z"))
		Consistently(func() int { return calls.matching("") }, 2*time.Second).Should(Equal(1))
		Expect(calls.route("GET /v2/organisations/{ownerId}/addons/{addonId}/env")).To(Equal(1))
	})

	It("reports an add-on deleted out of band instead of recreating it when asked to", func() {
		ns := newNamespace()
		cr := sample("api_v1_redis.yaml", ns)
		cr.SetAnnotations(map[string]string{"api.clever-cloud.com/on-addon-missing": "report"})
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		id := statusString(get(cr), "addon")
		Expect(fake.DeleteAddonOutOfBand(orgOf(ns), id)).To(Succeed())
		calls := countCalls(ns)
		annotate(cr, map[string]string{"api.clever-cloud.com/reconcile-requested-at": "now"})
		Eventually(readyOf(cr)).Should(Equal("False/AddonMissing"))
		Expect(conditionMessage(get(cr), "Ready")).To(ContainSubstring(id))
		Expect(calls.matching("POST")).To(BeZero())
		Expect(condition(get(cr), "Stalled")).To(Equal("True/AddonMissing"))
	})
})
