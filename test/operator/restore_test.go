package operator_test

import (
	"context"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/test/kube"
)

// kindSamples are the samples of the fourteen add-on kinds.
var kindSamples = []string{
	"api_v1_postgresql.yaml", "api_v1_mysql.yaml", "api_v1_mongodb.yaml", "api_v1_redis.yaml",
	"api_v1_elasticsearch.yaml", "api_v1beta1_pulsar.yaml", "api_v1_configprovider.yaml",
	"api_v1alpha1_kv.yaml", "api_v1_metabase.yaml", "api_v1_keycloak.yaml", "api_v1_matomo.yaml",
	"api_v1_otoroshi.yaml", "api_v1_azimutt.yaml", "api_v1_cellar.yaml",
}

// secretsRestore is what a backup tool does with the namespace's Secrets.
type secretsRestore int

const (
	// secretsWithoutOwners: restored, owner references dropped (Velero's default for an owner
	// it restores under a new UID is to keep the reference; a GitOps export drops it).
	secretsWithoutOwners secretsRestore = iota
	// secretsWithDeadOwners: restored with their owner references, which name UIDs that no
	// longer exist (until the garbage collector, absent here, removes them).
	secretsWithDeadOwners
	// secretsNotRestored: only the resources are restored.
	secretsNotRestored
)

// veleroObject is obj as a backup tool restores it: the same metadata but no UID, resource
// version, creation time or status; finalizers, labels and annotations kept; owner references
// kept or dropped.
func veleroObject(obj client.Object, keepOwners bool) {
	obj.SetUID("")
	obj.SetResourceVersion("")
	obj.SetCreationTimestamp(metav1.Time{})
	obj.SetGeneration(0)
	obj.SetManagedFields(nil)
	if !keepOwners {
		obj.SetOwnerReferences(nil)
	}
}

// loseNamespace empties namespace ns while the operator is stopped, as a lost cluster does:
// every resource and Secret goes, the add-ons at Clever Cloud stay.
func loseNamespace(ctx context.Context, ns string, resources []*unstructured.Unstructured) {
	GinkgoHelper()
	for _, r := range resources {
		cur := suite.Get(r)
		cur.SetFinalizers(nil)
		Expect(k8s.Update(ctx, cur)).To(Succeed())
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, cur))).To(Succeed())
		Eventually(suite.GetOf(r)).Should(BeNil())
	}
	Expect(k8s.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(ns))).To(Succeed())
	Eventually(func() int {
		l := &corev1.SecretList{}
		Expect(k8s.List(ctx, l, client.InNamespace(ns))).To(Succeed())
		return len(l.Items)
	}).Should(BeZero())
}

// readyWithClaim creates the sample in namespace ns, waits until it is Ready and signed, and
// returns it as the API server holds it, its add-on id and its backup (kube.Manifest).
func readyWithClaim(ctx context.Context, sample, ns string) (cur *unstructured.Unstructured, id string, backup *unstructured.Unstructured) {
	GinkgoHelper()
	cr := ownSample(sample, ns) // labelled: fastRefresh can refresh it alone
	Expect(k8s.Create(ctx, cr)).To(Succeed())
	Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
	Eventually(func() string { return suite.Get(cr).GetAnnotations()[kinds.AnnotationAddonClaim] }).ShouldNot(BeEmpty())
	cur = suite.Get(cr)
	return cur, kube.StatusString(cur, "addon"), kube.Manifest(cur, ns)
}

