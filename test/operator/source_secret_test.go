package operator_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue #15 §3: finalization deletes the <name>-<kind>-source Secret only when the operator
// wrote it (its labels, and a controller owner reference to this resource or none), never a
// user's Secret that happens to have that name.
var _ = Describe("the source Secret at deletion", func() {
	ctx := context.Background()

	userSecret := func(ns, name string, mutate func(*corev1.Secret)) *corev1.Secret {
		GinkgoHelper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: map[string]string{"mine": "user-data"}}
		if mutate != nil {
			mutate(s)
		}
		Expect(k8s.Create(ctx, s)).To(Succeed())
		return s
	}
	survives := func(ns, name string) {
		GinkgoHelper()
		got := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got)).To(Succeed(), "the user's Secret %s must survive", name)
		Expect(string(got.Data["mine"])).To(Equal("user-data"))
	}

	It("keeps a user's own Secret named <name>-postgresql-source when the resource is deleted", func() {
		ns := suite.NewNamespace()
		pg := suite.Sample("api_v1_postgresql.yaml", ns)
		name := pg.GetName() + "-postgresql-source"
		userSecret(ns, name, nil)

		Expect(k8s.Create(ctx, pg)).To(Succeed())
		// The engine refuses to overwrite it (it is not ours), then the resource goes away.
		Eventually(func() string { return suite.ReadyOf(pg)() }, 30*time.Second).ShouldNot(BeEmpty())
		Eventually(func() []string { return suite.EventsByName(ns, "", pg.GetName()) }, 30*time.Second).ShouldNot(BeEmpty())
		Expect(k8s.Delete(ctx, pg)).To(Succeed())
		Eventually(func() bool { return suite.Get(pg) == nil }, 60*time.Second).Should(BeTrue())
		survives(ns, name)
	})

	It("keeps a Secret carrying our labels but controlled by another object", func() {
		ns := suite.NewNamespace()
		pg := suite.Sample("api_v1_postgresql.yaml", ns)
		name := pg.GetName() + "-postgresql-source"
		other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "someone-else", Namespace: ns}}
		Expect(k8s.Create(ctx, other)).To(Succeed())
		userSecret(ns, name, func(s *corev1.Secret) {
			s.Labels = map[string]string{"api.clever-cloud.com/managed-by": "clever-operator", "api.clever-cloud.com/role": "source"}
			s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: other.Name, UID: other.UID, Controller: ptr.To(true)}}
		})

		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(func() []string { return suite.EventsByName(ns, "", pg.GetName()) }, 30*time.Second).ShouldNot(BeEmpty())
		Expect(k8s.Delete(ctx, pg)).To(Succeed())
		Eventually(func() bool { return suite.Get(pg) == nil }, 60*time.Second).Should(BeTrue())
		survives(ns, name)
	})

	It("still deletes the source Secret it wrote", func() {
		ns := suite.NewNamespace()
		pg := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(suite.ReadyOf(pg), 30*time.Second).Should(Equal("True/Provisioned"))
		name := pg.GetName() + "-postgresql-source"
		src := &corev1.Secret{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, src)).To(Succeed())
		Expect(metav1.GetControllerOf(src)).NotTo(BeNil())
		Expect(k8s.Delete(ctx, pg)).To(Succeed())
		Eventually(func() bool { return suite.Get(pg) == nil }, 60*time.Second).Should(BeTrue())
		Expect(suite.Secret(ns, name)).To(BeNil())
	})
})
