package operator_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/helm-operator-plugins/pkg/watches"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/clever-operator/clever-operator/internal/operator"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// Issue #13 §3 and §4: a 404 is not proof that an add-on is gone; a deletion Clever Cloud
// refuses while the add-on is provisioning backs off and finishes; a slow create never makes
// a second add-on.

// pointNamespaceAt makes namespace ns use another Clever Cloud endpoint, through the
// namespace override Secret (an endpoint other than the operator's needs a complete
// credential set of its own: the suite's, which the fakes accept).
func pointNamespaceAt(ns, endpoint string) *corev1.Secret {
	GinkgoHelper()
	doc := fmt.Sprintf("[api]\nendpoint = %q\nconsumer-key = %q\nconsumer-secret = %q\ntoken = %q\nsecret = %q\n",
		endpoint, creds.ConsumerKey, creds.ConsumerSecret, creds.Token, creds.Secret)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "clever-operator", Namespace: ns}, StringData: map[string]string{"config": doc}}
	Expect(k8s.Create(context.Background(), s)).To(Succeed())
	return s
}

// ownFake starts a fake Clever Cloud API with opts for one spec (closed when it ends).
func ownFake(opts fakeapi.Options) (*fakeapi.Server, *httptest.Server) {
	GinkgoHelper()
	opts.Credentials = []fakeapi.Credential{creds}
	s, srv := fakeapi.NewTestServer(opts)
	DeferCleanup(srv.Close)
	return s, srv
}

var _ = Describe("deletion against the real API's answers", func() {
	ctx := context.Background()

	It("never releases a resource on a 404 nothing confirms (every route 404s), and finishes once the API answers sensibly", func() {
		ns := newNamespace()
		mb := sample("api_v1_metabase.yaml", ns)
		Expect(k8s.Create(ctx, mb)).To(Succeed())
		Eventually(readyOf(mb), 30*time.Second).Should(Equal("True/Provisioned"))
		id := statusString(get(mb), "addon")

		// The namespace now talks to a path where everything answers 404 (a wrong base path,
		// a proxy, an incident), then the resource is deleted.
		override := pointNamespaceAt(ns, fakeSrv.URL+"/not-the-api")
		Expect(k8s.Delete(ctx, mb)).To(Succeed())
		Eventually(func() string { return condition(get(mb), "AddonReady") }, 20*time.Second).Should(Equal("False/DeletionUnconfirmed"))
		Expect(condition(get(mb), "Ready")).To(Equal("False/DeletionUnconfirmed"))
		Eventually(func() []string { return eventsByName(ns, mb.GetName()) }).Should(ContainElement("Warning DeletionUnconfirmed"))
		Consistently(func() bool { return get(mb) != nil }, 3*time.Second).Should(BeTrue(), "the finalizer stays")
		Expect(addonsNamed(addonName(get(mb)))).To(HaveLen(1), "the add-on still runs (and is billed): it must not be forgotten")
		Expect(secret(ns, "metabase-secrets")).NotTo(BeNil())

		// The API answers sensibly again: the deletion completes.
		Expect(k8s.Delete(ctx, override)).To(Succeed())
		Eventually(func() bool { return get(mb) == nil }, 60*time.Second).Should(BeTrue())
		for _, a := range fake.Addons(orgOf(ns)) {
			Expect(a.ID).NotTo(Equal(id), "the add-on was deleted")
		}
	})

	It("does not take a 404 of the periodic refresh for an add-on deleted out of band unless the organisation's list confirms it", func() {
		ns := newNamespace()
		mb := sample("api_v1_metabase.yaml", ns)
		mb.SetAnnotations(map[string]string{"api.clever-cloud.com/on-addon-missing": "report"})
		Expect(k8s.Create(ctx, mb)).To(Succeed())
		Eventually(readyOf(mb), 30*time.Second).Should(Equal("True/Provisioned"))
		id := statusString(get(mb), "addon")

		override := pointNamespaceAt(ns, fakeSrv.URL+"/not-the-api")
		cur := get(mb)
		cur.SetAnnotations(map[string]string{"api.clever-cloud.com/on-addon-missing": "report", "api.clever-cloud.com/reconcile-requested-at": "everything-404s"})
		update(cur)
		Eventually(func() []string { return eventsByName(ns, mb.GetName()) }, 20*time.Second).Should(ContainElement(Or(Equal("Warning ApiError"), Equal("Warning ApiUnavailable"))))
		Consistently(func() string { return condition(get(mb), "AddonReady") }, 2*time.Second).ShouldNot(Equal("False/AddonMissing"))
		Expect(eventsByName(ns, mb.GetName())).NotTo(ContainElement("Warning AddonMissing"))
		Expect(statusString(get(mb), "addon")).To(Equal(id))

		// Back on the real endpoint, the next pass finds the add-on again: nothing was lost.
		Expect(k8s.Delete(ctx, override)).To(Succeed())
		cur = get(mb)
		cur.SetAnnotations(map[string]string{"api.clever-cloud.com/on-addon-missing": "report", "api.clever-cloud.com/reconcile-requested-at": "back"})
		update(cur)
		Eventually(readyOf(mb), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(statusString(get(mb), "addon")).To(Equal(id))
		Expect(addonsNamed(addonName(get(mb)))).To(HaveLen(1))
	})

	It("backs off while Clever Cloud refuses to delete an add-on still provisioning, then finishes without an error loop", func() {
		ns := newNamespace()
		slow, srv := ownFake(fakeapi.Options{ProvisioningDelay: 4 * time.Second, Seed: 7})
		pointNamespaceAt(ns, srv.URL)
		mb := sample("api_v1_metabase.yaml", ns)
		Expect(k8s.Create(ctx, mb)).To(Succeed())
		Eventually(func() string { return statusString(get(mb), "addon") }, 10*time.Second).ShouldNot(BeEmpty())
		Expect(k8s.Delete(ctx, mb)).To(Succeed())
		Eventually(func() []string { return eventsByName(ns, mb.GetName()) }, 10*time.Second).Should(ContainElement("Warning DeletionDeferred"))
		Eventually(func() bool { return get(mb) == nil }, 60*time.Second).Should(BeTrue())
		Expect(slow.Addons(orgOf(ns))).To(BeEmpty(), "no add-on left")
		Expect(slow.CountsFor(orgOf(ns))["DELETE /v2/organisations/{ownerId}/addons/{addonId}"]).To(BeNumerically("<=", 6), "retried with a growing delay, not in a loop")
	})

	It("a create slower than the client timeout is found by name on the retry: one add-on, never two", func() {
		ns := newNamespace()
		slow, srv := ownFake(fakeapi.Options{CreateDelay: 2500 * time.Millisecond, Seed: 9})
		pointNamespaceAt(ns, srv.URL)
		stopManager()
		startManagerTimeout(time.Second)
		DeferCleanup(func() { stopManager(); startManager() })

		mb := sample("api_v1_metabase.yaml", ns)
		Expect(k8s.Create(ctx, mb)).To(Succeed())
		Eventually(readyOf(mb), 60*time.Second).Should(Equal("True/Provisioned"))
		Expect(slow.Addons(orgOf(ns))).To(HaveLen(1))
		Expect(slow.CountsFor(orgOf(ns))["POST /v2/organisations/{ownerId}/addons"]).To(Equal(1), "the create that timed out was not sent again")
		Expect(eventsByName(ns, mb.GetName())).To(ContainElement("Warning ApiUnavailable"), "the first create did time out at the client")
		Expect(secretData(secret(ns, "metabase-secrets"))).To(HaveKey("METABASE_URL"))
		Expect(k8s.Delete(ctx, mb)).To(Succeed())
		Eventually(func() bool { return get(mb) == nil }, 30*time.Second).Should(BeTrue())
	})
})

var _ = Describe("catalogue and options as the real API takes them", func() {
	ctx := context.Background()

	It("resolves a plan private to the organisation (catalogue asked with ?orgaId=)", func() {
		ns := newNamespace()
		planID := fake.AddPrivatePlan(orgOf(ns), "postgresql-addon", "private_xxl")
		pg := sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedField(pg.Object, "private_xxl", "spec", "instance", "plan")).To(Succeed())
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(readyOf(pg), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(statusString(get(pg), "plan")).To(Equal(planID))
		Expect(fake.CountsFor(orgOf(ns))["GET /v2/products/addonproviders"]).To(BeNumerically(">=", 1))
	})

	It("sends ElasticSearch's Kibana and APM as flat option keys", func() {
		ns := newNamespace()
		es := sample("api_v1_elasticsearch.yaml", ns)
		Expect(unstructured.SetNestedField(es.Object, true, "spec", "options", "kibana")).To(Succeed())
		Expect(unstructured.SetNestedField(es.Object, false, "spec", "options", "apm")).To(Succeed())
		Expect(k8s.Create(ctx, es)).To(Succeed())
		Eventually(func() string { return statusString(get(es), "addon") }, 30*time.Second).ShouldNot(BeEmpty())
		opts := fake.CreateOptions(statusString(get(es), "addon"))
		Expect(opts).To(HaveKeyWithValue("kibana", "true"))
		Expect(opts).NotTo(HaveKey("apm"))
		Expect(opts).NotTo(HaveKey("services"))
		Expect(opts).To(HaveKeyWithValue("version", "8"))
	})

	It("leaves version and encryption out on a DEV plan and never reports VersionDrift for it", func() {
		ns := newNamespace()
		pg := sample("api_v1_postgresql.yaml", ns) // plan dev, version 17: the shared cluster runs another version
		Expect(unstructured.SetNestedField(pg.Object, true, "spec", "options", "encryption")).To(Succeed())
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(readyOf(pg), 30*time.Second).Should(Equal("True/Provisioned"))
		opts := fake.CreateOptions(statusString(get(pg), "addon"))
		Expect(opts).NotTo(HaveKey("version"))
		Expect(opts).NotTo(HaveKey("encryption"))
		for _, v := range []string{"a", "b", "c"} {
			cur := get(pg)
			cur.SetAnnotations(map[string]string{"api.clever-cloud.com/reconcile-requested-at": v})
			update(cur)
			Eventually(func() string { return statusString(get(pg), "lastHandledReconcileAt") }, 20*time.Second).Should(Equal(v))
		}
		Expect(condition(get(pg), "Drifted")).To(BeEmpty())
	})

	It("refuses a version the provider does not announce, naming those it does (no enum in the CRD)", func() {
		ns := newNamespace()
		pg := sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedField(pg.Object, "xs_sml", "spec", "instance", "plan")).To(Succeed())
		Expect(unstructured.SetNestedField(pg.Object, int64(12), "spec", "options", "version")).To(Succeed())
		Expect(k8s.Create(ctx, pg)).To(Succeed(), "the API server accepts it: the CRD lists no versions")
		Eventually(readyOf(pg), 30*time.Second).Should(Equal("False/VersionNotAvailable"))
		msg := conditionMessage(get(pg), "Ready")
		for _, v := range fake.ProviderVersions("postgresql-addon") {
			Expect(msg).To(ContainSubstring(v))
		}
		Expect(fake.Addons(orgOf(ns))).To(BeEmpty())

		// A version the provider starts announcing later needs no operator release.
		cur := get(pg)
		Expect(unstructured.SetNestedField(cur.Object, int64(17), "spec", "options", "version")).To(Succeed())
		update(cur)
		Eventually(readyOf(pg), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(fake.CreateOptions(statusString(get(pg), "addon"))).To(HaveKeyWithValue("version", "17"))
	})
})

// startManagerTimeout runs the operator as startManager does, with a per-attempt Clever Cloud
// request timeout of d (a create slower than that times out at the client).
func startManagerTimeout(d time.Duration) {
	GinkgoHelper()
	ws, err := watches.Load("watches.yaml")
	Expect(err).NotTo(HaveOccurred())
	scheme, err := operator.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	opts := operator.ManagerOptions(scheme, nil)
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	probeAddr = freeAddr()
	opts.HealthProbeBindAddress = probeAddr
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	mgr, err = ctrl.NewManager(restCfg, opts)
	Expect(err).NotTo(HaveOccurred())
	Expect(operator.Setup(mgr, operator.Options{
		API: apiConfig(), Watches: ws, ResyncPeriod: time.Hour, Workers: 4, APITimeout: d,
		Registerer: registry, Log: ctrl.Log,
	})).To(Succeed())
	mctx, cancel := context.WithCancel(context.Background())
	stopMgr = cancel
	mgrDone = make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(mgrDone)
		Expect(mgr.Start(mctx)).To(Succeed())
	}()
}
