package wholecluster_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
)

var _ = Describe("make deploy on a whole cluster", Ordered, func() {
	ctx := context.Background()

	It("runs a full create → Ready → delete cycle of every kind as the ServiceAccount make deploy created, with no RBAC denial", func() {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		objs := everyKind(ns)
		start := time.Now()
		createAll(objs...)
		Eventually(suite.NotReady(objs...), 3*time.Minute, time.Second).Should(BeEmpty())
		GinkgoWriter.Printf("17 resources Ready in %s\n", since(start))
		for _, u := range objs {
			if u.GetKind() == "NetworkGroup" || u.GetKind() == "CellarBucket" {
				continue
			}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: u.GetName() + "-secrets"}, &corev1.Secret{})).To(Succeed(), u.GetKind())
		}
		for _, u := range objs {
			Expect(k8s.Delete(ctx, u)).To(Succeed())
		}
		Eventually(suite.Remaining(objs...), 2*time.Minute, time.Second).Should(BeEmpty())
		Expect(fake.Addons(org)).To(BeEmpty(), "every add-on deleted")
		Expect(denials()).To(BeEmpty(), "no request of the operator's ServiceAccount refused")
	})
})

// withOwnCredentials makes namespace ns use a CleverCredentials "own" of its own (its Secret
// "own-clever", the suite's credential set) and returns both.
func withOwnCredentials(ns string, objs []*unstructured.Unstructured) (*corev1.Secret, *unstructured.Unstructured) {
	GinkgoHelper()
	ctx := context.Background()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "own-clever", Namespace: ns}, StringData: map[string]string{
		"config": "[api]\nendpoint = \"" + apiURL + "\"\nconsumer-key = \"" + creds.ConsumerKey + "\"\nconsumer-secret = \"" + creds.ConsumerSecret +
			"\"\ntoken = \"" + creds.Token + "\"\nsecret = \"" + creds.Secret + "\"\n"}}
	Expect(k8s.Create(ctx, sec)).To(Succeed())
	cc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "api.clever-cloud.com/v1alpha1", "kind": "CleverCredentials",
		"metadata": map[string]any{"name": "own", "namespace": ns}, "spec": map[string]any{"secretRef": map[string]any{"name": "own-clever"}}}}
	Expect(k8s.Create(ctx, cc)).To(Succeed())
	for _, u := range objs {
		if u.GetKind() == "CellarBucket" {
			continue // it reads its Cellar's keys; no Clever Cloud call of its own
		}
		Expect(unstructured.SetNestedStringMap(u.Object, map[string]string{"kind": "CleverCredentials", "name": "own"}, "spec", "credentialsRef")).To(Succeed())
	}
	return sec, cc
}

// errorLines counts the operator's log lines reporting a failed reconcile.
func errorLines() int {
	return strings.Count(whole.LogTails(1<<20, "operator"), "Reconciler error")
}

var _ = Describe("namespace deletion on a whole cluster", Ordered, func() {
	ctx := context.Background()

	// Issue #44 §4: the namespace controller deletes the resources, their Secrets, the
	// namespace's CleverCredentials and its Secret in one sweep.
	run := func(stopOperatorFor time.Duration) {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		objs := everyKind(ns)
		withOwnCredentials(ns, objs)
		var kept *unstructured.Unstructured
		for _, u := range objs {
			if u.GetKind() == "Redis" {
				Expect(unstructured.SetNestedField(u.Object, "Orphan", "spec", "deletionPolicy")).To(Succeed())
				kept = u
			}
		}
		createAll(objs...)
		Eventually(suite.NotReady(objs...), 3*time.Minute, time.Second).Should(BeEmpty())
		ids := addonIDs(objs...)
		keptID := ids["Redis/"+kept.GetName()]
		Expect(keptID).NotTo(BeEmpty())
		before := deletes(org)

		if stopOperatorFor > 0 {
			operator.Stop()
		}
		start := time.Now()
		Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		if stopOperatorFor > 0 {
			time.Sleep(stopOperatorFor)
			Expect(namespaceGone(ns)()).To(BeFalse(), "the namespace waits for the operator")
			operator = startOperator("operator")
		}
		Eventually(namespaceGone(ns), 60*time.Second, time.Second).Should(BeTrue(), "the namespace is gone within 60 s")
		GinkgoWriter.Printf("namespace %s gone %s after its deletion (operator stopped %s of it)\n", ns, since(start), stopOperatorFor)

		left := fake.Addons(org)
		Expect(left).To(HaveLen(1), "only the Orphan add-on is left at Clever Cloud")
		Expect(left[0].ID).To(Equal(keptID))
		Expect(deletes(org)-before).To(Equal(len(ids)-1), "every other add-on deleted exactly once (%d recorded)", len(ids))

		errs := errorLines()
		time.Sleep(10 * time.Second)
		Expect(errorLines()-errs).To(BeNumerically("<=", 1), "no error loop once the namespace is gone")
		for _, l := range strings.Split(whole.LogTails(1<<20, "operator"), "\n") {
			if strings.Contains(l, "Reconciler error") {
				Expect(l).NotTo(ContainSubstring("being terminated"), "a create refused in the namespace being deleted is not a failed reconcile")
			}
		}
		Expect(denials()).To(BeEmpty())
	}

	It("deletes a namespace holding one resource of every kind and its own credentials: gone within 60 s, every add-on deleted once, the Orphan one kept", func() {
		run(0)
	})

	It("does the same when the operator is stopped during the deletion and started 30 s later", func() {
		run(30 * time.Second)
	})
})

