package operator_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func kstatus(u *unstructured.Unstructured) status.Status {
	cur := suite.Get(u)
	if cur == nil {
		return status.NotFoundStatus
	}
	res, err := status.Compute(cur)
	Expect(err).NotTo(HaveOccurred())
	return res.Status
}

var _ = Describe("status for tools", func() {
	ctx := context.Background()

	It("reads InProgress while provisioning, Current when Ready, Failed on a terminal error (kstatus)", func() {
		ns := suite.NewNamespace()
		suite.OwnerFault(ns, fakeapi.OwnerFault{Latency: 400 * time.Millisecond})
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Expect(kstatus(cr)).To(Equal(status.InProgressStatus), "a brand-new resource is not Current")
		Eventually(func() status.Status { return kstatus(cr) }).Should(Equal(status.CurrentStatus))
		Expect(suite.ReadyOf(cr)()).To(Equal("True/Provisioned"))

		bad := suite.Sample("api_v1_redis.yaml", ns)
		Expect(unstructured.SetNestedField(bad.Object, "nope", "spec", "instance", "plan")).To(Succeed())
		Expect(k8s.Create(ctx, bad)).To(Succeed())
		Eventually(func() status.Status { return kstatus(bad) }).Should(Equal(status.FailedStatus))
	})

	It("reads Current while paused, InProgress while migrating and while a change waits for the unpause (kstatus)", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(func() status.Status { return kstatus(cr) }).Should(Equal(status.CurrentStatus))
		setPlan := func(plan string) {
			suite.Mutate(cr, func(live *unstructured.Unstructured) {
				Expect(unstructured.SetNestedField(live.Object, plan, "spec", "instance", "plan")).To(Succeed())
			})
		}

		// Paused (a Ready resource stays Ready): Current; a change made while paused is not
		// handled (observedGeneration stays behind): InProgress.
		suite.Annotate(cr, map[string]string{"api.clever-cloud.com/paused": "true"})
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Paused") }).Should(Equal("True/PauseRequested"))
		Expect(kstatus(cr)).To(Equal(status.CurrentStatus), "paused and Ready")
		setPlan("xs_sml")
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Migrating") }).Should(Equal("False/PauseRequested"))
		Expect(kstatus(cr)).To(Equal(status.InProgressStatus), "a change waiting for the unpause")

		// Unpaused: the migration runs (InProgress, the old add-on serving), then Current.
		suite.Annotate(cr, map[string]string{"api.clever-cloud.com/paused": ""})
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Migrating") }).Should(Equal("True/Migrating"))
		Expect(kstatus(cr)).To(Equal(status.InProgressStatus), "migrating")
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Migrating") }, 60*time.Second).Should(Equal("False/Migrated"))
		Eventually(func() status.Status { return kstatus(cr) }).Should(Equal(status.CurrentStatus))
	})

	It("shows Ready and Reason printer columns on every CRD", func() {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
		Expect(k8s.Get(ctx, client.ObjectKey{Name: "postgresqls.api.clever-cloud.com"}, crd)).To(Succeed())
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		cols, _, _ := unstructured.NestedSlice(versions[0].(map[string]any), "additionalPrinterColumns")
		var names []string
		for _, c := range cols {
			names = append(names, c.(map[string]any)["name"].(string))
		}
		Expect(names).To(ContainElements("Ready", "Reason"))
	})
})

var _ = Describe("process", func() {
	It("serves /healthz, and /readyz once the caches are synced", func() {
		probe := func(path string) int {
			resp, err := http.Get("http://" + mgr.ProbeAddr + path)
			if err != nil {
				return 0
			}
			defer resp.Body.Close()
			return resp.StatusCode
		}
		Eventually(func() int { return probe("/healthz") }).Should(Equal(http.StatusOK))
		Eventually(func() int { return probe("/readyz") }).Should(Equal(http.StatusOK))
		Expect(mgr.GetCache().WaitForCacheSync(context.Background())).To(BeTrue())
	})
})

