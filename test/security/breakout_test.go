package security_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/test/kube"
)

// teamAPostgres is team-a's database, Ready, and the values of its credentials Secret.
func teamAPostgres(w world) (*unstructured.Unstructured, string, []string) {
	GinkgoHelper()
	db := ready(sample("api_v1_postgresql.yaml", w.teamA, "db", w.orgA))
	id := kube.StatusString(db, "addon")
	Expect(id).NotTo(BeEmpty())
	Eventually(func() string { return suite.Get(db).GetAnnotations()[kinds.AnnotationAddonClaim] }).ShouldNot(BeEmpty(),
		"the operator signs the add-on team-a created")
	values := secretValues(w.teamA)
	Expect(values).NotTo(BeEmpty())
	return suite.Get(db), id, values
}

// bindingAttempts are team-b's resources trying to bind team-a's add-on id (of team-a's
// resource src) by every path: spec.addonId, the addon-id annotation, managementPolicy
// ObserveOnly, and a copy of team-a's resource with its annotations (the signed claim
// included). The first asks for another plan (a migration, were it bound). credsRef, when set, is the ClusterCleverCredentials they reference.
func bindingAttempts(w world, src *unstructured.Unstructured, id, credsRef string) []*unstructured.Unstructured {
	GinkgoHelper()
	ref := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		if credsRef != "" {
			withRef(u, "ClusterCleverCredentials", credsRef)
		}
		return u
	}
	byID := ref(sample("api_v1_postgresql.yaml", w.teamB, "by-id", w.orgA))
	Expect(unstructured.SetNestedField(byID.Object, id, "spec", "addonId")).To(Succeed())
	// A differing plan: bound, it would migrate team-a's database.
	Expect(unstructured.SetNestedField(byID.Object, "xs_sml", "spec", "instance", "plan")).To(Succeed())
	byAnnotation := ref(sample("api_v1_postgresql.yaml", w.teamB, "by-annotation", w.orgA))
	byAnnotation.SetAnnotations(map[string]string{kinds.AnnotationAddonID: id})
	observe := ref(sample("api_v1_postgresql.yaml", w.teamB, "observe", w.orgA))
	Expect(unstructured.SetNestedField(observe.Object, "ObserveOnly", "spec", "managementPolicy")).To(Succeed())
	Expect(unstructured.SetNestedField(observe.Object, id, "spec", "addonId")).To(Succeed())
	copied := kube.Manifest(src, w.teamB)
	Expect(copied.GetAnnotations()).To(HaveKey(kinds.AnnotationAddonClaim), "the copy carries team-a's signed claim")
	if credsRef != "" {
		ref(copied)
	}
	out := []*unstructured.Unstructured{byID, byAnnotation, observe, copied}
	for _, u := range out {
		create(u)
	}
	return out
}

// expectTeamAIntact checks that team-a's resource is still Ready on the same add-on, which
// still exists, and that its organisation saw no write nor credentials read since c.
func expectTeamAIntact(db *unstructured.Unstructured, id string, c *kube.APICounter) {
	GinkgoHelper()
	Expect(kube.AddonExists(fake, id)).To(BeTrue(), "team-a's add-on still exists")
	Consistently(suite.ReadyOf(db), 2*time.Second).Should(Equal("True/Provisioned"), "team-a's resource stays Ready")
	Expect(kube.StatusString(suite.Get(db), "addon")).To(Equal(id))
	expectUntouched(c, "team-a's organisation")
}

