package security_test

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/test/kube"
)

// Every reference by id obeys one rule (issue #43, credentials.MayReference): a resource of
// namespace N may use an existing Clever Cloud object it names by id only when N created it
// (a resource of N records it in its status, which only the operator writes) or the
// credentials in use allow binding it (spec.binding). Team-b tries team-a's Cellar by
// spec.cellar.addonId and team-a's Network Group by an ng_ id of spec.networkGroups, with
// credentials an admin gave it in team-a's organisation but without the binding privilege.
// Team-b's objects are created as team-b's namespace editor (tenantClient).

// cellarEndpoints maps a Cellar key id to the local S3 server of the spec that owns that
// Cellar; endpointLookups counts the operator's lookups per key id: it looks its endpoint up
// only to build an S3 client with those keys.
var (
	cellarEndpoints sync.Map
	endpointLookups sync.Map // key id -> *atomic.Int64
)

// cellarEndpoint is the operator's CellarEndpoint (suite_test.go).
func cellarEndpoint(host, keyID string) (string, bool) {
	n, _ := endpointLookups.LoadOrStore(keyID, &atomic.Int64{})
	n.(*atomic.Int64).Add(1)
	if e, ok := cellarEndpoints.Load(keyID); ok {
		return e.(string), false
	}
	return host, true // not a spec's: the real host (unreachable here)
}

func lookupsOf(keyID string) int64 {
	if n, ok := endpointLookups.Load(keyID); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

const envRoute = "GET /v2/organisations/{ownerId}/addons/{addonId}/env"

// teamACellar is team-a's Cellar, Ready and signed, its add-on's env, and the local S3 server
// accepting its keys.
func teamACellar(w world) (*unstructured.Unstructured, string, map[string]string, *kube.S3Server) {
	GinkgoHelper()
	cellar := ready(sample("api_v1_cellar.yaml", w.teamA, "cellar", w.orgA))
	id := kube.StatusString(cellar, "addon")
	Expect(id).NotTo(BeEmpty())
	Eventually(func() string { return suite.Get(cellar).GetAnnotations()[kinds.AnnotationAddonClaim] }).ShouldNot(BeEmpty())
	env := map[string]string{}
	for _, v := range fake.Env(id) {
		env[v.Name] = v.Value
	}
	Expect(env).To(HaveKey("CELLAR_ADDON_KEY_ID"))
	Expect(env).To(HaveKey("CELLAR_ADDON_KEY_SECRET"))
	s3 := kube.NewS3Server(env["CELLAR_ADDON_KEY_ID"])
	cellarEndpoints.Store(env["CELLAR_ADDON_KEY_ID"], s3.Endpoint())
	DeferCleanup(func() { cellarEndpoints.Delete(env["CELLAR_ADDON_KEY_ID"]); s3.Close() })
	return suite.Get(cellar), id, env, s3
}

// bucket is a CellarBucket of ns whose spec.cellar is cellar.
func bucket(ns, name string, cellar map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "api.clever-cloud.com/v1alpha1", "kind": "CellarBucket",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"cellar": cellar},
	}}
}

// s3Requests sums the S3 requests a bucket's pass makes (exists, make, versioning, policy).
func s3Requests(s *kube.S3Server) int {
	n := 0
	for _, k := range []string{"HEAD", "PUT", "GET", "GET ?versioning", "PUT ?versioning", "GET ?policy", "PUT ?policy", "DELETE ?policy", "GET ?location", "DELETE"} {
		n += s.Requests(k)
	}
	return n
}

