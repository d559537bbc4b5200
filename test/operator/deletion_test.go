package operator_test

import (
	"context"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

// Issue #13 §3 and §4: a 404 is not proof that an add-on is gone; a deletion Clever Cloud
// refuses while the add-on is provisioning backs off and finishes; a slow create never makes
// a second add-on.

// pointNamespaceAt makes namespace ns use another Clever Cloud endpoint, through the
// namespace override Secret (an endpoint other than the operator's needs a complete
// credential set of its own: the suite's, which the fakes accept).
func pointNamespaceAt(ns, endpoint string) *corev1.Secret {
	GinkgoHelper()
	doc := kube.OverrideConfig(endpoint, creds)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "clever-operator", Namespace: ns}, StringData: map[string]string{"config": doc}}
	Expect(k8s.Create(context.Background(), s)).To(Succeed())
	return s
}

// ownFake starts a fake Clever Cloud API with opts for one spec (closed when it ends).
func ownFake(opts fakeapi.Options) (*fakeapi.Server, *httptest.Server) {
	GinkgoHelper()
	opts.Credentials = []fakeapi.Credential{creds}
	return kube.NewFake(opts)
}

var _ = Describe("deletion against the real API's answers", func() {
	ctx := context.Background()

	It("never releases a resource on a 404 nothing confirms (every route 404s), and finishes once the API answers sensibly", func() {
		ns := suite.NewNamespace()
		mb := suite.Sample("api_v1_metabase.yaml", ns)
		Expect(k8s.Create(ctx, mb)).To(Succeed())
		Eventually(suite.ReadyOf(mb), 30*time.Second).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(mb), "addon")

		// The namespace now talks to a path where everything answers 404 (a wrong base path,
		// a proxy, an incident), then the resource is deleted.
		override := pointNamespaceAt(ns, fakeSrv.URL+"/not-the-api")
		Expect(k8s.Delete(ctx, mb)).To(Succeed())
		Eventually(func() string { return kube.Condition(suite.Get(mb), "AddonReady") }, 20*time.Second).Should(Equal("False/DeletionUnconfirmed"))
		Expect(kube.Condition(suite.Get(mb), "Ready")).To(Equal("False/DeletionUnconfirmed"))
		Eventually(func() []string { return suite.EventsByName(ns, "", mb.GetName()) }).Should(ContainElement("Warning DeletionUnconfirmed"))
		Consistently(func() bool { return suite.Get(mb) != nil }, 3*time.Second).Should(BeTrue(), "the finalizer stays")
		Expect(addonsNamed(addonName(suite.Get(mb)))).To(HaveLen(1), "the add-on still runs (and is billed): it must not be forgotten")
		Expect(suite.Secret(ns, "metabase-secrets")).NotTo(BeNil())

		// The API answers sensibly again: the deletion completes.
		Expect(k8s.Delete(ctx, override)).To(Succeed())
		Eventually(func() bool { return suite.Get(mb) == nil }, 60*time.Second).Should(BeTrue())
		for _, a := range fake.Addons(suite.OrgOf(ns)) {
			Expect(a.ID).NotTo(Equal(id), "the add-on was deleted")
		}
	})

	It("does not take a 404 of the periodic refresh for an add-on deleted out of band unless the organisation's list confirms it", func() {
		ns := suite.NewNamespace()
		mb := suite.Sample("api_v1_metabase.yaml", ns)
		mb.SetAnnotations(map[string]string{"api.clever-cloud.com/on-addon-missing": "report"})
		Expect(k8s.Create(ctx, mb)).To(Succeed())
		Eventually(suite.ReadyOf(mb), 30*time.Second).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(mb), "addon")

		override := pointNamespaceAt(ns, fakeSrv.URL+"/not-the-api")
		cur := suite.Get(mb)
		cur.SetAnnotations(map[string]string{"api.clever-cloud.com/on-addon-missing": "report", "api.clever-cloud.com/reconcile-requested-at": "everything-404s"})
		suite.Update(cur)
		Eventually(func() []string { return suite.EventsByName(ns, "", mb.GetName()) }, 20*time.Second).Should(ContainElement(Or(Equal("Warning ApiError"), Equal("Warning ApiUnavailable"))))
		Consistently(func() string { return kube.Condition(suite.Get(mb), "AddonReady") }, 2*time.Second).ShouldNot(Equal("False/AddonMissing"))
		Expect(suite.EventsByName(ns, "", mb.GetName())).NotTo(ContainElement("Warning AddonMissing"))
		Expect(kube.StatusString(suite.Get(mb), "addon")).To(Equal(id))

		// Back on the real endpoint, the next pass finds the add-on again: nothing was lost.
		Expect(k8s.Delete(ctx, override)).To(Succeed())
		cur = suite.Get(mb)
		cur.SetAnnotations(map[string]string{"api.clever-cloud.com/on-addon-missing": "report", "api.clever-cloud.com/reconcile-requested-at": "back"})
		suite.Update(cur)
		Eventually(suite.ReadyOf(mb), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(kube.StatusString(suite.Get(mb), "addon")).To(Equal(id))
		Expect(addonsNamed(addonName(suite.Get(mb)))).To(HaveLen(1))
	})

	It("backs off while Clever Cloud refuses to delete an add-on still provisioning, then finishes without an error loop", func() {
		ns := suite.NewNamespace()
		slow, srv := ownFake(fakeapi.Options{ProvisioningDelay: 4 * time.Second, Seed: 7})
		pointNamespaceAt(ns, srv.URL)
		mb := suite.Sample("api_v1_metabase.yaml", ns)
		Expect(k8s.Create(ctx, mb)).To(Succeed())
		Eventually(func() string { return kube.StatusString(suite.Get(mb), "addon") }, 10*time.Second).ShouldNot(BeEmpty())
		Expect(k8s.Delete(ctx, mb)).To(Succeed())
		Eventually(func() []string { return suite.EventsByName(ns, "", mb.GetName()) }, 10*time.Second).Should(ContainElement("Warning DeletionDeferred"))
		Eventually(func() bool { return suite.Get(mb) == nil }, 60*time.Second).Should(BeTrue())
		Expect(slow.Addons(suite.OrgOf(ns))).To(BeEmpty(), "no add-on left")
		Expect(slow.CountsFor(suite.OrgOf(ns))["DELETE /v2/organisations/{ownerId}/addons/{addonId}"]).To(BeNumerically("<=", 6), "retried with a growing delay, not in a loop")
	})

	It("a create slower than the client timeout is found by name on the retry: one add-on, never two", func() {
		ns := suite.NewNamespace()
		slow, srv := ownFake(fakeapi.Options{CreateDelay: 2500 * time.Millisecond, Seed: 9})
		pointNamespaceAt(ns, srv.URL)
		mgr.Stop()
		startManager(func(o *kube.ManagerOptions) { o.APITimeout = time.Second })
		DeferCleanup(func() { mgr.Stop(); startManager() })

		mb := suite.Sample("api_v1_metabase.yaml", ns)
		Expect(k8s.Create(ctx, mb)).To(Succeed())
		Eventually(suite.ReadyOf(mb), 60*time.Second).Should(Equal("True/Provisioned"))
		Expect(slow.Addons(suite.OrgOf(ns))).To(HaveLen(1))
		Expect(slow.CountsFor(suite.OrgOf(ns))["POST /v2/organisations/{ownerId}/addons"]).To(Equal(1), "the create that timed out was not sent again")
		Eventually(func() []string { return suite.EventsByName(ns, "", mb.GetName()) }).Should(ContainElement("Warning ApiUnavailable"), "the first create did time out at the client")
		Expect(kube.SecretData(suite.Secret(ns, "metabase-secrets"))).To(HaveKey("METABASE_URL"))
		Expect(k8s.Delete(ctx, mb)).To(Succeed())
		Eventually(func() bool { return suite.Get(mb) == nil }, 30*time.Second).Should(BeTrue())
	})
})

