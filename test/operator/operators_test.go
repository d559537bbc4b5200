package operator_test

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

// Issue #13 §2: Keycloak, Metabase, Matomo and Otoroshi serve their URLs and initial
// credentials at v4 only (the fake's default, as the real API today: their v2 env is empty).

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
		kc := suite.Sample("api_v1_keycloak.yaml", ns)
		Expect(k8s.Create(ctx, kc)).To(Succeed())
		Eventually(suite.ReadyOf(kc), 30*time.Second).Should(Equal("True/Provisioned"))
		cur := suite.Get(kc)
		Expect(fake.Env(kube.StatusString(cur, "addon"))).To(BeEmpty(), "the real API of today publishes nothing at v2 for Keycloak")
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

	It("refreshes with one call per period: v4 and the v2 env in turn, a change at v2 published", func() {
		ns := suite.NewNamespace()
		fastRefresh(ns)
		DeferCleanup(func() { mgr.Stop(); startManager() })
		kc := ownSample("api_v1_keycloak.yaml", ns)
		Expect(k8s.Create(ctx, kc)).To(Succeed())
		Eventually(suite.ReadyOf(kc), 30*time.Second).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(kc), "addon")
		url := kube.SecretData(suite.Secret(ns, "keycloak-secrets"))["CC_KEYCLOAK_URL"]
		Expect(url).NotTo(BeEmpty())

		// A variable Clever Cloud adds at v2 reaches the Secret (the v2 turn); what v4 serves
		// stays (taken from what was published, not read again in that turn).
		calls := suite.CountCalls(ns)
		Expect(fake.SetEnv(id, []fakeapi.Variable{{Name: "EXTRA_V2", Value: "from-v2"}})).To(Succeed())
		Eventually(func() map[string]string { return kube.SecretData(suite.Secret(ns, "keycloak-secrets")) }, 30*time.Second).
			Should(HaveKeyWithValue("EXTRA_V2", "from-v2"))
		data := kube.SecretData(suite.Secret(ns, "keycloak-secrets"))
		Expect(data).To(HaveKeyWithValue("CC_KEYCLOAK_URL", url))
		Expect(data["CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"]).NotTo(BeEmpty())

		// Refreshes alternate a read of the add-on with one credentials read (v4 or v2, not
		// both): as many credentials reads as add-on reads, give or take the one in flight
		// (reading both would make about twice as many: 6 or more for 4 add-on reads).
		Eventually(func() int { return calls.Route("GET /v2/organisations/{ownerId}/addons/{addonId}") }, 45*time.Second).Should(BeNumerically(">=", 4))
		addonReads := calls.Route("GET /v2/organisations/{ownerId}/addons/{addonId}")
		v4 := calls.Route("GET /v4/addon-providers/addon-keycloak/addons/{realId}")
		v2 := calls.Route("GET /v2/organisations/{ownerId}/addons/{addonId}/env")
		GinkgoWriter.Printf("refresh reads: add-on %d, v4 %d, v2 env %d; by route %v\n", addonReads, v4, v2, fake.CountsFor(suite.OrgOf(ns)))
		Expect(v4).To(BeNumerically(">=", 1))
		Expect(v2).To(BeNumerically(">=", 1))
		Expect(v4+v2).To(BeNumerically("<=", addonReads+1), "one credentials read per refresh turn")
		Expect(kube.SecretData(suite.Secret(ns, "keycloak-secrets"))).To(HaveKeyWithValue("CC_KEYCLOAK_URL", url))
		Expect(suite.ReadyOf(kc)()).To(Equal("True/Provisioned"))
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
