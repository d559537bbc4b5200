// Package credentialspolicy_test checks the credentials policy of config/credentials-policy (a
// ValidatingAdmissionPolicy whose parameters are every ClusterCleverCredentials, no webhook) on
// the real kube-apiserver of envtest: a resource of api.clever-cloud.com using a
// ClusterCleverCredentials (by spec.credentialsRef, or `default` without one) is refused at
// admission when that object does not allow its namespace or its organisation; with no
// ClusterCleverCredentials everything is admitted. It also checks that the Helm chart and the
// operator's own installer (internal/admission, for OLM) ship the same policy.
//
// No operator runs here.
//
//	KUBEBUILDER_ASSETS=$PWD/bin/envtest/1.35.4 go test ./test/credentialspolicy/ -count=1
package credentialspolicy_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/clever-operator/clever-operator/api/v1alpha1"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestCredentialsPolicy(t *testing.T) {
	kube.RunSuite(t, "Credentials admission policy suite (ValidatingAdmissionPolicy on envtest)", 0, 0)
}

const (
	group = "api.clever-cloud.com"

	repoRoot  = "../.."
	crdDir    = repoRoot + "/config/crd/bases"
	policyDir = repoRoot + "/config/credentials-policy"

	orgX = "orga_00000000-0000-0000-0000-00000000000a"
	orgY = "orga_00000000-0000-0000-0000-00000000000b"

	// timeout bounds the waits for the API server to see a new policy or parameter (both
	// are loaded through informers, asynchronously).
	timeout = 30 * time.Second
)

var (
	ctx     = context.Background()
	restCfg *rest.Config
	k8s     client.Client
	scheme  = runtime.NewScheme()

	policy  *admissionregistrationv1.ValidatingAdmissionPolicy
	binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding

	// admittedBeforeParamCRD is what a CREATE got while the policy's paramKind CRD did not
	// exist yet (nil: admitted).
	admittedBeforeParamCRD error
)

// credentialsCRDs are the CRDs of the credentials kinds; the suite installs them after the
// policy, as a fresh `kubectl apply` of config/default may (the policy may name a paramKind
// whose CRD is not established yet).
var credentialsCRDs = []string{
	crdDir + "/api.clever-cloud.com_clusterclevercredentials.yaml",
	crdDir + "/api.clever-cloud.com_clevercredentials.yaml",
}

var _ = BeforeSuite(func() {
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(v1alpha1.AddToScheme(scheme)).To(Succeed())

	// Every CRD but the credentials kinds': the 15 add-on kinds (14 typed kinds and the
	// generic Addon), CellarBucket and NetworkGroup.
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var addonCRDs []string
	for _, f := range files {
		if !strings.Contains(f, "clevercredentials") {
			addonCRDs = append(addonCRDs, f)
		}
	}
	Expect(addonCRDs).To(HaveLen(kindCount))
	env, err := kube.NewEnvironment()
	Expect(err).NotTo(HaveOccurred())
	env.CRDInstallOptions.Paths = addonCRDs
	env.CRDInstallOptions.ErrorIfPathMissing = true
	restCfg, k8s = kube.StartEnvironment(env, client.Options{Scheme: scheme})

	policy = &admissionregistrationv1.ValidatingAdmissionPolicy{}
	kube.ReadStrict(filepath.Join(policyDir, "policy.yaml"), policy)
	binding = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	kube.ReadStrict(filepath.Join(policyDir, "binding.yaml"), binding)
	Expect(binding.Spec.PolicyName).To(Equal(policy.Name))

	// The API server accepts a policy whose paramKind has no CRD yet.
	Expect(k8s.Create(ctx, policy.DeepCopy())).To(Succeed())
	Expect(k8s.Create(ctx, binding.DeepCopy())).To(Succeed())
	createNamespace("early")
	time.Sleep(2 * time.Second) // let the API server load the policy
	admittedBeforeParamCRD = k8s.Create(ctx, sample("PostgreSql", "early", "db", orgX), client.DryRunAll)
	GinkgoWriter.Printf("CREATE while the paramKind CRD is missing: %v\n", admittedBeforeParamCRD)

	crds, err := envtest.InstallCRDs(restCfg, envtest.CRDInstallOptions{Paths: credentialsCRDs, ErrorIfPathMissing: true})
	Expect(err).NotTo(HaveOccurred())
	Expect(crds).To(HaveLen(2))

	// Probe: the policy enforces once the API server has the CRD and the parameter.
	createNamespace("probe")
	start := time.Now()
	probe := newCreds("probe", []string{"elsewhere"}, nil)
	Eventually(func() error {
		return k8s.Create(ctx, sample("PostgreSql", "probe", "db", orgX, ref("probe")), client.DryRunAll)
	}).WithTimeout(2 * time.Minute).WithPolling(200 * time.Millisecond).Should(MatchError(ContainSubstring("does not allow namespace probe")))
	GinkgoWriter.Printf("policy enforced %s after the CRD was installed\n", time.Since(start))
	deleteCreds(probe)
})

