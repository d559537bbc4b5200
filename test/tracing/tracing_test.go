package tracing_test

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/test/kube"
)

// routes are the client's route templates: the only url.template values a span may carry.
var routes = map[string]bool{
	clevercloud.RouteSelf: true, clevercloud.RouteOrganisations: true, clevercloud.RouteProviders: true,
	clevercloud.RouteAddons: true, clevercloud.RouteAddon: true, clevercloud.RouteAddonEnv: true,
	clevercloud.RouteConfigProviderEnv: true, clevercloud.RouteMigrations: true, clevercloud.RouteMigration: true,
	clevercloud.RouteProviderInfo: true, clevercloud.RouteCellarRenew: true,
	clevercloud.RouteOrgPriceSystem: true, clevercloud.RouteListPriceSystem: true,
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// tree is what the spans say about one resource: the engine's passes, the API calls under
// each, and the Helm actions.
type tree struct {
	passes []tracetest.SpanStub
	calls  map[trace.SpanID][]tracetest.SpanStub
	helm   []tracetest.SpanStub
}

func (t tree) allCalls() []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, p := range t.passes {
		out = append(out, t.calls[p.SpanContext.SpanID()]...)
	}
	return out
}

// callsNamed are the API call spans named name (method and route template) under any pass.
func (t tree) callsNamed(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, c := range t.allCalls() {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

func (t tree) helmNamed(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, h := range t.helm {
		if h.Name == name {
			out = append(out, h)
		}
	}
	return out
}

func (t tree) passWith(key, value string) bool {
	for _, p := range t.passes {
		if attr(p, key) == value {
			return true
		}
	}
	return false
}

func spansAbout(u *unstructured.Unstructured) tree {
	t := tree{calls: map[trace.SpanID][]tracetest.SpanStub{}}
	all := spans.GetSpans()
	for _, s := range all {
		if attr(s, "clever.resource.kind") != u.GetKind() || attr(s, "k8s.namespace.name") != u.GetNamespace() || attr(s, "clever.resource.name") != u.GetName() {
			continue
		}
		switch {
		case s.Name == "reconcile "+u.GetKind():
			t.passes = append(t.passes, s)
		case strings.HasPrefix(s.Name, "helm "):
			t.helm = append(t.helm, s)
		}
	}
	for _, s := range all {
		for _, p := range t.passes {
			if s.Parent.SpanID() == p.SpanContext.SpanID() && s.Parent.TraceID() == p.SpanContext.TraceID() {
				t.calls[p.SpanContext.SpanID()] = append(t.calls[p.SpanContext.SpanID()], s)
			}
		}
	}
	return t
}

func create(u *unstructured.Unstructured) {
	GinkgoHelper()
	Expect(k8s.Create(context.Background(), u)).To(Succeed())
}

func deleteAndWait(u *unstructured.Unstructured) {
	GinkgoHelper()
	Expect(k8s.Delete(context.Background(), u)).To(Succeed())
	Eventually(func() bool {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(u), u.DeepCopy())
		return apierrors.IsNotFound(err)
	}).Should(BeTrue())
}

var _ = Describe("tracing", func() {
	It("traces a resource's creation and deletion: pass → API calls with route and status; Helm actions linked to the pass", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		create(cr)
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		live := suite.Get(cr)
		addonID := kube.StatusString(live, "addon")
		Expect(addonID).NotTo(BeEmpty())

		var t tree
		Eventually(func(g Gomega) {
			t = spansAbout(cr)
			g.Expect(t.passWith("clever.reconcile.reason", "Provisioned")).To(BeTrue(), "a pass ended Provisioned")
			g.Expect(t.helmNamed("helm install")).NotTo(BeEmpty())
		}).Should(Succeed())

		By("the passes: one span each, with the resource, the mode and the outcome")
		for _, p := range t.passes {
			Expect(p.Parent.IsValid()).To(BeFalse(), "a pass is a root span")
			Expect(attr(p, "clever.reconcile.outcome")).To(BeElementOf("success", "error"))
			Expect(attr(p, "clever.reconcile.mode")).To(BeElementOf("full", "refresh", "up-to-date", "wait", "delete"))
		}
		Expect(t.passWith("clever.reconcile.mode", "full")).To(BeTrue())

		By("the API calls: children of the pass that made them, named by method and route template, with the status code")
		creates := t.callsNamed("POST " + clevercloud.RouteAddons)
		Expect(creates).To(HaveLen(1), "one create, under a pass")
		Expect(attr(creates[0], "http.response.status_code")).To(MatchRegexp(`^2\d\d$`))
		Expect(attr(creates[0], "url.template")).To(Equal(clevercloud.RouteAddons))
		Expect(attr(creates[0], "http.request.method")).To(Equal("POST"))
		Expect(attr(creates[0], "server.address")).To(Equal("127.0.0.1"))
		Expect(creates[0].SpanKind).To(Equal(trace.SpanKindClient))
		envs := t.callsNamed("GET " + clevercloud.RouteAddonEnv)
		Expect(envs).NotTo(BeEmpty())
		Expect(attr(envs[len(envs)-1], "http.response.status_code")).To(Equal("200"))
		for _, c := range t.allCalls() {
			Expect(routes).To(HaveKey(attr(c, "url.template")), c.Name)
			Expect(c.Name).To(Equal(attr(c, "http.request.method") + " " + attr(c, "url.template")))
		}

		By("no span names the add-on, the organisation or a URL: route templates only")
		dump := dumpSpans(spans.GetSpans())
		Expect(dump).NotTo(ContainSubstring(addonID))
		Expect(dump).NotTo(ContainSubstring(suite.OrgOf(ns)))
		Expect(dump).NotTo(ContainSubstring(fakeSrv.URL))

		By("the Helm install: the resource and its release, linked to the engine's pass")
		passIDs := map[trace.SpanID]bool{}
		for _, p := range t.passes {
			passIDs[p.SpanContext.SpanID()] = true
		}
		install := t.helmNamed("helm install")[0]
		Expect(attr(install, "clever.helm.action")).To(Equal("install"))
		Expect(attr(install, "clever.helm.release")).To(Equal("postgresql-" + cr.GetName()))
		Expect(install.Status.Code).NotTo(Equal(codes.Error))
		Expect(install.Links).To(HaveLen(1))
		Expect(passIDs).To(HaveKey(install.Links[0].SpanContext.SpanID()), "linked to a pass over the same resource")

		By("deletion: a delete pass with the DELETE call, and the Helm uninstall")
		deleteAndWait(cr)
		Eventually(func(g Gomega) {
			t = spansAbout(cr)
			g.Expect(t.passWith("clever.reconcile.mode", "delete")).To(BeTrue())
			dels := t.callsNamed("DELETE " + clevercloud.RouteAddon)
			g.Expect(dels).NotTo(BeEmpty())
			g.Expect(attr(dels[0], "http.response.status_code")).To(MatchRegexp(`^2\d\d$`))
			g.Expect(t.helmNamed("helm uninstall")).To(HaveLen(1))
		}).Should(Succeed())
	})

	It("marks failed calls and passes as errors, with the status code, and the retries with their attempt", func() {
		ns := suite.NewNamespace()
		suite.FailRoutes(ns, "GET "+clevercloud.RouteAddonEnv)
		cr := suite.Sample("api_v1_redis.yaml", ns)
		create(cr)
		Eventually(func(g Gomega) {
			t := spansAbout(cr)
			envs := t.callsNamed("GET " + clevercloud.RouteAddonEnv)
			g.Expect(envs).NotTo(BeEmpty())
			retried := false
			for _, e := range envs {
				g.Expect(attr(e, "http.response.status_code")).To(Equal("500"))
				g.Expect(attr(e, "error.type")).To(Equal("500"))
				g.Expect(e.Status.Code).To(Equal(codes.Error))
				retried = retried || attr(e, "http.request.resend_count") != ""
			}
			g.Expect(retried).To(BeTrue(), "the GET was retried, each attempt a span")
			g.Expect(t.passWith("clever.reconcile.outcome", "error")).To(BeTrue())
			g.Expect(t.helmNamed("helm install")).To(BeEmpty(), "nothing to render yet")
		}).Should(Succeed())
		suite.ClearOwnerFault(ns)
		Eventually(suite.ReadyOf(cr), "60s").Should(Equal("True/Provisioned"))
		Eventually(func(g Gomega) {
			t := spansAbout(cr)
			g.Expect(t.passWith("clever.reconcile.reason", "Provisioned")).To(BeTrue())
			g.Expect(t.helmNamed("helm install")).To(HaveLen(1))
		}).Should(Succeed())
	})

	It("traces a ConfigProvider's variables push without its values", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_configprovider.yaml", ns)
		secret := "cp-variable-secret-5a7e91c3"
		variables = append(variables, secret)
		Expect(unstructured.SetNestedStringMap(cr.Object, map[string]string{"DB_PASSWORD": secret, "REGION": "par"}, "spec", "variables")).To(Succeed())
		create(cr)
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Eventually(func(g Gomega) {
			t := spansAbout(cr)
			puts := t.callsNamed("PUT " + clevercloud.RouteConfigProviderEnv)
			g.Expect(puts).NotTo(BeEmpty())
			g.Expect(attr(puts[0], "http.response.status_code")).To(MatchRegexp(`^2\d\d$`))
		}).Should(Succeed())
		Expect(dumpSpans(spans.GetSpans())).NotTo(ContainSubstring(secret))
	})
})
