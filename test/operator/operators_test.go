package operator_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

// Issue #13 §2: Keycloak, Metabase, Matomo and Otoroshi serve their URLs and initial
// credentials at v4 only (the fake's default, as the real API today: their v2 env is empty).
// The operator reads their v4 answer alone, and their v2 env only for an add-on whose v4
// answer lacks a key its Secret needs (issue #46).

const (
	envRoute = "GET /v2/organisations/{ownerId}/addons/{addonId}/env"
	kcRoute  = "GET /v4/addon-providers/addon-keycloak/addons/{realId}"
)

// realIDOf returns the realId of the resource's add-on at the fake.
func realIDOf(u *unstructured.Unstructured) string {
	GinkgoHelper()
	id := kube.StatusString(suite.Get(u), "addon")
	for _, a := range fake.Addons(u.Object["spec"].(map[string]any)["organisation"].(string)) {
		if a.ID == id {
			return a.RealID
		}
	}
	Fail("no add-on " + id + " at the fake")
	return ""
}

func v4Info(u *unstructured.Unstructured) map[string]any {
	GinkgoHelper()
	info, ok := fake.OperatorAddon(realIDOf(u))
	Expect(ok).To(BeTrue(), "the fake serves the add-on at v4")
	return info
}

func strOf(m map[string]any, path ...string) string {
	for i, p := range path {
		v, ok := m[p]
		if !ok {
			return ""
		}
		if i == len(path)-1 {
			s, _ := v.(string)
			return s
		}
		m, _ = v.(map[string]any)
	}
	return ""
}