func createNamespace(name string, labels ...string) {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(labels); i += 2 {
		ns.Labels[labels[i]] = labels[i+1]
	}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
}

// kindCount is the number of kinds the policy checks: the 15 add-on kinds, CellarBucket and
// NetworkGroup (every kind of api.clever-cloud.com but the credentials kinds).
const kindCount = 17

// samples maps each kind the policy checks to its config/samples manifest.
func samples() map[string]*unstructured.Unstructured {
	GinkgoHelper()
	out := kube.SamplesByKind()
	for kind := range out {
		if strings.Contains(kind, "Credentials") {
			delete(out, kind)
		}
	}
	Expect(out).To(HaveLen(kindCount))
	return out
}

type credsRef struct{ kind, name string }

// ref is a spec.credentialsRef to a ClusterCleverCredentials.
func ref(name string) credsRef { return credsRef{"ClusterCleverCredentials", name} }

// cellarAddon is the Cellar add-on id a CellarBucket sample names.
const cellarAddon = "addon_00000000-0000-0000-0000-0000000000c1"

// sample returns the config/samples object of kind as ns/name in organisation org, with the
// credentials reference given (if any). A CellarBucket names a Cellar add-on by id in org
// (spec.cellar.addonId: read with its credentials); sampleByName keeps its Cellar resource.
func sample(kind, ns, name, org string, r ...credsRef) *unstructured.Unstructured {
	GinkgoHelper()
	u := sampleByName(kind, ns, name, r...)
	if kind == "CellarBucket" {
		Expect(unstructured.SetNestedMap(u.Object, map[string]any{"addonId": cellarAddon, "organisation": org}, "spec", "cellar")).To(Succeed())
		return u
	}
	Expect(unstructured.SetNestedField(u.Object, org, "spec", "organisation")).To(Succeed())
	return u
}

// sampleByName is the config/samples object of kind as ns/name as it is (a CellarBucket names
// the Cellar resource of its namespace), with the credentials reference given (if any).
func sampleByName(kind, ns, name string, r ...credsRef) *unstructured.Unstructured {
	GinkgoHelper()
	s, ok := samples()[kind]
	Expect(ok).To(BeTrue(), "no sample of kind %s", kind)
	u := s.DeepCopy()
	u.SetNamespace(ns)
	u.SetName(name)
	for _, c := range r {
		m := map[string]any{"name": c.name}
		if c.kind != "" {
			m["kind"] = c.kind
		}
		Expect(unstructured.SetNestedMap(u.Object, m, "spec", "credentialsRef")).To(Succeed())
	}
	return u
}

// newCreds creates a ClusterCleverCredentials allowing the named namespaces and the
// organisations given (none: any).
func newCreds(name string, namespaces []string, sel *metav1.LabelSelector, orgs ...string) *v1alpha1.ClusterCleverCredentials {
	GinkgoHelper()
	c := &v1alpha1.ClusterCleverCredentials{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ClusterCleverCredentialsSpec{
			Namespaces: v1alpha1.NamespaceSelection{Names: namespaces, Selector: sel},
		},
	}
	for _, o := range orgs {
		c.Spec.Organisations = append(c.Spec.Organisations, v1alpha1.OrganisationID(o))
	}
	Expect(k8s.Create(ctx, c)).To(Succeed())
	return c
}

