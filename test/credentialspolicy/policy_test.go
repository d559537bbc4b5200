package credentialspolicy_test

import (
	"os"
	"path/filepath"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/admission"
	"github.com/clever-operator/clever-operator/test/kube"
)

// notAllowedNS is the start of the denial message for a namespace the credentials do not allow.
func notAllowedNS(plural, name, ns, creds string) string {
	return plural + "/" + name + " in namespace " + ns + " may not use " + creds + ": it does not allow namespace " + ns
}

// named is how the denial message names a ClusterCleverCredentials referenced by spec.credentialsRef.
func named(name string) string {
	return "ClusterCleverCredentials " + name + " (spec.credentialsRef)"
}

const (
	defaultCreds = "ClusterCleverCredentials default (the operator's default credentials: no spec.credentialsRef)"
)

var _ = Describe("the credentials policy", func() {
	It("was accepted by the API server before its paramKind's CRD existed, and enforces once it does", func() {
		// BeforeSuite created the policy and binding before the ClusterCleverCredentials CRD
		// (as one `kubectl apply` of config/default may), then probed the enforcement.
		GinkgoWriter.Printf("a CREATE while the CRD was missing got: %v\n", admittedBeforeParamCRD)
		// failurePolicy Fail: until the API server has discovered the CRD, add-ons are refused
		// (documented in config/credentials-policy/README.md), never admitted unchecked.
		Expect(admittedBeforeParamCRD).To(MatchError(ContainSubstring("failed to find resource referenced by paramKind")))
	})

	It("refuses, with the default credentials restricted to namespace A and organisation X: B with no reference, B with a reference, A in organisation Y; admits A in X", func() {
		a, b := uniq("team-a"), uniq("team-b")
		createNamespace(a)
		createNamespace(b)
		clusterCreds("default", []string{a}, nil, orgX)
		shared := uniq("shared")
		clusterCreds(shared, []string{a}, nil, orgX)

		expectDenied(sample("PostgreSql", b, "db", orgX), notAllowedNS("postgresqls", "db", b, defaultCreds),
			"(see its spec.namespaces). Use credentials this namespace may use (spec.credentialsRef), or ask an admin to allow it.")
		expectDenied(sample("PostgreSql", b, "db", orgX, ref(shared)),
			notAllowedNS("postgresqls", "db", b, "ClusterCleverCredentials "+shared+" (spec.credentialsRef)"))
		expectDenied(sample("PostgreSql", a, "db", orgY),
			"postgresqls/db in namespace "+a+": organisation "+orgY+" is not allowed by "+defaultCreds+", which allows only "+orgX+".")
		expectDenied(sample("PostgreSql", a, "db", orgY, ref(shared)),
			"organisation "+orgY+" is not allowed by ClusterCleverCredentials "+shared+" (spec.credentialsRef), which allows only "+orgX+".")
		// A namespace that is not allowed gets the namespace message only.
		expectDenied(sample("PostgreSql", b, "db2", orgY), notAllowedNS("postgresqls", "db2", b, defaultCreds))

		expectAdmitted(sample("PostgreSql", a, "db", orgX))
		expectAdmitted(sample("PostgreSql", a, "db", orgX, ref(shared)))
		// For real, not only dry run.
		Expect(k8s.Create(ctx, sample("PostgreSql", a, "real", orgX))).To(Succeed())
	})

	It("constrains an object only by the credentials it uses: another ClusterCleverCredentials allowing B, or a namespaced CleverCredentials, is not held to default's rules", func() {
		a, b := uniq("team-a"), uniq("team-b")
		createNamespace(a)
		createNamespace(b)
		clusterCreds("default", []string{a}, nil, orgX)
		forB := uniq("for-b")
		clusterCreds(forB, []string{b}, nil, orgY)

		expectDenied(sample("Redis", b, "r", orgY), notAllowedNS("redis", "r", b, defaultCreds))
		expectDenied(sample("Redis", a, "r", orgY, ref(forB)), notAllowedNS("redis", "r", a, named(forB)))
		expectDenied(sample("Redis", b, "r", orgX, ref(forB)), "organisation "+orgX+" is not allowed by ClusterCleverCredentials "+forB)
		expectAdmitted(sample("Redis", b, "r", orgY, ref(forB)))
		// A namespaced CleverCredentials (kind given, or defaulted) is the controller's to check.
		expectAdmitted(sample("Redis", b, "r", orgY, credsRef{"CleverCredentials", "own"}))
		expectAdmitted(sample("Redis", b, "r", orgY, credsRef{"", "own"}))
		// A reference to a ClusterCleverCredentials that does not exist: no parameter is
		// selected, admitted (the controller refuses it: CredentialsNotFound).
		expectAdmitted(sample("Redis", b, "r", orgY, ref("missing")))
	})

	It("matches namespaces by label selector: matchLabels and matchExpressions In, NotIn, Exists, DoesNotExist", func() {
		sel := uniq("sel")
		okNS := uniq("ns")
		createNamespace(okNS, "tier", "prod", "team", "a", "billing", "yes")
		wrongLabel := uniq("ns")
		createNamespace(wrongLabel, "tier", "dev", "team", "a", "billing", "yes")
		notIn := uniq("ns")
		createNamespace(notIn, "tier", "prod", "team", "c", "billing", "yes")
		noBilling := uniq("ns")
		createNamespace(noBilling, "tier", "prod", "team", "a")
		frozen := uniq("ns")
		createNamespace(frozen, "tier", "prod", "team", "b", "billing", "yes", "frozen", "true")
		noTeam := uniq("ns")
		createNamespace(noTeam, "tier", "prod", "billing", "yes")

		clusterCreds(sel, nil, &metav1.LabelSelector{
			MatchLabels: map[string]string{"tier": "prod"},
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
				{Key: "team", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"c"}},
				{Key: "billing", Operator: metav1.LabelSelectorOpExists},
				{Key: "frozen", Operator: metav1.LabelSelectorOpDoesNotExist},
			},
		})
		for _, ns := range []string{wrongLabel, notIn, noBilling, frozen, noTeam} {
			expectDenied(sample("MySql", ns, "m", orgY, ref(sel)), notAllowedNS("mysqls", "m", ns, named(sel)))
		}
		expectAdmitted(sample("MySql", okNS, "m", orgY, ref(sel)))

		// NotIn alone admits a namespace without the key.
		notInOnly := uniq("notin")
		clusterCreds(notInOnly, nil, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "team", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"c"}},
		}})
		expectDenied(sample("MySql", notIn, "m", orgY, ref(notInOnly)), "does not allow namespace "+notIn)
		expectAdmitted(sample("MySql", noTeam, "m", orgY, ref(notInOnly)))
		expectAdmitted(sample("MySql", okNS, "m", orgY, ref(notInOnly)))

		// Names and selector add up.
		both := uniq("both")
		clusterCreds(both, []string{wrongLabel}, &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}})
		expectDenied(sample("MySql", okNS, "m", orgY, ref(both)), "does not allow namespace "+okNS)
		expectAdmitted(sample("MySql", wrongLabel, "m", orgY, ref(both)))
		expectAdmitted(sample("MySql", frozen, "m", orgY, ref(both)))
	})

	It("matches every namespace with `selector: {}` and none without names nor selector; the built-in kubernetes.io/metadata.name label works", func() {
		ns := uniq("any")
		createNamespace(ns)
		none := uniq("none")
		clusterCreds(none, nil, nil)
		expectDenied(sample("KV", ns, "kv", orgX, ref(none)), notAllowedNS("kvs", "kv", ns, named(none)))
		all := uniq("all")
		clusterCreds(all, nil, &metav1.LabelSelector{})
		expectAdmitted(sample("KV", ns, "kv", orgX, ref(all)))
		byName := uniq("byname")
		clusterCreds(byName, nil, &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "other"}})
		expectDenied(sample("KV", ns, "kv", orgX, ref(byName)), "does not allow namespace "+ns)
	})

	It("admits everything when there is no ClusterCleverCredentials at all (today's behaviour)", func() {
		ns := uniq("free")
		createNamespace(ns)
		for kind := range samples() {
			expectAdmitted(sample(kind, ns, "x", orgY))
			expectAdmitted(sample(kind, ns, "x", orgY, ref("default")))
		}
		Expect(k8s.Create(ctx, sample("PostgreSql", ns, "real", orgY))).To(Succeed())
	})

	It("refuses a CREATE of each of the 17 kinds (CellarBucket by add-on id and NetworkGroup included) in a namespace the default credentials do not allow", func() {
		ns := uniq("b")
		createNamespace(ns)
		clusterCreds("default", []string{"somewhere-else"}, nil)
		expectDenied(sample("PostgreSql", ns, "probe", orgX), "does not allow namespace "+ns)
		for _, c := range configCRDs() {
			expectDenied(sample(c.kind, ns, "x", orgX), notAllowedNS(c.plural, "x", ns, defaultCreds))
		}
	})

	It("checks a CellarBucket naming its Cellar by add-on id (namespace, spec.cellar.organisation) and a NetworkGroup; admits a CellarBucket naming a Cellar resource of its namespace", func() {
		a, b := uniq("team-a"), uniq("team-b")
		createNamespace(a)
		createNamespace(b)
		clusterCreds("default", []string{a}, nil, orgX)
		for _, kind := range []string{"CellarBucket", "NetworkGroup"} {
			plural := map[string]string{"CellarBucket": "cellarbuckets", "NetworkGroup": "networkgroups"}[kind]
			expectDenied(sample(kind, b, "x", orgX), notAllowedNS(plural, "x", b, defaultCreds))
			expectDenied(sample(kind, a, "x", orgY), plural+"/x in namespace "+a+": organisation "+orgY+" is not allowed by "+defaultCreds)
			expectAdmitted(sample(kind, a, "x", orgX))
		}
		// By name: the bucket uses the keys its namespace's Cellar published, no credentials
		// of its own (the Cellar was checked when it was admitted).
		expectAdmitted(sampleByName("CellarBucket", b, "by-name"))
		expectAdmitted(sampleByName("CellarBucket", a, "by-name"))
	})

	It("checks spec changes of an existing resource but never blocks metadata writes, finalizer removal or deletion", func() {
		ns := uniq("before")
		createNamespace(ns)
		pg := sample("PostgreSql", ns, "db", orgX)
		pg.SetFinalizers([]string{"api.clever-cloud.com/test"})
		Expect(k8s.Create(ctx, pg)).To(Succeed())

		// An admin restricts the default credentials afterwards.
		clusterCreds("default", []string{"somewhere-else"}, nil)
		expectDenied(sample("PostgreSql", ns, "new", orgX), "does not allow namespace "+ns)

		// A spec change is refused with the same message.
		changed := pg.DeepCopy()
		Expect(unstructured.SetNestedField(changed.Object, "s", "spec", "instance", "plan")).To(Succeed())
		err := k8s.Update(ctx, changed)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(notAllowedNS("postgresqls", "db", ns, defaultCreds)))

		// Metadata (what the operator writes: finalizers, annotations) goes through.
		patch := []byte(`{"metadata":{"annotations":{"example.com/x":"y"},"finalizers":["api.clever-cloud.com/test","api.clever-cloud.com/other"]}}`)
		Expect(k8s.Patch(ctx, pg, client.RawPatch("application/merge-patch+json", patch))).To(Succeed())
		// Deletion, and the removal of the finalizers of a resource being deleted.
		Expect(k8s.Delete(ctx, pg)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pg), pg)).To(Succeed())
		Expect(pg.GetDeletionTimestamp()).NotTo(BeNil())
		pg.SetFinalizers(nil)
		Expect(k8s.Update(ctx, pg)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(pg), pg.DeepCopy()))
		}).WithTimeout(timeout).Should(BeTrue())
	})

	It("matches CREATE and UPDATE of every kind of config/crd/bases at every version, and is bound to every ClusterCleverCredentials", func() {
		rules := policy.Spec.MatchConstraints.ResourceRules
		var listed []string
		for _, r := range rules {
			Expect(r.Operations).To(ConsistOf(admissionregistrationv1.Create, admissionregistrationv1.Update))
			Expect(r.APIGroups).To(Equal([]string{group}))
			Expect(r.APIVersions).To(Equal([]string{"*"}))
			Expect(r.ResourceNames).To(BeEmpty())
			listed = append(listed, r.Resources...)
		}
		var plurals []string
		for _, c := range configCRDs() {
			Expect(c.group).To(Equal(group))
			plurals = append(plurals, c.plural)
		}
		sort.Strings(listed)
		sort.Strings(plurals)
		Expect(listed).To(Equal(plurals), "the policy's resources are exactly the plurals of every CRD but the credentials kinds': update config/credentials-policy/policy.yaml, internal/admission/policy.yaml and dist/chart/templates/credentials-policy.yaml")

		Expect(policy.Spec.ParamKind).To(Equal(&admissionregistrationv1.ParamKind{APIVersion: "api.clever-cloud.com/v1alpha1", Kind: "ClusterCleverCredentials"}))
		Expect(policy.Spec.FailurePolicy).To(HaveValue(Equal(admissionregistrationv1.Fail)))
		Expect(binding.Spec.ParamRef).NotTo(BeNil())
		Expect(binding.Spec.ParamRef.Name).To(BeEmpty())
		Expect(binding.Spec.ParamRef.Selector).To(Equal(&metav1.LabelSelector{}), "every ClusterCleverCredentials is a parameter")
		Expect(binding.Spec.ParamRef.ParameterNotFoundAction).To(HaveValue(Equal(admissionregistrationv1.AllowAction)))
		Expect(binding.Spec.ValidationActions).To(Equal([]admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}))
		Expect(binding.Spec.MatchResources).To(BeNil())

		stored := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(policy), stored)).To(Succeed())
		Expect(stored.Spec.Validations).To(Equal(policy.Spec.Validations))
		Expect(stored.Spec.Variables).To(Equal(policy.Spec.Variables))
		if tcs := stored.Status.TypeChecking; tcs != nil {
			Expect(tcs.ExpressionWarnings).To(BeEmpty())
		}
	})
})