var _ = Describe("operator add-ons at v4", func() {
	ctx := context.Background()

	It("fills a Keycloak's Secret from v4 (URL, admin user and password) although its v2 env is empty, and shows version, access URL and available versions in status", func() {
		ns := suite.NewNamespace()
		calls := suite.CountCalls(ns)
		kc := suite.Sample("api_v1_keycloak.yaml", ns)
		Expect(k8s.Create(ctx, kc)).To(Succeed())
		Eventually(suite.ReadyOf(kc), 30*time.Second).Should(Equal("True/Provisioned"))
		cur := suite.Get(kc)
		Expect(fake.Env(kube.StatusString(cur, "addon"))).To(BeEmpty(), "the real API of today publishes nothing at v2 for Keycloak")
		Expect(calls.Route(envRoute)).To(BeZero(), "create → Ready reads no v2 env")
		Expect(calls.Route(kcRoute)).To(BeNumerically(">=", 1))
		info := v4Info(kc)
		url := strOf(info, "accessUrl")
		Expect(url).NotTo(BeEmpty())
		data := kube.SecretData(suite.Secret(ns, "keycloak-secrets"))
		Expect(data).To(HaveKeyWithValue("CC_KEYCLOAK_URL", url))
		Expect(data).To(HaveKeyWithValue("CC_KEYCLOAK_ADMIN_URL", strings.TrimRight(url, "/")+"/admin"))
		Expect(data).To(HaveKeyWithValue("CC_KEYCLOAK_ADMIN", strOf(info, "initialCredentials", "user")))
		Expect(data).To(HaveKeyWithValue("CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD", strOf(info, "initialCredentials", "password")))
		Expect(data["CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"]).NotTo(BeEmpty())
		Expect(data).To(HaveKeyWithValue("CC_KEYCLOAK_JAVA_APPID", strOf(info, "resources", "entrypoint")))
		Expect(kube.StatusString(cur, "url")).To(Equal(url))
		Expect(kube.StatusString(cur, "admin_url")).To(Equal(strings.TrimRight(url, "/") + "/admin"))
		Expect(kube.StatusString(cur, "accessUrl")).To(Equal(url))
		Expect(kube.StatusString(cur, "version")).To(Equal(strOf(info, "version")))
		avail, _, _ := unstructured.NestedStringSlice(cur.Object, "status", "availableVersions")
		Expect(avail).NotTo(BeEmpty())
		Expect(avail).To(ContainElement(strOf(info, "version")))
		// The password is in the Secret, never in status.
		Expect(strings.Contains(toJSON(cur.Object["status"]), data["CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"])).To(BeFalse())
	})

	It("refreshes with one call per period: the v4 answer, never the v2 env", func() {
		ns := suite.NewNamespace()
		fastRefresh(ns)
		DeferCleanup(func() { mgr.Stop(); startManager() })
		kc := ownSample("api_v1_keycloak.yaml", ns)
		Expect(k8s.Create(ctx, kc)).To(Succeed())
		Eventually(suite.ReadyOf(kc), 30*time.Second).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(kc), "addon")
		url := kube.SecretData(suite.Secret(ns, "keycloak-secrets"))["CC_KEYCLOAK_URL"]
		Expect(url).NotTo(BeEmpty())

		// A variable at v2 is never read while v4 serves every key the Secret needs.
		calls := suite.CountCalls(ns)
		Expect(fake.SetEnv(id, []fakeapi.Variable{{Name: "EXTRA_V2", Value: "from-v2"}})).To(Succeed())

		// Refreshes alternate a read of the add-on with a read of its v4 answer: as many v4
		// reads as add-on reads, give or take the one in flight.
		Eventually(func() int { return calls.Route("GET /v2/organisations/{ownerId}/addons/{addonId}") }, 45*time.Second).Should(BeNumerically(">=", 4))
		addonReads := calls.Route("GET /v2/organisations/{ownerId}/addons/{addonId}")
		v4, v2 := calls.Route(kcRoute), calls.Route(envRoute)
		GinkgoWriter.Printf("refresh reads: add-on %d, v4 %d, v2 env %d; by route %v\n", addonReads, v4, v2, fake.CountsFor(suite.OrgOf(ns)))
		Expect(v2).To(BeZero(), "no v2 env read")
		Expect(v4).To(And(BeNumerically(">=", addonReads-1), BeNumerically("<=", addonReads+1)), "one v4 read per credentials turn")
		data := kube.SecretData(suite.Secret(ns, "keycloak-secrets"))
		Expect(data).To(HaveKeyWithValue("CC_KEYCLOAK_URL", url))
		Expect(data).NotTo(HaveKey("EXTRA_V2"))
		Expect(suite.ReadyOf(kc)()).To(Equal("True/Provisioned"))
	})

	It("says it waits for Clever Cloud while v4 answers 404, without reading the v2 env, and publishes once v4 answers", func() {
		own, _ := ownFake(fakeapi.Options{Seed: 461})
		var creating atomic.Bool
		creating.Store(true)
		ns := suite.NewNamespace()
		pointNamespaceAt(ns, keycloakV4(own, func(info map[string]any) map[string]any {
			if creating.Load() {
				return nil
			}
			return info
		}).URL)
		calls := kube.CountCalls(own, suite.OrgOf(ns))
		kc := suite.Sample("api_v1_keycloak.yaml", ns)
		Expect(k8s.Create(ctx, kc)).To(Succeed())
		DeferCleanup(func() {
			Expect(k8s.Delete(ctx, kc)).To(Succeed())
			Eventually(func() bool { return suite.Get(kc) == nil }, 30*time.Second).Should(BeTrue())
		})
		Eventually(func() string { return kube.Condition(suite.Get(kc), "AddonReady") }, 20*time.Second).Should(Equal("False/Provisioning"))
		msg := kube.ConditionMessage(suite.Get(kc), "AddonReady")
		Expect(msg).To(HavePrefix("waiting for Clever Cloud to provision add-on " + kube.StatusString(suite.Get(kc), "addon")))
		Expect(msg).To(ContainSubstring("GET /v4/addon-providers/addon-keycloak/addons/"))
		Expect(msg).To(HaveSuffix("does not answer yet)"))
		Eventually(func() int { return calls.Route(kcRoute) }, 10*time.Second).Should(BeNumerically(">=", 2))
		Expect(calls.Route(envRoute)).To(BeZero(), "no v2 env read while v4 answers 404")
		Expect(suite.Secret(ns, "keycloak-secrets")).To(BeNil())

		creating.Store(false)
		Eventually(suite.ReadyOf(kc), 30*time.Second).Should(Equal("True/Provisioned"))
		addons := own.Addons(suite.OrgOf(ns))
		Expect(addons).To(HaveLen(1))
		info, ok := own.OperatorAddon(addons[0].RealID)
		Expect(ok).To(BeTrue())
		Expect(kube.SecretData(suite.Secret(ns, "keycloak-secrets"))).To(HaveKeyWithValue("CC_KEYCLOAK_URL", strOf(info, "accessUrl")))
		Expect(calls.Route(envRoute)).To(BeZero())
	})

	It("fills the Secret of an add-on still on the old v2 env (LegacyOperatorEnv): from v4 when it serves every key, from the v2 env where v4 lacks one", func() {
		legacy, srv := ownFake(fakeapi.Options{LegacyOperatorEnv: true, Seed: 46})
		full, part := suite.NewNamespace(), suite.NewNamespace()
		pointNamespaceAt(full, srv.URL)
		pointNamespaceAt(part, keycloakV4(legacy, func(info map[string]any) map[string]any {
			delete(info, "initialCredentials") // as for an add-on still on the old v2 env
			return info
		}).URL)
		fullCalls, partCalls := kube.CountCalls(legacy, suite.OrgOf(full)), kube.CountCalls(legacy, suite.OrgOf(part))
		kcs := []*unstructured.Unstructured{suite.Sample("api_v1_keycloak.yaml", full), suite.Sample("api_v1_keycloak.yaml", part)}
		for _, kc := range kcs {
			Expect(k8s.Create(ctx, kc)).To(Succeed())
		}
		for _, kc := range kcs {
			Eventually(suite.ReadyOf(kc), 30*time.Second).Should(Equal("True/Provisioned"), kc.GetNamespace())
		}
		DeferCleanup(func() {
			for _, kc := range kcs {
				Expect(k8s.Delete(ctx, kc)).To(Succeed())
			}
			for _, kc := range kcs {
				Eventually(func() bool { return suite.Get(kc) == nil }, 30*time.Second).Should(BeTrue())
			}
		})
		envOf := func(kc *unstructured.Unstructured) map[string]string {
			id := kube.StatusString(suite.Get(kc), "addon")
			env := envMap(legacy.Env(id))
			Expect(env).To(HaveKey("CC_KEYCLOAK_ADMIN"), "the fake serves the old v2 env")
			return env
		}

		// v4 serves every key: the v2 env is not read.
		env := envOf(kcs[0])
		data := kube.SecretData(suite.Secret(full, "keycloak-secrets"))
		Expect(data).To(HaveKeyWithValue("CC_KEYCLOAK_ADMIN", env["CC_KEYCLOAK_ADMIN"]))
		Expect(data).To(HaveKeyWithValue("CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD", env["CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"]))
		Expect(fullCalls.Route(envRoute)).To(BeZero())

		// v4 lacks the initial credentials: they come from the v2 env, with its other variables.
		env = envOf(kcs[1])
		data = kube.SecretData(suite.Secret(part, "keycloak-secrets"))
		Expect(data).To(HaveKeyWithValue("CC_KEYCLOAK_ADMIN", env["CC_KEYCLOAK_ADMIN"]))
		Expect(data).To(HaveKeyWithValue("CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD", env["CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"]))
		Expect(data["CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"]).NotTo(BeEmpty())
		for k := range env {
			Expect(data).To(HaveKey(k))
		}
		Expect(partCalls.Route(envRoute)).To(BeNumerically(">=", 1))
	})

	It("fills Otoroshi's URL, management API keys and admin login from v4, and Metabase's and Matomo's URLs", func() {
		ns := suite.NewNamespace()
		oto := suite.Sample("api_v1_otoroshi.yaml", ns)
		mb := suite.Sample("api_v1_metabase.yaml", ns)
		mt := suite.Sample("api_v1_matomo.yaml", ns)
		for _, u := range []*unstructured.Unstructured{oto, mb, mt} {
			Expect(k8s.Create(ctx, u)).To(Succeed())
		}
		for _, u := range []*unstructured.Unstructured{oto, mb, mt} {
			Eventually(suite.ReadyOf(u), 30*time.Second).Should(Equal("True/Provisioned"), u.GetKind())
		}
		Expect(fake.CountsFor(suite.OrgOf(ns))).NotTo(HaveKey(envRoute), "create → Ready reads no v2 env")
		info := v4Info(oto)
		data := kube.SecretData(suite.Secret(ns, "otoroshi-secrets"))
		Expect(data).To(HaveKeyWithValue("CC_OTOROSHI_URL", strOf(info, "accessUrl")))
		Expect(data).To(HaveKeyWithValue("CC_OTOROSHI_API_URL", strOf(info, "api", "url")))
		Expect(data).To(HaveKeyWithValue("CC_OTOROSHI_API_CLIENT_ID", strOf(info, "api", "user")))
		Expect(data).To(HaveKeyWithValue("CC_OTOROSHI_API_CLIENT_SECRET", strOf(info, "api", "secret")))
		Expect(data).To(HaveKeyWithValue("CC_OTOROSHI_INITIAL_ADMIN_LOGIN", strOf(info, "initialCredentials", "user")))
		Expect(data).To(HaveKeyWithValue("CC_OTOROSHI_INITIAL_ADMIN_PASSWORD", strOf(info, "initialCredentials", "password")))
		Expect(data["CC_OTOROSHI_API_CLIENT_SECRET"]).NotTo(BeEmpty())
		Expect(kube.SecretData(suite.Secret(ns, "metabase-secrets"))).To(HaveKeyWithValue("METABASE_URL", strOf(v4Info(mb), "accessUrl")))
		Expect(kube.SecretData(suite.Secret(ns, "matomo-secrets"))).To(HaveKeyWithValue("MATOMO_URL", strOf(v4Info(mt), "accessUrl")))
		Expect(kube.StatusString(suite.Get(mb), "url")).To(Equal(strOf(v4Info(mb), "accessUrl")))
	})

	It("creates at spec.version, upgrades through version/update once per change, and names the offered versions for one Clever Cloud does not offer", func() {
		ns := suite.NewNamespace()
		kc := suite.Sample("api_v1_keycloak.yaml", ns)
		versions := fake.ProviderVersions("keycloak")
		Expect(len(versions)).To(BeNumerically(">=", 2))
		Expect(unstructured.SetNestedField(kc.Object, versions[0], "spec", "version")).To(Succeed())
		Expect(k8s.Create(ctx, kc)).To(Succeed())
		Eventually(suite.ReadyOf(kc), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(fake.CreateOptions(kube.StatusString(suite.Get(kc), "addon"))).To(HaveKeyWithValue("version", versions[0]))
		Expect(kube.StatusString(suite.Get(kc), "version")).To(Equal(versions[0]))
		realID := realIDOf(kc)

		target := versions[len(versions)-1]
		cur := suite.Get(kc)
		Expect(unstructured.SetNestedField(cur.Object, target, "spec", "version")).To(Succeed())
		suite.Update(cur)
		Eventually(func() int { return fake.OperatorCalls(realID)["version/update"] }, 20*time.Second).Should(Equal(1))
		Eventually(func() string { return kube.StatusString(suite.Get(kc), "version") }, 20*time.Second).Should(Equal(target))
		Expect(strOf(v4Info(kc), "version")).To(Equal(target))
		Eventually(func() []string { return suite.EventsByName(ns, "", kc.GetName()) }).Should(ContainElement("Normal VersionUpdated"))

		cur = suite.Get(kc)
		Expect(unstructured.SetNestedField(cur.Object, "99.0.0", "spec", "version")).To(Succeed())
		suite.Update(cur)
		Eventually(func() string { return kube.Condition(suite.Get(kc), "VersionUpdate") }, 20*time.Second).Should(Equal("False/VersionNotAvailable"))
		msg := kube.ConditionMessage(suite.Get(kc), "VersionUpdate")
		for _, v := range versions {
			Expect(msg).To(ContainSubstring(v), "the condition names the versions Clever Cloud offers")
		}
		Consistently(func() int { return fake.OperatorCalls(realID)["version/update"] }, 2*time.Second).Should(Equal(1))
		Expect(suite.ReadyOf(kc)()).To(Equal("True/Provisioned"), "the add-on keeps serving")
	})

	It("reboots and rebuilds once per annotation value, recorded in status", func() {
		ns := suite.NewNamespace()
		mb := suite.Sample("api_v1_metabase.yaml", ns)
		Expect(k8s.Create(ctx, mb)).To(Succeed())
		Eventually(suite.ReadyOf(mb), 30*time.Second).Should(Equal("True/Provisioned"))
		realID := realIDOf(mb)

		cur := suite.Get(mb)
		cur.SetAnnotations(map[string]string{"api.clever-cloud.com/reboot-requested-at": "r1"})
		suite.Update(cur)
		Eventually(func() string { return kube.StatusString(suite.Get(mb), "lastHandledRebootAt") }, 20*time.Second).Should(Equal("r1"))
		Expect(fake.OperatorCalls(realID)["reboot"]).To(Equal(1))

		cur = suite.Get(mb)
		cur.SetAnnotations(map[string]string{"api.clever-cloud.com/reboot-requested-at": "r1", "api.clever-cloud.com/rebuild-requested-at": "b1"})
		suite.Update(cur)
		Eventually(func() string { return kube.StatusString(suite.Get(mb), "lastHandledRebuildAt") }, 20*time.Second).Should(Equal("b1"))
		Consistently(func() map[string]int { return fake.OperatorCalls(realID) }, 2*time.Second).Should(And(HaveKeyWithValue("reboot", 1), HaveKeyWithValue("rebuild", 1)))
		Eventually(func() []string { return suite.EventsByName(ns, "", mb.GetName()) }).Should(ContainElements("Normal AddonRebooted", "Normal AddonRebuilt"))
	})
})

func toJSON(v any) string {
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

// keycloakV4 serves f with the v4 answers of its Keycloak add-ons changed by change: nil
// answers 404, as Clever Cloud does for an add-on it is still creating (closed when the spec
// ends). The request reaches f first, so f counts it.
func keycloakV4(f *fakeapi.Server, change func(info map[string]any) map[string]any) *httptest.Server {
	GinkgoHelper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		realID, ok := strings.CutPrefix(r.URL.Path, "/v4/addon-providers/addon-keycloak/addons/")
		if r.Method != http.MethodGet || !ok || strings.Contains(realID, "/") {
			f.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		f.ServeHTTP(rec, r)
		var info map[string]any
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &info) != nil {
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if info = change(info); info == nil {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"id":4040,"message":"addon not found","type":"error"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(info)
	}))
	DeferCleanup(srv.Close)
	return srv
}
