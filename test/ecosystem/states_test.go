package ecosystem

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	"github.com/clever-operator/clever-operator/test/kube"
)

// state is one state of a real resource, as the operator left it in the API server, with what
// Argo CD (config/argocd/health.lua) and kstatus must read from it.
type state struct {
	name string
	// make creates the resource and brings it to the state (waiting for it); it returns the
	// resource to read.
	make    func(ns string) *unstructured.Unstructured
	health  string // Argo CD health status
	message string // substring of the health message
	kstatus status.Status
}

// sample is a sample resource in ns, labelled for shard (the instance that manages it; "c":
// none).
func sample(file, ns, name, shard string) *unstructured.Unstructured {
	GinkgoHelper()
	u := suite.Sample(file, ns)
	u.SetName(name)
	u.SetLabels(map[string]string{"shard": shard})
	return u
}

func create(u *unstructured.Unstructured) {
	GinkgoHelper()
	Expect(k8s.Create(context.Background(), u)).To(Succeed())
}

func condition(u *unstructured.Unstructured, t string) func() string {
	return func() string { return kube.Condition(suite.Get(u), t) }
}

func setPlan(u *unstructured.Unstructured, plan string) {
	GinkgoHelper()
	suite.Mutate(u, func(live *unstructured.Unstructured) {
		Expect(unstructured.SetNestedField(live.Object, plan, "spec", "instance", "plan")).To(Succeed())
	})
}

// ready creates a Redis managed by instance a and waits until it is Ready.
func ready(ns, name string) *unstructured.Unstructured {
	GinkgoHelper()
	u := sample("api_v1_redis.yaml", ns, name, "a")
	create(u)
	Eventually(suite.ReadyOf(u)).Should(Equal("True/Provisioned"))
	return u
}

const pausedAnnotation = "api.clever-cloud.com/paused"

var states = []state{
	{
		name: "fresh: created, no instance has handled it yet (status defaulted to observedGeneration 0)",
		make: func(ns string) *unstructured.Unstructured {
			u := sample("api_v1_redis.yaml", ns, "fresh", "c") // no instance selects shard=c
			create(u)
			return u
		},
		health: "Progressing", message: "handle generation 1 (observed: 0)", kstatus: status.InProgressStatus,
	},
	{
		name: "generation bumped: Ready, then its spec changed and not handled yet",
		make: func(ns string) *unstructured.Unstructured {
			u := ready(ns, "bumped")
			// Out of both instances' selectors, so nobody handles the change.
			suite.Mutate(u, func(live *unstructured.Unstructured) { live.SetLabels(map[string]string{"shard": "c"}) })
			setPlan(u, "m_mono")
			Expect(suite.Get(u).GetGeneration()).To(BeEquivalentTo(2))
			return u
		},
		health: "Progressing", message: "handle generation 2 (observed: 1)", kstatus: status.InProgressStatus,
	},
	{
		name:   "Ready",
		make:   func(ns string) *unstructured.Unstructured { return ready(ns, "ready") },
		health: "Healthy", kstatus: status.CurrentStatus,
	},
	{
		name: "Stalled: an unknown plan (PlanNotFound, a human must act)",
		make: func(ns string) *unstructured.Unstructured {
			u := sample("api_v1_redis.yaml", ns, "badplan", "a")
			Expect(unstructured.SetNestedField(u.Object, "nope", "spec", "instance", "plan")).To(Succeed())
			create(u)
			Eventually(condition(u, "Stalled")).Should(Equal("True/PlanNotFound"))
			return u
		},
		health: "Degraded", message: "nope", kstatus: status.FailedStatus,
	},
	{
		name: "paused: Ready, then annotated api.clever-cloud.com/paused",
		make: func(ns string) *unstructured.Unstructured {
			u := ready(ns, "paused")
			suite.Annotate(u, map[string]string{pausedAnnotation: "true"})
			Eventually(condition(u, "Paused")).Should(Equal("True/PauseRequested"))
			Expect(suite.ReadyOf(u)()).To(Equal("True/Provisioned"))
			return u
		},
		health: "Suspended", message: "paused by the annotation", kstatus: status.CurrentStatus,
	},
	{
		name: "paused with a pending change: the plan changed while paused waits for the unpause",
		make: func(ns string) *unstructured.Unstructured {
			u := sample("api_v1_postgresql.yaml", ns, "pausedchange", "a")
			create(u)
			Eventually(suite.ReadyOf(u)).Should(Equal("True/Provisioned"))
			suite.Annotate(u, map[string]string{pausedAnnotation: "true"})
			Eventually(condition(u, "Paused")).Should(Equal("True/PauseRequested"))
			setPlan(u, "xs_sml")
			Eventually(condition(u, "Migrating")).Should(Equal("False/PauseRequested"))
			return u
		},
		health: "Suspended", message: "waits until the resource is unpaused", kstatus: status.InProgressStatus,
	},
	{
		name: "migrating: the plan of a PostgreSql changed, its Clever Cloud migration runs",
		make: func(ns string) *unstructured.Unstructured {
			u := sample("api_v1_postgresql.yaml", ns, "migrating", "a")
			create(u)
			Eventually(suite.ReadyOf(u)).Should(Equal("True/Provisioned"))
			setPlan(u, "xs_sml")
			Eventually(condition(u, "Migrating")).Should(Equal("True/Migrating"))
			Expect(suite.ReadyOf(u)()).To(Equal("True/Provisioned"), "the old add-on keeps serving")
			return u
		},
		health: "Progressing", message: "migration_", kstatus: status.InProgressStatus,
	},
}