var _ = Describe("a tenant (team-b) trying to break out, with `default` allowing only team-a and one organisation", func() {
	ctx := context.Background()

	It("cannot create an add-on in an organisation its credentials do not allow, even from team-a", func() {
		w := newWorld()
		forbidden := calls(w.orgB)
		pg := create(sample("api_v1_postgresql.yaml", w.teamA, "elsewhere", w.orgB))
		msg := expectRefused(pg, status.ReasonOrganisationNotAllowed)
		Expect(msg).To(ContainSubstring(w.orgB))
		Expect(kube.Condition(suite.Get(pg), "Stalled")).To(HavePrefix("True/"), "not retried in a loop")
		expectNoCalls(forbidden, "the forbidden organisation")
		Expect(fake.Addons(w.orgB)).To(BeEmpty())
		Expect(suite.Secret(w.teamA, "postgresql-secrets")).To(BeNil())
		deleteAll(pg)
		expectNoCalls(forbidden, "the forbidden organisation, after the deletion")
	})

	It("cannot create an add-on from team-b: without a reference, naming `default`, a missing ClusterCleverCredentials, or team-a's CleverCredentials", func() {
		w := newWorld()
		orgA, orgB := calls(w.orgA), calls(w.orgB)
		// team-a has namespaced credentials of its own: team-b cannot name them.
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "own-creds", Namespace: w.teamA},
			StringData: map[string]string{"config": "[api]\ntoken = \"team-a-token-3c1d\"\nsecret = \"team-a-secret-9b0e\"\n"}})).To(Succeed())
		own := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "api.clever-cloud.com/v1alpha1", "kind": "CleverCredentials",
			"metadata": map[string]any{"name": "own", "namespace": w.teamA},
			"spec":     map[string]any{"secretRef": map[string]any{"name": "own-creds"}},
		}}
		Expect(k8s.Create(ctx, own)).To(Succeed())

		noRef := create(sample("api_v1_redis.yaml", w.teamB, "no-ref", w.orgA))
		ownOrg := create(sample("api_v1_redis.yaml", w.teamB, "own-org", w.orgB))
		named := create(withRef(sample("api_v1_redis.yaml", w.teamB, "named-default", w.orgA), "ClusterCleverCredentials", "default"))
		missing := create(withRef(sample("api_v1_redis.yaml", w.teamB, "missing", w.orgA), "ClusterCleverCredentials", "does-not-exist"))
		teamAs := create(withRef(sample("api_v1_redis.yaml", w.teamB, "team-a-creds", w.orgA), "CleverCredentials", "own"))

		Expect(expectRefused(noRef, status.ReasonCredentialsNotAllowed)).To(ContainSubstring(w.teamB))
		expectRefused(ownOrg, status.ReasonCredentialsNotAllowed)
		Expect(expectRefused(named, status.ReasonCredentialsNotAllowed)).To(ContainSubstring("default"))
		Expect(expectRefused(missing, status.ReasonCredentialsNotFound)).To(ContainSubstring("does-not-exist"))
		expectRefused(teamAs, status.ReasonCredentialsNotFound)

		expectNoCalls(orgA, "team-a's organisation")
		expectNoCalls(orgB, "team-b's organisation")
		Expect(fake.Addons(w.orgA)).To(BeEmpty())
		Expect(fake.Addons(w.orgB)).To(BeEmpty())
		deleteAll(noRef, ownOrg, named, missing, teamAs)
		expectNoCalls(orgA, "team-a's organisation, after the deletions")
		expectNoCalls(orgB, "team-b's organisation, after the deletions")
	})

	It("cannot bind, read or delete team-a's add-on by spec.addonId, the addon-id annotation, ObserveOnly or a copy of team-a's resource (no credentials for team-b)", func() {
		w := newWorld()
		db, id, values := teamAPostgres(w)
		orgA := calls(w.orgA)

		attempts := bindingAttempts(w, db, id, "")
		for _, u := range attempts {
			expectRefused(u, status.ReasonCredentialsNotAllowed)
		}
		expectNoCalls(orgA, "team-a's organisation")
		expectNoneOf(w.teamB, values)

		deleteAll(attempts...)
		expectTeamAIntact(db, id, orgA)
		expectNoneOf(w.teamB, values)
	})

	It("cannot bind team-a's add-on by any path either when an admin gives team-b credentials in the same organisation without the binding privilege", func() {
		w := newWorld()
		db, id, values := teamAPostgres(w)
		forB := grantTeamB(w, w.orgA, nil)
		orgA := calls(w.orgA)

		attempts := bindingAttempts(w, db, id, forB)
		for _, u := range attempts {
			expectRefused(u, status.ReasonBindingNotAllowed)
		}
		expectUntouched(orgA, "team-a's organisation")
		expectNoneOf(w.teamB, values)

		deleteAll(attempts...)
		expectTeamAIntact(db, id, orgA)
		expectNoneOf(w.teamB, values)

		// Team-b can still create add-ons of its own there (the admin allowed that).
		mine := ready(withRef(sample("api_v1_redis.yaml", w.teamB, "mine", w.orgA), "ClusterCleverCredentials", forB))
		Expect(kube.StatusString(mine, "addon")).NotTo(Equal(id))
		deleteAll(mine)
		expectTeamAIntact(db, id, calls(w.orgA))
	})

	It("cannot take an add-on already bound, even with the binding privilege: refused naming the first claimant", func() {
		w := newWorld()
		db, id, values := teamAPostgres(w)
		forB := grantTeamB(w, w.orgA, map[string]any{"any": true})
		orgA := calls(w.orgA)

		second := withRef(sample("api_v1_postgresql.yaml", w.teamB, "second", w.orgA), "ClusterCleverCredentials", forB)
		Expect(unstructured.SetNestedField(second.Object, id, "spec", "addonId")).To(Succeed())
		create(second)
		msg := expectRefused(second, status.ReasonAddonClaimed)
		Expect(msg).To(ContainSubstring(w.teamA + "/db"))
		expectUntouched(orgA, "team-a's organisation")
		expectNoneOf(w.teamB, values)

		deleteAll(second)
		expectTeamAIntact(db, id, orgA)
	})

	It("cannot take team-a's bound add-on with a Clever Cloud identity of its own either (override Secret): refused naming the first claimant", func() {
		w := newWorld()
		db, id, values := teamAPostgres(w)
		orgA := calls(w.orgA)
		// team-b's own identity (which, here, reaches team-a's organisation): equivalent to a
		// CleverCredentials of team-b allowing any organisation and any binding.
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "clever-operator", Namespace: w.teamB},
			StringData: map[string]string{"config": fmt.Sprintf("[api]\nconsumer-key = %q\nconsumer-secret = %q\ntoken = %q\nsecret = %q\n",
				tenantCreds.ConsumerKey, tenantCreds.ConsumerSecret, tenantCreds.Token, tenantCreds.Secret)}})).To(Succeed())

		second := sample("api_v1_postgresql.yaml", w.teamB, "second", w.orgA)
		Expect(unstructured.SetNestedField(second.Object, id, "spec", "addonId")).To(Succeed())
		create(second)
		Expect(expectRefused(second, status.ReasonAddonClaimed)).To(ContainSubstring(w.teamA + "/db"))
		expectUntouched(orgA, "team-a's organisation")
		expectNoneOf(w.teamB, values)
		deleteAll(second)
		expectTeamAIntact(db, id, orgA)
	})

	DescribeTable("cannot send the operator's identity to another endpoint with an override Secret holding partial credentials",
		func(inTeamA bool, config, reason string) {
			w := newWorld()
			evil := newRecorder()
			ns, org := w.teamB, w.orgB
			if inTeamA {
				// In a namespace `default` allows: only the endpoint rule stands in the way.
				ns, org = w.teamA, w.orgA
			}
			c := calls(org)
			override := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "clever-operator", Namespace: ns},
				StringData: map[string]string{"config": fmt.Sprintf(config, evil.URL)}}
			Expect(k8s.Create(ctx, override)).To(Succeed())
			rd := create(sample("api_v1_redis.yaml", ns, "redirected", org))
			expectRefused(rd, reason)
			Consistently(evil.operators.Load, 2*time.Second).Should(BeZero(), "the operator's identity is never sent to the override's endpoint")
			Expect(evil.n.Load()).To(BeZero(), "nothing is sent to the override's endpoint (partial credentials are refused before any call)")
			expectNoCalls(c, "the organisation")

			// Deleting it sends nothing there either. (A resource refused for invalid
			// credentials stays Terminating while they are invalid, since the operator cannot
			// prove it never created an add-on: removing the override lets it go.)
			Expect(k8s.Delete(ctx, suite.Get(rd))).To(Succeed())
			Consistently(evil.n.Load, 2*time.Second).Should(BeZero())
			Expect(k8s.Delete(ctx, override)).To(Succeed())
			Eventually(suite.GetOf(rd)).Should(BeNil())
			Expect(evil.n.Load()).To(BeZero())
			expectUntouched(c, "the organisation")
		},
		// Without an identity of its own, the override does not make team-b's credentials:
		// `default` applies, and does not allow team-b.
		Entry("team-b, endpoint only", false, "[api]\nendpoint = %q\n", status.ReasonCredentialsNotAllowed),
		Entry("team-b, endpoint and consumer pair", false, "[api]\nendpoint = %q\nconsumer-key = \"ck-evil-1\"\nconsumer-secret = \"cs-evil-1\"\n", status.ReasonCredentialsNotAllowed),
		Entry("team-b, endpoint and a token secret without its token", false, "[api]\nendpoint = %q\nsecret = \"ts-evil-1\"\n", status.ReasonCredentialsNotAllowed),
		// In team-a, `default` would allow it: the foreign endpoint without a complete
		// identity of its own is refused before any call.
		Entry("team-a, endpoint only", true, "[api]\nendpoint = %q\n", status.ReasonInvalidCredentials),
		Entry("team-a, endpoint and consumer pair", true, "[api]\nendpoint = %q\nconsumer-key = \"ck-evil-2\"\nconsumer-secret = \"cs-evil-2\"\n", status.ReasonInvalidCredentials),
		Entry("team-a, endpoint and a token secret without its token", true, "[api]\nendpoint = %q\nsecret = \"ts-evil-2\"\nconsumer-key = \"ck-evil-3\"\nconsumer-secret = \"cs-evil-3\"\n", status.ReasonInvalidCredentials),
	)

	It("may use an identity of its own at an endpoint of its own (a token alone is a bearer token), never with the operator's", func() {
		w := newWorld()
		evil := newRecorder()
		c := calls(w.orgA)
		override := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "clever-operator", Namespace: w.teamB},
			StringData: map[string]string{"config": fmt.Sprintf("[api]\nendpoint = %q\ntoken = \"tk-own-b\"\n", evil.URL)}}
		Expect(k8s.Create(ctx, override)).To(Succeed())
		rd := create(sample("api_v1_redis.yaml", w.teamB, "own-endpoint", w.orgA))
		// The endpoint answers 401 to everything.
		expectRefused(rd, status.ReasonInvalidCredentials)
		Expect(evil.n.Load()).To(BeNumerically(">", 0), "the namespace's own identity went to its own endpoint")
		Expect(evil.operators.Load()).To(BeZero(), "never the operator's consumer key or token")
		expectNoCalls(c, "the operator's API, about team-a's organisation")
		// Refused for invalid credentials, it stays Terminating while they are invalid (the
		// operator cannot prove it created nothing); without the override, `default` applies,
		// which refuses team-b: released without any call.
		Expect(k8s.Delete(ctx, suite.Get(rd))).To(Succeed())
		Expect(k8s.Delete(ctx, override)).To(Succeed())
		Eventually(suite.GetOf(rd)).Should(BeNil())
		Expect(evil.operators.Load()).To(BeZero())
		expectNoCalls(c, "the operator's API, about team-a's organisation")
	})

	It("leaves team-a working as before: create, restore from a backup (new UID, signed claim) onto its own add-on, delete", func() {
		w := newWorld()
		orgA := calls(w.orgA)
		rd := ready(sample("api_v1_redis.yaml", w.teamA, "cache", w.orgA))
		id := kube.StatusString(rd, "addon")
		Expect(orgA.Route("POST /v2/organisations/{ownerId}/addons")).To(Equal(1))
		var backup *unstructured.Unstructured
		Eventually(func() string {
			cur := suite.Get(rd)
			backup = kube.Manifest(cur, w.teamA)
			return cur.GetAnnotations()[kinds.AnnotationAddonClaim]
		}).ShouldNot(BeEmpty())

		// The namespace's resource is lost (its add-on kept), then restored from the backup.
		suite.Mutate(rd, func(live *unstructured.Unstructured) {
			Expect(unstructured.SetNestedField(live.Object, "Orphan", "spec", "deletionPolicy")).To(Succeed())
		})
		deleteAll(rd)
		Expect(kube.AddonExists(fake, id)).To(BeTrue())
		restoreCalls := calls(w.orgA)
		restored := backup.DeepCopy()
		Expect(unstructured.SetNestedField(restored.Object, "Delete", "spec", "deletionPolicy")).To(Succeed())
		create(restored)
		// Recreated under the same name at once: the old resource's Helm uninstall stops
		// waiting for the name to disappear as soon as it holds the new UID (StatusClient.Get).
		Eventually(suite.ReadyOf(restored)).Should(Equal("True/Provisioned"))
		Expect(kube.StatusString(suite.Get(restored), "addon")).To(Equal(id), "the same add-on, without an admin")
		Expect(restoreCalls.Route("POST /v2/organisations/{ownerId}/addons")).To(BeZero(), "no new add-on")

		deleteAll(restored)
		Eventually(func() bool { return kube.AddonExists(fake, id) }).Should(BeFalse(), "its own add-on is deleted with it")
	})

	It("with the credentials policy installed (config/credentials-policy), refuses team-b's resources at admission, before the operator sees them", func() {
		w := newWorld()
		policy, binding := installCredentialsPolicy()
		orgA, orgB := calls(w.orgA), calls(w.orgB)

		// As `kubectl create` does: the API server answers 403 with the policy's message.
		pg := sample("api_v1_postgresql.yaml", w.teamB, "db", w.orgA)
		var err error
		Eventually(func() bool {
			err = k8s.Create(ctx, pg.DeepCopy())
			if err == nil {
				_ = k8s.Delete(ctx, pg.DeepCopy())
			}
			return apierrors.IsForbidden(err)
		}).WithTimeout(time.Minute).Should(BeTrue(), "refused at admission: %v", err)
		Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request", policy, binding)))
		Expect(err.Error()).To(ContainSubstring("postgresqls/db in namespace " + w.teamB + " may not use ClusterCleverCredentials default"))
		GinkgoWriter.Printf("refused at admission: %v\n", err)

		err = k8s.Create(ctx, sample("api_v1_postgresql.yaml", w.teamA, "db", w.orgB))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("organisation " + w.orgB + " is not allowed by ClusterCleverCredentials default"))

		// Team-a in its organisation is admitted, and works.
		ready(sample("api_v1_redis.yaml", w.teamA, "cache", w.orgA))
		Eventually(suite.GetOf(pg)).Should(BeNil())
		expectNoCalls(orgB, "team-b's organisation")
		Expect(orgA.Route("POST /v2/organisations/{ownerId}/addons")).To(Equal(1), "team-a's add-on only")
	})
})

