package monitoring

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

var _ = Describe("a live operator's /metrics", Ordered, func() {
	ctx := context.Background()
	var dashboardQueries, alertRuleQueries []query
	// exported is the last scrape's series names.
	var exported map[string]bool
	var lastScrape string
	var namespaces []string

	// unknownIn scrapes until every metric qs name is served (the operator's series appear as
	// it works: a histogram after its first observation), and returns what is still missing.
	unknownIn := func(qs []query) func() []string {
		return func() []string {
			text, err := scrape()
			if err != nil {
				return []string{"scrape: " + err.Error()}
			}
			lastScrape, exported = text, seriesNames(text)
			unknown, _, err := unknownMetrics(qs, exported)
			Expect(err).NotTo(HaveOccurred())
			return unknown
		}
	}

	BeforeAll(func() {
		raw, err := repoFile(dashboardFile)
		Expect(err).NotTo(HaveOccurred())
		d, err := loadDashboard(raw)
		Expect(err).NotTo(HaveOccurred())
		dashboardQueries, err = d.queries()
		Expect(err).NotTo(HaveOccurred())
		alertRuleQueries, err = alertQueries()
		Expect(err).NotTo(HaveOccurred())

		// A resource's life: created, Ready (time to Ready, API calls by route), deleted
		// (deletion duration).
		ns := suite.NewNamespace()
		namespaces = append(namespaces, ns)
		redis := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, redis)).To(Succeed())
		Eventually(suite.ReadyOf(redis)).Should(Equal("True/Provisioned"))
		Expect(k8s.Delete(ctx, redis)).To(Succeed())
		Eventually(suite.GetOf(redis)).Should(BeNil())
		// One that stays Ready: its price is in the spend series (status.price).
		kept := suite.Sample("api_v1_redis.yaml", ns)
		kept.SetName("kept")
		Expect(unstructured.SetNestedField(kept.Object, "kept-secrets", "spec", "secret", "name")).To(Succeed())
		Expect(k8s.Create(ctx, kept)).To(Succeed())
		Eventually(suite.ReadyOf(kept)).Should(Equal("True/Provisioned"))
		Eventually(func() string { lastScrape, _ = scrape(); return lastScrape }).Should(
			ContainSubstring(`clever_operator_ready_resources_price_per_hour{currency="EUR",kind="Redis",resource_namespace="` + ns + `"}`))

		// A resource whose organisation's calls all fail (500): retries, failed engine passes
		// by reason, and the circuit opening. Last, as the open circuit holds back the
		// operator's other calls.
		failing := suite.NewNamespace()
		namespaces = append(namespaces, failing)
		suite.OwnerFault(failing, fakeapi.OwnerFault{Status: 500})
		pg := suite.Sample("api_v1_postgresql.yaml", failing)
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(func() string { lastScrape, _ = scrape(); return lastScrape }).Should(And(
			ContainSubstring(`clever_operator_reconcile_errors_total{kind="PostgreSql"`),
			ContainSubstring("clevercloud_api_retries_total{"),
		))
	})

	It("serves every metric the Grafana dashboard queries", func() {
		Expect(len(dashboardQueries)).To(BeNumerically(">=", 20))
		Eventually(unknownIn(dashboardQueries)).Should(BeEmpty(), "the dashboard queries metrics the operator does not serve")
		_, checked, err := unknownMetrics(dashboardQueries, exported)
		Expect(err).NotTo(HaveOccurred())
		Expect(checked).To(BeNumerically(">=", len(dashboardQueries)), "every query names a metric")
	})

	It("serves every metric the alert rules query", func() {
		Expect(len(alertRuleQueries)).To(BeNumerically(">=", 10))
		Eventually(unknownIn(alertRuleQueries)).Should(BeEmpty(), "the alert rules query metrics the operator does not serve")
	})

	It("reports a query of a metric the operator does not serve", func() {
		Expect(exported).To(HaveKey("clevercloud_api_requests_total"))
		bad := append(append([]query{}, dashboardQueries...),
			query{where: "made-up panel", expr: `sum(rate(clever_operator_made_up_total{namespace=~"$namespace"}[$__rate_interval]))`},
			query{where: "typo panel", expr: `histogram_quantile(0.9, sum by (le) (rate(clevercloud_api_request_duration_seconds_buckets[5m])))`},
			query{where: "variable typo", expr: must(variableQueryExpr(`label_values(clever_operator_resource, kind)`))},
		)
		unknown, _, err := unknownMetrics(bad, exported)
		Expect(err).NotTo(HaveOccurred())
		Expect(unknown).To(ConsistOf(
			"made-up panel: clever_operator_made_up_total",
			"typo panel: clevercloud_api_request_duration_seconds_buckets",
			"variable typo: clever_operator_resource",
		))
	})

	It("serves the operator's own series with their labels, and no secret", func() {
		for _, series := range []string{
			`clever_operator_resources{kind="Redis",ready="True"}`,
			`clever_operator_time_to_ready_seconds_count{kind="Redis"}`,
			`clever_operator_deletion_duration_seconds_count{kind="Redis"}`,
			`clevercloud_api_requests_total{code="200",method="POST",route="/v2/organisations/{ownerId}/addons"}`,
			`clever_operator_credentials_expiry_timestamp_seconds{from="config",source="operator"}`,
			`clever_operator_backup_stale_resources{kind="PostgreSql"}`,
			"clevercloud_api_circuit_open ",
			"clevercloud_api_circuit_opens_total ",
		} {
			Expect(lastScrape).To(ContainSubstring(series))
		}
		texts := map[string]string{"/metrics": lastScrape}
		Expect(kube.Leaks(secretValues(), texts)).To(BeEmpty())
		// Routes are templates: no organisation or add-on id.
		for _, ns := range namespaces {
			Expect(lastScrape).NotTo(ContainSubstring(suite.OrgOf(ns)))
		}
		Expect(lastScrape).NotTo(ContainSubstring("addon_"))
	})
})
