package protection_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/clever-operator/clever-operator/test/kube"
)

// message is the denial message of the policy's messageExpression for plural/name in ns.
func message(plural, ns, name string) string {
	return fmt.Sprintf("%s/%s in namespace %s is protected against deletion by the annotation "+
		"api.clever-cloud.com/deletion-protection=true. To delete it, first remove the protection: "+
		"kubectl annotate %s/%s api.clever-cloud.com/deletion-protection- -n %s", plural, name, ns, plural, name, ns)
}

// expectRefused deletes u and checks the API server refused it with the policy's message, and
// that u is still there.
func expectRefused(u *unstructured.Unstructured, plural string) {
	GinkgoHelper()
	err := k8s.Delete(ctx, u.DeepCopy())
	Expect(err).To(HaveOccurred(), "deleting protected %s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want 403 Forbidden (reason: Forbidden), got %v", err)
	Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy '%s' with binding '%s' denied request", policy.Name, binding.Name))
	Expect(err.Error()).To(ContainSubstring(message(plural, u.GetNamespace(), u.GetName())))
	Expect(exists(u)).To(BeTrue(), "a refused DELETE leaves the object in place")
}

// expectDeleted deletes u and checks it is gone (no finalizer: no operator runs here).
func expectDeleted(u *unstructured.Unstructured) {
	GinkgoHelper()
	Expect(k8s.Delete(ctx, u.DeepCopy())).To(Succeed(), "%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
	Expect(exists(u)).To(BeFalse())
}

// crd describes one CRD of config/crd/bases.
type crd struct {
	kind, plural, group string
	versions            []string // served versions
}

func configCRDs() []crd {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var out []crd
	for _, f := range files {
		c := &apiextensionsv1.CustomResourceDefinition{}
		kube.ReadStrict(f, c)
		if strings.HasSuffix(c.Spec.Names.Kind, "CleverCredentials") || c.Spec.Names.Kind == "NetworkGroup" || c.Spec.Names.Kind == "CellarBucket" {
			continue // the credentials kinds, NetworkGroup and CellarBucket hold no add-on: not protected against deletion
		}
		var versions []string
		for _, v := range c.Spec.Versions {
			if v.Served {
				versions = append(versions, v.Name)
			}
		}
		out = append(out, crd{kind: c.Spec.Names.Kind, plural: c.Spec.Names.Plural, group: c.Spec.Group, versions: versions})
	}
	Expect(out).To(HaveLen(15), "config/crd/bases should hold the 15 add-on kinds' CRDs (14 typed kinds and the generic Addon, besides the 2 credentials kinds)")
	return out
}

// matches tells whether one of the rules matches op on group/version/resource, with the
// wildcard semantics of admission rules.
func matches(rules []admissionregistrationv1.NamedRuleWithOperations, op admissionregistrationv1.OperationType, g, v, r string) bool {
	in := func(list []string, s string) bool {
		for _, x := range list {
			if x == "*" || x == s {
				return true
			}
		}
		return false
	}
	for _, rule := range rules {
		ops := make([]string, len(rule.Operations))
		for i, o := range rule.Operations {
			ops[i] = string(o)
		}
		if in(ops, string(op)) && in(rule.APIGroups, g) && in(rule.APIVersions, v) && in(rule.Resources, r) && len(rule.ResourceNames) == 0 {
			return true
		}
	}
	return false
}

var _ = Describe("deletion protection", func() {
	It("refuses to delete a protected PostgreSql, with a message naming it and saying how to unprotect it", func() {
		createNamespace("t1")
		pg := create("PostgreSql", "t1", "db", "true")
		expectRefused(pg, "postgresqls")
		// Whatever the options: propagation policy, grace period, preconditions, dry run.
		for _, opt := range []client.DeleteOption{client.PropagationPolicy("Foreground"), client.GracePeriodSeconds(0), client.DryRunAll,
			client.Preconditions{UID: ptr(pg.GetUID())}} {
			err := k8s.Delete(ctx, pg.DeepCopy(), opt)
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "with %#v: %v", opt, err)
		}
		Expect(exists(pg)).To(BeTrue())
		GinkgoWriter.Printf("denial: %v\n", k8s.Delete(ctx, pg.DeepCopy()))
	})

	It("lets a protected resource be changed and unprotected (UPDATE is not matched), then deleted", func() {
		createNamespace("t2")
		pg := create("PostgreSql", "t2", "db", "true")

		// A spec change of a protected resource goes through.
		Expect(unstructured.SetNestedField(pg.Object, "s", "spec", "instance", "plan")).To(Succeed())
		Expect(k8s.Update(ctx, pg)).To(Succeed())
		expectRefused(pg, "postgresqls")

		// `kubectl annotate postgresqls/db api.clever-cloud.com/deletion-protection-` is a patch.
		unprotect(pg)
		expectDeleted(pg)

		// The same with the value turned to "false" by a full update.
		pg = create("PostgreSql", "t2", "db2", "true")
		pg.SetAnnotations(map[string]string{annotation: "false"})
		Expect(k8s.Update(ctx, pg)).To(Succeed())
		expectDeleted(pg)
	})

	It("deletes unprotected resources normally: no annotations at all, or other annotations only", func() {
		createNamespace("t3")
		// No metadata.annotations at all (the has() branch of the expression).
		r := create("Redis", "t3", "cache", "")
		Expect(r.GetAnnotations()).To(BeEmpty())
		expectDeleted(r)
		// Annotations, but not this one (the `in` branch).
		r = sample("Redis", "t3", "cache2", "")
		r.SetAnnotations(map[string]string{"example.com/owner": "team-a", "api.clever-cloud.com/deletion-policy": "Orphan"})
		Expect(k8s.Create(ctx, r)).To(Succeed())
		expectDeleted(r)
	})

	It("protects only with the exact value \"true\"", func() {
		createNamespace("t4")
		for i, value := range []string{"false", "True", "yes", "1", " true", "true "} {
			r := create("Redis", "t4", fmt.Sprintf("r%d", i), value)
			expectDeleted(r)
		}
		// An empty value.
		r := sample("Redis", "t4", "empty", "")
		r.SetAnnotations(map[string]string{annotation: ""})
		Expect(k8s.Create(ctx, r)).To(Succeed())
		expectDeleted(r)
	})

	It("protects the kinds served at other versions: KV (v1alpha1) and Pulsar (v1beta1)", func() {
		createNamespace("t5")
		kv := create("KV", "t5", "kv", "true")
		Expect(kv.GetAPIVersion()).To(Equal("api.clever-cloud.com/v1alpha1"))
		pulsar := create("Pulsar", "t5", "pulsar", "true")
		Expect(pulsar.GetAPIVersion()).To(Equal("api.clever-cloud.com/v1beta1"))
		expectRefused(kv, "kvs")
		expectRefused(pulsar, "pulsars")
		unprotect(kv)
		unprotect(pulsar)
		expectDeleted(kv)
		expectDeleted(pulsar)
	})

	It("refuses a DELETE of the collection (DeleteAllOf) at the first protected object: the call fails, what was listed before it is deleted, what comes after is left", func() {
		// The API server's DeleteCollection lists the objects (in name order) and deletes them
		// one by one, each through admission with its own oldObject. With the default
		// --delete-collection-workers=1, the single worker stops at the first refused DELETE
		// and the call returns that error: objects listed before the protected one are gone,
		// the protected one and those after it remain. (`kubectl delete <plural> --all` does
		// not use DeleteCollection: it deletes each object by name, so every unprotected one
		// goes and kubectl exits non-zero for the protected one. The namespace controller does
		// use DeleteCollection: a namespace holding a protected resource stays Terminating.)
		createNamespace("t6")
		before := create("PostgreSql", "t6", "a-unprotected", "")
		protected := create("PostgreSql", "t6", "m-protected", "true")
		after := create("PostgreSql", "t6", "z-unprotected", "false")
		other := create("Redis", "t6", "a-redis", "") // another resource: not part of the call

		list := &unstructured.Unstructured{}
		list.SetAPIVersion("api.clever-cloud.com/v1")
		list.SetKind("PostgreSql")
		err := k8s.DeleteAllOf(ctx, list, client.InNamespace("t6"))
		GinkgoWriter.Printf("DeleteAllOf: %v\n", err)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the collection DELETE fails with the protected object's denial, got %v", err)
		Expect(err.Error()).To(ContainSubstring(message("postgresqls", "t6", "m-protected")))

		Expect(exists(before)).To(BeFalse(), "listed before the protected object: deleted")
		Expect(exists(protected)).To(BeTrue(), "the protected object stays")
		Expect(exists(after)).To(BeTrue(), "listed after the protected object: not reached")
		Expect(exists(other)).To(BeTrue())

		// Once it is unprotected, the same call deletes everything.
		unprotect(protected)
		Expect(k8s.DeleteAllOf(ctx, list, client.InNamespace("t6"))).To(Succeed())
		Expect(exists(protected)).To(BeFalse())
		Expect(exists(after)).To(BeFalse())
	})

	It("fails `kubectl delete postgresqls --all` for the protected object only (kubectl deletes object by object)", func() {
		// kubectl delete --all does not send a DeleteCollection: it lists, then deletes each
		// object by name (checked by hand with kubectl 1.32: the unprotected ones are deleted,
		// the protected one is refused with the policy's message and kubectl exits 1).
		createNamespace("t9")
		protected := create("PostgreSql", "t9", "m-protected", "true")
		others := []*unstructured.Unstructured{create("PostgreSql", "t9", "a-unprotected", ""), create("PostgreSql", "t9", "z-unprotected", "")}
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("api.clever-cloud.com/v1")
		list.SetKind("PostgreSqlList")
		Expect(k8s.List(ctx, list, client.InNamespace("t9"))).To(Succeed())
		Expect(list.Items).To(HaveLen(3))
		var refused []string
		for i := range list.Items {
			if err := k8s.Delete(ctx, &list.Items[i]); err != nil {
				Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
				refused = append(refused, list.Items[i].GetName())
			}
		}
		Expect(refused).To(Equal([]string{"m-protected"}))
		Expect(exists(protected)).To(BeTrue())
		for _, o := range others {
			Expect(exists(o)).To(BeFalse(), o.GetName())
		}
	})

	It("matches DELETE of every kind of config/crd/bases, at every served version, and nothing else", func() {
		rules := policy.Spec.MatchConstraints.ResourceRules
		Expect(rules).NotTo(BeEmpty())
		var listed []string
		for _, r := range rules {
			Expect(r.Operations).To(Equal([]admissionregistrationv1.OperationType{admissionregistrationv1.Delete}),
				"only DELETE is matched: removing the annotation (UPDATE) must stay possible")
			Expect(r.APIGroups).To(Equal([]string{group}))
			Expect(r.APIVersions).To(Equal([]string{"*"}), "every version, present and future")
			Expect(r.ResourceNames).To(BeEmpty())
			listed = append(listed, r.Resources...)
		}
		var plurals []string
		for _, c := range configCRDs() {
			Expect(c.group).To(Equal(group))
			plurals = append(plurals, c.plural)
			for _, v := range c.versions {
				Expect(matches(rules, admissionregistrationv1.Delete, c.group, v, c.plural)).To(BeTrue(),
					"%s (%s.%s/%s) is not protected: add %q to the resources of config/deletion-protection/policy.yaml and dist/chart/templates/deletion-protection.yaml",
					c.kind, c.plural, c.group, v, c.plural)
			}
		}
		sort.Strings(listed)
		sort.Strings(plurals)
		Expect(listed).To(Equal(plurals), "the policy's resources are exactly the CRDs' plurals")

		Expect(policy.Spec.FailurePolicy).To(HaveValue(Equal(admissionregistrationv1.Fail)))
		Expect(policy.Spec.ParamKind).To(BeNil())
		Expect(binding.Spec.ValidationActions).To(Equal([]admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}))
		Expect(binding.Spec.MatchResources).To(BeNil(), "the binding applies cluster-wide")
		Expect(binding.Spec.ParamRef).To(BeNil())
	})

	It("refuses to delete a protected resource of each of the 15 kinds, and deletes an unprotected one", func() {
		createNamespace("t7")
		byKind := samples()
		for _, c := range configCRDs() {
			Expect(byKind).To(HaveKey(c.kind), "config/samples has no %s", c.kind)
			p := create(c.kind, "t7", "protected", "true")
			expectRefused(p, c.plural)
			u := create(c.kind, "t7", "unprotected", "")
			expectDeleted(u)
		}
	})

	It("is stored as written, and reports no type-checking warning", func() {
		GinkgoWriter.Printf("policy enforced %s after its creation\n", activatedAfter)
		stored := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(policy), stored)).To(Succeed())
		Expect(stored.Spec.Validations).To(Equal(policy.Spec.Validations))
		Expect(stored.Spec.FailurePolicy).To(HaveValue(Equal(admissionregistrationv1.Fail)))
		// Defaulted by the API server: matchPolicy Equivalent (a request through another
		// version of a matched resource is matched too) and scope "*".
		Expect(stored.Spec.MatchConstraints.MatchPolicy).To(HaveValue(Equal(admissionregistrationv1.Equivalent)))
		Expect(stored.Spec.MatchConstraints.ResourceRules).To(HaveLen(len(policy.Spec.MatchConstraints.ResourceRules)))
		for i, r := range stored.Spec.MatchConstraints.ResourceRules {
			want := policy.Spec.MatchConstraints.ResourceRules[i]
			Expect(r.Scope).To(HaveValue(Equal(admissionregistrationv1.AllScopes)))
			r.Scope = want.Scope
			Expect(r).To(Equal(want))
		}
		// status.typeChecking is written by kube-controller-manager's
		// validatingadmissionpolicy-status controller, which envtest does not run (and which
		// type-checks nothing when apiVersions is "*"): check it when present. The expressions
		// are exercised for real on all 15 kinds above, with and without annotations; with
		// failurePolicy Fail, an evaluation error would have refused the unprotected DELETEs.
		GinkgoWriter.Printf("stored status: %+v\n", stored.Status)
		if tcs := stored.Status.TypeChecking; tcs != nil {
			Expect(tcs.ExpressionWarnings).To(BeEmpty())
		}
	})

	It("leaves resources deleted with their CRD unprotected (the CRD's cleanup bypasses admission)", func() {
		// Documented limitation: deleting a CRD deletes all its resources through storage,
		// without admission, so protected ones go too. Restores the CRD afterwards.
		createNamespace("t8")
		kv := create("KV", "t8", "kv", "true")
		expectRefused(kv, "kvs")

		c := &apiextensionsv1.CustomResourceDefinition{}
		kube.ReadStrict(filepath.Join(crdDir, "api.clever-cloud.com_kvs.yaml"), c)
		Expect(k8s.Delete(ctx, c.DeepCopy())).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(c), &apiextensionsv1.CustomResourceDefinition{}))
		}).WithTimeout(20*time.Second).WithPolling(100*time.Millisecond).Should(BeTrue(), "the CRD and its resources are deleted")

		Expect(k8s.Create(ctx, c.DeepCopy())).To(Succeed())
		Expect(envtest.WaitForCRDs(restCfg, []*apiextensionsv1.CustomResourceDefinition{c},
			envtest.CRDInstallOptions{PollInterval: 100 * time.Millisecond, MaxTime: 20 * time.Second})).To(Succeed())
		Eventually(func() bool {
			err := k8s.Get(ctx, client.ObjectKeyFromObject(kv), kv.DeepCopy())
			return apierrors.IsNotFound(err)
		}).WithTimeout(10*time.Second).Should(BeTrue(), "the protected KV went with its CRD")
	})
})

var _ = Describe("the Helm chart (dist/chart)", func() {
	helm := kube.HelmTemplate
	// ofKind returns the objects of kind, only those of deletion protection for admission
	// policies (the chart has others: config/credentials-policy's, tested in test/credentialspolicy).
	ofKind := func(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == kind && (!strings.HasPrefix(kind, "ValidatingAdmissionPolicy") || strings.HasSuffix(o.GetName(), "-deletion-protection")) {
				out = append(out, o)
			}
		}
		return out
	}
	// fromConfig reads a file of config/deletion-protection as plain data (no defaulting,
	// no typed round trip): the comparison is with exactly what is written.
	fromConfig := func(file string) map[string]any { return kube.ReadYAML(filepath.Join(protectionDir, file)) }

	It("renders the same policy and binding as config/deletion-protection by default", func() {
		objs := helm()
		vaps := ofKind(objs, "ValidatingAdmissionPolicy")
		bindings := ofKind(objs, "ValidatingAdmissionPolicyBinding")
		Expect(vaps).To(HaveLen(1))
		Expect(bindings).To(HaveLen(1))
		vap, b := vaps[0], bindings[0]
		Expect(vap.GetName()).To(Equal("co-clever-operator-deletion-protection"))
		Expect(vap.GetNamespace()).To(BeEmpty(), "cluster-scoped")
		Expect(b.GetNamespace()).To(BeEmpty(), "cluster-scoped")
		Expect(vap.GetAPIVersion()).To(Equal("admissionregistration.k8s.io/v1"))
		Expect(b.GetAPIVersion()).To(Equal("admissionregistration.k8s.io/v1"))

		Expect(vap.Object["spec"]).To(Equal(fromConfig("policy.yaml")["spec"]), "policy spec: chart and config/deletion-protection/policy.yaml differ")
		wantBinding := fromConfig("binding.yaml")["spec"].(map[string]any)
		gotBinding := b.Object["spec"].(map[string]any)
		Expect(gotBinding["policyName"]).To(Equal(vap.GetName()))
		Expect(gotBinding).To(Equal(merge(wantBinding, map[string]any{"policyName": vap.GetName()})),
			"binding spec: chart and config/deletion-protection/binding.yaml differ (but for the policy name)")

		// And the API server takes them (server-side dry run).
		for _, o := range []*unstructured.Unstructured{vap, b} {
			Expect(k8s.Create(ctx, o.DeepCopy(), client.DryRunAll)).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
		}
	})

	It("renders neither with deletionProtection.enabled=false", func() {
		objs := helm("--set", "deletionProtection.enabled=false")
		Expect(ofKind(objs, "ValidatingAdmissionPolicy")).To(BeEmpty())
		Expect(ofKind(objs, "ValidatingAdmissionPolicyBinding")).To(BeEmpty())
		Expect(ofKind(objs, "Deployment")).To(HaveLen(1), "the rest of the chart is still there")
	})

	It("keeps config/default wired to config/deletion-protection", func() {
		b, err := os.ReadFile(filepath.Join(repoRoot, "config", "default", "kustomization.yaml"))
		Expect(err).NotTo(HaveOccurred())
		k := struct {
			Resources []string `json:"resources"`
		}{}
		Expect(yaml.Unmarshal(b, &k)).To(Succeed())
		Expect(sets.New(k.Resources...).Has("../deletion-protection")).To(BeTrue(), "config/default/kustomization.yaml must list ../deletion-protection")
	})
})

func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func ptr[T any](v T) *T { return &v }
