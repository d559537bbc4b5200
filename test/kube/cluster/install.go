package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

// What the whole-cluster suites share to install the operator and drive it: the test of an
// install path is "the operator, as the ServiceAccount that path created, runs every kind".

// EveryKind is one resource of every kind in namespace ns, in organisation org: the samples of
// config/samples (the 14 typed kinds, the generic Addon, a NetworkGroup and a CellarBucket in
// the Cellar), without the credentials objects. Run from the repository root.
func EveryKind(ns, org string) []*unstructured.Unstructured {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join("config", "samples", "api_*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var out []*unstructured.Unstructured
	for _, f := range files {
		if base := filepath.Base(f); !strings.Contains(base, "credentials") {
			out = append(out, kube.Sample(base, ns, org))
		}
	}
	Expect(out).To(HaveLen(17))
	return out
}

// OperatorCredentials is the Secret clever-operator-credentials of namespace ns that every
// install path's Deployment reads through envFrom: the CLEVER_OPERATOR_API_* keys of cred at
// endpoint.
func OperatorCredentials(ns, endpoint string, cred fakeapi.Credential) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "clever-operator-credentials", Namespace: ns},
		StringData: map[string]string{
			"CLEVER_OPERATOR_API_ENDPOINT": endpoint, "CLEVER_OPERATOR_API_CONSUMER_KEY": cred.ConsumerKey,
			"CLEVER_OPERATOR_API_CONSUMER_SECRET": cred.ConsumerSecret, "CLEVER_OPERATOR_API_TOKEN": cred.Token,
			"CLEVER_OPERATOR_API_SECRET": cred.Secret,
		},
	}
}

// BuildOperator builds the operator from the working tree into dir/manager (what the image's
// /manager is) and returns its path.
func BuildOperator(dir string) string {
	GinkgoHelper()
	bin := filepath.Join(dir, "manager")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build of the operator: %s", out)
	return bin
}

// AvailablePod waits for Deployment namespace/name to be Available and returns one of its
// Running Pods.
func AvailablePod(c client.Client, namespace, name string) *corev1.Pod {
	GinkgoHelper()
	var pod *corev1.Pod
	Eventually(func() error {
		d := &appsv1.Deployment{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
			return err
		}
		available := false
		for _, cond := range d.Status.Conditions {
			available = available || (cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue)
		}
		if !available {
			return fmt.Errorf("deployment %s/%s not Available: %+v", namespace, name, d.Status.Conditions)
		}
		pods := &corev1.PodList{}
		if err := c.List(context.Background(), pods, client.InNamespace(namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
			return err
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				pod = p
				return nil
			}
		}
		return fmt.Errorf("no Running pod among %d", len(pods.Items))
	}).Should(Succeed())
	return pod
}

// Denials returns the requests of user that RBAC refused, in the audit log from offset on: 403s
// whose audit annotation says the authorizer forbade them (a create refused in a namespace
// being deleted is a 403 that RBAC allowed).
func (c *Cluster) Denials(user string, offset int64) []string {
	GinkgoHelper()
	events, _, err := c.AuditEvents(offset)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, e := range events {
		if e.User.Username == user && e.Forbidden() && e.Annotations["authorization.k8s.io/decision"] == "forbid" {
			out = append(out, e.Verb+" "+e.RequestURI)
		}
	}
	return out
}