// clusterCreds is newCreds, deleted at the end of the spec.
func clusterCreds(name string, namespaces []string, sel *metav1.LabelSelector, orgs ...string) *v1alpha1.ClusterCleverCredentials {
	GinkgoHelper()
	c := newCreds(name, namespaces, sel, orgs...)
	DeferCleanup(func() { deleteCreds(c) })
	return c
}

// deleteCreds deletes c (if still there) and waits until the API server's admission no longer
// sees it: a CREATE it would refuse is admitted again. Specs start with no
// ClusterCleverCredentials.
func deleteCreds(c *v1alpha1.ClusterCleverCredentials) {
	GinkgoHelper()
	err := k8s.Delete(ctx, c)
	if apierrors.IsNotFound(err) {
		return
	}
	Expect(err).NotTo(HaveOccurred())
	Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(c), &v1alpha1.ClusterCleverCredentials{}))
	}).WithTimeout(timeout).Should(BeTrue())
	// Wait for the informer behind admission: an object using it, from a namespace it did not
	// allow, is admitted.
	probe := sample("Redis", "probe", "gone", orgY, ref(c.Name))
	Eventually(func() error {
		return k8s.Create(ctx, probe.DeepCopy(), client.DryRunAll)
	}).WithTimeout(timeout).WithPolling(100*time.Millisecond).Should(Succeed(), "the deleted %s is still enforced", c.Name)
}

// awaitPolicyUnloaded waits until the API server's admission no longer evaluates the
// deleted policy name beside the suite's own. Both deny the same objects, and a denial names
// either (in the plugin's order): a spec run right after the deletion (the order is random)
// got denials naming the deleted policy where it expects the suite's (a make test run of
// 2026-11-29, six specs). Twenty denials in a row naming the suite's policy tell it is gone.
func awaitPolicyUnloaded(name string) {
	GinkgoHelper()
	allowed, probe := uniq("unload-allowed"), uniq("unload-probe")
	createNamespace(allowed)
	createNamespace(probe)
	clusterCreds("default", []string{allowed}, nil, orgX) // deleted (and waited for) after the spec
	u := sample("Redis", probe, "probe", orgX)
	Eventually(func(g Gomega) {
		for range 20 {
			err := k8s.Create(ctx, u.DeepCopy(), client.DryRunAll)
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the CREATE was not refused: %v", err)
			g.Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy '%s' ", policy.Name))
		}
	}).WithTimeout(timeout).WithPolling(200*time.Millisecond).Should(Succeed(), "policy %s is still evaluated after its deletion", name)
}

// expectDenied checks that the API server refuses to create u (server-side dry run) with a
// message containing every want, once it has caught up with the parameters.
func expectDenied(u *unstructured.Unstructured, want ...string) {
	GinkgoHelper()
	var last error
	Eventually(func(g Gomega) {
		last = k8s.Create(ctx, u.DeepCopy(), client.DryRunAll)
		g.Expect(apierrors.IsForbidden(last)).To(BeTrue(), "the CREATE of %s %s/%s was not refused: %v", u.GetKind(), u.GetNamespace(), u.GetName(), last)
	}).WithTimeout(timeout).WithPolling(100 * time.Millisecond).Should(Succeed())
	Expect(last.Error()).To(ContainSubstring("ValidatingAdmissionPolicy '%s' with binding '%s' denied request", policy.Name, binding.Name))
	for _, w := range want {
		Expect(last.Error()).To(ContainSubstring(w))
	}
	GinkgoWriter.Printf("denied: %v\n", last)
}

// expectAdmitted checks that the API server admits the CREATE of u (server-side dry run). Call
// it after an expectDenied that proves the parameters in place are seen.
func expectAdmitted(u *unstructured.Unstructured) {
	GinkgoHelper()
	Expect(k8s.Create(ctx, u.DeepCopy(), client.DryRunAll)).To(Succeed(), "%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
}

// uniq returns a name unique to the running spec.
var counter int

func uniq(prefix string) string {
	counter++
	return fmt.Sprintf("%s-%d", prefix, counter)
}
