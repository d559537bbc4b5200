package operator_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

var _ = Describe("every kind, end to end", func() {
	ctx := context.Background()

	DescribeTable("create → Ready → Secret with the add-on's env → delete removes the add-on",
		func(file string, urlField, urlEnv string) {
			ns := suite.NewNamespace()
			cr := suite.Sample(file, ns)
			Expect(k8s.Create(ctx, cr)).To(Succeed())
			Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))

			cur := suite.Get(cr)
			addons := addonsNamed(addonName(cur))
			Expect(addons).To(HaveLen(1), "exactly one add-on at Clever Cloud")
			Expect(kube.StatusString(cur, "addon")).To(Equal(addons[0].ID))
			Expect(cur.GetFinalizers()).To(ContainElements("api.clever-cloud.com/"+finalizerOf(cur.GetKind()), "uninstall-helm-release"))

			// The credentials Secret carries exactly the add-on's env (ConfigProvider: spec.variables;
			// the operator add-ons, whose v2 env is empty today: their v4 URL and credentials).
			want := envMap(fake.Env(addons[0].ID))
			if cur.GetKind() == "ConfigProvider" {
				want, _, _ = unstructured.NestedStringMap(cur.Object, "spec", "variables")
				Expect(envMap(fake.Env(addons[0].ID))).To(Equal(want), "variables pushed to the config provider")
			}
			var s *corev1.Secret
			if v4 := kube.V4Values(fake, addons[0].RealID); v4 != nil {
				Expect(want).To(BeEmpty(), "the fake serves no v2 env for %s", cur.GetKind())
				Eventually(func() []string {
					s = suite.Secret(ns, cur.GetName()+"-secrets")
					return kube.Values(kube.SecretData(s))
				}).Should(ContainElements(v4))
				want = kube.SecretData(s)
			} else {
				Eventually(func() map[string]string { s = suite.Secret(ns, cur.GetName()+"-secrets"); return kube.SecretData(s) }).Should(Equal(want))
			}
			Expect(metav1.GetControllerOf(s)).NotTo(BeNil())
			Expect(metav1.GetControllerOf(s).UID).To(Equal(cur.GetUID()))
			Expect(s.Labels).To(HaveKeyWithValue("api.clever-cloud.com/managed-by", "clever-operator"))
			if urlField != "" {
				Expect(kube.StatusString(cur, urlField)).To(Equal(want[urlEnv]))
				Expect(kube.StatusString(cur, urlField)).NotTo(BeEmpty())
			}
			// The rendered manifest (credentials!) never reaches status.
			_, found, _ := unstructured.NestedFieldNoCopy(cur.Object, "status", "deployedRelease", "manifest")
			Expect(found).To(BeFalse())

			Expect(k8s.Delete(ctx, cur)).To(Succeed())
			Eventually(func() *unstructured.Unstructured { return suite.Get(cr) }).Should(BeNil())
			Expect(addonsNamed(addonName(cur))).To(BeEmpty(), "add-on deleted at Clever Cloud")
			Eventually(func() *corev1.Secret { return suite.Secret(ns, cur.GetName()+"-secrets") }).Should(BeNil())
			Expect(suite.Secret(ns, cur.GetName()+"-"+lower(cur.GetKind())+"-source")).To(BeNil())
		},
		Entry("PostgreSql", "api_v1_postgresql.yaml", "", ""),
		Entry("Redis", "api_v1_redis.yaml", "", ""),
		Entry("MySql", "api_v1_mysql.yaml", "", ""),
		Entry("MongoDb", "api_v1_mongodb.yaml", "", ""),
		Entry("ElasticSearch", "api_v1_elasticsearch.yaml", "", ""),
		Entry("Pulsar", "api_v1beta1_pulsar.yaml", "", ""),
		Entry("ConfigProvider", "api_v1_configprovider.yaml", "", ""),
		Entry("KV", "api_v1alpha1_kv.yaml", "", ""),
		Entry("Metabase", "api_v1_metabase.yaml", "url", "METABASE_URL"),
		Entry("Keycloak", "api_v1_keycloak.yaml", "admin_url", "CC_KEYCLOAK_ADMIN_URL"),
		Entry("Matomo", "api_v1_matomo.yaml", "url", "MATOMO_URL"),
		Entry("Otoroshi", "api_v1_otoroshi.yaml", "url", "CC_OTOROSHI_URL"),
		Entry("Azimutt", "api_v1_azimutt.yaml", "", ""),
		Entry("Cellar", "api_v1_cellar.yaml", "url", "CELLAR_ADDON_HOST"),
		// The generic kind (an FS Bucket): the same engine, chart and Secret, no code of its own.
		Entry("Addon", "api_v1alpha1_addon.yaml", "", ""),
	)

	It("resolves a plan slug without rewriting the spec, and sends the kind's options", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_elasticsearch.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		cur := suite.Get(cr)
		plan, _, _ := unstructured.NestedString(cur.Object, "spec", "instance", "plan")
		Expect(plan).To(Equal("xs"), "spec untouched")
		a := addonsNamed(addonName(cur))[0]
		Expect(a.Plan.ID).To(Equal(fake.PlanID("es-addon", "xs")))
		Expect(kube.StatusString(cur, "plan")).To(Equal(a.Plan.ID))
		Expect(a.Region).To(Equal("par"))
	})

	It("pushes ConfigProvider variable changes and updates the Secret", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_configprovider.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		cur := suite.Get(cr)
		id := kube.StatusString(cur, "addon")
		Expect(unstructured.SetNestedStringMap(cur.Object, map[string]string{"A": "1", "B": "two"}, "spec", "variables")).To(Succeed())
		suite.Update(cur)
		Eventually(func() map[string]string { return envMap(fake.Env(id)) }).Should(Equal(map[string]string{"A": "1", "B": "two"}))
		Eventually(func() map[string]string { return kube.SecretData(suite.Secret(ns, cur.GetName()+"-secrets")) }).
			Should(Equal(map[string]string{"A": "1", "B": "two"}))
		Expect(addonsNamed(addonName(cur))).To(HaveLen(1))
	})

	It("makes no Clever Cloud call for events that change nothing", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Eventually(func() *corev1.Secret { return suite.Secret(ns, cr.GetName()+"-secrets") }).ShouldNot(BeNil())
		time.Sleep(500 * time.Millisecond) // let the create burst settle
		calls := suite.CountCalls(ns)
		cur := suite.Get(cr)
		cur.SetLabels(map[string]string{"team": "a"})
		cur.SetAnnotations(map[string]string{"note": "touched"})
		suite.Update(cur)
		Consistently(func() int { return calls.Matching("") }, 3*time.Second).Should(BeZero())
		Expect(suite.ReadyOf(cr)()).To(Equal("True/Provisioned"))
	})

	// publishedQuietly provisions a sample and returns its published Secret once the operator
	// is quiet, with a counter of the API calls made about it from then on.
	publishedQuietly := func(file string) (*corev1.Secret, *kube.APICounter) {
		ns := suite.NewNamespace()
		cr := suite.Sample(file, ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		var s *corev1.Secret
		Eventually(func() *corev1.Secret { s = suite.Secret(ns, cr.GetName()+"-secrets"); return s }).ShouldNot(BeNil())
		time.Sleep(500 * time.Millisecond)
		return s, suite.CountCalls(ns)
	}

	It("puts a hand-deleted Secret back within seconds, without API calls", func() {
		s, calls := publishedQuietly("api_v1_mysql.yaml")
		want := kube.SecretData(s)
		Expect(k8s.Delete(ctx, s)).To(Succeed())
		Eventually(func() map[string]string { return kube.SecretData(suite.Secret(s.Namespace, s.Name)) }, 10*time.Second).Should(Equal(want))
		Expect(calls.Matching("")).To(BeZero())
	})

	It("puts back a value edited by hand in the Secret, twice in a row, without API calls", func() {
		s, calls := publishedQuietly("api_v1_redis.yaml")
		want := kube.SecretData(s)
		// Twice: the second edit comes after a repair the operator may remember.
		for _, edit := range []string{"edited-by-hand", "edited-again"} {
			s = suite.Secret(s.Namespace, s.Name)
			s.Data["REDIS_PASSWORD"] = []byte(edit)
			Expect(k8s.Update(ctx, s)).To(Succeed())
			Eventually(func() map[string]string { return kube.SecretData(suite.Secret(s.Namespace, s.Name)) }, 10*time.Second).Should(Equal(want))
		}
		Expect(calls.Matching("")).To(BeZero())
	})

	It("gives kinds that share a name their own release; the second Secret reports SecretConflict until renamed", func() {
		ns := suite.NewNamespace()
		pg := suite.Sample("api_v1_postgresql.yaml", ns)
		pg.SetName("db")
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(suite.ReadyOf(pg)).Should(Equal("True/Provisioned"))
		pgSecret := kube.SecretData(suite.Secret(ns, "db-secrets"))
		Expect(pgSecret).To(HaveKey("POSTGRESQL_ADDON_HOST"))

		rd := suite.Sample("api_v1_redis.yaml", ns)
		rd.SetName("db")
		Expect(k8s.Create(ctx, rd)).To(Succeed())
		Eventually(suite.ReadyOf(rd)).Should(Equal("False/SecretConflict"))
		Expect(kube.ConditionMessage(suite.Get(rd), "Ready")).To(ContainSubstring("spec.secret.name"))
		Expect(kube.Condition(suite.Get(rd), "Stalled")).To(Equal("True/SecretConflict"))
		Expect(kube.SecretData(suite.Secret(ns, "db-secrets"))).To(Equal(pgSecret), "the other resource's Secret is untouched")

		cur := suite.Get(rd)
		Expect(unstructured.SetNestedField(cur.Object, "db-redis-secrets", "spec", "secret", "name")).To(Succeed())
		suite.Update(cur)
		Eventually(suite.ReadyOf(rd)).Should(Equal("True/Provisioned"))
		Eventually(func() map[string]string { return kube.SecretData(suite.Secret(ns, "db-redis-secrets")) }).Should(HaveKey("REDIS_HOST"))
		Expect(kube.SecretData(suite.Secret(ns, "db-secrets"))).To(Equal(pgSecret))
		Expect(suite.ReadyOf(pg)()).To(Equal("True/Provisioned"))
	})

	It("never takes over a Secret a person created", func() {
		ns := suite.NewNamespace()
		mine := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "mongodb-secrets", Namespace: ns}, StringData: map[string]string{"MINE": "yes"}}
		Expect(k8s.Create(ctx, mine)).To(Succeed())
		cr := suite.Sample("api_v1_mongodb.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/SecretConflict"))
		Expect(kube.SecretData(suite.Secret(ns, "mongodb-secrets"))).To(Equal(map[string]string{"MINE": "yes"}))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Normal AddonCreated"))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Warning SecretConflict"))
		Expect(suite.Secret(ns, "mongodb-secrets").Labels).To(BeEmpty(), "no label of ours was put on it")
	})
})

