package cluster_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
)

// podTemplate is a Pod that KWOK reports Running and Ready (no container runs: the image is
// never pulled).
func podTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "clever-operator-test/none:1"}},
		},
	}
}

// gone reports whether obj no longer exists.
func gone(ctx context.Context, obj client.Object) func() bool {
	key := client.ObjectKeyFromObject(obj)
	return func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, key, obj))
	}
}

// ownedConfigMaps creates ConfigMap owner and ConfigMap dependent owned by it (controller
// reference, blockOwnerDeletion as controllers set it).
func ownedConfigMaps(ctx context.Context, ns string) (owner, dependent *corev1.ConfigMap) {
	GinkgoHelper()
	owner = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	Expect(k8s.Create(ctx, owner)).To(Succeed())
	dependent = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "dependent", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}},
	}}
	Expect(k8s.Create(ctx, dependent)).To(Succeed())
	return owner, dependent
}

var _ = Describe("A whole cluster", func() {
	var ns string
	BeforeEach(func() { ns = suite.NewNamespace() })

	It("makes a Deployment Available: its Pods are scheduled onto the KWOK Node and Running/Ready", func(ctx SpecContext) {
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: podTemplate("web"),
			},
		}
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
			g.Expect(d.Status.AvailableReplicas).To(Equal(int32(2)))
			g.Expect(d.Status.Conditions).To(ContainElement(And(
				HaveField("Type", appsv1.DeploymentAvailable), HaveField("Status", corev1.ConditionTrue))))
		}).WithContext(ctx).Should(Succeed())
		pods := &corev1.PodList{}
		Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app": "web"})).To(Succeed())
		Expect(pods.Items).To(HaveLen(2))
		for _, p := range pods.Items {
			Expect(p.Spec.NodeName).To(Equal(whole.NodeName), p.Name)
			Expect(p.Status.Phase).To(Equal(corev1.PodRunning), p.Name)
			Expect(p.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))), p.Name)
			// ServiceAccount admission (off in envtest) gave it the default ServiceAccount.
			Expect(p.Spec.ServiceAccountName).To(Equal("default"), p.Name)
		}
	}, SpecTimeout(90*time.Second))

	It("runs a Job to completion (KWOK ends Pods owned by a Job Succeeded)", func(ctx SpecContext) {
		tpl := podTemplate("job")
		tpl.Spec.RestartPolicy = corev1.RestartPolicyNever
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns},
			Spec:       batchv1.JobSpec{Template: tpl, BackoffLimit: ptr.To[int32](0)},
		}
		Expect(k8s.Create(ctx, j)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(j), j)).To(Succeed())
			g.Expect(j.Status.Succeeded).To(Equal(int32(1)))
			g.Expect(j.Status.Conditions).To(ContainElement(And(
				HaveField("Type", batchv1.JobComplete), HaveField("Status", corev1.ConditionTrue))))
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(90*time.Second))

	Describe("garbage collection", func() {
		It("deletes the dependents of an object deleted in the background", func(ctx SpecContext) {
			owner, dependent := ownedConfigMaps(ctx, ns)
			Expect(k8s.Delete(ctx, owner, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
			Eventually(gone(ctx, owner)).WithContext(ctx).Should(BeTrue())
			Eventually(gone(ctx, dependent)).WithContext(ctx).Should(BeTrue())
		}, SpecTimeout(90*time.Second))

		It("orphans the dependents on request: they stay, their ownerReference removed", func(ctx SpecContext) {
			owner, dependent := ownedConfigMaps(ctx, ns)
			Expect(k8s.Delete(ctx, owner, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(Succeed())
			// The owner goes once the garbage collector has orphaned the dependent (until
			// then it holds the orphan finalizer).
			Eventually(gone(ctx, owner)).WithContext(ctx).Should(BeTrue())
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dependent), dependent)).To(Succeed())
			Expect(dependent.OwnerReferences).To(BeEmpty())
			Consistently(func() error {
				return k8s.Get(ctx, client.ObjectKeyFromObject(dependent), dependent)
			}).WithContext(ctx).WithTimeout(2 * time.Second).Should(Succeed())
		}, SpecTimeout(90*time.Second))

		It("deletes the dependents first in the foreground, then the owner", func(ctx SpecContext) {
			owner, dependent := ownedConfigMaps(ctx, ns)
			// A finalizer on the dependent holds it, so the owner must wait for it.
			dependent.Finalizers = []string{"test.clever-operator/hold"}
			Expect(k8s.Update(ctx, dependent)).To(Succeed())
			Expect(k8s.Delete(ctx, owner, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dependent), dependent)).To(Succeed())
				g.Expect(dependent.DeletionTimestamp).NotTo(BeNil(), "the garbage collector deletes the dependent")
			}).WithContext(ctx).Should(Succeed())
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(owner), owner)).To(Succeed(), "the owner waits for its dependent")
			Expect(owner.Finalizers).To(ContainElement(metav1.FinalizerDeleteDependents))
			dependent.Finalizers = nil
			Expect(k8s.Update(ctx, dependent)).To(Succeed())
			Eventually(gone(ctx, dependent)).WithContext(ctx).Should(BeTrue())
			Eventually(gone(ctx, owner)).WithContext(ctx).Should(BeTrue())
		}, SpecTimeout(90*time.Second))
	})

	It("deletes a namespace with objects in it to the end", func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}})).To(Succeed())
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns}, StringData: map[string]string{"k": "v"}})).To(Succeed())
		Expect(k8s.Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: podTemplate("web"),
			},
		})).To(Succeed())
		// Wait for the Pod, so the namespace controller has a Pod to delete too.
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
			g.Expect(pods.Items).NotTo(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		Expect(k8s.Delete(ctx, nsObj)).To(Succeed())
		Eventually(gone(ctx, nsObj)).WithContext(ctx).Should(BeTrue(), "namespace %s is still there (Terminating)", ns)
	}, SpecTimeout(90*time.Second))

	It("authenticates a TokenRequest token as its ServiceAccount, refuses (403) what its RBAC does not grant, and audits the refusal", func(ctx SpecContext) {
		// The serviceaccount and root-ca-cert-publisher controllers fill a new namespace.
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})
		}).WithContext(ctx).Should(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kube-root-ca.crt"}, &corev1.ConfigMap{})
		}).WithContext(ctx).Should(Succeed())

		Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: ns}})).To(Succeed())
		Expect(k8s.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "configmap-reader", Namespace: ns},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
		})).To(Succeed())
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmap-reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "reader", Namespace: ns}},
		})).To(Succeed())

		cfg, err := whole.TokenConfig(ctx, ns, "reader")
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.CertData).To(BeEmpty())
		Expect(cfg.BearerToken).NotTo(BeEmpty())
		sa, err := client.New(cfg, client.Options{})
		Expect(err).NotTo(HaveOccurred())

		review := &authenticationv1.SelfSubjectReview{}
		Expect(sa.Create(ctx, review)).To(Succeed())
		user := "system:serviceaccount:" + ns + ":reader"
		Expect(review.Status.UserInfo.Username).To(Equal(user))

		offset, err := whole.AuditOffset()
		Expect(err).NotTo(HaveOccurred())
		Expect(sa.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns))).To(Succeed())
		err = sa.List(ctx, &corev1.SecretList{}, client.InNamespace(ns))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing Secrets: %v", err)

		Eventually(func(g Gomega) {
			events, _, err := whole.AuditEvents(offset)
			g.Expect(err).NotTo(HaveOccurred())
			var denied []kube.AuditEvent
			for _, e := range events {
				if e.User.Username == user && e.Forbidden() {
					denied = append(denied, e)
				}
			}
			g.Expect(denied).To(ConsistOf(And(
				HaveField("Verb", "list"),
				HaveField("ObjectRef.Resource", "secrets"),
				HaveField("ObjectRef.Namespace", ns),
			)))
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(90*time.Second))
})
