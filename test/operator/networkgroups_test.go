package operator_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

// Network Groups (#18 §3): a NetworkGroup resource makes a group at Clever Cloud; an add-on
// joins the groups of its spec.networkGroups (by resource name or group id) and publishes
// its private host name; leaving, deleting and what cannot be joined are reported.
var _ = Describe("network groups", func() {
	ctx := context.Background()
	const (
		addMember    = "POST /v4/networkgroups/organisations/{ownerId}/networkgroups/{ngId}/members"
		removeMember = "DELETE /v4/networkgroups/organisations/{ownerId}/networkgroups/{ngId}/members/{memberId}"
		deleteGroup  = "DELETE /v4/networkgroups/organisations/{ownerId}/networkgroups/{ngId}"
	)
	membersOf := func(org, id string) []string {
		var out []string
		for _, g := range fake.NetworkGroups(org) {
			if g.ID == id {
				for _, m := range g.Members {
					out = append(out, m.ID)
				}
			}
		}
		return out
	}
	secretData := func(ns, name string) func() map[string]string {
		return func() map[string]string { return kube.SecretData(suite.Secret(ns, name)) }
	}

	It("creates a group, joins an add-on to it by name and by id, publishes its private host, leaves it and deletes both", func() {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		// Clever Cloud creates groups and members a moment after it is asked, as every client
		// polls for.
		fake.SetNetworkGroupDelay(org, 1500*time.Millisecond)
		calls := suite.CountCalls(ns)

		ng := suite.Sample("api_v1alpha1_networkgroup.yaml", ns)
		rd := suite.Sample("api_v1_redis.yaml", ns) // a dedicated plan
		Expect(unstructured.SetNestedStringSlice(rd.Object, []string{"private"}, "spec", "networkGroups")).To(Succeed())
		// Both at once, as `kubectl apply -f dir/` does: the add-on waits for the group.
		Expect(k8s.Create(ctx, rd)).To(Succeed())
		Expect(k8s.Create(ctx, ng)).To(Succeed())

		Eventually(suite.ReadyOf(ng), 30*time.Second).Should(Equal("True/Available"))
		id := kube.StatusString(suite.Get(ng), "id")
		Expect(id).To(MatchRegexp(`^ng_[0-9a-f-]{36}$`))
		groups := fake.NetworkGroups(org)
		Expect(groups).To(HaveLen(1), "one group, though the first reads answered 404")
		Expect(groups[0].ID).To(Equal(id))
		Expect(groups[0].Label).To(Equal(ns + "/private"))
		Expect(groups[0].Description).To(Equal("Databases reachable from the team's applications only"))
		Expect(groups[0].Tags).To(Equal([]string{"kubernetes"}))

		Eventually(suite.ReadyOf(rd), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(kube.Condition(suite.Get(rd), "NetworkGroups")).To(Equal("True/Joined"))
		live := suite.Get(rd)
		real := kube.StatusString(live, "addon")
		Expect(real).NotTo(BeEmpty())
		mships, _, _ := unstructured.NestedSlice(live.Object, "status", "networkGroups")
		Expect(mships).To(HaveLen(1))
		m := mships[0].(map[string]any)
		member := m["member"].(string)
		Expect(member).To(HavePrefix("redis_"), "the add-on's real id is its member id")
		host := member + ".m." + id + ".cc-ng.cloud"
		Expect(m).To(Equal(map[string]any{"ref": "private", "id": id, "member": member, "privateHost": host}))
		Expect(membersOf(org, id)).To(Equal([]string{member}))
		Expect(fake.NetworkGroups(org)[0].Members[0].Label).To(Equal(ns + "/redis"))
		Expect(calls.Route(addMember)).To(Equal(1), "asked once, then waited for")

		// The Helm side renders the Secret from what the engine published, a moment later.
		Eventually(secretData(ns, "redis-secrets"), 20*time.Second).Should(And(HaveKeyWithValue("REDIS_PRIVATE_HOST", host), HaveKey("REDIS_HOST")))
		// The group lists its member (the add-on woke it).
		Eventually(func() []any {
			v, _, _ := unstructured.NestedSlice(suite.Get(ng).Object, "status", "members")
			return v
		}, 20*time.Second).Should(ContainElement(HaveKeyWithValue("id", member)))
		Eventually(suite.EventsOf(rd)).Should(ContainElement("Normal NetworkGroupJoined"))

		// Leaving: the entry goes, the member goes, the key goes.
		suite.Mutate(rd, func(live *unstructured.Unstructured) {
			unstructured.RemoveNestedField(live.Object, "spec", "networkGroups")
		})
		Eventually(func() []string { return membersOf(org, id) }, 20*time.Second).Should(BeEmpty())
		Eventually(secretData(ns, "redis-secrets"), 20*time.Second).ShouldNot(HaveKey("REDIS_PRIVATE_HOST"))
		Eventually(func() string { return kube.Condition(suite.Get(rd), "NetworkGroups") }).Should(BeEmpty())
		_, found, _ := unstructured.NestedSlice(suite.Get(rd).Object, "status", "networkGroups")
		Expect(found).To(BeFalse())
		Expect(suite.ReadyOf(rd)()).To(Equal("True/Provisioned"))
		Eventually(suite.EventsOf(rd)).Should(ContainElement("Normal NetworkGroupLeft"))

		// Joining by id, a group made elsewhere (here, the same one).
		suite.Mutate(rd, func(live *unstructured.Unstructured) {
			Expect(unstructured.SetNestedStringSlice(live.Object, []string{id}, "spec", "networkGroups")).To(Succeed())
		})
		Eventually(func() string { return kube.Condition(suite.Get(rd), "NetworkGroups") }, 30*time.Second).Should(Equal("True/Joined"))
		Eventually(secretData(ns, "redis-secrets"), 20*time.Second).Should(HaveKeyWithValue("REDIS_PRIVATE_HOST", host))
		Expect(membersOf(org, id)).To(Equal([]string{member}))

		// Deleting the add-on leaves the group first; deleting the group deletes it.
		left := calls.Route(removeMember)
		Expect(k8s.Delete(ctx, rd)).To(Succeed())
		Eventually(func() bool { return suite.Get(rd) == nil }, 30*time.Second).Should(BeTrue())
		Expect(calls.Route(removeMember)).To(Equal(left + 1))
		Expect(k8s.Delete(ctx, ng)).To(Succeed())
		Eventually(func() bool { return suite.Get(ng) == nil }, 30*time.Second).Should(BeTrue())
		Expect(fake.NetworkGroups(org)).To(BeEmpty())
		Expect(calls.Route(deleteGroup)).To(Equal(1))
	})

	It("says what cannot be joined, publishes the credentials anyway, and joins once the group appears", func() {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		calls := suite.CountCalls(ns)

		// The shared dev plan: refused before any membership call.
		pg := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedStringSlice(pg.Object, []string{"private"}, "spec", "networkGroups")).To(Succeed())
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(suite.ReadyOf(pg), 30*time.Second).Should(Equal("False/NetworkGroupsNotSupported"))
		Expect(kube.ConditionMessage(suite.Get(pg), "Ready")).To(ContainSubstring("dev plan"))
		Expect(kube.Condition(suite.Get(pg), "Stalled")).To(HavePrefix("True"))
		Eventually(secretData(ns, "postgresql-secrets"), 20*time.Second).Should(HaveKey("POSTGRESQL_ADDON_HOST"))
		Expect(suite.Secret(ns, "postgresql-secrets").Data).NotTo(HaveKey("POSTGRESQL_ADDON_PRIVATE_HOST"))

		// A group that does not exist yet: NetworkGroupNotFound, until it is created.
		rd := suite.Sample("api_v1_redis.yaml", ns)
		Expect(unstructured.SetNestedStringSlice(rd.Object, []string{"later"}, "spec", "networkGroups")).To(Succeed())
		Expect(k8s.Create(ctx, rd)).To(Succeed())
		Eventually(suite.ReadyOf(rd), 30*time.Second).Should(Equal("False/NetworkGroupNotFound"))
		Expect(kube.ConditionMessage(suite.Get(rd), "Ready")).To(ContainSubstring("NetworkGroup later does not exist in namespace " + ns))
		Eventually(secretData(ns, "redis-secrets"), 20*time.Second).Should(HaveKey("REDIS_HOST"))
		Expect(calls.Route(addMember)).To(BeZero())

		// A group id no NetworkGroup of the namespace records (whether it exists or is another
		// team's): refused before any call about it, as every reference by id
		// (credentials.MayReference) without the credentials' binding grant.
		es := suite.Sample("api_v1_mysql.yaml", ns)
		missing := "ng_00000000-0000-4000-8000-000000000000"
		Expect(unstructured.SetNestedStringSlice(es.Object, []string{missing}, "spec", "networkGroups")).To(Succeed())
		Expect(k8s.Create(ctx, es)).To(Succeed())
		Eventually(suite.ReadyOf(es), 30*time.Second).Should(Equal("False/BindingNotAllowed"))
		Expect(kube.ConditionMessage(suite.Get(es), "Ready")).To(And(ContainSubstring(missing), ContainSubstring("namespace "+ns), ContainSubstring("spec.binding")))
		Expect(calls.Matching("/networkgroups/{ngId}")).To(BeZero(), "no call about any group yet")

		// The NetworkGroup appears: the waiting add-on joins without any change of its own.
		ng := suite.Sample("api_v1alpha1_networkgroup.yaml", ns)
		ng.SetName("later")
		Expect(k8s.Create(ctx, ng)).To(Succeed())
		Eventually(suite.ReadyOf(rd), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(kube.Condition(suite.Get(rd), "NetworkGroups")).To(Equal("True/Joined"))
		Eventually(secretData(ns, "redis-secrets"), 20*time.Second).Should(HaveKey("REDIS_PRIVATE_HOST"))
		Expect(calls.Route(addMember)).To(Equal(1))

		for _, u := range []*unstructured.Unstructured{pg, rd, es, ng} {
			Expect(k8s.Delete(ctx, u)).To(Succeed())
		}
		for _, u := range []*unstructured.Unstructured{pg, rd, es, ng} {
			Eventually(func() bool { return suite.Get(u) == nil }, 30*time.Second).Should(BeTrue())
		}
		Expect(fake.NetworkGroups(org)).To(BeEmpty())
	})

	It("keeps a group under deletionPolicy Orphan, makes again one deleted outside, and refuses changes Clever Cloud cannot make", func() {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		ng := suite.Sample("api_v1alpha1_networkgroup.yaml", ns)
		Expect(k8s.Create(ctx, ng)).To(Succeed())
		Eventually(suite.ReadyOf(ng), 30*time.Second).Should(Equal("True/Available"))
		id := kube.StatusString(suite.Get(ng), "id")

		// Immutable: the API has no update of a group.
		live := suite.Get(ng)
		Expect(unstructured.SetNestedField(live.Object, "renamed", "spec", "label")).To(Succeed())
		err := k8s.Update(ctx, live)
		Expect(err).To(MatchError(ContainSubstring("immutable")))

		// Deleted in the console: made again, with the same id, and said.
		Expect(fake.DeleteNetworkGroupOutOfBand(org, id)).To(BeTrue())
		suite.Annotate(ng, map[string]string{"api.clever-cloud.com/reconcile-requested-at": time.Now().Format(time.RFC3339Nano)})
		Eventually(func() []fakeapi.NetworkGroupView { return fake.NetworkGroups(org) }, 30*time.Second).Should(HaveLen(1))
		Expect(fake.NetworkGroups(org)[0].ID).To(Equal(id))
		Eventually(suite.EventsOf(ng)).Should(ContainElement("Warning NetworkGroupMissing"))
		Eventually(suite.ReadyOf(ng), 30*time.Second).Should(Equal("True/Available"))

		suite.Mutate(ng, func(live *unstructured.Unstructured) {
			Expect(unstructured.SetNestedField(live.Object, "Orphan", "spec", "deletionPolicy")).To(Succeed())
		})
		Expect(k8s.Delete(ctx, ng)).To(Succeed())
		Eventually(func() bool { return suite.Get(ng) == nil }, 30*time.Second).Should(BeTrue())
		Expect(fake.NetworkGroups(org)).To(HaveLen(1), "kept at Clever Cloud")
		Expect(fake.DeleteNetworkGroupOutOfBand(org, id)).To(BeTrue())
	})
})