var _ = Describe("every reference by id obeys one rule (team-b with credentials in team-a's organisation, without the binding privilege)", func() {
	ctx := context.Background()

	It("refuses team-b's CellarBucket naming team-a's Cellar add-on id: no key read, no S3 call with its keys, no Secret; team-a's buckets by id and by name work", func() {
		w := newWorld()
		cellar, id, env, s3 := teamACellar(w)
		keyID, keySecret := env["CELLAR_ADDON_KEY_ID"], env["CELLAR_ADDON_KEY_SECRET"]
		forB := grantTeamB(w, w.orgA, nil)
		orgA := calls(w.orgA)
		asB := tenantClient(w.teamB)

		steal := withRef(bucket(w.teamB, "steal", map[string]any{"addonId": id, "organisation": w.orgA}), "ClusterCleverCredentials", forB)
		Expect(asB.Create(ctx, steal)).To(Succeed())
		msg := expectRefused(steal, status.ReasonBindingNotAllowed)
		Expect(msg).To(And(ContainSubstring(id), ContainSubstring("namespace "+w.teamB), ContainSubstring("spec.binding")))
		Expect(kube.Condition(suite.Get(steal), "Stalled")).To(HavePrefix("True/"), "not retried in a loop")
		// Without credentials of its own (default does not allow team-b): refused as well.
		noCreds := bucket(w.teamB, "no-creds", map[string]any{"addonId": id, "organisation": w.orgA})
		Expect(asB.Create(ctx, noCreds)).To(Succeed())
		expectRefused(noCreds, status.ReasonCredentialsNotAllowed)

		Consistently(func() int { return orgA.Route(envRoute) }, 2*time.Second).Should(BeZero(), "team-a's Cellar's keys are never read")
		Expect(lookupsOf(keyID)).To(BeZero(), "no S3 client is built with team-a's keys")
		Expect(s3Requests(s3)).To(BeZero(), "no S3 request with team-a's keys")
		Expect(suite.Secret(w.teamB, "steal-bucket")).To(BeNil())
		Expect(suite.Secret(w.teamB, "no-creds-bucket")).To(BeNil())
		expectNoneOf(w.teamB, []string{keyID, keySecret})
		expectUntouched(orgA, "team-a's organisation")
		deleteAll(steal, noCreds)
		Expect(lookupsOf(keyID)).To(BeZero(), "the deletions use no S3 client with team-a's keys either")
		Expect(orgA.Route(envRoute)).To(BeZero())

		// Team-a's own buckets: by id (its Cellar records the add-on) and by name.
		byID := create(bucket(w.teamA, "by-id", map[string]any{"addonId": id, "organisation": w.orgA}))
		byName := create(bucket(w.teamA, "by-name", map[string]any{"name": cellar.GetName()}))
		for _, b := range []*unstructured.Unstructured{byID, byName} {
			Eventually(suite.ReadyOf(b)).Should(Equal("True/Available"), "%s/%s", b.GetNamespace(), b.GetName())
			Expect(s3.BucketExists(kube.StatusString(suite.Get(b), "bucketName"))).To(BeTrue())
			Eventually(func() map[string]string { return kube.SecretData(suite.Secret(w.teamA, b.GetName()+"-bucket")) }).Should(And(
				HaveKeyWithValue("CELLAR_ADDON_KEY_ID", keyID), HaveKeyWithValue("CELLAR_ADDON_KEY_SECRET", keySecret)))
		}
		deleteAll(byID, byName)
		expectNoneOf(w.teamB, []string{keyID, keySecret})
	})

	It("lets team-b use team-a's Cellar by id once an admin allows binding it (spec.binding.addonIds of its credentials)", func() {
		w := newWorld()
		_, id, env, s3 := teamACellar(w)
		allowed := clusterCredentials("bind-" + w.teamB)
		allowed.Object["spec"] = map[string]any{
			"namespaces":    map[string]any{"names": []any{w.teamB}},
			"organisations": []any{w.orgA},
			"binding":       map[string]any{"addonIds": []any{id}},
		}
		Expect(k8s.Create(ctx, allowed)).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(context.Background(), allowed) })

		b := withRef(bucket(w.teamB, "granted", map[string]any{"addonId": id, "organisation": w.orgA}), "ClusterCleverCredentials", allowed.GetName())
		Expect(tenantClient(w.teamB).Create(ctx, b)).To(Succeed())
		Eventually(suite.ReadyOf(b)).Should(Equal("True/Available"))
		Expect(s3.BucketExists(kube.StatusString(suite.Get(b), "bucketName"))).To(BeTrue())
		Eventually(func() map[string]string { return kube.SecretData(suite.Secret(w.teamB, "granted-bucket")) }).Should(
			HaveKeyWithValue("CELLAR_ADDON_KEY_ID", env["CELLAR_ADDON_KEY_ID"]))
		deleteAll(b)
	})

	It("refuses team-b's add-on joining team-a's Network Group by id: team-a's group unchanged; team-a's add-on joins it by id", func() {
		const (
			groupRoute = "/networkgroups/{ngId}"
			addMember  = "POST /v4/networkgroups/organisations/{ownerId}/networkgroups/{ngId}/members"
		)
		w := newWorld()
		ng := create(sample("api_v1alpha1_networkgroup.yaml", w.teamA, "private", w.orgA))
		Eventually(suite.ReadyOf(ng)).Should(Equal("True/Available"))
		ngID := kube.StatusString(suite.Get(ng), "id")
		Expect(ngID).To(HavePrefix("ng_"))
		forB := grantTeamB(w, w.orgA, nil)
		orgA := calls(w.orgA)

		rd := withRef(sample("api_v1_redis.yaml", w.teamB, "cache", w.orgA), "ClusterCleverCredentials", forB) // a dedicated plan
		Expect(unstructured.SetNestedStringSlice(rd.Object, []string{ngID}, "spec", "networkGroups")).To(Succeed())
		Expect(tenantClient(w.teamB).Create(ctx, rd)).To(Succeed())
		Eventually(suite.ReadyOf(rd)).Should(Equal("False/" + status.ReasonBindingNotAllowed))
		cur := suite.Get(rd)
		Expect(kube.Condition(cur, "NetworkGroups")).To(Equal("False/" + status.ReasonBindingNotAllowed))
		Expect(kube.Condition(cur, "Stalled")).To(HavePrefix("True/"), "not retried in a loop")
		Expect(kube.ConditionMessage(cur, "Ready")).To(And(ContainSubstring(ngID), ContainSubstring("namespace "+w.teamB), ContainSubstring("spec.binding")))
		_, found, _ := unstructured.NestedSlice(cur.Object, "status", "networkGroups")
		Expect(found).To(BeFalse(), "no membership recorded")

		Consistently(func() int { return orgA.Matching(groupRoute) }, 2*time.Second).Should(BeZero(), "team-a's group is neither read nor changed")
		groups := fake.NetworkGroups(w.orgA)
		Expect(groups).To(HaveLen(1))
		Expect(groups[0].ID).To(Equal(ngID))
		Expect(groups[0].Members).To(BeEmpty(), "team-a's group unchanged")
		deleteAll(rd)
		Expect(orgA.Route(addMember)).To(BeZero())

		// Team-a's add-on joins its namespace's group by id.
		mine := sample("api_v1_redis.yaml", w.teamA, "cache", w.orgA)
		Expect(unstructured.SetNestedStringSlice(mine.Object, []string{ngID}, "spec", "networkGroups")).To(Succeed())
		ready(mine)
		Eventually(func() string { return kube.Condition(suite.Get(mine), "NetworkGroups") }).Should(Equal("True/Joined"))
		Expect(fake.NetworkGroups(w.orgA)[0].Members).To(HaveLen(1))
		deleteAll(mine, ng)
	})
})
