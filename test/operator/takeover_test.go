package operator_test

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/test/kube"
)

// rustKinds are the samples of the 8 kinds the Rust operator managed (its chart's CRDs).
var rustKinds = []string{
	"api_v1_postgresql.yaml", "api_v1_redis.yaml", "api_v1_mysql.yaml", "api_v1_mongodb.yaml",
	"api_v1_elasticsearch.yaml", "api_v1beta1_pulsar.yaml", "api_v1_configprovider.yaml", "api_v1alpha1_kv.yaml",
}

// asRustLeftIt turns a resource this operator provisioned (operator stopped) into what the
// Rust operator leaves (docs/reference-operator.md; docs/operator.md § Migrating): the
// resource with only its finalizer api.clever-cloud.com/<suffix>, no annotation of ours (no
// addon-claim), status {addon: <id>} only; the add-on named kubernetes::<Kind>::<uid> (as
// it is); the Secret <name>-secrets with the add-on's variables, no Helm metadata, owned by
// the resource through a non-controller owner reference; nothing else (no Helm release, no
// source or binding Secret).
func asRustLeftIt(cr *unstructured.Unstructured, k *kinds.Kind) {
	GinkgoHelper()
	ctx := context.Background()
	ns := cr.GetNamespace()
	cur := suite.Get(cr)
	id := kube.StatusString(cur, "addon")
	Expect(id).NotTo(BeEmpty())

	secrets := &corev1.SecretList{}
	Expect(k8s.List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
	for i := range secrets.Items {
		s := &secrets.Items[i]
		switch {
		case s.Name == cr.GetName()+"-secrets":
			s.Labels, s.Annotations = nil, nil
			s.OwnerReferences = []metav1.OwnerReference{{APIVersion: cur.GetAPIVersion(), Kind: cur.GetKind(), Name: cur.GetName(),
				UID: cur.GetUID(), BlockOwnerDeletion: ptr.To(true)}}
			Expect(k8s.Update(ctx, s)).To(Succeed())
		case strings.HasPrefix(s.Name, "sh.helm.release.v1."), metav1.IsControlledBy(s, cur):
			// Helm's release record, the source Secret, the binding Secret.
			Expect(k8s.Delete(ctx, s)).To(Succeed())
		}
	}

	cur.SetFinalizers([]string{k.Finalizer()})
	cur.SetAnnotations(nil)
	Expect(k8s.Update(ctx, cur)).To(Succeed())
	status := map[string]any{"status": map[string]any{"addon": id}}
	// A merge patch cannot drop the other status fields: replace the status.
	cur = suite.Get(cr)
	cur.Object["status"] = status["status"]
	Expect(k8s.Status().Update(ctx, cur)).To(Succeed())
	cur = suite.Get(cr)
	Expect(cur.Object["status"]).To(Equal(map[string]any{"addon": id}))
	Expect(cur.GetFinalizers()).To(Equal([]string{k.Finalizer()}))
}

var _ = Describe("switching from the Rust operator, every kind it managed", func() {
	ctx := context.Background()

	It("takes over resources, add-ons, finalizers, status.addon and <name>-secrets exactly as it leaves them: 0 creates, every resource Ready, Secrets kept", func() {
		ns := suite.NewNamespace()
		var crs []*unstructured.Unstructured
		for _, f := range rustKinds {
			cr := suite.Sample(f, ns)
			Expect(k8s.Create(ctx, cr)).To(Succeed())
			crs = append(crs, cr)
		}
		for _, cr := range crs {
			Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"), cr.GetKind())
		}
		mgr.Stop()

		type before struct {
			addon     string
			secretUID types.UID
			data      map[string]string
		}
		was := map[string]before{}
		for _, cr := range crs {
			k, ok := kinds.KindFor(cr.GroupVersionKind())
			Expect(ok).To(BeTrue(), cr.GetKind())
			asRustLeftIt(cr, k)
			sec := suite.Secret(ns, cr.GetName()+"-secrets")
			Expect(sec).NotTo(BeNil(), cr.GetKind())
			was[cr.GetKind()] = before{addon: kube.StatusString(suite.Get(cr), "addon"), secretUID: sec.UID, data: kube.SecretData(sec)}
			Expect(addonsNamed(addonName(suite.Get(cr)))).To(HaveLen(1), cr.GetKind())
		}

		calls := suite.CountCalls(ns)
		startManager()
		for _, cr := range crs {
			Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"), cr.GetKind())
		}
		for _, cr := range crs {
			k, _ := kinds.KindFor(cr.GroupVersionKind())
			cur := suite.Get(cr)
			w := was[cr.GetKind()]
			Expect(kube.StatusString(cur, "addon")).To(Equal(w.addon), "%s: the same add-on", cr.GetKind())
			Expect(addonsNamed(addonName(cur))).To(HaveLen(1), cr.GetKind())
			Expect(cur.GetFinalizers()).To(ContainElement(k.Finalizer()), cr.GetKind())
			Eventually(func() types.UID { return suite.Secret(ns, cr.GetName()+"-secrets").UID }).Should(Equal(w.secretUID), "%s: the Secret kept, not re-created", cr.GetKind())
			Eventually(func() map[string]string { return kube.SecretData(suite.Secret(ns, cr.GetName()+"-secrets")) }).Should(Equal(w.data), cr.GetKind())
			Expect(suite.Secret(ns, cr.GetName()+"-secrets").Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "Helm"), "%s: taken over by Helm", cr.GetKind())
			Eventually(suite.EventsOf(cur)).Should(ContainElement("Normal SecretAdopted"), cr.GetKind())
		}
		Expect(calls.Route("POST /v2/organisations/{ownerId}/addons")).To(BeZero(), "no add-on created")
		Expect(calls.Matching("DELETE")).To(BeZero(), "no add-on deleted")
	})
})
