package operator_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

var _ = Describe("switching from the Rust operator", func() {
	ctx := context.Background()

	It("adopts its add-on and its <name>-secrets Secret for the same resource, with no new add-on", func() {
		mgr.Stop()
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_redis.yaml", ns)
		// What the Rust operator left: its finalizer (the same as ours; it puts it on before
		// creating anything), the add-on named after the resource's uid, and the Secret owned
		// (non-controller) by the resource, without Helm metadata.
		cr.SetFinalizers([]string{"api.clever-cloud.com/redis"})
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		cur := suite.Get(cr)
		pre, err := newClient().CreateAddon(ctx, suite.OrgOf(ns), clevercloud.CreateOpts{
			Name: addonName(cur), Region: "par", ProviderID: "redis-addon", Plan: fake.PlanID("redis-addon", "s_mono"),
			Options: clevercloud.Options{Version: "7.2.4", Encryption: "false"},
		})
		Expect(err).NotTo(HaveOccurred())
		old := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "redis-secrets", Namespace: ns, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "api.clever-cloud.com/v1", Kind: "Redis", Name: cur.GetName(), UID: cur.GetUID(), BlockOwnerDeletion: ptr.To(true),
		}}}, StringData: map[string]string{"REDIS_HOST": "stale"}}
		Expect(k8s.Create(ctx, old)).To(Succeed())

		startManager()
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(kube.StatusString(suite.Get(cr), "addon")).To(Equal(pre.ID))
		Expect(addonsNamed(addonName(cur))).To(HaveLen(1))
		Eventually(func() map[string]string { return kube.SecretData(suite.Secret(ns, "redis-secrets")) }).Should(Equal(envMap(fake.Env(pre.ID))))
		Eventually(suite.EventsOf(cr)).Should(ContainElements("Normal AddonAdopted", "Normal SecretAdopted"))
	})
})

var _ = Describe("periodic refresh", func() {
	ctx := context.Background()

	It("publishes rotated credentials and recreates an add-on deleted out of band, at one call per period", func() {
		ns := suite.NewNamespace()
		fastRefresh(ns)
		defer func() { mgr.Stop(); startManager() }()
		cr := ownSample("api_v1_mysql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(cr), "addon")

		// Rotation at Clever Cloud.
		env := fake.Env(id)
		for i := range env {
			if env[i].Name == "MYSQL_ADDON_PASSWORD" {
				env[i].Value = "rotated-password-0123456789"
			}
		}
		Expect(fake.SetEnv(id, env)).To(Succeed())
		// A kind Clever Cloud backs up reads its env every third period (add-on, backups, env):
		// within about 4 s at 1 s periods, 40 s allowed for a loaded machine.
		Eventually(func() string { return kube.SecretData(suite.Secret(ns, "mysql-secrets"))["MYSQL_ADDON_PASSWORD"] }, 40*time.Second).
			Should(Equal("rotated-password-0123456789"))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Normal CredentialsUpdated"))

		// Refreshes keep reading (other specs' resources share this manager and its short
		// period, so per-resource economy is asserted by the forced-refresh spec instead).
		// Each period reads the env, the add-on or the backups (in turn), one call. Two periods
		// (3 s plus up to 10% jitter each) start after the rollout pass that follows the
		// publication, so the window allows for a loaded machine.
		calls := suite.CountCalls(ns)
		Eventually(func() int {
			return calls.Route("GET /v2/organisations/{ownerId}/addons/{addonId}/env") + calls.Route("GET /v2/organisations/{ownerId}/addons/{addonId}") +
				calls.Route(fakeapi.RouteBackups)
		}, 20*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", 2))
		Expect(addonsNamed(addonName(suite.Get(cr)))).To(HaveLen(1))

		// Deleted out of band: recreated (the Rust operator's behaviour), with a Warning.
		Expect(fake.DeleteAddonOutOfBand(suite.OrgOf(ns), id)).To(Succeed())
		Eventually(func() string { return kube.StatusString(suite.Get(cr), "addon") }, 30*time.Second).ShouldNot(Equal(id))
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Warning AddonMissing"))
		Expect(addonsNamed(addonName(suite.Get(cr)))).To(HaveLen(1))
	})
})

var _ = Describe("drift", func() {
	ctx := context.Background()

	It("reports a plan changed outside the operator within two refresh periods, without flipping Ready", func() {
		ns := suite.NewNamespace()
		fastRefresh(ns)
		defer func() { mgr.Stop(); startManager() }()
		cr := ownSample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(cr), "addon")
		// Someone migrates the add-on in the console.
		_, err := newClient().StartMigration(ctx, suite.OrgOf(ns), id, clevercloud.MigrationRequest{
			PlanID: fake.PlanID("postgresql-addon", "xs_sml"), Region: "par"})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Drifted") }, 30*time.Second).Should(Equal("True/PlanDrift"))
		Expect(kube.ConditionMessage(suite.Get(cr), "Drifted")).To(ContainSubstring("xs_sml"))
		Expect(suite.ReadyOf(cr)()).To(Equal("True/Provisioned"))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Warning PlanDrift"))
	})
})