// snippetScripts are the health checks as an argocd-cm built from the shipped snippets hands
// them to Argo CD: the wildcard entry, and the per-kind key of the resource's kind.
func snippetScripts(u *unstructured.Unstructured) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	b, err := os.ReadFile(filepath.Join("config", "argocd", "argocd-cm.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.Unmarshal(b, &cm)).To(Succeed())
	var overrides map[string]map[string]string
	Expect(yaml.Unmarshal([]byte(cm.Data["resource.customizations"]), &overrides)).To(Succeed())
	out["argocd-cm.yaml "+wildcardGVKKey] = overrides[wildcardGVKKey]["health.lua"]
	b, err = os.ReadFile(filepath.Join("config", "argocd", "argocd-cm-per-kind.yaml"))
	Expect(err).NotTo(HaveOccurred())
	cm.Data = nil
	Expect(yaml.Unmarshal(b, &cm)).To(Succeed())
	key := "resource.customizations.health." + u.GroupVersionKind().Group + "_" + u.GetKind()
	out["argocd-cm-per-kind.yaml "+key] = cm.Data[key]
	return out
}

var _ = Describe("Argo CD health and kstatus on real resources", func() {
	It("reads every state of the table as Argo CD (health.lua under gopher-lua) and kstatus must", func() {
		ns := suite.NewNamespace()
		seen := map[string]bool{}
		for _, st := range states {
			By(st.name)
			u := suite.Live(st.make(ns))
			for where, script := range snippetScripts(u) {
				Expect(script).NotTo(BeEmpty(), where)
				h, err := RunHealth(script, u.Object)
				Expect(err).NotTo(HaveOccurred(), where)
				Expect(h.Status).To(Equal(st.health), "%s, %s: %+v\nstatus: %v", st.name, where, h, u.Object["status"])
				Expect(h.Message).To(ContainSubstring(st.message), "%s, %s", st.name, where)
			}
			res, err := status.Compute(u)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Status).To(Equal(st.kstatus), "kstatus of %s: %s", st.name, res.Message)
			seen[st.health] = true
		}
		Expect(seen).To(HaveLen(4), "the table covers Healthy, Progressing, Degraded and Suspended")
	})
})