var _ = Describe("the copies of the policy", func() {
	fromConfig := func(file string) map[string]any { return kube.ReadYAML(filepath.Join(policyDir, file)) }

	It("internal/admission (the operator's installer, for OLM) embeds the same files", func() {
		for _, f := range []string{"policy.yaml", "binding.yaml"} {
			want, err := os.ReadFile(filepath.Join(policyDir, f))
			Expect(err).NotTo(HaveOccurred())
			got, err := os.ReadFile(filepath.Join(repoRoot, "internal", "admission", f))
			Expect(err).NotTo(HaveOccurred())
			Expect(string(got)).To(Equal(string(want)), "internal/admission/%s differs from config/credentials-policy/%s: copy it", f, f)
		}
		p, b, err := admission.Objects()
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Name).To(Equal("clever-operator-credentials"))
		Expect(b.Name).To(Equal(p.Name))
		Expect(b.Spec.PolicyName).To(Equal(p.Name))
	})

	It("the Helm chart renders the same policy and binding by default, and none with credentialsPolicy.enabled=false", func() {
		helm := kube.HelmTemplate
		find := func(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
			for _, o := range objs {
				if o.GetKind() == kind && o.GetName() == name {
					return o
				}
			}
			return nil
		}
		objs := helm()
		name := "co-clever-operator-credentials"
		vap := find(objs, "ValidatingAdmissionPolicy", name)
		b := find(objs, "ValidatingAdmissionPolicyBinding", name)
		Expect(vap).NotTo(BeNil())
		Expect(b).NotTo(BeNil())
		Expect(vap.Object["spec"]).To(Equal(fromConfig("policy.yaml")["spec"]), "chart and config/credentials-policy/policy.yaml differ")
		want := fromConfig("binding.yaml")["spec"].(map[string]any)
		want["policyName"] = name
		Expect(b.Object["spec"]).To(Equal(want), "chart and config/credentials-policy/binding.yaml differ (but for the policy name)")
		for _, o := range []*unstructured.Unstructured{vap, b} {
			Expect(k8s.Create(ctx, o.DeepCopy(), client.DryRunAll)).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
		}

		objs = helm("--set", "credentialsPolicy.enabled=false")
		Expect(find(objs, "ValidatingAdmissionPolicy", name)).To(BeNil())
		Expect(find(objs, "ValidatingAdmissionPolicyBinding", name)).To(BeNil())
	})

	It("EnsureCredentialsPolicy creates the policy, restores an edited one, and needs only the RBAC the bundle grants", func() {
		c, err := admission.NewClient(restCfg)
		Expect(err).NotTo(HaveOccurred())
		Expect(admission.EnsureCredentialsPolicy(ctx, c)).To(Succeed())
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: admission.PolicyName}, p)).To(Succeed())
		Expect(p.Spec.Validations).To(Equal(policy.Spec.Validations))
		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: admission.PolicyName}, b)).To(Succeed())
		Expect(b.Spec.PolicyName).To(Equal(admission.PolicyName))
		rv := p.ResourceVersion

		// Again: nothing written.
		Expect(admission.EnsureCredentialsPolicy(ctx, c)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKey{Name: admission.PolicyName}, p)).To(Succeed())
		Expect(p.ResourceVersion).To(Equal(rv), "an up-to-date policy is not rewritten")

		// Someone weakens it: restored.
		p.Spec.Validations = p.Spec.Validations[:1]
		Expect(k8s.Update(ctx, p)).To(Succeed())
		b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}
		Expect(k8s.Update(ctx, b)).To(Succeed())
		Expect(admission.EnsureCredentialsPolicy(ctx, c)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKey{Name: admission.PolicyName}, p)).To(Succeed())
		Expect(p.Spec.Validations).To(Equal(policy.Spec.Validations))
		Expect(k8s.Get(ctx, client.ObjectKey{Name: admission.PolicyName}, b)).To(Succeed())
		Expect(b.Spec.ValidationActions).To(Equal([]admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}))

		Expect(k8s.Delete(ctx, b)).To(Succeed())
		Expect(k8s.Delete(ctx, p)).To(Succeed())

		// With only the bundle's rights (config/manifests/admission-policy-rbac.yaml, bound to
		// a ServiceAccount of this test): create from nothing, restore; nothing else.
		ns := uniq("olm")
		createNamespace(ns)
		Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "installer", Namespace: ns}})).To(Succeed())
		raw, err := os.ReadFile(filepath.Join(repoRoot, "config", "manifests", "admission-policy-rbac.yaml"))
		Expect(err).NotTo(HaveOccurred())
		for _, o := range kube.Decode(raw) {
			if o.GetKind() == "ClusterRoleBinding" {
				Expect(unstructured.SetNestedSlice(o.Object, []any{map[string]any{"kind": "ServiceAccount", "name": "installer", "namespace": ns}}, "subjects")).To(Succeed())
			}
			Expect(k8s.Create(ctx, o)).To(Succeed(), o.GetName())
			DeferCleanup(func() { Expect(k8s.Delete(ctx, o)).To(Succeed()) })
		}
		// The API server also requires whoever creates a policy with a paramKind to be allowed
		// to get every object of that kind: the operator's own role (config/rbac) grants it on
		// clusterclevercredentials.
		reader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-credentials-reader"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{group}, Resources: []string{"clusterclevercredentials"}, Verbs: []string{"get", "list", "watch"},
		}}}
		Expect(k8s.Create(ctx, reader)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(ctx, reader)).To(Succeed()) })
		readerBinding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: reader.Name},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: reader.Name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "installer", Namespace: ns}}}
		Expect(k8s.Create(ctx, readerBinding)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(ctx, readerBinding)).To(Succeed()) })
		sa := rest.CopyConfig(restCfg)
		sa.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":installer"}
		asSA, err := admission.NewClient(sa)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error { return admission.EnsureCredentialsPolicy(ctx, asSA) }).WithTimeout(timeout).Should(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKey{Name: admission.PolicyName}, p)).To(Succeed())
		p.Spec.Validations = p.Spec.Validations[:1]
		Expect(k8s.Update(ctx, p)).To(Succeed())
		Expect(admission.EnsureCredentialsPolicy(ctx, asSA)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKey{Name: admission.PolicyName}, p)).To(Succeed())
		Expect(p.Spec.Validations).To(Equal(policy.Spec.Validations))
		// No list, no delete, no other name.
		err = asSA.List(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyList{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		err = asSA.Delete(ctx, p.DeepCopy())
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		err = asSA.Get(ctx, client.ObjectKeyFromObject(policy), &admissionregistrationv1.ValidatingAdmissionPolicy{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		Expect(k8s.Delete(ctx, p)).To(Succeed())
		awaitPolicyUnloaded(admission.PolicyName)
	})
})

// crd describes one CRD of config/crd/bases the policy checks (every one but the credentials
// kinds').
type crd struct{ kind, plural, group string }

func configCRDs() []crd {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var out []crd
	for _, f := range files {
		c := &apiextensionsv1.CustomResourceDefinition{}
		kube.ReadStrict(f, c)
		if c.Spec.Names.Kind == "CleverCredentials" || c.Spec.Names.Kind == "ClusterCleverCredentials" {
			continue
		}
		out = append(out, crd{kind: c.Spec.Names.Kind, plural: c.Spec.Names.Plural, group: c.Spec.Group})
	}
	Expect(out).To(HaveLen(kindCount))
	return out
}