var _ = Describe("garbage collection on a whole cluster", func() {
	ctx := context.Background()

	// secretWrites counts the writes (create, update, patch, delete) of Secret ns/name in the
	// audit log from offset on, by anyone.
	secretWrites := func(offset int64, ns, name string) map[string]int {
		events, _, err := whole.AuditEvents(offset)
		Expect(err).NotTo(HaveOccurred())
		out := map[string]int{}
		for _, e := range events {
			if e.Stage == "ResponseComplete" && e.ObjectRef.Resource == "secrets" && e.ObjectRef.Namespace == ns && e.ObjectRef.Name == name &&
				e.ResponseStatus.Code < 300 && (e.Verb == "create" || e.Verb == "update" || e.Verb == "patch" || e.Verb == "delete") {
				out[e.Verb]++
			}
		}
		return out
	}

	DescribeTable("deleting a resource with each propagation policy takes its Secrets and Helm release with it, without a fight",
		func(policy metav1.DeletionPropagation) {
			ns := suite.NewNamespace()
			pg := suite.Sample("api_v1_postgresql.yaml", ns)
			createAll(pg)
			Eventually(suite.ReadyOf(pg), time.Minute).Should(Equal("True/Provisioned"))
			offset, err := whole.AuditOffset()
			Expect(err).NotTo(HaveOccurred())
			Expect(k8s.Delete(ctx, pg, client.PropagationPolicy(policy))).To(Succeed())
			Eventually(suite.Remaining(pg), time.Minute).Should(BeEmpty())
			Expect(fake.Addons(suite.OrgOf(ns))).To(BeEmpty())
			Eventually(func() []string {
				secrets := &corev1.SecretList{}
				Expect(k8s.List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
				var names []string
				for _, s := range secrets.Items {
					names = append(names, s.Name)
				}
				return names
			}, 30*time.Second).Should(BeEmpty(), "its Secrets and Helm release records are gone")
			time.Sleep(5 * time.Second)
			w := secretWrites(offset, ns, pg.GetName()+"-secrets")
			Expect(w["create"]).To(BeZero(), "the credentials Secret is never re-created while its resource goes: %v", w)
			Expect(w["delete"]).To(BeNumerically("<=", 1), "deleted once: %v", w)
		},
		Entry("background", metav1.DeletePropagationBackground),
		Entry("foreground", metav1.DeletePropagationForeground),
		Entry("orphan", metav1.DeletePropagationOrphan),
	)

	It("re-creates a credentials Secret deleted by hand, once", func() {
		ns := suite.NewNamespace()
		pg := suite.Sample("api_v1_postgresql.yaml", ns)
		createAll(pg)
		Eventually(suite.ReadyOf(pg), time.Minute).Should(Equal("True/Provisioned"))
		name := pg.GetName() + "-secrets"
		sec := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sec)).To(Succeed())
		uid := sec.UID
		offset, err := whole.AuditOffset()
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Delete(ctx, sec)).To(Succeed())
		Eventually(func() bool {
			cur := &corev1.Secret{}
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cur) == nil && cur.UID != uid
		}, 30*time.Second).Should(BeTrue(), "re-created")
		Consistently(func() int { return secretWrites(offset, ns, name)["create"] }, 10*time.Second, time.Second).Should(Equal(1), "once")
		Expect(secretWrites(offset, ns, name)["delete"]).To(Equal(1), "only the hand's deletion")
		Expect(kube.Condition(suite.Get(pg), "Ready")).To(Equal("True/Provisioned"))
		Expect(k8s.Delete(ctx, pg)).To(Succeed())
		Eventually(suite.Remaining(pg), time.Minute).Should(BeEmpty())
	})
})
