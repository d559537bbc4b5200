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
)

var _ = Describe("every kind, end to end", func() {
	ctx := context.Background()

	DescribeTable("create → Ready → Secret with the add-on's env → delete removes the add-on",
		func(file string, urlField, urlEnv string) {
			ns := newNamespace()
			cr := sample(file, ns)
			Expect(k8s.Create(ctx, cr)).To(Succeed())
			Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))

			cur := get(cr)
			addons := addonsNamed(addonName(cur))
			Expect(addons).To(HaveLen(1), "exactly one add-on at Clever Cloud")
			Expect(statusString(cur, "addon")).To(Equal(addons[0].ID))
			Expect(cur.GetFinalizers()).To(ContainElements("api.clever-cloud.com/"+finalizerOf(cur.GetKind()), "uninstall-helm-release"))

			// The credentials Secret carries exactly the add-on's env (ConfigProvider: spec.variables;
			// the operator add-ons, whose v2 env is empty today: their v4 URL and credentials).
			want := envMap(fake.Env(addons[0].ID))
			if cur.GetKind() == "ConfigProvider" {
				want, _, _ = unstructured.NestedStringMap(cur.Object, "spec", "variables")
				Expect(envMap(fake.Env(addons[0].ID))).To(Equal(want), "variables pushed to the config provider")
			}
			var s *corev1.Secret
			if v4 := v4Values(addons[0].RealID); v4 != nil {
				Expect(want).To(BeEmpty(), "the fake serves no v2 env for %s", cur.GetKind())
				Eventually(func() []string { s = secret(ns, cur.GetName()+"-secrets"); return mapValues(secretData(s)) }).Should(ContainElements(v4))
				want = secretData(s)
			} else {
				Eventually(func() map[string]string { s = secret(ns, cur.GetName()+"-secrets"); return secretData(s) }).Should(Equal(want))
			}
			Expect(metav1.GetControllerOf(s)).NotTo(BeNil())
			Expect(metav1.GetControllerOf(s).UID).To(Equal(cur.GetUID()))
			Expect(s.Labels).To(HaveKeyWithValue("api.clever-cloud.com/managed-by", "clever-operator"))
			if urlField != "" {
				Expect(statusString(cur, urlField)).To(Equal(want[urlEnv]))
				Expect(statusString(cur, urlField)).NotTo(BeEmpty())
			}
			// The rendered manifest (credentials!) never reaches status.
			_, found, _ := unstructured.NestedFieldNoCopy(cur.Object, "status", "deployedRelease", "manifest")
			Expect(found).To(BeFalse())

			Expect(k8s.Delete(ctx, cur)).To(Succeed())
			Eventually(func() *unstructured.Unstructured { return get(cr) }).Should(BeNil())
			Expect(addonsNamed(addonName(cur))).To(BeEmpty(), "add-on deleted at Clever Cloud")
			Eventually(func() *corev1.Secret { return secret(ns, cur.GetName()+"-secrets") }).Should(BeNil())
			Expect(secret(ns, cur.GetName()+"-"+lower(cur.GetKind())+"-source")).To(BeNil())
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
	)

	It("resolves a plan slug without rewriting the spec, and sends the kind's options", func() {
		ns := newNamespace()
		cr := sample("api_v1_elasticsearch.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		cur := get(cr)
		plan, _, _ := unstructured.NestedString(cur.Object, "spec", "instance", "plan")
		Expect(plan).To(Equal("xs"), "spec untouched")
		a := addonsNamed(addonName(cur))[0]
		Expect(a.Plan.ID).To(Equal(fake.PlanID("es-addon", "xs")))
		Expect(statusString(cur, "plan")).To(Equal(a.Plan.ID))
		Expect(a.Region).To(Equal("par"))
	})

	It("pushes ConfigProvider variable changes and updates the Secret", func() {
		ns := newNamespace()
		cr := sample("api_v1_configprovider.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		cur := get(cr)
		id := statusString(cur, "addon")
		Expect(unstructured.SetNestedStringMap(cur.Object, map[string]string{"A": "1", "B": "two"}, "spec", "variables")).To(Succeed())
		update(cur)
		Eventually(func() map[string]string { return envMap(fake.Env(id)) }).Should(Equal(map[string]string{"A": "1", "B": "two"}))
		Eventually(func() map[string]string { return secretData(secret(ns, cur.GetName()+"-secrets")) }).
			Should(Equal(map[string]string{"A": "1", "B": "two"}))
		Expect(addonsNamed(addonName(cur))).To(HaveLen(1))
	})

	It("makes no Clever Cloud call for events that change nothing", func() {
		ns := newNamespace()
		cr := sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		Eventually(func() *corev1.Secret { return secret(ns, cr.GetName()+"-secrets") }).ShouldNot(BeNil())
		time.Sleep(500 * time.Millisecond) // let the create burst settle
		calls := countCalls(ns)
		cur := get(cr)
		cur.SetLabels(map[string]string{"team": "a"})
		cur.SetAnnotations(map[string]string{"note": "touched"})
		update(cur)
		Consistently(func() int { return calls.matching("") }, 3*time.Second).Should(BeZero())
		Expect(readyOf(cr)()).To(Equal("True/Provisioned"))
	})

	// publishedQuietly provisions a sample and returns its published Secret once the operator
	// is quiet, with a counter of the API calls made about it from then on.
	publishedQuietly := func(file string) (*corev1.Secret, *apiCounter) {
		ns := newNamespace()
		cr := sample(file, ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		var s *corev1.Secret
		Eventually(func() *corev1.Secret { s = secret(ns, cr.GetName()+"-secrets"); return s }).ShouldNot(BeNil())
		time.Sleep(500 * time.Millisecond)
		return s, countCalls(ns)
	}

	It("puts a hand-deleted Secret back within seconds, without API calls", func() {
		s, calls := publishedQuietly("api_v1_mysql.yaml")
		want := secretData(s)
		Expect(k8s.Delete(ctx, s)).To(Succeed())
		Eventually(func() map[string]string { return secretData(secret(s.Namespace, s.Name)) }, 10*time.Second).Should(Equal(want))
		Expect(calls.matching("")).To(BeZero())
	})

	It("puts back a value edited by hand in the Secret, twice in a row, without API calls", func() {
		s, calls := publishedQuietly("api_v1_redis.yaml")
		want := secretData(s)
		// Twice: the second edit comes after a repair the operator may remember.
		for _, edit := range []string{"edited-by-hand", "edited-again"} {
			s = secret(s.Namespace, s.Name)
			s.Data["REDIS_PASSWORD"] = []byte(edit)
			Expect(k8s.Update(ctx, s)).To(Succeed())
			Eventually(func() map[string]string { return secretData(secret(s.Namespace, s.Name)) }, 10*time.Second).Should(Equal(want))
		}
		Expect(calls.matching("")).To(BeZero())
	})

	It("gives kinds that share a name their own release; the second Secret reports SecretConflict until renamed", func() {
		ns := newNamespace()
		pg := sample("api_v1_postgresql.yaml", ns)
		pg.SetName("db")
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(readyOf(pg)).Should(Equal("True/Provisioned"))
		pgSecret := secretData(secret(ns, "db-secrets"))
		Expect(pgSecret).To(HaveKey("POSTGRESQL_ADDON_HOST"))

		rd := sample("api_v1_redis.yaml", ns)
		rd.SetName("db")
		Expect(k8s.Create(ctx, rd)).To(Succeed())
		Eventually(readyOf(rd)).Should(Equal("False/SecretConflict"))
		Expect(conditionMessage(get(rd), "Ready")).To(ContainSubstring("spec.secret.name"))
		Expect(condition(get(rd), "Stalled")).To(Equal("True/SecretConflict"))
		Expect(secretData(secret(ns, "db-secrets"))).To(Equal(pgSecret), "the other resource's Secret is untouched")

		cur := get(rd)
		Expect(unstructured.SetNestedField(cur.Object, "db-redis-secrets", "spec", "secret", "name")).To(Succeed())
		update(cur)
		Eventually(readyOf(rd)).Should(Equal("True/Provisioned"))
		Eventually(func() map[string]string { return secretData(secret(ns, "db-redis-secrets")) }).Should(HaveKey("REDIS_HOST"))
		Expect(secretData(secret(ns, "db-secrets"))).To(Equal(pgSecret))
		Expect(readyOf(pg)()).To(Equal("True/Provisioned"))
	})

	It("never takes over a Secret a person created", func() {
		ns := newNamespace()
		mine := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "mongodb-secrets", Namespace: ns}, StringData: map[string]string{"MINE": "yes"}}
		Expect(k8s.Create(ctx, mine)).To(Succeed())
		cr := sample("api_v1_mongodb.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("False/SecretConflict"))
		Expect(secretData(secret(ns, "mongodb-secrets"))).To(Equal(map[string]string{"MINE": "yes"}))
		Expect(events(get(cr))).To(ContainElement("Normal AddonCreated"))
		Eventually(func() []string { return events(cr) }).Should(ContainElement("Warning SecretConflict"))
		Expect(secret(ns, "mongodb-secrets").Labels).To(BeEmpty(), "no label of ours was put on it")
	})
})

var _ = Describe("idempotency and adoption", func() {
	ctx := context.Background()

	It("adopts an add-on already named kubernetes::<Kind>::<uid> (crash after create, or the Rust operator) instead of creating a second one", func() {
		stopManager()
		ns := newNamespace()
		cr := sample("api_v1_postgresql.yaml", ns)
		// Whoever created the add-on (this operator before a crash, or the Rust operator, which
		// uses the same finalizer) put the finalizer on the resource first.
		cr.SetFinalizers([]string{"api.clever-cloud.com/postgresql"})
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		cur := get(cr)
		api := newClient()
		pre, err := api.CreateAddon(ctx, orgOf(ns), clevercloud.CreateOpts{
			Name: addonName(cur), Region: "par", ProviderID: "postgresql-addon", Plan: fake.PlanID("postgresql-addon", "dev"),
			Options: clevercloud.Options{Version: "17", Encryption: "false"},
		})
		Expect(err).NotTo(HaveOccurred())
		startManager()
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(statusString(get(cr), "addon")).To(Equal(pre.ID))
		Expect(addonsNamed(addonName(cur))).To(HaveLen(1))
		Expect(events(get(cr))).To(ContainElement("Normal AddonAdopted"))
	})

	It("looks a brand-new resource up by name only once an earlier pass may have created its add-on", func() {
		ns := newNamespace()
		calls := countCalls(ns)
		// The first create fails with a 500 after which Clever Cloud may or may not have acted:
		// the next pass must look the name up before creating again.
		failRoutes(ns, "POST /v2/organisations/{ownerId}/addons")
		cr := sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(func() int { return calls.route("POST /v2/organisations/{ownerId}/addons") }).Should(BeNumerically(">=", 1))
		Expect(calls.route("GET /v2/organisations/{ownerId}/addons")).To(BeZero(), "no lookup on the very first pass")
		clearOwnerFault(ns)
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(calls.route("GET /v2/organisations/{ownerId}/addons")).To(BeNumerically(">=", 1), "looked up before creating again")
		Expect(addonsNamed(addonName(get(cr)))).To(HaveLen(1))
	})

	It("restarting the operator mid-provisioning creates no duplicate add-on", func() {
		ns := newNamespace()
		calls := countCalls(ns)
		ownerFault(ns, fakeapi.OwnerFault{Latency: 300 * time.Millisecond})
		var crs []*unstructured.Unstructured
		for _, f := range []string{"api_v1_postgresql.yaml", "api_v1_redis.yaml", "api_v1_mysql.yaml", "api_v1_mongodb.yaml"} {
			cr := sample(f, ns)
			Expect(k8s.Create(ctx, cr)).To(Succeed())
			crs = append(crs, cr)
		}
		// Stop while creates are in flight, then start again.
		Eventually(func() int { return calls.matching("POST") }).Should(BeNumerically(">=", 1))
		stopManager()
		startManager()
		clearOwnerFault(ns)
		for _, cr := range crs {
			Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
			Expect(addonsNamed(addonName(get(cr)))).To(HaveLen(1), cr.GetKind())
		}
	})
})

var _ = Describe("API failures", func() {
	ctx := context.Background()

	It("reports InvalidCredentials when a namespace's credentials are rejected, on that namespace only", func() {
		ns := newNamespace()
		bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "clever-operator", Namespace: ns},
			StringData: map[string]string{"config": "[api]\ntoken = \"wrong\"\nsecret = \"wrong\"\n"}}
		Expect(k8s.Create(ctx, bad)).To(Succeed())
		cr := sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("False/InvalidCredentials"))
		Expect(condition(get(cr), "Stalled")).To(Equal("True/InvalidCredentials"))
		Expect(events(get(cr))).To(ContainElement("Warning InvalidCredentials"))
		msg := conditionMessage(get(cr), "Ready")
		Expect(msg).NotTo(ContainSubstring("wrong"), "no credential in status")

		other := sample("api_v1_redis.yaml", newNamespace())
		Expect(k8s.Create(ctx, other)).To(Succeed())
		Eventually(readyOf(other)).Should(Equal("True/Provisioned"))

		// Fixing the override Secret recovers the resource.
		fixed := bad.DeepCopy()
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(bad), fixed)).To(Succeed())
		fixed.Data = map[string][]byte{"config": []byte("[api]\ntoken = \"" + creds.Token + "\"\nsecret = \"" + creds.Secret + "\"\n")}
		Expect(k8s.Update(ctx, fixed)).To(Succeed())
		touch(cr)
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
	})

	It("keeps a Ready resource Ready through an outage at its refresh, reporting Synced=False", func() {
		ns := newNamespace()
		cr := sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		// The env read fails (the refresh's call); few enough failures that the client's
		// circuit, shared with the other specs, stays closed.
		failRoutes(ns, "GET /v2/organisations/{ownerId}/addons/{addonId}/env")
		annotate(cr, map[string]string{"api.clever-cloud.com/reconcile-requested-at": "outage"})
		Eventually(func() string { return condition(get(cr), "Synced") }, 20*time.Second).Should(Equal("False/ApiUnavailable"))
		Expect(readyOf(cr)()).To(Equal("True/Provisioned"), "Ready does not flap on a transient failure")
		Expect(conditionMessage(get(cr), "Synced")).To(ContainSubstring("refreshing"))
		// Cleared at once, before the client's circuit (shared with the other specs) opens; the
		// engine's own retry then succeeds and drops the condition.
		clearOwnerFault(ns)
		Expect(events(cr)).To(ContainElement("Warning ApiUnavailable"))
		Eventually(func() string { return condition(get(cr), "Synced") }, 30*time.Second).Should(BeEmpty())
		Expect(readyOf(cr)()).To(Equal("True/Provisioned"))
	})

	It("reports ApiUnavailable on 5xx, backs off, and recovers", func() {
		ns := newNamespace()
		failRoutes(ns, "POST /v2/organisations/{ownerId}/addons")
		cr := sample("api_v1_mongodb.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("False/ApiUnavailable"))
		Expect(condition(get(cr), "Stalled")).To(Equal(""), "transient: not stalled")
		calls := countCalls(ns)
		time.Sleep(3 * time.Second)
		Expect(calls.matching("POST")).To(BeNumerically("<=", 6), "exponential backoff, not a hot loop")
		Expect(addonsNamed(addonName(get(cr)))).To(BeEmpty())
		clearOwnerFault(ns)
		Eventually(readyOf(cr), 60*time.Second).Should(Equal("True/Provisioned"))
		Expect(addonsNamed(addonName(get(cr)))).To(HaveLen(1))
	})

	It("reports a malformed organisation as InvalidSpec without any call, and an API 404 (unknown organisation) as ApiError", func() {
		ns := newNamespace()
		cr := sample("api_v1_redis.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, "nobody", "spec", "organisation")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("False/InvalidSpec"))
		Expect(condition(get(cr), "Stalled")).To(Equal("True/InvalidSpec"))
		Expect(fake.CountsByOwner()).NotTo(HaveKey("nobody"))

		// An organisation the API does not know answers 404 on every route.
		ownerFault(ns, fakeapi.OwnerFault{Status: 404, Message: "organisation not found"})
		cr2 := sample("api_v1_redis.yaml", ns)
		cr2.SetName("unknown-org")
		Expect(k8s.Create(ctx, cr2)).To(Succeed())
		Eventually(readyOf(cr2)).Should(Equal("False/ApiError"))
		Expect(conditionMessage(get(cr2), "Ready")).To(ContainSubstring("404"))
		// Clean up so their retries do not skew other specs' call counts; neither deletion is
		// blocked (nothing can exist in a malformed or unknown organisation).
		for _, u := range []*unstructured.Unstructured{cr, cr2} {
			Expect(k8s.Delete(ctx, get(u))).To(Succeed())
			Eventually(func() *unstructured.Unstructured { return get(u) }).Should(BeNil())
		}
	})

	It("reports PlanNotFound with the available plans, as a terminal condition", func() {
		ns := newNamespace()
		cr := sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, "huge", "spec", "instance", "plan")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("False/PlanNotFound"))
		Expect(conditionMessage(get(cr), "Ready")).To(ContainSubstring("xs_sml"))
		Expect(condition(get(cr), "Stalled")).To(Equal("True/PlanNotFound"))
	})

	It("lets a resource whose add-on cannot be deleted go with the escape-hatch annotation, saying what was left", func() {
		ns := newNamespace()
		cr := sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		id := statusString(get(cr), "addon")
		failRoutes(ns, "DELETE /v2/organisations/{ownerId}/addons/{addonId}")
		Expect(k8s.Delete(ctx, get(cr))).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("False/DeleteFailed"))
		Expect(conditionMessage(get(cr), "Ready")).To(ContainSubstring("skip-deprovision"))
		cur := get(cr)
		cur.SetAnnotations(map[string]string{"api.clever-cloud.com/skip-deprovision": "true"})
		update(cur)
		Eventually(func() *unstructured.Unstructured { return get(cr) }).Should(BeNil())
		Expect(addonsNamed(addonName(cur))).To(HaveLen(1), "left behind on purpose")
		Expect(addonsNamed(addonName(cur))[0].ID).To(Equal(id))
		Eventually(func() []string { return eventsByName(ns, cr.GetName()) }).Should(ContainElement("Warning AddonLeftBehind"))
	})
})

// touch changes an annotation so the engine reconciles again.
func touch(u *unstructured.Unstructured) {
	cur := get(u)
	ann := cur.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["test/touched"] = time.Now().Format(time.RFC3339Nano)
	cur.SetAnnotations(ann)
	update(cur)
}

func eventsByName(ns, name string) []string {
	list := &corev1.EventList{}
	Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name {
			out = append(out, e.Type+" "+e.Reason)
		}
	}
	return out
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