var _ = Describe("a restore from backup (new UIDs, no status, no owner references)", func() {
	ctx := context.Background()

	restore := func(samples []string, secrets secretsRestore) {
		GinkgoHelper()
		ns := suite.NewNamespace()
		var resources []*unstructured.Unstructured
		for _, f := range samples {
			cr := suite.Sample(f, ns)
			Expect(k8s.Create(ctx, cr)).To(Succeed())
			resources = append(resources, cr)
		}
		ids := map[string]string{}
		published := map[string]map[string]string{}
		var backup []*unstructured.Unstructured
		for _, cr := range resources {
			Eventually(suite.ReadyOf(cr), 60*time.Second).Should(Equal("True/Provisioned"), "%s %s", cr.GetKind(), cr.GetName())
			Eventually(func() string { return suite.Get(cr).GetAnnotations()[kinds.AnnotationAddonClaim] }).ShouldNot(BeEmpty())
			cur := suite.Get(cr)
			key := cur.GetKind() + "/" + cur.GetName()
			ids[key] = kube.StatusString(cur, "addon")
			sec := kinds.SecretName(cur)
			Eventually(func() *corev1.Secret { return suite.Secret(ns, sec) }).ShouldNot(BeNil(), key)
			published[key] = kube.SecretData(suite.Secret(ns, sec))
			veleroObject(cur, false)
			unstructured.RemoveNestedField(cur.Object, "status")
			backup = append(backup, cur)
		}
		secretList := &corev1.SecretList{}
		Expect(k8s.List(ctx, secretList, client.InNamespace(ns))).To(Succeed())
		Expect(secretList.Items).NotTo(BeEmpty())

		// The cluster is lost: the operator stops, the namespace is emptied.
		mgr.Stop()
		loseNamespace(ctx, ns, resources)
		for key, id := range ids {
			Expect(kube.AddonExists(fake, id)).To(BeTrue(), key)
		}

		// Restored: Secrets first (as Velero orders them), then the resources.
		calls := suite.CountCalls(ns)
		if secrets != secretsNotRestored {
			for i := range secretList.Items {
				s := secretList.Items[i].DeepCopy()
				veleroObject(s, secrets == secretsWithDeadOwners)
				Expect(k8s.Create(ctx, s)).To(Succeed(), s.Name)
			}
		}
		for _, b := range backup {
			Expect(k8s.Create(ctx, b.DeepCopy())).To(Succeed())
		}
		startManager()

		for _, b := range backup {
			key := b.GetKind() + "/" + b.GetName()
			Eventually(suite.ReadyOf(b), 90*time.Second).Should(Equal("True/Provisioned"), key)
			cur := suite.Get(b)
			Expect(kube.StatusString(cur, "addon")).To(Equal(ids[key]), "%s: its old add-on", key)
			Eventually(func() map[string]string {
				return kube.SecretData(suite.Secret(ns, kinds.SecretName(cur)))
			}).Should(Equal(published[key]), "%s: the same credentials", key)
		}
		Expect(calls.Route("POST /v2/organisations/{ownerId}/addons")).To(BeZero(), "no new add-on")
		Expect(calls.Matching("DELETE")).To(BeZero(), "nothing deleted")
		for _, b := range backup {
			// The restored object's own events (not the lost one's, which had the same name).
			Expect(suite.EventsOfUID(suite.Get(b))).NotTo(ContainElement(HavePrefix("Warning ")), "%s %s", b.GetKind(), b.GetName())
		}
	}

	It("finds the add-ons of all fourteen kinds again, Secrets restored without owner references", func() {
		restore(kindSamples, secretsWithoutOwners)
	})

	It("re-adopts restored Secrets whose owner references name UIDs that no longer exist", func() {
		restore([]string{"api_v1_postgresql.yaml", "api_v1_configprovider.yaml", "api_v1_keycloak.yaml"}, secretsWithDeadOwners)
	})

	It("finds the add-ons again when only the resources are restored", func() {
		restore([]string{"api_v1_redis.yaml", "api_v1_configprovider.yaml", "api_v1_metabase.yaml"}, secretsNotRestored)
	})
})

// nameAtFake is the add-on's name at the fake ("" when it has none or is gone).
func nameAtFake(id string) string {
	for _, list := range fake.AllAddons() {
		for _, a := range list {
			if a.ID == id {
				return a.AddonName()
			}
		}
	}
	return ""
}

