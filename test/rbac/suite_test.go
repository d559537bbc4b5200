package rbac

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/clever-operator/clever-operator/test/kube"
)

// The envtest half of this package: the operator's real rendered manifests (kustomize build,
// helm template, the OLM bundle) applied to a kube-apiserver that authorizes with RBAC, and
// asked with SubjectAccessReviews what the operator's ServiceAccount may do; and the metrics
// endpoint's authentication and authorization against that API server's TokenReview and
// SubjectAccessReview.
//
//	KUBEBUILDER_ASSETS=$PWD/bin/envtest/1.35.4 go test ./test/rbac/ -count=1
func TestEnvtest(t *testing.T) {
	kube.RunSuite(t, "Operator RBAC and metrics on envtest", 30*time.Second, 200*time.Millisecond)
}

var (
	restCfg *rest.Config
	k8s     client.Client
	clients *kubernetes.Clientset
)

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	env, err := kube.NewEnvironment()
	Expect(err).NotTo(HaveOccurred())
	restCfg, k8s = kube.StartEnvironment(env, client.Options{})
	clients, err = kubernetes.NewForConfig(restCfg)
	Expect(err).NotTo(HaveOccurred())
})

// tool runs bin/<name> from the repository root and returns its stdout.
func tool(name string, args ...string) []byte {
	GinkgoHelper()
	bin, err := filepath.Abs(root("bin", name))
	Expect(err).NotTo(HaveOccurred())
	_, err = os.Stat(bin)
	Expect(err).NotTo(HaveOccurred(), "%s missing: run `make %s`", bin, name)
	cmd := exec.Command(bin, args...)
	cmd.Dir = root()
	home := GinkgoT().TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "c"), "HELM_CONFIG_HOME="+filepath.Join(home, "cf"),
		"HELM_DATA_HOME="+filepath.Join(home, "d"), "KUBECONFIG="+filepath.Join(home, "none"))
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	Expect(cmd.Run()).To(Succeed(), "%s %v: %s", name, args, stderr.String())
	return out.Bytes()
}

// ensureNamespace creates namespace ns unless it exists.
func ensureNamespace(ns string) {
	GinkgoHelper()
	err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}

// applyRBAC creates the ServiceAccounts, (Cluster)Roles and (Cluster)RoleBindings among objs,
// and returns how many of each kind.
func applyRBAC(objs []*unstructured.Unstructured) map[string]int {
	GinkgoHelper()
	n := map[string]int{}
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			if ns := o.GetNamespace(); ns != "" {
				ensureNamespace(ns)
			}
			Expect(k8s.Create(context.Background(), o.DeepCopy())).To(Succeed(), "%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
			n[o.GetKind()]++
		}
	}
	return n
}

// decode is kube.Decode (a multi-document manifest).
func decode(b []byte) []*unstructured.Unstructured { return kube.Decode(b) }

// access asks the API server (SubjectAccessReview) whether the ServiceAccount ns/name may do
// verb on resource (group "" = core) in namespace (empty: cluster-wide), optionally on one
// object name.
func access(saNS, sa, verb, group, resource, namespace, name string) bool {
	GinkgoHelper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + saNS + ":" + sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + saNS, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: verb, Group: group, Resource: resource, Name: name,
		},
	}}
	Expect(k8s.Create(context.Background(), sar)).To(Succeed())
	return sar.Status.Allowed
}

func apierrorsIsAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }
