package operator_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/test/kube"
)

// Create options users ask for (#18 §4): each typed field reaches the API under the key and in
// the form Clever Cloud's clients send it (the fake checks keys, values and plans and stores
// the options as received); none can change afterwards.
var _ = Describe("create options", func() {
	ctx := context.Background()
	const createRoute = "POST /v2/organisations/{ownerId}/addons"

	DescribeTable("each option reaches the API as the real clients send it",
		func(sample, plan string, set map[string]any, want map[string]any) {
			ns := suite.NewNamespace()
			cr := suite.Sample(sample, ns)
			if plan != "" {
				Expect(unstructured.SetNestedField(cr.Object, plan, "spec", "instance", "plan")).To(Succeed())
			}
			for field, v := range set {
				Expect(unstructured.SetNestedField(cr.Object, v, "spec", "options", field)).To(Succeed())
			}
			Expect(k8s.Create(ctx, cr)).To(Succeed())
			Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
			id := kube.StatusString(suite.Get(cr), "addon")
			got := fake.CreateOptions(id)
			for k, v := range want {
				Expect(got).To(HaveKeyWithValue(k, v), "option %s", k)
			}
		},
		Entry("PostgreSQL: direct host only, backups off, a locale (dedicated plan)", "api_v1_postgresql.yaml", "xs_sml",
			map[string]any{"directHostOnly": true, "backups": false, "locale": "fr_FR"},
			map[string]any{"direct-host-only": "true", "do-backup": "false", "locale": "fr_FR", "encryption": "false"}),
		Entry("MySQL: no binary log, direct host only", "api_v1_mysql.yaml", "",
			map[string]any{"skipLogBin": true, "directHostOnly": true, "backups": true},
			map[string]any{"skip-log-bin": "true", "direct-host-only": "true", "do-backup": "true"}),
		Entry("MongoDB: direct host only", "api_v1_mongodb.yaml", "",
			map[string]any{"directHostOnly": true},
			map[string]any{"direct-host-only": "true"}),
		Entry("Elasticsearch: plugins, comma-separated", "api_v1_elasticsearch.yaml", "",
			map[string]any{"plugins": []any{"analysis-icu", "mapper-size"}},
			map[string]any{"plugins": "analysis-icu,mapper-size", "kibana": "true", "apm": "true"}),
		Entry("Keycloak: its access domain", "api_v1_keycloak.yaml", "",
			map[string]any{"accessDomain": "auth.example.com"},
			map[string]any{"access-domain": "auth.example.com"}),
	)

	It("sends nothing for an option left out, and `false` of a dedicated-only option on a shared plan is not sent", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns) // plan dev: a shared cluster
		Expect(unstructured.SetNestedField(cr.Object, false, "spec", "options", "directHostOnly")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		got := fake.CreateOptions(kube.StatusString(suite.Get(cr), "addon"))
		Expect(got).NotTo(HaveKey("direct-host-only"))
		Expect(got).NotTo(HaveKey("do-backup"))
		Expect(got).NotTo(HaveKey("locale"))
	})

	It("refuses a dedicated-only option on a shared plan before any create, with the field named", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns) // plan dev
		Expect(unstructured.SetNestedField(cr.Object, "fr_FR", "spec", "options", "locale")).To(Succeed())
		calls := suite.CountCalls(ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/InvalidSpec"))
		Expect(kube.ConditionMessage(suite.Get(cr), "Ready")).To(And(ContainSubstring("spec.options.locale"), ContainSubstring("dedicated")))
		Expect(calls.Route(createRoute)).To(BeZero())
	})

	It("rejects an invalid value and any change once created (CEL)", func() {
		ns := suite.NewNamespace()
		bad := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedField(bad.Object, "french", "spec", "options", "locale")).To(Succeed())
		Expect(k8s.Create(ctx, bad)).To(MatchError(ContainSubstring("spec.options.locale")))
		es := suite.Sample("api_v1_elasticsearch.yaml", ns)
		Expect(unstructured.SetNestedSlice(es.Object, []any{"not-a-plugin"}, "spec", "options", "plugins")).To(Succeed())
		Expect(k8s.Create(ctx, es)).To(MatchError(ContainSubstring("spec.options.plugins")))

		cr := suite.Sample("api_v1_mysql.yaml", ns)
		Expect(unstructured.SetNestedField(cr.Object, true, "spec", "options", "skipLogBin")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		for _, change := range []func(*unstructured.Unstructured){
			func(u *unstructured.Unstructured) {
				unstructured.RemoveNestedField(u.Object, "spec", "options", "skipLogBin")
			},
			func(u *unstructured.Unstructured) {
				Expect(unstructured.SetNestedField(u.Object, false, "spec", "options", "skipLogBin")).To(Succeed())
			},
			func(u *unstructured.Unstructured) {
				Expect(unstructured.SetNestedField(u.Object, true, "spec", "options", "directHostOnly")).To(Succeed())
			},
		} {
			// Retried only on write conflicts with the operator's own writes.
			Eventually(func() string {
				cur := suite.Get(cr)
				change(cur)
				if err := k8s.Update(ctx, cur); err != nil {
					return err.Error()
				}
				return "accepted"
			}).Should(ContainSubstring("cannot change"))
		}
	})
})