var _ = Describe("the same manifest applied in a second cluster while the first still runs", func() {
	ctx := context.Background()

	It("hands the add-on to the last resource that took it back; the other reports AddonManagedElsewhere and its deletion keeps the add-on", func() {
		ns := suite.NewNamespace()
		cur, id, copied := readyWithClaim(ctx, "api_v1_postgresql.yaml", ns)
		first := cur.DeepCopy()
		Expect(nameAtFake(id)).To(Equal(addonName(cur)))

		// A second cluster with the operator's namespace restored from the first's backup (the
		// same claim key), where the same manifest is applied.
		env2, err := kube.NewEnvironment(filepath.Join("config", "crd", "bases"))
		Expect(err).NotTo(HaveOccurred())
		cfg2, err := env2.Start()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(env2.Stop()).To(Succeed()) })
		cfg2.QPS = -1
		k8s2, err := client.New(cfg2, client.Options{})
		Expect(err).NotTo(HaveOccurred())
		second := &kube.Suite{Name: suite.Name, Client: k8s2, Fake: fake, NamespacePrefix: suite.NamespacePrefix}
		second.CreateNamespace(ns)
		second.CreateNamespace(claimKeySecret.Namespace)
		key := &corev1.Secret{}
		Expect(k8s.Get(ctx, claimKeySecret, key)).To(Succeed())
		veleroObject(key, false)
		Expect(k8s2.Create(ctx, key)).To(Succeed())
		mgr2 := kube.StartManager(cfg2, kube.ManagerOptions{API: apiConfig(), ResyncPeriod: time.Hour, Workers: 2, ClaimKeySecret: claimKeySecret})
		DeferCleanup(mgr2.Stop)

		calls := suite.CountCalls(ns)
		Expect(k8s2.Create(ctx, copied)).To(Succeed())
		Eventually(second.ReadyOf(copied), 60*time.Second).Should(Equal("True/Provisioned"))
		taken := second.Get(copied)
		Expect(kube.StatusString(taken, "addon")).To(Equal(id), "the same add-on")
		Expect(nameAtFake(id)).To(Equal(addonName(taken)), "renamed after the resource that took it back")
		Eventually(second.EventsOf(taken)).Should(ContainElement("Normal AddonTakenOver"))
		Expect(calls.Route("POST /v2/organisations/{ownerId}/addons")).To(BeZero())

		// The first cluster's resource sees it at its next read of the add-on (refreshed every
		// 3 s, alone: the resources other specs left are not refreshed with it).
		fastRefresh(ns)
		DeferCleanup(func() { mgr.Stop(); startManager() })
		Eventually(suite.ReadyOf(first), 30*time.Second).Should(Equal("False/AddonManagedElsewhere"))
		cur = suite.Get(first)
		Expect(kube.Condition(cur, "Stalled")).To(Equal("True/AddonManagedElsewhere"))
		Expect(kube.ConditionMessage(cur, "Ready")).To(ContainSubstring(string(taken.GetUID())))
		Eventually(suite.EventsOf(first)).Should(ContainElement("Warning AddonManagedElsewhere"))

		// Deleting it (e.g. tearing the old cluster down) keeps the add-on.
		Expect(k8s.Delete(ctx, cur)).To(Succeed())
		Eventually(suite.GetOf(first)).Should(BeNil())
		Expect(kube.AddonExists(fake, id)).To(BeTrue())
		Expect(calls.Matching("DELETE")).To(BeZero())
		Eventually(func() []string { return suite.EventsByName(ns, "PostgreSql", first.GetName()) }).Should(ContainElement("Warning AddonOrphaned"))
		Expect(second.ReadyOf(copied)()).To(Equal("True/Provisioned"), "the second cluster still manages it")
	})

	It("refuses a link whose add-on no longer exists, and creates a new add-on only once the user removes it", func() {
		ns := suite.NewNamespace()
		cr, id, backup := readyWithClaim(ctx, "api_v1_redis.yaml", ns)

		// Lost with its add-on (deleted at Clever Cloud meanwhile), then restored.
		mgr.Stop()
		loseNamespace(ctx, ns, []*unstructured.Unstructured{cr})
		Expect(fake.DeleteAddonOutOfBand(suite.OrgOf(ns), id)).To(Succeed())
		startManager()
		calls := suite.CountCalls(ns)
		Expect(k8s.Create(ctx, backup)).To(Succeed())
		Eventually(suite.ReadyOf(backup)).Should(Equal("False/AddonNotFound"))
		msg := kube.ConditionMessage(suite.Get(backup), "Ready")
		Expect(msg).To(And(ContainSubstring(id), ContainSubstring("remove the annotation")))
		Eventually(suite.EventsOf(backup)).Should(ContainElement("Warning AddonNotFound"))
		Consistently(func() int { return calls.Route("POST /v2/organisations/{ownerId}/addons") }, 2*time.Second).Should(BeZero(), "never a new add-on in its place")

		// Recreating on purpose: the user removes the link.
		suite.Mutate(backup, func(live *unstructured.Unstructured) {
			a := live.GetAnnotations()
			delete(a, kinds.AnnotationAddonClaim)
			live.SetAnnotations(a)
		})
		Eventually(suite.ReadyOf(backup), 60*time.Second).Should(Equal("True/Provisioned"))
		Expect(kube.StatusString(suite.Get(backup), "addon")).NotTo(Equal(id))
		Expect(calls.Route("POST /v2/organisations/{ownerId}/addons")).To(Equal(1))
	})
})

