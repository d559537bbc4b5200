package operator_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

// Issue #15 §1: credentials as resources. CleverCredentials (a namespace's own) and
// ClusterCleverCredentials (an admin's, scoped to namespaces and organisations) report who
// they are; resources use them through spec.credentialsRef; what they do not allow is refused
// before any Clever Cloud call; the default ClusterCleverCredentials scopes the operator's
// own identity; override Secrets take effect at once.

const postAddon = "POST /v2/organisations/{ownerId}/addons"

// tenant is a Clever Cloud identity of a spec's own: a fake API that knows only it.
type tenant struct {
	fake  *fakeapi.Server
	srv   *httptest.Server
	cred  fakeapi.Credential
	user  string
	orgs  []string
	token string
}

// newTenant starts a fake API accepting one credential set of its own (named after label),
// which authenticates as user_<label> reaching orgs.
func newTenant(label string, orgs ...string) *tenant {
	GinkgoHelper()
	t := &tenant{cred: fakeapi.Credential{ConsumerKey: "ck-" + label, ConsumerSecret: "cs-" + label + "-4e1b9c07", Token: "tk-" + label + "-a2f6d3e8", Secret: "ts-" + label + "-90c7b215"},
		user: "user_" + label, orgs: orgs}
	t.token = t.cred.Token
	t.fake, t.srv = kube.NewFake(fakeapi.Options{Credentials: []fakeapi.Credential{t.cred}, Seed: 15,
		Identities: map[string]fakeapi.Identity{t.token: {ID: t.user, Name: "Tenant " + label, Organisations: orgs}}})
	return t
}

// doc is the tenant's credentials as an override Secret's `config` document (a complete set:
// its endpoint is not the operator's).
func (t *tenant) doc() string {
	return kube.OverrideConfig(t.srv.URL, t.cred)
}

func (t *tenant) values() []string {
	return []string{t.cred.ConsumerSecret, t.cred.Token, t.cred.Secret}
}

// createSecret creates a Secret holding a credentials document under key config.
func createSecret(ns, name, doc string) *corev1.Secret {
	GinkgoHelper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: map[string]string{"config": doc}}
	Expect(k8s.Create(context.Background(), s)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(context.Background(), s) })
	return s
}

// credentialsObject creates a CleverCredentials (ns set) or a ClusterCleverCredentials.
func credentialsObject(ns, name string, spec map[string]any) *unstructured.Unstructured {
	GinkgoHelper()
	kind := "CleverCredentials"
	if ns == "" {
		kind = "ClusterCleverCredentials"
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "api.clever-cloud.com/v1alpha1", "kind": kind,
		"metadata": map[string]any{"name": name}, "spec": spec}}
	if ns != "" {
		u.SetNamespace(ns)
	}
	Expect(k8s.Create(context.Background(), u)).To(Succeed())
	if ns == "" {
		DeferCleanup(func() { _ = k8s.Delete(context.Background(), u) })
	}
	return u
}

// withCredentials sets spec.credentialsRef.
func withCredentials(u *unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	Expect(unstructured.SetNestedStringMap(u.Object, map[string]string{"kind": kind, "name": name}, "spec", "credentialsRef")).To(Succeed())
	return u
}

func inOrg(u *unstructured.Unstructured, org string) *unstructured.Unstructured {
	Expect(unstructured.SetNestedField(u.Object, org, "spec", "organisation")).To(Succeed())
	return u
}

