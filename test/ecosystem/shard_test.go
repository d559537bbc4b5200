package ecosystem

import (
	"context"
	"fmt"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
)

const createRoute = "POST /v2/organisations/{ownerId}/addons"

var _ = Describe("two operator instances with disjoint selectors", func() {
	ctx := context.Background()

	It("are both leader-elected, each on its own lease", func() {
		for _, in := range []*instance{shardA, shardB} {
			Eventually(in.Elected()).Should(BeClosed(), "instance %s is elected", in.name)
			lease := &coordinationv1.Lease{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: in.lease}, lease)).To(Succeed())
			Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
		}
		// The default lease is nobody's: both would have fought over it.
		err := k8s.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: "clever-operator.api.clever-cloud.com"}, &coordinationv1.Lease{})
		Expect(client.IgnoreNotFound(err)).To(Succeed())
		Expect(err).To(HaveOccurred(), "no instance uses the default lease")
	})

	It("split 100 resources: each provisioned exactly once, by its own instance, none left un-Ready", func() {
		const n = 100
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		baseA, baseB := fake.CountsForToken(credsA.Token)[createRoute], fake.CountsForToken(credsB.Token)[createRoute]
		shardOf := map[string]string{} // namespace/name -> a or b
		var all []*unstructured.Unstructured
		for i := range n {
			shard := []string{"a", "b"}[i%2]
			u := sample("api_v1_redis.yaml", ns, fmt.Sprintf("r%03d", i), shard)
			create(u)
			shardOf[ns+"/"+u.GetName()] = shard
			all = append(all, u)
		}
		notReady := func() []string {
			var out []string
			for _, u := range all {
				if r := kube.Condition(suite.Get(u), "Ready"); r != "True/Provisioned" {
					out = append(out, u.GetName()+" "+r)
				}
			}
			return out
		}
		Eventually(notReady, "5m", "1s").Should(BeEmpty())

		// Exactly one add-on per resource at Clever Cloud, named after it: no duplicate.
		addons := fake.Addons(org)
		byName := map[string]int{}
		for i := range addons {
			a := &addons[i]
			byName[a.AddonName()]++
		}
		Expect(addons).To(HaveLen(n))
		for _, u := range all {
			cur := suite.Live(u)
			name := "kubernetes::Redis::" + string(cur.GetUID())
			Expect(byName[name]).To(Equal(1), "one add-on for %s", cur.GetName())
		}

		// Each instance created its half with its own credentials: no resource twice, none by
		// the wrong instance.
		Expect(fake.CountsForToken(credsA.Token)[createRoute] - baseA).To(Equal(n / 2))
		Expect(fake.CountsForToken(credsB.Token)[createRoute] - baseB).To(Equal(n / 2))

		// Each instance wrote to its own share only (finalizers, status: the engine's and
		// Helm's), and to every resource of it.
		for _, in := range []*instance{shardA, shardB} {
			var foreign []string
			mine := 0
			for key := range in.writes.touched() {
				shard, ok := shardOf[key]
				if !ok {
					continue // another spec's namespace
				}
				if shard != in.name {
					foreign = append(foreign, key)
				} else {
					mine++
				}
			}
			sort.Strings(foreign)
			Expect(foreign).To(BeEmpty(), "instance %s wrote to the other instance's resources", in.name)
			Expect(mine).To(Equal(n/2), "instance %s wrote to each of its resources", in.name)
		}
		// Each instance's cache holds its share only (so its credentials wake-ups, metrics and
		// reads never see the other's).
		for _, in := range []*instance{shardA, shardB} {
			cached := &unstructured.UnstructuredList{}
			cached.SetAPIVersion("api.clever-cloud.com/v1")
			cached.SetKind("RedisList")
			Expect(in.GetCache().List(ctx, cached, client.InNamespace(ns))).To(Succeed())
			Expect(cached.Items).To(HaveLen(n / 2))
			for _, item := range cached.Items {
				Expect(item.GetLabels()).To(HaveKeyWithValue("shard", in.name), "instance %s caches %s", in.name, item.GetName())
			}
		}
		// Both sides of each instance ran on its share only: every resource has its Secret,
		// rendered by Helm, and the Helm conditions.
		for _, u := range all[:10] {
			Expect(kube.Condition(suite.Get(u), "Deployed")).To(HavePrefix("True/"))
			Expect(suite.Secret(ns, u.GetName()+"-secrets")).NotTo(BeNil())
		}
	})

	It("hands a resource over when its label moves it to the other instance, with no new add-on", func() {
		ns := suite.NewNamespace()
		u := ready(ns, "mover")
		id := kube.StatusString(suite.Get(u), "addon")
		baseB := fake.CountsForToken(credsB.Token)
		key := ns + "/" + u.GetName()
		before := shardA.writes.touched()[key]
		Expect(before).To(BeNumerically(">", 0))

		suite.Mutate(u, func(live *unstructured.Unstructured) { live.SetLabels(map[string]string{"shard": "b"}) })
		// b takes it: a spec change is now handled by b (a migration with b's credentials).
		setPlan(u, "m_mono")
		Eventually(condition(u, "Migrating"), "60s").Should(MatchRegexp("^(True/Migrating|False/Migrated)$"))
		Expect(kube.StatusString(suite.Get(u), "addon")).To(Equal(id), "the same add-on")
		afterB := fake.CountsForToken(credsB.Token)
		Expect(afterB[createRoute]-baseB[createRoute]).To(BeZero(), "no new add-on")
		migrations := 0
		for route, c := range afterB {
			if strings.HasPrefix(route, "POST ") && strings.Contains(route, "migrations") {
				migrations += c - baseB[route]
			}
		}
		Expect(migrations).To(Equal(1), "b started the migration")
		Expect(shardB.writes.touched()[key]).To(BeNumerically(">", 0), "b writes to it")
		// A pass a had already queued when the label moved may still finish in the handover
		// window (its Helm side's reconcile reads the object it was woken for); once a's count
		// has settled, a writes nothing more to the resource.
		settled := -1
		Eventually(func() bool {
			n := shardA.writes.touched()[key]
			same := n == settled
			settled = n
			return same
		}, "15s", "1s").Should(BeTrue(), "a's writes settle")
		Consistently(func() int { return shardA.writes.touched()[key] }, "2s").Should(Equal(settled), "a no longer writes to it")
	})
})