var _ = Describe("economy", func() {
	ctx := context.Background()

	It("creates with one create and the env reads (no lookup for a new resource), and deletes with one call", func() {
		ns := suite.NewNamespace()
		calls := suite.CountCalls(ns)
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(calls.Route("GET /v2/organisations/{ownerId}/addons")).To(BeZero(), "no name lookup for a brand-new resource")
		Expect(calls.Route("POST /v2/organisations/{ownerId}/addons")).To(Equal(1))
		Expect(calls.Route("GET /v2/organisations/{ownerId}/addons/{addonId}/env")).To(BeNumerically(">=", 1))
		// The catalogue is asked for with this organisation (?orgaId=), once: then cached.
		Expect(calls.Route("GET /v2/products/addonproviders")).To(Equal(1), "catalogue read once, then cached")
		calls = suite.CountCalls(ns)
		Expect(k8s.Delete(ctx, suite.Get(cr))).To(Succeed())
		Eventually(func() *unstructured.Unstructured { return suite.Get(cr) }).Should(BeNil())
		Expect(calls.Route("DELETE /v2/organisations/{ownerId}/addons/{addonId}")).To(Equal(1), "exactly one DELETE")
	})

	It("emits one Warning per failure reason, not one per retry", func() {
		ns := suite.NewNamespace()
		calls := suite.CountCalls(ns)
		suite.FailRoutes(ns, "POST /v2/organisations/{ownerId}/addons")
		cr := suite.Sample("api_v1_mysql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("False/ApiUnavailable"))
		Eventually(func() int { return calls.Matching("POST") }).Should(BeNumerically(">=", 3))
		list := &corev1.EventList{}
		Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		warnings := 0
		for _, e := range list.Items {
			if e.Reason == "ApiUnavailable" {
				warnings += int(e.Count)
			}
		}
		Expect(warnings).To(Equal(1))
		suite.ClearOwnerFault(ns)
		Eventually(suite.ReadyOf(cr), 60*time.Second).Should(Equal("True/Provisioned"))
	})

	It("caches only the operator's Secrets, not every Secret in the cluster", func() {
		ns := suite.NewNamespace()
		other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Namespace: ns}, StringData: map[string]string{"k": "v"}}
		Expect(k8s.Create(ctx, other)).To(Succeed())
		cr := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		cached := &corev1.SecretList{}
		Expect(mgr.GetCache().List(ctx, cached, client.InNamespace(ns))).To(Succeed())
		var names []string
		for _, s := range cached.Items {
			names = append(names, s.Name)
		}
		Expect(names).To(ContainElement("redis-secrets"))
		Expect(names).NotTo(ContainElement("unrelated"))
		for _, s := range cached.Items {
			Expect(s.Name).NotTo(HavePrefix("sh.helm.release"), "Helm release blobs are not cached")
		}
	})
})

// assertNoCredentialLeak checks that no secret the suite handled appears in the operator's
// logs (highest verbosity, as capped by internal/logging), in any Event, or in the status
// (conditions and messages included) of any resource of any kind: the fake's OAuth token,
// token secret and consumer secret, every add-on environment value (except the URLs mirrored
// into status by design), every ConfigProvider variable value, and their base64 forms.
func assertNoCredentialLeak() {
	suite.ExpectNoLeak(logs.String(), suite.SecretValues(creds))
}

var _ = Describe("metrics", func() {
	It("exposes resources by Ready state, time to ready and API requests by route template", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_keycloak.yaml", ns)
		Expect(k8s.Create(context.Background(), cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		families, err := registry.Gather()
		Expect(err).NotTo(HaveOccurred())
		byName := map[string]*dto.MetricFamily{}
		for _, f := range families {
			byName[f.GetName()] = f
		}
		Expect(byName).To(HaveKey("clever_operator_resources"))
		readyKeycloaks := 0.0
		for _, m := range byName["clever_operator_resources"].GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["kind"] == "Keycloak" && labels["ready"] == "True" {
				readyKeycloaks = m.GetGauge().GetValue()
			}
		}
		Expect(readyKeycloaks).To(BeNumerically(">=", 1))
		Expect(byName).To(HaveKey("clever_operator_time_to_ready_seconds"))
		Expect(byName).To(HaveKey("clevercloud_api_requests_total"))
		for _, m := range byName["clevercloud_api_requests_total"].GetMetric() {
			for _, l := range m.GetLabel() {
				Expect(l.GetValue()).NotTo(ContainSubstring("addon_"), "route templates, not raw ids")
			}
		}
	})
})

var _ = Describe("status writes of a new resource", func() {
	// The engine's first publication and the Helm side's rendering land in one status write
	// (statusmerge.Board): every version of the resource a watcher sees either has no
	// AddonReady=True yet, or is Ready=True with status.secretName; none says "provisioned but
	// not rendered".
	It("publishes and renders in one status write", func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		dyn, err := dynamic.NewForConfig(restCfg)
		Expect(err).NotTo(HaveOccurred())
		gvr := schema.GroupVersionResource{Group: cr.GroupVersionKind().Group, Version: cr.GroupVersionKind().Version, Resource: "postgresqls"}
		w, err := dyn.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		handedToHelm := func() float64 {
			return counterValue("clever_operator_status_handoffs_total", map[string]string{"kind": "PostgreSql", "outcome": "helm"})
		}
		before := handedToHelm()
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		var seen []string
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			var addonReady, ready string
			for _, c := range statusConditions(u) {
				switch c["type"] {
				case "AddonReady":
					addonReady, _ = c["status"].(string)
				case "Ready":
					ready, _ = c["status"].(string)
				}
			}
			secret, _, _ := unstructured.NestedString(u.Object, "status", "secretName")
			seen = append(seen, u.GetResourceVersion()+": AddonReady="+addonReady+" Ready="+ready+" secretName="+secret)
			if addonReady == "True" {
				Expect(ready).To(Equal("True"), "a version with AddonReady=True but not Ready: %v", seen)
				Expect(secret).To(Equal(cr.GetName() + "-secrets"))
				Eventually(handedToHelm).Should(BeNumerically(">", before), "clever_operator_status_handoffs_total{outcome=helm} did not count it")
				return
			}
		}
		Fail("the watch ended before the resource was Ready: " + strings.Join(seen, "; "))
	})
})