var _ = Describe("a restore without the operator's claim key", func() {
	ctx := context.Background()

	It("refuses the unverifiable link, saying how to recover, and binds once an admin grants the add-on", func() {
		ns := suite.NewNamespace()
		cr, id, backup := readyWithClaim(ctx, "api_v1_redis.yaml", ns)

		// The cluster is rebuilt from a backup of the namespace only: the operator's claim key
		// Secret is lost, and the operator starts with a new key.
		mgr.Stop()
		loseNamespace(ctx, ns, []*unstructured.Unstructured{cr})
		Expect(k8s.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: claimKeySecret.Namespace, Name: claimKeySecret.Name}})).To(Succeed())
		startManager()
		calls := suite.CountCalls(ns)
		Expect(k8s.Create(ctx, backup)).To(Succeed())
		Eventually(suite.ReadyOf(backup)).Should(Equal("False/BindingNotAllowed"))
		Expect(kube.ConditionMessage(suite.Get(backup), "Ready")).To(And(ContainSubstring("claim key"), ContainSubstring("spec.binding")))
		Expect(calls.Route("POST /v2/organisations/{ownerId}/addons")).To(BeZero())

		// The admin grants that add-on to the default credentials.
		def := &unstructured.Unstructured{}
		def.SetAPIVersion("api.clever-cloud.com/v1alpha1")
		def.SetKind("ClusterCleverCredentials")
		Expect(k8s.Get(ctx, client.ObjectKey{Name: "default"}, def)).To(Succeed())
		before, _, _ := unstructured.NestedFieldCopy(def.Object, "spec", "binding")
		// The operator writes this resource's status too (the restarted manager checks the
		// credentials): write on the live object, re-reading on conflict.
		suite.Mutate(def, func(live *unstructured.Unstructured) {
			Expect(unstructured.SetNestedStringSlice(live.Object, []string{id}, "spec", "binding", "addonIds")).To(Succeed())
		})
		DeferCleanup(func() {
			suite.Mutate(def, func(live *unstructured.Unstructured) {
				if before == nil {
					unstructured.RemoveNestedField(live.Object, "spec", "binding")
				} else {
					Expect(unstructured.SetNestedField(live.Object, before, "spec", "binding")).To(Succeed())
				}
			})
		})
		Eventually(suite.ReadyOf(backup), 60*time.Second).Should(Equal("True/Provisioned"))
		got := suite.Get(backup)
		Expect(kube.StatusString(got, "addon")).To(Equal(id), "its old add-on")
		adopted, _, _ := unstructured.NestedBool(got.Object, "status", "adopted")
		Expect(adopted).To(BeTrue(), "bound by the admin's grant: adopted, deletion defaults to Orphan")
		Expect(calls.Route("POST /v2/organisations/{ownerId}/addons")).To(BeZero())
	})
})
