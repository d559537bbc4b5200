package operator_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
)

// secretReads counts the operator's GETs of single Secrets, by namespace and name (every
// manager the suite starts goes through it); a spec reads those of its own namespace.
var secretReads = &readLog{byName: map[string]int{}}

type readLog struct {
	mu     sync.Mutex
	byName map[string]int // namespace/name -> GETs
}

func (r *readLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return kube.RoundTripFunc(func(req *http.Request) (*http.Response, error) {
		// /api/v1/namespaces/<ns>/secrets/<name>
		if req.Method == http.MethodGet {
			if p := strings.Split(strings.Trim(req.URL.Path, "/"), "/"); len(p) == 6 && p[0] == "api" && p[2] == "namespaces" && p[4] == "secrets" {
				r.mu.Lock()
				r.byName[p[3]+"/"+p[5]]++
				r.mu.Unlock()
			}
		}
		return rt.RoundTrip(req)
	})
}

// in returns the GETs of the Secrets of namespace ns so far, by name.
func (r *readLog) in(ns string) map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.byName {
		if n, name, _ := strings.Cut(k, "/"); n == ns {
			out[name] = v
		}
	}
	return out
}

// Issue #17: the Helm side reads its releases through an index of the operator's release
// Secrets (GETs by name, not LISTs through every Secret of the namespace). The index lists
// only release Secrets labelled as the operator's: the operator labels what it writes, and at
// start-up adopts those an earlier version wrote without the label.
var _ = Describe("Helm release Secrets", func() {
	ctx := context.Background()
	const managedBy = "api.clever-cloud.com/helm-release"

	releases := func(ns string) []corev1.Secret {
		GinkgoHelper()
		l := &corev1.SecretList{}
		Expect(k8s.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"})).To(Succeed())
		return l.Items
	}
	highest := func(ns string) func() int {
		return func() int {
			top := 0
			for _, s := range releases(ns) {
				v, _ := strconv.Atoi(s.Labels["version"])
				top = max(top, v)
			}
			return top
		}
	}

	// The reconciles that follow an install, and every reconcile that changes nothing, read the
	// release from the records this process wrote (while the index lists them at the version
	// written) and its published Secrets from the cache: only the install's check that the
	// Secrets do not exist yet reads them from kube-apiserver.
	It("are not read back from kube-apiserver by the reconciles that follow their writes", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_mysql.yaml", ns) // a published Secret and a Service Binding one
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(releases(ns)).To(HaveLen(1))
		record := releases(ns)[0].Name
		time.Sleep(time.Second)
		before := secretReads.in(ns)
		// Three changes that change nothing rendered: each one is a Helm reconcile (no
		// predicate on the resource's events) that reads the release, dry-runs and checks
		// the published Secrets for drift.
		for i := range 3 {
			patch := []byte(`{"metadata":{"annotations":{"test.clever-operator.io/poke":"` + strconv.Itoa(i) + `"}}}`)
			Expect(k8s.Patch(ctx, suite.Get(cr), client.RawPatch(types.MergePatchType, patch))).To(Succeed())
			time.Sleep(500 * time.Millisecond)
		}
		time.Sleep(time.Second)
		after := secretReads.in(ns)
		for _, name := range []string{record, cr.GetName() + "-secrets", cr.GetName() + "-secrets-binding"} {
			Expect(after[name]-before[name]).To(BeZero(), "GETs of %s by reconciles that changed nothing", name)
		}
		Expect(before[record]).To(BeNumerically("<=", 1), "GETs of the release record until Ready (none unless the index was behind)")
		Expect(suite.ReadyOf(cr)()).To(Equal("True/Provisioned"))
	})

	It("are labelled as the operator's; an earlier version's are adopted at start and upgraded from", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		rels := releases(ns)
		Expect(rels).To(HaveLen(1))
		Expect(rels[0].Labels).To(HaveKeyWithValue(managedBy, "clever-operator"))
		Expect(rels[0].Labels).To(HaveKeyWithValue("version", "1"))

		// As an earlier version left it: no label of ours on the release Secret.
		mgr.Stop()
		rel := rels[0].DeepCopy()
		delete(rel.Labels, managedBy)
		Expect(k8s.Update(ctx, rel)).To(Succeed())
		startManager()
		Eventually(func() map[string]string {
			s := &corev1.Secret{}
			Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: rel.Name}, s)).To(Succeed())
			return s.Labels
		}).Should(HaveKeyWithValue(managedBy, "clever-operator"))

		// A change of the rendered Secret upgrades the adopted release (revision 2), read
		// through the index: no install over it, no failure.
		patch := []byte(`{"spec":{"secret":{"labels":{"team":"blue"}}}}`)
		Expect(k8s.Patch(ctx, suite.Get(cr), client.RawPatch(types.MergePatchType, patch))).To(Succeed())
		Eventually(func() map[string]string { return suite.Secret(ns, cr.GetName()+"-secrets").Labels }, 30*time.Second).
			Should(HaveKeyWithValue("team", "blue"))
		Eventually(highest(ns)).Should(Equal(2))
		Consistently(suite.ReadyOf(cr), 2*time.Second).Should(Equal("True/Provisioned"))
		for _, s := range releases(ns) {
			Expect(s.Labels).To(HaveKeyWithValue(managedBy, "clever-operator"), s.Name)
		}
		for _, t := range []string{"ReleaseFailed", "Irreconcilable"} {
			Expect(kube.Condition(suite.Get(cr), t)).NotTo(HavePrefix("True"), t)
		}

		// The same while the operator runs (a backup of an earlier version restored after it
		// started; a fresh process, which never wrote this release): the index does not list
		// the release, so Helm installs; its record collides with revision 1, the release's
		// Secrets are labelled, and the next reconcile upgrades from the latest revision.
		mgr.Stop()
		startManager()
		rels = releases(ns)
		for i := range rels {
			delete(rels[i].Labels, managedBy)
			Expect(k8s.Update(ctx, &rels[i])).To(Succeed())
		}
		patch = []byte(`{"spec":{"secret":{"labels":{"team":"green"}}}}`)
		Expect(k8s.Patch(ctx, suite.Get(cr), client.RawPatch(types.MergePatchType, patch))).To(Succeed())
		Eventually(func() map[string]string { return suite.Secret(ns, cr.GetName()+"-secrets").Labels }, 30*time.Second).
			Should(HaveKeyWithValue("team", "green"))
		Eventually(func() []string {
			var unlabelled []string
			for _, s := range releases(ns) {
				if s.Labels[managedBy] != "clever-operator" {
					unlabelled = append(unlabelled, s.Name)
				}
			}
			return unlabelled
		}).Should(BeEmpty())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(highest(ns)()).To(BeNumerically(">=", 2))

		// Deleting the resource uninstalls the release: no release Secret left.
		Expect(k8s.Delete(ctx, suite.Get(cr))).To(Succeed())
		Eventually(func() bool { return suite.Get(cr) == nil }, 60*time.Second).Should(BeTrue())
		Eventually(func() []corev1.Secret { return releases(ns) }).Should(BeEmpty())
	})
})
