package operator_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/test/kube"
)

var _ = Describe("updates through Clever Cloud migrations", func() {
	ctx := context.Background()

	It("changing the plan runs one migration to completion, keeps Ready, and publishes the new credentials", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(cr), "addon")
		oldPassword := kube.SecretData(suite.Secret(ns, "postgresql-secrets"))["POSTGRESQL_ADDON_PASSWORD"]
		Expect(oldPassword).NotTo(BeEmpty())

		cur := suite.Get(cr)
		Expect(unstructured.SetNestedField(cur.Object, "xs_sml", "spec", "instance", "plan")).To(Succeed())
		suite.Update(cur)
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Migrating") }).Should(Equal("True/Migrating"))
		Expect(suite.ReadyOf(cr)()).To(Equal("True/Provisioned"), "the old add-on keeps serving")
		Expect(kube.ConditionMessage(suite.Get(cr), "Migrating")).To(ContainSubstring("migration_"))

		Eventually(func() string { return kube.Condition(suite.Get(cr), "Migrating") }, 60*time.Second).Should(Equal("False/Migrated"))
		Expect(fake.Migrations(id)).To(HaveLen(1), "exactly one migration")
		Eventually(func() string {
			return kube.SecretData(suite.Secret(ns, "postgresql-secrets"))["POSTGRESQL_ADDON_PASSWORD"]
		}).ShouldNot(Equal(oldPassword))
		Expect(kube.StatusString(suite.Get(cr), "plan")).To(Equal(fake.PlanID("postgresql-addon", "xs_sml")))
		Expect(addonsNamed(addonName(cur))[0].Plan.ID).To(Equal(fake.PlanID("postgresql-addon", "xs_sml")))
		Eventually(func() []string { return suite.EventsByName(ns, "", cr.GetName()) }).Should(ContainElements("Normal MigrationStarted", "Normal MigrationSucceeded"))
		og, _, _ := unstructured.NestedInt64(suite.Get(cr).Object, "status", "observedGeneration")
		Expect(og).To(Equal(suite.Get(cr).GetGeneration()))
	})

	It("upgrades the version; a failing migration is reported with Clever Cloud's message and not retried in a loop", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_mysql.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, int64(80), "spec", "options", "version")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(cr), "addon")
		Expect(kube.StatusString(suite.Get(cr), "version")).To(Equal("8.0"))

		fake.FailNextMigrations(1, "disk full on target cluster")
		cur := suite.Get(cr)
		Expect(unstructured.SetNestedField(cur.Object, int64(84), "spec", "options", "version")).To(Succeed())
		suite.Update(cur)
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Migrating") }, 60*time.Second).Should(Equal("False/MigrationFailed"))
		Expect(kube.ConditionMessage(suite.Get(cr), "Migrating")).To(ContainSubstring("disk full on target cluster"))
		Expect(suite.ReadyOf(cr)()).To(Equal("True/Provisioned"))
		Eventually(func() []string { return suite.EventsByName(ns, "", cr.GetName()) }).Should(ContainElement("Warning MigrationFailed"))
		Consistently(func() int { return len(fake.Migrations(id)) }, 3*time.Second).Should(Equal(1), "no retry loop")
		Expect(kube.StatusString(suite.Get(cr), "version")).To(Equal("8.0"))
	})

	It("rejects changes Clever Cloud cannot make, at the API server", func() {
		ns := suite.NewNamespace()
		pg := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		es := suite.Sample("api_v1_elasticsearch.yaml", ns)
		Expect(k8s.Create(ctx, es)).To(Succeed())
		mb := suite.Sample("api_v1_metabase.yaml", ns)
		Expect(k8s.Create(ctx, mb)).To(Succeed())
		cases := []struct {
			obj   *unstructured.Unstructured
			value any
			path  []string
			words string
		}{
			{pg, true, []string{"spec", "options", "encryption"}, "encryption is set when the add-on is created"},
			{pg, int64(16), []string{"spec", "options", "version"}, "cannot go down"},
			{es, int64(9), []string{"spec", "options", "version"}, "cannot change"},
			{mb, "rbx", []string{"spec", "instance", "region"}, "region is immutable"},
		}
		for _, c := range cases {
			// Retried only on write conflicts with the operator's own status writes.
			Eventually(func() string {
				cur := suite.Get(c.obj)
				Expect(unstructured.SetNestedField(cur.Object, c.value, c.path...)).To(Succeed())
				err := k8s.Update(ctx, cur)
				if err == nil {
					return "accepted"
				}
				return err.Error()
			}).Should(ContainSubstring(c.words), "%v", c.path)
		}
		// A PostgreSQL region change is allowed: Clever Cloud migrates it.
		Eventually(func() error {
			cur := suite.Get(pg)
			Expect(unstructured.SetNestedField(cur.Object, "rbx", "spec", "instance", "region")).To(Succeed())
			return k8s.Update(ctx, cur)
		}).Should(Succeed())
	})
})
