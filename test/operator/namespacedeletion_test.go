package operator_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/clever-operator/clever-operator/internal/credentials"
)

// Issue #44 §4: the namespace controller deletes everything of a namespace in one sweep, the
// Secret holding the namespace's own credentials included. The operator keeps those
// credentials (credentials.InUseFinalizer) while resources that use them still have an add-on
// to delete; outside a namespace's deletion, deleting them takes effect at once. (envtest has
// no namespace controller: the namespace is deleted, then the spec deletes its objects in one
// go, Secrets first, as the namespace controller may.)

const deleteAddon = "DELETE /v2/organisations/{ownerId}/addons/{addonId}"

// inUse says whether obj (namespace/name of kind) carries the in-use finalizer; nil: gone.
func inUse(obj client.Object) func() any {
	return func() any {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		return controllerutil.ContainsFinalizer(obj, credentials.InUseFinalizer)
	}
}

// sweep deletes the namespace, then objs in that order, two seconds apart (what the namespace
// controller does, kind after kind, in an order it may choose; with many objects it takes
// seconds).
func sweep(ns string, objs ...client.Object) {
	GinkgoHelper()
	ctx := context.Background()
	Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	for i, o := range objs {
		if i > 0 {
			time.Sleep(2 * time.Second)
		}
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed())
	}
}

var _ = Describe("namespace deletion: the namespace's own credentials outlive the resources that use them", func() {
	ctx := context.Background()

	It("deletes the add-on of a resource using a CleverCredentials whose Secret the sweep deleted first, once, and then lets the credentials go", func() {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		t := newTenant("nsdel", org)
		sec := createSecret(ns, "own-clever", t.doc())
		cc := credentialsObject(ns, "own", map[string]any{"secretRef": map[string]any{"name": "own-clever"}})
		rd := withCredentials(suite.Sample("api_v1_redis.yaml", ns), "CleverCredentials", "own")
		Expect(k8s.Create(ctx, rd)).To(Succeed())
		Eventually(suite.ReadyOf(rd), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(t.fake.Addons(org)).To(HaveLen(1))
		Eventually(inUse(sec)).Should(Equal(true), "the Secret is marked in use")
		Eventually(inUse(cc)).Should(Equal(true), "the CleverCredentials is marked in use")
		Expect(sec.GetLabels()).To(HaveKeyWithValue(credentials.InUseLabel, "true"))

		sweep(ns, sec, cc, rd)
		Eventually(func() bool { return suite.Get(rd) == nil }, 30*time.Second).Should(BeTrue(), "the resource is released")
		Expect(t.fake.Addons(org)).To(BeEmpty(), "its add-on is deleted at Clever Cloud")
		Expect(t.fake.CountsForToken(t.token)).To(HaveKeyWithValue(deleteAddon, 1), "once, with the namespace's own token")
		Eventually(inUse(sec), 10*time.Second).Should(BeNil(), "the Secret goes once nothing uses it")
		Eventually(inUse(cc), 10*time.Second).Should(BeNil(), "the CleverCredentials goes once nothing uses it")
	})

	It("deletes the add-on of a resource using the namespace's override Secret, deleted in the same sweep", func() {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		t := newTenant("nsover", org)
		override := createSecret(ns, "clever-operator", t.doc())
		pg := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(suite.ReadyOf(pg), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(t.fake.Addons(org)).To(HaveLen(1))
		Eventually(inUse(override)).Should(Equal(true))

		sweep(ns, override, pg)
		Eventually(func() bool { return suite.Get(pg) == nil }, 30*time.Second).Should(BeTrue())
		Expect(t.fake.Addons(org)).To(BeEmpty())
		Expect(t.fake.CountsForToken(t.token)).To(HaveKeyWithValue(deleteAddon, 1))
		Eventually(inUse(override), 10*time.Second).Should(BeNil())
	})

	It("lets a namespace's credentials in use go at once when the namespace is not being deleted, and unmarks those no longer used", func() {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		t := newTenant("nsrevoke", org)
		sec := createSecret(ns, "own-clever", t.doc())
		cc := credentialsObject(ns, "own", map[string]any{"secretRef": map[string]any{"name": "own-clever"}})
		rd := withCredentials(suite.Sample("api_v1_redis.yaml", ns), "CleverCredentials", "own")
		Expect(k8s.Create(ctx, rd)).To(Succeed())
		Eventually(suite.ReadyOf(rd), 30*time.Second).Should(Equal("True/Provisioned"))
		Eventually(inUse(cc)).Should(Equal(true))
		Eventually(inUse(sec)).Should(Equal(true))

		// A second CleverCredentials nothing uses is not marked.
		spare := credentialsObject(ns, "spare", map[string]any{"secretRef": map[string]any{"name": "own-clever"}})
		Consistently(inUse(spare), 2*time.Second).Should(Equal(false))

		// The CleverCredentials deleted (a revocation): gone at once, the resource refused.
		Expect(k8s.Delete(ctx, cc)).To(Succeed())
		Eventually(inUse(cc), 5*time.Second).Should(BeNil())
		Eventually(suite.ReadyOf(rd), 20*time.Second).Should(Equal("False/CredentialsNotFound"))
		// Nothing uses the Secret any more: unmarked.
		Eventually(inUse(sec), 10*time.Second).Should(Equal(false))
		Expect(sec.GetLabels()).NotTo(HaveKey(credentials.InUseLabel))

		// Released without deleting the add-on (its credentials are gone).
		cur := suite.Get(rd)
		cur.SetAnnotations(map[string]string{"api.clever-cloud.com/skip-deprovision": "true"})
		suite.Update(cur)
		Expect(k8s.Delete(ctx, rd)).To(Succeed())
		Eventually(func() bool { return suite.Get(rd) == nil }, 30*time.Second).Should(BeTrue())
	})
})