var _ = Describe("status writes of a spec change", func() {
	// A spec change costs each side one status write at most: the engine's pass records the
	// generation, the Helm side's reconcile its upgrade (Deployed), each write carrying the
	// other side's part (statusmerge). Every version a watcher sees whose status differs from
	// the one before is one status write (a write that changes nothing makes no version).
	It("costs at most two status writes per change of spec.secret (labels, annotations, templates) or of the rest of the spec", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))

		dyn, err := dynamic.NewForConfig(restCfg)
		Expect(err).NotTo(HaveOccurred())
		gvr := schema.GroupVersionResource{Group: cr.GroupVersionKind().Group, Version: cr.GroupVersionKind().Version, Resource: "postgresqls"}
		start := suite.Live(cr)
		w, err := dyn.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{
			FieldSelector: "metadata.name=" + cr.GetName(), ResourceVersion: start.GetResourceVersion(),
		})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		// statusWrites counts the versions whose status differs from the one before.
		var mu sync.Mutex
		statusWrites, last := 0, start.Object["status"]
		go func() {
			defer GinkgoRecover()
			for ev := range w.ResultChan() {
				if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Modified {
					mu.Lock()
					if !equality.Semantic.DeepEqual(u.Object["status"], last) {
						statusWrites++
						last = u.Object["status"]
					}
					mu.Unlock()
				}
			}
		}()
		written := func() int {
			mu.Lock()
			defer mu.Unlock()
			return statusWrites
		}
		// quiet is true once no status was written between two of its calls, 3 s apart: the
		// Helm side's reconcile after its upgrade (woken by the Secret it rewrote) comes a
		// moment after the change shows.
		quiet := func() func() bool {
			seen := -1
			return func() bool {
				n := written()
				ok := n == seen
				seen = n
				return ok
			}
		}
		Eventually(quiet()).WithPolling(3*time.Second).WithTimeout(time.Minute).Should(BeTrue(), "settled after Ready")
		secret := cr.GetName() + "-secrets"
		for _, c := range []struct {
			name  string
			patch string
			shown func(*corev1.Secret) bool
		}{
			{"spec.secret.labels", `{"spec":{"secret":{"labels":{"team":"payments"}}}}`,
				func(s *corev1.Secret) bool { return s.Labels["team"] == "payments" }},
			{"spec.secret.annotations", `{"spec":{"secret":{"annotations":{"reloader.example/match":"true"}}}}`,
				func(s *corev1.Secret) bool { return s.Annotations["reloader.example/match"] == "true" }},
			{"spec.secret.templates", `{"spec":{"secret":{"templates":{"APP_ENV":"production"}}}}`,
				func(s *corev1.Secret) bool { return string(s.Data["APP_ENV"]) == "production" }},
			{"spec.deletionPolicy", `{"spec":{"deletionPolicy":"Delete"}}`, nil},
		} {
			before := written()
			cur := cr.DeepCopy()
			Expect(k8s.Patch(ctx, cur, client.RawPatch(types.MergePatchType, []byte(c.patch)))).To(Succeed())
			Eventually(func() bool {
				live := suite.Live(cr)
				og, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
				s := suite.Secret(ns, secret)
				return og == cur.GetGeneration() && kube.IsReady(live) && s != nil && (c.shown == nil || c.shown(s))
			}).Should(BeTrue(), "%s: handled and published", c.name)
			Eventually(quiet()).WithPolling(3*time.Second).WithTimeout(time.Minute).Should(BeTrue(), "%s: settled", c.name)
			fmt.Fprintf(GinkgoWriter, "%s: %d status writes\n", c.name, written()-before)
			Expect(written()-before).To(BeNumerically("<=", 2), "%s: status writes", c.name)
		}
	})
})

func statusConditions(u *unstructured.Unstructured) []map[string]any {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := make([]map[string]any, 0, len(raw))
	for _, c := range raw {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// counterValue reads a counter of the operator's registry (0 when the series does not exist).
func counterValue(name string, labels map[string]string) float64 {
	GinkgoHelper()
	families, err := registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