var _ = Describe("idempotency and adoption", func() {
	ctx := context.Background()

	It("adopts an add-on already named kubernetes::<Kind>::<uid> (crash after create, or the Rust operator) instead of creating a second one", func() {
		mgr.Stop()
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		// Whoever created the add-on (this operator before a crash, or the Rust operator, which
		// uses the same finalizer) put the finalizer on the resource first.
		cr.SetFinalizers([]string{"api.clever-cloud.com/postgresql"})
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		cur := suite.Get(cr)
		api := newClient()
		pre, err := api.CreateAddon(ctx, suite.OrgOf(ns), clevercloud.CreateOpts{
			Name: addonName(cur), Region: "par", ProviderID: "postgresql-addon", Plan: fake.PlanID("postgresql-addon", "dev"),
			Options: clevercloud.Options{Version: "17", Encryption: "false"},
		})
		Expect(err).NotTo(HaveOccurred())
		startManager()
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(kube.StatusString(suite.Get(cr), "addon")).To(Equal(pre.ID))
		Expect(addonsNamed(addonName(cur))).To(HaveLen(1))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Normal AddonAdopted"))
	})

	It("looks a brand-new resource up by name only once an earlier pass may have created its add-on", func() {
		ns := suite.NewNamespace()
		calls := suite.CountCalls(ns)
		// The first create fails with a 500 after which Clever Cloud may or may not have acted:
		// the next pass must look the name up before creating again.
		suite.FailRoutes(ns, "POST /v2/organisations/{ownerId}/addons")
		cr := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(func() int { return calls.Route("POST /v2/organisations/{ownerId}/addons") }).Should(BeNumerically(">=", 1))
		Expect(calls.Route("GET /v2/organisations/{ownerId}/addons")).To(BeZero(), "no lookup on the very first pass")
		suite.ClearOwnerFault(ns)
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(calls.Route("GET /v2/organisations/{ownerId}/addons")).To(BeNumerically(">=", 1), "looked up before creating again")
		Expect(addonsNamed(addonName(suite.Get(cr)))).To(HaveLen(1))
	})

	It("restarting the operator mid-provisioning creates no duplicate add-on", func() {
		ns := suite.NewNamespace()
		calls := suite.CountCalls(ns)
		suite.OwnerFault(ns, fakeapi.OwnerFault{Latency: 300 * time.Millisecond})
		var crs []*unstructured.Unstructured
		for _, f := range []string{"api_v1_postgresql.yaml", "api_v1_redis.yaml", "api_v1_mysql.yaml", "api_v1_mongodb.yaml"} {
			cr := suite.Sample(f, ns)
			Expect(k8s.Create(ctx, cr)).To(Succeed())
			crs = append(crs, cr)
		}
		// Stop while creates are in flight, then start again.
		Eventually(func() int { return calls.Matching("POST") }).Should(BeNumerically(">=", 1))
		mgr.Stop()
		startManager()
		suite.ClearOwnerFault(ns)
		for _, cr := range crs {
			Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
			Expect(addonsNamed(addonName(suite.Get(cr)))).To(HaveLen(1), cr.GetKind())
		}
	})
})

var _ = Describe("API failures", func() {
	ctx := context.Background()

	It("reports InvalidCredentials when a namespace's credentials are rejected, on that namespace only", func() {
		ns := suite.NewNamespace()
		bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "clever-operator", Namespace: ns},
			StringData: map[string]string{"config": "[api]\ntoken = \"wrong\"\nsecret = \"wrong\"\n"}}
		Expect(k8s.Create(ctx, bad)).To(Succeed())
		cr := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/InvalidCredentials"))
		Expect(kube.Condition(suite.Get(cr), "Stalled")).To(Equal("True/InvalidCredentials"))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Warning InvalidCredentials"))
		msg := kube.ConditionMessage(suite.Get(cr), "Ready")
		Expect(msg).NotTo(ContainSubstring("wrong"), "no credential in status")

		other := suite.Sample("api_v1_redis.yaml", suite.NewNamespace())
		Expect(k8s.Create(ctx, other)).To(Succeed())
		Eventually(suite.ReadyOf(other)).Should(Equal("True/Provisioned"))

		// Fixing the override Secret recovers the resource.
		fixed := bad.DeepCopy()
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(bad), fixed)).To(Succeed())
		fixed.Data = map[string][]byte{"config": []byte("[api]\ntoken = \"" + creds.Token + "\"\nsecret = \"" + creds.Secret + "\"\n")}
		Expect(k8s.Update(ctx, fixed)).To(Succeed())
		touch(cr)
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
	})

	It("keeps a Ready resource Ready through an outage at its refresh, reporting Synced=False", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		// The env read fails (the refresh's call); few enough failures that the client's
		// circuit, shared with the other specs, stays closed.
		suite.FailRoutes(ns, "GET /v2/organisations/{ownerId}/addons/{addonId}/env")
		suite.Annotate(cr, map[string]string{"api.clever-cloud.com/reconcile-requested-at": "outage"})
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Synced") }, 20*time.Second).Should(Equal("False/ApiUnavailable"))
		Expect(suite.ReadyOf(cr)()).To(Equal("True/Provisioned"), "Ready does not flap on a transient failure")
		Expect(kube.ConditionMessage(suite.Get(cr), "Synced")).To(ContainSubstring("refreshing"))
		// Cleared at once, before the client's circuit (shared with the other specs) opens; the
		// engine's own retry then succeeds and drops the condition.
		suite.ClearOwnerFault(ns)
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Warning ApiUnavailable"))
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Synced") }, 30*time.Second).Should(BeEmpty())
		Expect(suite.ReadyOf(cr)()).To(Equal("True/Provisioned"))
	})

	It("reports ApiUnavailable on 5xx, backs off, and recovers", func() {
		ns := suite.NewNamespace()
		suite.FailRoutes(ns, "POST /v2/organisations/{ownerId}/addons")
		cr := suite.Sample("api_v1_mongodb.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/ApiUnavailable"))
		Expect(kube.Condition(suite.Get(cr), "Stalled")).To(Equal(""), "transient: not stalled")
		calls := suite.CountCalls(ns)
		time.Sleep(3 * time.Second)
		Expect(calls.Matching("POST")).To(BeNumerically("<=", 6), "exponential backoff, not a hot loop")
		Expect(addonsNamed(addonName(suite.Get(cr)))).To(BeEmpty())
		suite.ClearOwnerFault(ns)
		Eventually(suite.ReadyOf(cr), 60*time.Second).Should(Equal("True/Provisioned"))
		Expect(addonsNamed(addonName(suite.Get(cr)))).To(HaveLen(1))
	})

	It("reports a malformed organisation as InvalidSpec without any call, and an API 404 (unknown organisation) as ApiError", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_redis.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, "nobody", "spec", "organisation")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/InvalidSpec"))
		Expect(kube.Condition(suite.Get(cr), "Stalled")).To(Equal("True/InvalidSpec"))
		Expect(fake.CountsByOwner()).NotTo(HaveKey("nobody"))

		// An organisation the API does not know answers 404 on every route.
		suite.OwnerFault(ns, fakeapi.OwnerFault{Status: 404, Message: "organisation not found"})
		cr2 := suite.Sample("api_v1_redis.yaml", ns)
		cr2.SetName("unknown-org")
		Expect(k8s.Create(ctx, cr2)).To(Succeed())
		Eventually(suite.ReadyOf(cr2)).Should(Equal("False/ApiError"))
		Expect(kube.ConditionMessage(suite.Get(cr2), "Ready")).To(ContainSubstring("404"))
		// Clean up so their retries do not skew other specs' call counts; neither deletion is
		// blocked (nothing can exist in a malformed or unknown organisation).
		for _, u := range []*unstructured.Unstructured{cr, cr2} {
			Expect(k8s.Delete(ctx, suite.Get(u))).To(Succeed())
			Eventually(func() *unstructured.Unstructured { return suite.Get(u) }).Should(BeNil())
		}
	})

	It("reports PlanNotFound with the available plans, as a terminal condition", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, "huge", "spec", "instance", "plan")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/PlanNotFound"))
		Expect(kube.ConditionMessage(suite.Get(cr), "Ready")).To(ContainSubstring("xs_sml"))
		Expect(kube.Condition(suite.Get(cr), "Stalled")).To(Equal("True/PlanNotFound"))
	})

	It("lets a resource whose add-on cannot be deleted go with the escape-hatch annotation, saying what was left", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(cr), "addon")
		suite.FailRoutes(ns, "DELETE /v2/organisations/{ownerId}/addons/{addonId}")
		Expect(k8s.Delete(ctx, suite.Get(cr))).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/DeleteFailed"))
		Expect(kube.ConditionMessage(suite.Get(cr), "Ready")).To(ContainSubstring("skip-deprovision"))
		cur := suite.Get(cr)
		cur.SetAnnotations(map[string]string{"api.clever-cloud.com/skip-deprovision": "true"})
		suite.Update(cur)
		Eventually(func() *unstructured.Unstructured { return suite.Get(cr) }).Should(BeNil())
		Expect(addonsNamed(addonName(cur))).To(HaveLen(1), "left behind on purpose")
		Expect(addonsNamed(addonName(cur))[0].ID).To(Equal(id))
		Eventually(func() []string { return suite.EventsByName(ns, "", cr.GetName()) }).Should(ContainElement("Warning AddonLeftBehind"))
	})
})

// touch changes an annotation so the engine reconciles again.
func touch(u *unstructured.Unstructured) {
	cur := suite.Get(u)
	ann := cur.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["test/touched"] = time.Now().Format(time.RFC3339Nano)
	cur.SetAnnotations(ann)
	suite.Update(cur)
}

func newClient() *clevercloud.Client {
	c, err := clevercloud.New(clevercloud.Config{Endpoint: fakeSrv.URL, Credentials: clevercloud.Credentials{
		ConsumerKey: creds.ConsumerKey, ConsumerSecret: creds.ConsumerSecret, Token: creds.Token, Secret: creds.Secret}})
	Expect(err).NotTo(HaveOccurred())
	return c
}

func finalizerOf(kind string) string {
	switch kind {
	case "ConfigProvider":
		return "config-provider"
	case "KV":
		return "materia-kv"
	}
	return lower(kind)
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}