func str(u *unstructured.Unstructured, path ...string) string {
	if u == nil {
		return ""
	}
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// orgIDs returns the ids of a credentials object's status.organisations.
func orgIDs(u *unstructured.Unstructured) []string {
	if u == nil {
		return nil
	}
	l, _, _ := unstructured.NestedSlice(u.Object, "status", "organisations")
	var out []string
	for _, o := range l {
		if m, ok := o.(map[string]any); ok {
			out = append(out, fmt.Sprint(m["id"]))
		}
	}
	return out
}

// expectNoValues checks that no secret value reached the object's status, its events or the
// operator's log.
func expectNoValues(u *unstructured.Unstructured, values []string) {
	GinkgoHelper()
	status := ""
	if live := suite.Get(u); live != nil {
		status = fmt.Sprint(live.Object["status"])
	}
	events := strings.Join(suite.EventMessages(u), "\n")
	for _, v := range values {
		Expect(status).NotTo(ContainSubstring(v))
		Expect(events).NotTo(ContainSubstring(v))
		Expect(logs.String()).NotTo(ContainSubstring(v))
	}
}

// untouched says nothing was asked of Clever Cloud about org (at the suite's fake).
func untouched(org string) map[string]int { return fake.CountsFor(org) }

// orgsInUseBut lists the organisations of every add-on resource in the cluster, and extra,
// without but: a restriction of the shared default ClusterCleverCredentials that refuses
// only but.
func orgsInUseBut(but string, extra ...string) []any {
	GinkgoHelper()
	seen := map[string]bool{but: true}
	var out []any
	add := func(org string) {
		if org != "" && !seen[org] {
			seen[org] = true
			out = append(out, org)
		}
	}
	for _, org := range extra {
		add(org)
	}
	for _, k := range kinds.Kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		Expect(k8s.List(context.Background(), list)).To(Succeed())
		for _, u := range list.Items {
			org, _, _ := unstructured.NestedString(u.Object, "spec", "organisation")
			add(org)
		}
	}
	Expect(len(out)).To(BeNumerically("<=", 256), "spec.organisations takes 256 items at most")
	return out
}