// installCredentialsPolicy applies config/credentials-policy (as `kustomize build | kubectl
// apply` would, with config/default's prefix) until the spec ends, then waits until the API
// server no longer enforces it. Returns the policy's and the binding's names.
func installCredentialsPolicy() (string, string) {
	GinkgoHelper()
	ctx := context.Background()
	read := func(file string, into client.Object) {
		b, err := os.ReadFile(filepath.Join("config", "credentials-policy", file))
		Expect(err).NotTo(HaveOccurred())
		Expect(yaml.UnmarshalStrict(b, into)).To(Succeed())
	}
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	read("policy.yaml", p)
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	read("binding.yaml", b)
	p.Name = "security-" + p.Name
	b.Name = "security-" + b.Name
	b.Spec.PolicyName = p.Name
	Expect(k8s.Create(ctx, p)).To(Succeed())
	Expect(k8s.Create(ctx, b)).To(Succeed())
	DeferCleanup(func() {
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		Expect(k8s.Delete(ctx, p)).To(Succeed())
		// Other specs create refused resources: wait until admission lets them through.
		ns := suite.NewNamespace()
		probe := sample("api_v1_redis.yaml", ns, "probe", kube.Org("nowhere"))
		Eventually(func() error { return k8s.Create(ctx, probe.DeepCopy(), client.DryRunAll) }).WithTimeout(time.Minute).Should(Succeed())
	})
	return p.Name, b.Name
}
