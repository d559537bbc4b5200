// Package protection_test checks the deletion protection of config/deletion-protection (a
// ValidatingAdmissionPolicy and its cluster-wide binding, no webhook) on the real
// kube-apiserver of envtest: a resource of api.clever-cloud.com annotated
// api.clever-cloud.com/deletion-protection: "true" cannot be deleted, one without it (or with
// another value) can, removing the annotation is allowed, every kind is covered, and the Helm
// chart (dist/chart) renders the same policy.
//
// No operator runs here: the custom resources carry no finalizer, so an allowed DELETE
// removes them at once.
//
//	KUBEBUILDER_ASSETS=$PWD/bin/envtest/1.35.4 go test ./test/protection/ -count=1
package protection_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
)

func TestProtection(t *testing.T) {
	kube.RunSuite(t, "Deletion protection suite (ValidatingAdmissionPolicy on envtest)", 0, 0)
}

const (
	annotation = "api.clever-cloud.com/deletion-protection"
	group      = "api.clever-cloud.com"

	repoRoot      = "../.."
	crdDir        = repoRoot + "/config/crd/bases"
	protectionDir = repoRoot + "/config/deletion-protection"

	// activationTimeout bounds the wait for the API server to load and compile the policy
	// (asynchronous, through an informer).
	activationTimeout = 30 * time.Second
)

var (
	ctx     = context.Background()
	restCfg *rest.Config
	k8s     client.Client

	// policy and binding as read from config/deletion-protection (what the API server holds
	// is fetched when needed).
	policy  *admissionregistrationv1.ValidatingAdmissionPolicy
	binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// activatedAfter is how long the API server took to enforce the new policy.
	activatedAfter time.Duration
)

var _ = BeforeSuite(func() {
	env, err := kube.NewEnvironment(crdDir)
	Expect(err).NotTo(HaveOccurred())
	restCfg, k8s = kube.StartEnvironment(env, client.Options{Scheme: clientgoscheme.Scheme})

	policy = &admissionregistrationv1.ValidatingAdmissionPolicy{}
	kube.ReadStrict(filepath.Join(protectionDir, "policy.yaml"), policy)
	Expect(policy.Kind).To(Equal("ValidatingAdmissionPolicy"))
	Expect(policy.APIVersion).To(Equal("admissionregistration.k8s.io/v1"))
	binding = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	kube.ReadStrict(filepath.Join(protectionDir, "binding.yaml"), binding)
	Expect(binding.Kind).To(Equal("ValidatingAdmissionPolicyBinding"))
	Expect(binding.Spec.PolicyName).To(Equal(policy.Name))

	Expect(k8s.Create(ctx, policy.DeepCopy())).To(Succeed())
	Expect(k8s.Create(ctx, binding.DeepCopy())).To(Succeed())

	// The API server loads policies through an informer and compiles them asynchronously:
	// until then a protected DELETE goes through. Probe with a protected object, recreated
	// whenever a DELETE got through, until one is refused.
	createNamespace("probe")
	start := time.Now()
	probe := sample("PostgreSql", "probe", "probe", "true")
	Eventually(func(g Gomega) {
		err := k8s.Create(ctx, probe.DeepCopy())
		g.Expect(err == nil || apierrors.IsAlreadyExists(err)).To(BeTrue(), "creating the probe: %v", err)
		err = k8s.Delete(ctx, probe.DeepCopy())
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the probe's DELETE was not refused yet: %v", err)
	}).WithTimeout(activationTimeout).WithPolling(100 * time.Millisecond).Should(Succeed())
	activatedAfter = time.Since(start)
	GinkgoWriter.Printf("policy enforced after %s\n", activatedAfter)
	unprotect(probe)
	Expect(k8s.Delete(ctx, probe)).To(Succeed())
})

func createNamespace(name string) {
	GinkgoHelper()
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
}

// samples maps each kind to its config/samples manifest (valid against its CRD).
func samples() map[string]*unstructured.Unstructured { return kube.SamplesByKind() }

// sample returns the config/samples object of kind, named name in namespace ns, with the
// protection annotation set to value ("" for no annotation at all).
func sample(kind, ns, name, value string) *unstructured.Unstructured {
	GinkgoHelper()
	s, ok := samples()[kind]
	Expect(ok).To(BeTrue(), "no sample of kind %s in config/samples", kind)
	u := s.DeepCopy()
	u.SetNamespace(ns)
	u.SetName(name)
	if value != "" {
		u.SetAnnotations(map[string]string{annotation: value})
	}
	return u
}

// create creates the sample object of kind with the protection annotation set to value.
func create(kind, ns, name, value string) *unstructured.Unstructured {
	GinkgoHelper()
	u := sample(kind, ns, name, value)
	Expect(k8s.Create(ctx, u)).To(Succeed(), "%s %s/%s", kind, ns, name)
	return u
}

// unprotect removes the annotation with a JSON merge patch (an UPDATE for admission).
func unprotect(u *unstructured.Unstructured) {
	GinkgoHelper()
	patch := []byte(`{"metadata":{"annotations":{"` + annotation + `":null}}}`)
	Expect(k8s.Patch(ctx, u, client.RawPatch("application/merge-patch+json", patch))).To(Succeed())
	Expect(u.GetAnnotations()).NotTo(HaveKey(annotation))
}

// exists tells whether the object is still stored (and not being deleted).
func exists(u *unstructured.Unstructured) bool {
	GinkgoHelper()
	cur := u.DeepCopy()
	err := k8s.Get(ctx, client.ObjectKeyFromObject(u), cur)
	if apierrors.IsNotFound(err) {
		return false
	}
	Expect(err).NotTo(HaveOccurred())
	Expect(cur.GetDeletionTimestamp()).To(BeNil(), "%s %s is being deleted", u.GetKind(), u.GetName())
	return true
}