var _ = Describe("catalogue and options as the real API takes them", func() {
	ctx := context.Background()

	It("resolves a plan private to the organisation (catalogue asked with ?orgaId=)", func() {
		ns := suite.NewNamespace()
		planID := fake.AddPrivatePlan(suite.OrgOf(ns), "postgresql-addon", "private_xxl")
		pg := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedField(pg.Object, "private_xxl", "spec", "instance", "plan")).To(Succeed())
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(suite.ReadyOf(pg), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(kube.StatusString(suite.Get(pg), "plan")).To(Equal(planID))
		Expect(fake.CountsFor(suite.OrgOf(ns))["GET /v2/products/addonproviders"]).To(BeNumerically(">=", 1))
	})

	It("sends ElasticSearch's Kibana and APM as flat option keys", func() {
		ns := suite.NewNamespace()
		es := suite.Sample("api_v1_elasticsearch.yaml", ns)
		Expect(unstructured.SetNestedField(es.Object, true, "spec", "options", "kibana")).To(Succeed())
		Expect(unstructured.SetNestedField(es.Object, false, "spec", "options", "apm")).To(Succeed())
		Expect(k8s.Create(ctx, es)).To(Succeed())
		Eventually(func() string { return kube.StatusString(suite.Get(es), "addon") }, 30*time.Second).ShouldNot(BeEmpty())
		opts := fake.CreateOptions(kube.StatusString(suite.Get(es), "addon"))
		Expect(opts).To(HaveKeyWithValue("kibana", "true"))
		Expect(opts).NotTo(HaveKey("apm"))
		Expect(opts).NotTo(HaveKey("services"))
		Expect(opts).To(HaveKeyWithValue("version", "8"))
	})

	It("leaves version and encryption out on a DEV plan and never reports VersionDrift for it", func() {
		ns := suite.NewNamespace()
		pg := suite.Sample("api_v1_postgresql.yaml", ns) // plan dev, version 17: the shared cluster runs another version
		Expect(unstructured.SetNestedField(pg.Object, true, "spec", "options", "encryption")).To(Succeed())
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(suite.ReadyOf(pg), 30*time.Second).Should(Equal("True/Provisioned"))
		opts := fake.CreateOptions(kube.StatusString(suite.Get(pg), "addon"))
		Expect(opts).NotTo(HaveKey("version"))
		Expect(opts).NotTo(HaveKey("encryption"))
		for _, v := range []string{"a", "b", "c"} {
			cur := suite.Get(pg)
			cur.SetAnnotations(map[string]string{"api.clever-cloud.com/reconcile-requested-at": v})
			suite.Update(cur)
			Eventually(func() string { return kube.StatusString(suite.Get(pg), "lastHandledReconcileAt") }, 20*time.Second).Should(Equal(v))
		}
		Expect(kube.Condition(suite.Get(pg), "Drifted")).To(BeEmpty())
	})

	It("refuses a version the provider does not announce, naming those it does (no enum in the CRD)", func() {
		ns := suite.NewNamespace()
		pg := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedField(pg.Object, "xs_sml", "spec", "instance", "plan")).To(Succeed())
		Expect(unstructured.SetNestedField(pg.Object, int64(12), "spec", "options", "version")).To(Succeed())
		Expect(k8s.Create(ctx, pg)).To(Succeed(), "the API server accepts it: the CRD lists no versions")
		Eventually(suite.ReadyOf(pg), 30*time.Second).Should(Equal("False/VersionNotAvailable"))
		msg := kube.ConditionMessage(suite.Get(pg), "Ready")
		for _, v := range fake.ProviderVersions("postgresql-addon") {
			Expect(msg).To(ContainSubstring(v))
		}
		Expect(fake.Addons(suite.OrgOf(ns))).To(BeEmpty())

		// A version the provider starts announcing later needs no operator release.
		cur := suite.Get(pg)
		Expect(unstructured.SetNestedField(cur.Object, int64(17), "spec", "options", "version")).To(Succeed())
		suite.Update(cur)
		Eventually(suite.ReadyOf(pg), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(fake.CreateOptions(kube.StatusString(suite.Get(pg), "addon"))).To(HaveKeyWithValue("version", "17"))
	})
})
