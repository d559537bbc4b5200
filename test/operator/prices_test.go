package operator_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
)

// What each resource costs (#18 §5): status.price from the organisation's price system (or
// the list price), a kubectl column, the metric by namespace, and the event before a plan
// migration. The fake prices each plan at its catalogue price / 720 per hour, times the
// organisation's factor (SetOrgPriceFactor).
var _ = Describe("prices", func() {
	ctx := context.Background()
	const orgPriceRoute = "GET /v4/billing/organisations/{ownerId}/price-system"
	const listPriceRoute = "GET /v4/billing/price-system"

	// catalogue30Days is the fake catalogue's price of a plan (euros per 30 days).
	catalogue30Days := func(provider, slug string) float64 {
		for _, p := range fake.Providers() {
			if p.ID != provider {
				continue
			}
			for _, pl := range p.Plans {
				if pl.Slug == slug {
					return float64(pl.Price)
				}
			}
		}
		Fail("no plan " + slug)
		return 0
	}
	price := func(u *unstructured.Unstructured) map[string]string {
		m, _, _ := unstructured.NestedStringMap(suite.Get(u).Object, "status", "price")
		delete(m, "checkedAt")
		return m
	}
	priceMetric := func(ns, kind string) float64 {
		families, err := registry.Gather()
		Expect(err).NotTo(HaveOccurred())
		for _, f := range families {
			if f.GetName() != "clever_operator_ready_resources_price_per_hour" {
				continue
			}
			for _, m := range f.GetMetric() {
				l := map[string]string{}
				for _, p := range m.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				if l["resource_namespace"] == ns && l["kind"] == kind && l["currency"] == "EUR" {
					return m.GetGauge().GetValue()
				}
			}
		}
		return -1
	}
	postgres := func(ns, name, plan string) *unstructured.Unstructured {
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		cr.SetName(name)
		Expect(unstructured.SetNestedField(cr.Object, plan, "spec", "instance", "plan")).To(Succeed())
		Expect(unstructured.SetNestedField(cr.Object, name+"-secrets", "spec", "secret", "name")).To(Succeed())
		return cr
	}

	It("shows each resource's price from its organisation's price system, read once for many resources, and sums the Ready ones by namespace", func() {
		ns := suite.NewNamespace()
		fake.SetOrgPriceFactor(suite.OrgOf(ns), 0.8) // this organisation has a 20 % discount
		calls := suite.CountCalls(ns)
		a, b := postgres(ns, "pg-a", "xs_sml"), postgres(ns, "pg-b", "xs_sml")
		Expect(k8s.Create(ctx, a)).To(Succeed())
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(suite.ReadyOf(a)).Should(Equal("True/Provisioned"))
		Eventually(suite.ReadyOf(b)).Should(Equal("True/Provisioned"))

		want30 := catalogue30Days("postgresql-addon", "xs_sml") * 0.8
		Eventually(func() map[string]string { return price(a) }).Should(HaveKeyWithValue("per30Days", fmt.Sprintf("%.2f", want30)))
		p := price(a)
		Expect(p).To(HaveKeyWithValue("currency", "EUR"))
		Expect(p).To(HaveKeyWithValue("source", "Organisation"))
		Expect(p).To(HaveKeyWithValue("zone", "par"))
		Expect(p).To(HaveKeyWithValue("plan", fake.PlanID("postgresql-addon", "xs_sml")))
		Expect(p).NotTo(HaveKey("reason"))
		hourly, err := strconv.ParseFloat(p["hourly"], 64)
		Expect(err).NotTo(HaveOccurred())
		Expect(hourly * 720).To(BeNumerically("~", want30, 0.001))
		Eventually(func() map[string]string { return price(b) }).Should(Equal(p))
		Expect(calls.Route(orgPriceRoute)).To(Equal(1), "one read of the price system answers for both resources")

		// The metric: what this namespace's Ready PostgreSQL databases cost per hour.
		Eventually(func() float64 { return priceMetric(ns, "PostgreSql") }).Should(BeNumerically("~", 2*hourly, 1e-9))

		// kubectl get shows it.
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: "postgresqls.api.clever-cloud.com"}, crd)).To(Succeed())
		var cols []string
		for _, v := range crd.Spec.Versions {
			for _, c := range v.AdditionalPrinterColumns {
				cols = append(cols, v.Name+":"+c.Name+"="+c.JSONPath)
			}
		}
		Expect(cols).To(ContainElement("v1:Price/30d=.status.price.per30Days"))

		// A deleted resource no longer counts.
		Expect(k8s.Delete(ctx, suite.Get(b))).To(Succeed())
		Eventually(suite.GetOf(b)).Should(BeNil())
		Eventually(func() float64 { return priceMetric(ns, "PostgreSql") }).Should(BeNumerically("~", hourly, 1e-9))
	})

	It("falls back to the list price for an organisation without a price system, and says why a usage-billed add-on has none", func() {
		ns := suite.NewNamespace()
		fake.SetOrgPriceFactor(suite.OrgOf(ns), 0) // the organisation's price system answers 404
		calls := suite.CountCalls(ns)
		listBefore := fake.Counts()[listPriceRoute] // the list route names no organisation: counted globally
		pg := postgres(ns, "pg", "xs_sml")
		cellar := suite.Sample("api_v1_cellar.yaml", ns)
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Expect(k8s.Create(ctx, cellar)).To(Succeed())
		Eventually(suite.ReadyOf(pg)).Should(Equal("True/Provisioned"))
		Eventually(suite.ReadyOf(cellar)).Should(Equal("True/Provisioned"))

		Eventually(func() map[string]string { return price(pg) }).Should(HaveKeyWithValue("source", "List"))
		Expect(price(pg)).To(HaveKeyWithValue("per30Days", fmt.Sprintf("%.2f", catalogue30Days("postgresql-addon", "xs_sml"))))
		Expect(calls.Route(orgPriceRoute)).To(Equal(1))
		Expect(fake.Counts()[listPriceRoute]).To(BeNumerically(">", listBefore))

		Eventually(func() map[string]string { return price(cellar) }).Should(HaveKeyWithValue("reason", "UsageBased"))
		Expect(price(cellar)).NotTo(HaveKey("per30Days"))
	})

	It("tells the old and the new price before migrating to another plan, then shows the new one", func() {
		ns := suite.NewNamespace()
		fake.SetOrgPriceFactor(suite.OrgOf(ns), 1)
		cr := postgres(ns, "pg", "xs_sml")
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		old30 := fmt.Sprintf("%.2f", catalogue30Days("postgresql-addon", "xs_sml"))
		new30 := fmt.Sprintf("%.2f", catalogue30Days("postgresql-addon", "s_sml"))
		Eventually(func() map[string]string { return price(cr) }).Should(HaveKeyWithValue("per30Days", old30))

		cur := suite.Get(cr)
		Expect(unstructured.SetNestedField(cur.Object, "s_sml", "spec", "instance", "plan")).To(Succeed())
		suite.Update(cur)
		want := fmt.Sprintf("from xs_sml in par (%s EUR per 30 days) to s_sml in par (%s EUR per 30 days)", old30, new30)
		Eventually(func() string { return strings.Join(suite.EventMessages(cr), "\n") }).Should(ContainSubstring(want))
		Eventually(func() []string { return suite.EventsByName(ns, "", cr.GetName()) }).Should(ContainElement("Normal MigrationPrice"))

		Eventually(func() string { return kube.Condition(suite.Get(cr), "Migrating") }, 60*time.Second).Should(Equal("False/Migrated"))
		Eventually(func() map[string]string { return price(cr) }).Should(And(
			HaveKeyWithValue("per30Days", new30), HaveKeyWithValue("plan", fake.PlanID("postgresql-addon", "s_sml"))))
	})
})