var _ = Describe("credentials objects", func() {
	ctx := context.Background()

	It("report who they are and what they reach (Ready, user, organisations, lastCheckedAt), and never a secret value when they do not work", func() {
		ns := suite.NewNamespace()
		orgA := suite.OrgOf(ns)
		t := newTenant("status", orgA)
		createSecret(ns, "team-clever", t.doc())
		cc := credentialsObject(ns, "team", map[string]any{"secretRef": map[string]any{"name": "team-clever"}})
		Eventually(func() string { return kube.Condition(suite.Get(cc), "Ready") }).Should(Equal("True/Authenticated"))
		live := suite.Get(cc)
		Expect(str(live, "status", "user", "id")).To(Equal(t.user))
		Expect(str(live, "status", "user", "name")).To(Equal("Tenant status"))
		Expect(orgIDs(live)).To(ConsistOf(t.user, orgA))
		Expect(str(live, "status", "lastCheckedAt")).NotTo(BeEmpty())
		Expect(str(live, "status", "observedGeneration")).To(Equal(fmt.Sprint(live.GetGeneration())))
		Expect(t.fake.CountsForToken(t.token)).To(HaveKeyWithValue("GET /v2/self", BeNumerically(">=", 1)))

		// The same Secret, shared by an admin from the namespace it lives in.
		ccc := credentialsObject("", "status-"+ns, map[string]any{
			"secretRef":  map[string]any{"name": "team-clever", "namespace": ns},
			"namespaces": map[string]any{"names": []any{ns}}})
		Eventually(func() string { return kube.Condition(suite.Get(ccc), "Ready") }).Should(Equal("True/Authenticated"))
		Expect(str(suite.Get(ccc), "status", "user", "id")).To(Equal(t.user))

		// Without a secretRef: the operator's own identity (the suite's fake's user).
		own := credentialsObject("", "own-"+ns, map[string]any{"namespaces": map[string]any{"names": []any{ns}}})
		Eventually(func() string { return str(suite.Get(own), "status", "user", "id") }).Should(Equal(fake.Self().ID))

		// Refused credentials: Ready False, no user, and none of the values anywhere.
		bad := *t
		bad.cred.Token, bad.cred.Secret = "tk-revoked-3c9e1f22", "ts-revoked-71d0a8b4"
		createSecret(ns, "revoked-clever", bad.doc())
		rc := credentialsObject(ns, "revoked", map[string]any{"secretRef": map[string]any{"name": "revoked-clever"}})
		Eventually(func() string { return kube.Condition(suite.Get(rc), "Ready") }).Should(Equal("False/InvalidCredentials"))
		Expect(str(suite.Get(rc), "status", "user")).To(BeEmpty())
		Eventually(suite.EventsOf(rc)).Should(ContainElement("Warning InvalidCredentials"))

		// A Secret that does not exist, and one naming no identity of its own.
		missing := credentialsObject(ns, "missing", map[string]any{"secretRef": map[string]any{"name": "nope"}})
		Eventually(func() string { return kube.ConditionMessage(suite.Get(missing), "Ready") }).Should(ContainSubstring("does not exist"))
		createSecret(ns, "borrow-clever", "[api]\nconsumer-key = \"ck-borrow\"\nconsumer-secret = \"cs-borrow-5b2e19d4\"\n")
		borrow := credentialsObject(ns, "borrow", map[string]any{"secretRef": map[string]any{"name": "borrow-clever"}})
		Eventually(func() string { return kube.Condition(suite.Get(borrow), "Ready") }).Should(Equal("False/InvalidCredentials"))
		Expect(kube.ConditionMessage(suite.Get(borrow), "Ready")).To(ContainSubstring("no identity of its own"))

		for _, u := range []*unstructured.Unstructured{cc, ccc, rc, missing, borrow} {
			expectNoValues(u, append(append(t.values(), bad.values()...), "cs-borrow-5b2e19d4", creds.Token, creds.Secret))
		}
	})

	It("reports the default ClusterCleverCredentials the operator created at start-up: the operator's identity, every namespace", func() {
		def := &unstructured.Unstructured{}
		def.SetAPIVersion("api.clever-cloud.com/v1alpha1")
		def.SetKind("ClusterCleverCredentials")
		def.SetName("default")
		Eventually(func() string { return kube.Condition(suite.Get(def), "Ready") }).Should(Equal("True/Authenticated"))
		live := suite.Get(def)
		Expect(str(live, "status", "user", "id")).To(Equal(fake.Self().ID))
		sel, found, _ := unstructured.NestedMap(live.Object, "spec", "namespaces", "selector")
		Expect(found).To(BeTrue())
		Expect(sel).To(BeEmpty())
		_, hasSecret, _ := unstructured.NestedMap(live.Object, "spec", "secretRef")
		Expect(hasSecret).To(BeFalse())
	})

	It("creates and deletes a resource with a namespace's CleverCredentials: its token, never the operator's", func() {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		t := newTenant("ref", org)
		createSecret(ns, "ci-clever", t.doc())
		credentialsObject(ns, "ci", map[string]any{"secretRef": map[string]any{"name": "ci-clever"}, "organisations": []any{org}})
		operatorCalls := fake.CountsForToken(creds.Token)[postAddon]

		rd := withCredentials(suite.Sample("api_v1_redis.yaml", ns), "CleverCredentials", "ci")
		Expect(k8s.Create(ctx, rd)).To(Succeed())
		Eventually(suite.ReadyOf(rd), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(t.fake.Addons(org)).To(HaveLen(1))
		Expect(t.fake.CountsForToken(t.token)).To(HaveKeyWithValue(postAddon, 1))
		Expect(fake.Addons(org)).To(BeEmpty())
		Expect(untouched(org)).To(BeEmpty(), "nothing about this organisation reached the operator's endpoint")
		Expect(fake.CountsForToken(creds.Token)[postAddon]).To(Equal(operatorCalls))

		// spec.credentialsRef is immutable: the add-on belongs to the identity that created it.
		err := suite.Client.Patch(ctx, suite.Get(rd), client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"credentialsRef":{"kind":"ClusterCleverCredentials","name":"default"}}}`)))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)

		Expect(k8s.Delete(ctx, rd)).To(Succeed())
		Eventually(func() bool { return suite.Get(rd) == nil }, 30*time.Second).Should(BeTrue())
		Expect(t.fake.Addons(org)).To(BeEmpty())
		Expect(t.fake.CountsForToken(t.token)).To(HaveKeyWithValue("DELETE /v2/organisations/{ownerId}/addons/{addonId}", 1))
		expectNoValues(rd, t.values())
	})

	It("refuses what a ClusterCleverCredentials does not allow before any Clever Cloud call: another namespace, another organisation", func() {
		nsA, nsB := suite.NewNamespace(), suite.NewNamespace()
		orgX, orgY := suite.OrgOf(nsA), suite.OrgOf(nsB)
		name := "only-" + nsA
		credentialsObject("", name, map[string]any{"namespaces": map[string]any{"names": []any{nsA}}, "organisations": []any{orgX}})

		// Namespace B names it: not allowed, nothing asked of Clever Cloud.
		inB := withCredentials(suite.Sample("api_v1_redis.yaml", nsB), "ClusterCleverCredentials", name)
		Expect(k8s.Create(ctx, inB)).To(Succeed())
		Eventually(suite.ReadyOf(inB)).Should(Equal("False/CredentialsNotAllowed"))
		Expect(kube.ConditionMessage(suite.Get(inB), "Ready")).To(ContainSubstring(nsB))
		Eventually(suite.EventsOf(inB)).Should(ContainElement("Warning CredentialsNotAllowed"))

		// Namespace A, in an organisation the object does not allow: refused, no call at all.
		wrongOrg := withCredentials(inOrg(suite.Sample("api_v1_redis.yaml", nsA), orgY), "ClusterCleverCredentials", name)
		wrongOrg.SetName("wrong-org")
		Expect(k8s.Create(ctx, wrongOrg)).To(Succeed())
		Eventually(suite.ReadyOf(wrongOrg)).Should(Equal("False/OrganisationNotAllowed"))
		msg := kube.ConditionMessage(suite.Get(wrongOrg), "Ready")
		Expect(msg).To(ContainSubstring(orgY))
		Expect(msg).To(ContainSubstring("ClusterCleverCredentials " + name))
		Expect(msg).To(ContainSubstring(orgX))
		Eventually(suite.EventsOf(wrongOrg)).Should(ContainElement("Warning OrganisationNotAllowed"))

		// Namespace A in organisation X: works as before.
		ok := withCredentials(suite.Sample("api_v1_redis.yaml", nsA), "ClusterCleverCredentials", name)
		Expect(k8s.Create(ctx, ok)).To(Succeed())
		Eventually(suite.ReadyOf(ok), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(fake.Addons(orgX)).To(HaveLen(1))
		Expect(untouched(orgY)).To(BeEmpty(), "nothing was asked about organisation Y")
		Expect(fake.Addons(orgY)).To(BeEmpty())

		// The refused ones never had an add-on: deleting them calls nothing and releases them.
		Expect(k8s.Delete(ctx, inB)).To(Succeed())
		Expect(k8s.Delete(ctx, wrongOrg)).To(Succeed())
		Eventually(func() bool { return suite.Get(inB) == nil && suite.Get(wrongOrg) == nil }).Should(BeTrue())
		Expect(untouched(orgY)).To(BeEmpty())
		Expect(k8s.Delete(ctx, ok)).To(Succeed())
		Eventually(func() bool { return suite.Get(ok) == nil }, 30*time.Second).Should(BeTrue())
		Expect(fake.Addons(orgX)).To(BeEmpty())
	})

	It("selects namespaces by label, and takes a namespace's new labels into account at once", func() {
		ns := suite.NewNamespace()
		name := "labelled-" + ns
		credentialsObject("", name, map[string]any{"namespaces": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"clever-tenant": ns}}}})
		rd := withCredentials(suite.Sample("api_v1_redis.yaml", ns), "ClusterCleverCredentials", name)
		Expect(k8s.Create(ctx, rd)).To(Succeed())
		Eventually(suite.ReadyOf(rd)).Should(Equal("False/CredentialsNotAllowed"))
		Expect(untouched(suite.OrgOf(ns))).To(BeEmpty())

		Eventually(func() error {
			n := &corev1.Namespace{}
			if err := k8s.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
				return err
			}
			n.Labels = map[string]string{"clever-tenant": ns}
			return k8s.Update(ctx, n)
		}).Should(Succeed())
		Eventually(suite.ReadyOf(rd), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(k8s.Delete(ctx, rd)).To(Succeed())
		Eventually(func() bool { return suite.Get(rd) == nil }, 30*time.Second).Should(BeTrue())
	})

	It("takes a restriction of a ClusterCleverCredentials at once, and keeps a resource it no longer allows Terminating until told", func() {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		name := "shrinking-" + ns
		ccc := credentialsObject("", name, map[string]any{"namespaces": map[string]any{"names": []any{ns}}, "organisations": []any{org}})
		rd := withCredentials(suite.Sample("api_v1_redis.yaml", ns), "ClusterCleverCredentials", name)
		Expect(k8s.Create(ctx, rd)).To(Succeed())
		Eventually(suite.ReadyOf(rd), 30*time.Second).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(rd), "addon")

		// The admin takes the organisation away: the resource says so within seconds (the
		// resync is an hour: only the credentials object's change can wake it).
		suite.Mutate(ccc, func(live *unstructured.Unstructured) {
			Expect(unstructured.SetNestedStringSlice(live.Object, []string{kube.Org("elsewhere")}, "spec", "organisations")).To(Succeed())
		})
		Eventually(suite.ReadyOf(rd), 10*time.Second).Should(Equal("False/OrganisationNotAllowed"))

		// Deleting it: the add-on is not deleted with credentials that do not allow it, and the
		// resource is not released silently.
		calls := suite.CountCalls(ns)
		Expect(k8s.Delete(ctx, rd)).To(Succeed())
		Eventually(func() string { return kube.ConditionMessage(suite.Get(rd), "Ready") }).Should(ContainSubstring("skip-deprovision"))
		Expect(kube.Condition(suite.Get(rd), "Ready")).To(Equal("False/OrganisationNotAllowed"))
		Consistently(func() bool { return suite.Get(rd) != nil }, 2*time.Second).Should(BeTrue())
		Expect(calls.Matching("")).To(BeZero())
		Expect(fake.Addons(org)).To(HaveLen(1))

		// The escape hatch: release it without deleting the add-on.
		suite.Annotate(rd, map[string]string{"api.clever-cloud.com/skip-deprovision": "true"})
		Eventually(func() bool { return suite.Get(rd) == nil }, 20*time.Second).Should(BeTrue())
		Expect(calls.Matching("")).To(BeZero())
		Expect(fake.DeleteAddonOutOfBand(org, id)).To(Succeed())
	})

	It("scopes the operator's own identity by the default ClusterCleverCredentials", func() {
		nsA, nsB := suite.NewNamespace(), suite.NewNamespace()
		orgA, orgB := suite.OrgOf(nsA), suite.OrgOf(nsB)
		def := &unstructured.Unstructured{}
		def.SetAPIVersion("api.clever-cloud.com/v1alpha1")
		def.SetKind("ClusterCleverCredentials")
		def.SetName("default")
		Eventually(func() *unstructured.Unstructured { return suite.Get(def) }).ShouldNot(BeNil())
		before, _, _ := unstructured.NestedMap(suite.Get(def).Object, "spec")
		DeferCleanup(func() {
			suite.Mutate(def, func(live *unstructured.Unstructured) { live.Object["spec"] = before })
		})
		// The default serves every spec of this suite: restrict it for nsB and orgB only, so
		// the resources other specs left behind stay allowed and are not all woken twice
		// (their passes would queue behind one rate limit, ahead of this spec's resources).
		suite.Mutate(def, func(live *unstructured.Unstructured) {
			live.Object["spec"] = map[string]any{
				"namespaces": map[string]any{"selector": map[string]any{"matchExpressions": []any{map[string]any{
					"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []any{nsB}}}}},
				"organisations": orgsInUseBut(orgB, orgA),
			}
		})

		inB := suite.Sample("api_v1_redis.yaml", nsB)
		Expect(k8s.Create(ctx, inB)).To(Succeed())
		Eventually(suite.ReadyOf(inB)).Should(Equal("False/CredentialsNotAllowed"))
		Expect(kube.ConditionMessage(suite.Get(inB), "Ready")).To(ContainSubstring("ClusterCleverCredentials default"))

		wrongOrg := inOrg(suite.Sample("api_v1_redis.yaml", nsA), orgB)
		wrongOrg.SetName("wrong-org")
		Expect(k8s.Create(ctx, wrongOrg)).To(Succeed())
		Eventually(suite.ReadyOf(wrongOrg)).Should(Equal("False/OrganisationNotAllowed"))

		ok := suite.Sample("api_v1_redis.yaml", nsA)
		Expect(k8s.Create(ctx, ok)).To(Succeed())
		Eventually(suite.ReadyOf(ok), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(untouched(orgB)).To(BeEmpty())
		Expect(fake.Addons(orgB)).To(BeEmpty())

		// An override Secret without an identity of its own does not escape the default's policy.
		createSecret(nsB, "clever-operator", fmt.Sprintf("[api]\nendpoint = %q\n", fakeSrv.URL))
		inB2 := suite.Sample("api_v1_mysql.yaml", nsB)
		Expect(k8s.Create(ctx, inB2)).To(Succeed())
		Eventually(suite.ReadyOf(inB2)).Should(Equal("False/CredentialsNotAllowed"))
		Expect(untouched(orgB)).To(BeEmpty())

		// Lifting the restriction wakes the refused resources at once.
		suite.Mutate(def, func(live *unstructured.Unstructured) { live.Object["spec"] = before })
		Eventually(suite.ReadyOf(inB), 30*time.Second).Should(Equal("True/Provisioned"))
		for _, u := range []*unstructured.Unstructured{inB, inB2, wrongOrg, ok} {
			Expect(k8s.Delete(ctx, u)).To(Succeed())
		}
		for _, u := range []*unstructured.Unstructured{inB, inB2, wrongOrg, ok} {
			Eventually(func() bool { return suite.Get(u) == nil }, 30*time.Second).Should(BeTrue())
		}
	})

	It("takes a revoked or fixed override Secret into account at once, without touching the resource", func() {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		t := newTenant("override", org)
		sec := createSecret(ns, "clever-operator", t.doc())
		rd := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, rd)).To(Succeed())
		Eventually(suite.ReadyOf(rd), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(t.fake.Addons(org)).To(HaveLen(1))

		// Revoked: the namespace's credentials now point elsewhere without a complete set.
		// The resync is an hour away and the refusal waits for a change: only the Secret's
		// watch can make these take effect within seconds.
		setDoc := func(doc string) {
			Eventually(func() error {
				cur := &corev1.Secret{}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(sec), cur); err != nil {
					return err
				}
				cur.Data = map[string][]byte{"config": []byte(doc)}
				return k8s.Update(ctx, cur)
			}).Should(Succeed())
		}
		setDoc(fmt.Sprintf("[api]\nendpoint = %q\n", t.srv.URL+"/elsewhere"))
		Eventually(suite.ReadyOf(rd), 10*time.Second).Should(Equal("False/InvalidCredentials"))

		// Fixed: Ready again.
		setDoc(t.doc())
		Eventually(suite.ReadyOf(rd), 10*time.Second).Should(Equal("True/Provisioned"))
		Expect(t.fake.Addons(org)).To(HaveLen(1), "the same add-on, not a second one")

		Expect(k8s.Delete(ctx, rd)).To(Succeed())
		Eventually(func() bool { return suite.Get(rd) == nil }, 30*time.Second).Should(BeTrue())
		Expect(t.fake.Addons(org)).To(BeEmpty())
		expectNoValues(rd, t.values())
	})
})
