// The reconcile kernel (internal/patch) on a real kube-apiserver: one status commit per pass,
// replayed on a live copy after a conflict (keeping another writer's fields, or the pass's
// whole status when it owns it), typed and unstructured objects, and the metadata writes.
package patch_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/api/v1alpha1"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/patch"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestPatch(t *testing.T) { kube.RunSuite(t, "reconcile kernel", 0, 0) }

var (
	c    client.Client
	ctx  = context.Background()
	seqN int
)

var _ = BeforeSuite(func() {
	cp := kube.StartControlPlane(GinkgoWriter, true)
	DeferCleanup(func() { Expect(cp.Env.Stop()).To(Succeed()) })
	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(v1alpha1.AddToScheme(scheme)).To(Succeed())
	var err error
	c, err = client.New(cp.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
})

// namespace is the spec's own namespace.
func namespace() string {
	seqN++
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("patch-%d", seqN)}}
	Expect(c.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// networkGroup creates a NetworkGroup (an unstructured kind with a status subresource).
func networkGroup(ns, name string, finalizers ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kinds.NetworkGroupGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetFinalizers(finalizers)
	Expect(unstructured.SetNestedField(u.Object, "orga_00000000-0000-0000-0000-000000000001", "spec", "organisation")).To(Succeed())
	Expect(c.Create(ctx, u)).To(Succeed())
	return u
}

func live(u *unstructured.Unstructured) *unstructured.Unstructured {
	l := &unstructured.Unstructured{}
	l.SetGroupVersionKind(u.GroupVersionKind())
	Expect(c.Get(ctx, client.ObjectKeyFromObject(u), l)).To(Succeed())
	return l
}

func setField(key, value string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, value, "status", key) }
}

// countingClient counts status writes.
type countingClient struct {
	client.Client
	writes *int
}

func (cc countingClient) Status() client.SubResourceWriter {
	return countingWriter{cc.Client.Status(), cc.writes}
}

type countingWriter struct {
	client.SubResourceWriter
	writes *int
}

func (w countingWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	*w.writes++
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

var _ = Describe("Commit", func() {
	It("writes a changed status once, and nothing when the pass changed nothing", func() {
		ng := networkGroup(namespace(), "once")
		var writes int
		cc := countingClient{c, &writes}

		h := patch.New(ng)
		wrote, err := h.Commit(ctx, cc, patch.Options[*unstructured.Unstructured]{})
		Expect(err).NotTo(HaveOccurred())
		Expect(wrote).To(BeFalse())
		Expect(writes).To(Equal(0))

		h = patch.New(ng)
		h.Set(setField("id", "ng_1"))
		wrote, err = h.Commit(ctx, cc, patch.Options[*unstructured.Unstructured]{})
		Expect(err).NotTo(HaveOccurred())
		Expect(wrote).To(BeTrue())
		Expect(writes).To(Equal(1))
		Expect(kinds.Path{"status", "id"}.String(live(ng))).To(Equal("ng_1"))
		Expect(h.Obj.GetResourceVersion()).To(Equal(live(ng).GetResourceVersion()), "Obj holds what was stored")
	})

	It("replays the recorded changes on a live copy after a conflict, keeping another writer's fields", func() {
		ng := networkGroup(namespace(), "shared")
		h := patch.New(ng)
		h.Set(setField("id", "ng_mine"))

		other := live(ng) // another writer of the same status, after the snapshot
		Expect(unstructured.SetNestedField(other.Object, "theirs", "status", "network")).To(Succeed())
		Expect(c.Status().Update(ctx, other)).To(Succeed())

		var curNetwork string
		wrote, err := h.Commit(ctx, c, patch.Options[*unstructured.Unstructured]{Wrote: func(cur, _ *unstructured.Unstructured) {
			curNetwork = kinds.Path{"status", "network"}.String(cur)
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(wrote).To(BeTrue())
		Expect(curNetwork).To(Equal("theirs"), "the replay started from the live copy")
		got := live(ng)
		Expect(kinds.Path{"status", "id"}.String(got)).To(Equal("ng_mine"))
		Expect(kinds.Path{"status", "network"}.String(got)).To(Equal("theirs"))
	})

	It("applies an overlay before the changes on a replay", func() {
		ng := networkGroup(namespace(), "overlay")
		h := patch.New(ng)
		h.Set(setField("id", "ng_2"))
		other := live(ng)
		Expect(unstructured.SetNestedField(other.Object, "x", "status", "network")).To(Succeed())
		Expect(c.Status().Update(ctx, other)).To(Succeed())
		_, err := h.Commit(ctx, c, patch.Options[*unstructured.Unstructured]{Overlay: []func(*unstructured.Unstructured){setField("network", "overlaid"), setField("id", "overlay-first")}})
		Expect(err).NotTo(HaveOccurred())
		got := live(ng)
		Expect(kinds.Path{"status", "network"}.String(got)).To(Equal("overlaid"))
		Expect(kinds.Path{"status", "id"}.String(got)).To(Equal("ng_2"), "the pass's changes come after the overlay")
	})

	It("replays the whole status of a pass that owns it after a conflict", func() {
		ng := networkGroup(namespace(), "owned")
		h := patch.New(ng)
		Expect(unstructured.SetNestedField(h.Obj.Object, "ng_3", "status", "id")).To(Succeed()) // changed in place, not recorded

		other := live(ng) // a metadata write after the snapshot
		other.SetLabels(map[string]string{"team": "a"})
		Expect(c.Update(ctx, other)).To(Succeed())

		wrote, err := h.Commit(ctx, c, patch.Options[*unstructured.Unstructured]{Owned: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(wrote).To(BeTrue())
		got := live(ng)
		Expect(kinds.Path{"status", "id"}.String(got)).To(Equal("ng_3"))
		Expect(got.GetLabels()).To(HaveKeyWithValue("team", "a"))
	})

	It("commits a typed object's status, replayed after a conflict", func() {
		ns := namespace()
		cred := &v1alpha1.CleverCredentials{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}}
		cred.Spec.SecretRef = v1alpha1.CredentialsSecretRef{Name: "team-clever"}
		Expect(c.Create(ctx, cred)).To(Succeed())

		var obj client.Object = cred
		h := patch.New(obj)
		cred.Status.ObservedGeneration = 7

		other := &v1alpha1.CleverCredentials{}
		Expect(c.Get(ctx, client.ObjectKeyFromObject(cred), other)).To(Succeed())
		other.Labels = map[string]string{"x": "y"}
		Expect(c.Update(ctx, other)).To(Succeed())

		wrote, err := h.Commit(ctx, c, patch.Options[client.Object]{Owned: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(wrote).To(BeTrue())
		got := &v1alpha1.CleverCredentials{}
		Expect(c.Get(ctx, client.ObjectKeyFromObject(cred), got)).To(Succeed())
		Expect(got.Status.ObservedGeneration).To(Equal(int64(7)))
		Expect(cred.ResourceVersion).To(Equal(got.ResourceVersion), "the object holds what was stored")
	})

	It("does not fail when the resource is gone", func() {
		ng := networkGroup(namespace(), "gone")
		h := patch.New(ng)
		h.Set(setField("id", "ng_4"))
		Expect(c.Delete(ctx, live(ng))).To(Succeed())
		wrote, err := h.Commit(ctx, c, patch.Options[*unstructured.Unstructured]{})
		Expect(err).NotTo(HaveOccurred())
		Expect(wrote).To(BeFalse())
	})
})

var _ = Describe("metadata", func() {
	const mine, helm = "example.com/mine", "example.com/helm"

	It("adds finalizers in one write, from the cached copy when it is current", func() {
		ng := networkGroup(namespace(), "fresh")
		added, err := patch.AddFinalizer(ctx, c, c, ng, mine, helm)
		Expect(err).NotTo(HaveOccurred())
		Expect(added).To(BeTrue())
		Expect(live(ng).GetFinalizers()).To(Equal([]string{mine, helm}))
		Expect(ng.GetResourceVersion()).To(Equal(live(ng).GetResourceVersion()))

		added, err = patch.AddFinalizer(ctx, c, c, ng, mine, helm)
		Expect(err).NotTo(HaveOccurred())
		Expect(added).To(BeFalse(), "already there: nothing written")
	})

	It("reads live when the cached copy is stale, and keeps the finalizers another writer put", func() {
		ng := networkGroup(namespace(), "stale", "example.com/other")
		stale := ng.DeepCopy()
		other := live(ng)
		other.SetFinalizers([]string{"example.com/other", "example.com/third"})
		Expect(c.Update(ctx, other)).To(Succeed())

		added, err := patch.AddFinalizer(ctx, c, c, stale, mine)
		Expect(err).NotTo(HaveOccurred())
		Expect(added).To(BeTrue())
		Expect(live(ng).GetFinalizers()).To(Equal([]string{"example.com/other", "example.com/third", mine}))
	})

	It("adds nothing to a resource being deleted, and removes only its own finalizer", func() {
		ng := networkGroup(namespace(), "deleting", "example.com/other", mine)
		Expect(c.Delete(ctx, live(ng))).To(Succeed())
		deleting := live(ng)
		added, err := patch.AddFinalizer(ctx, c, c, deleting, "example.com/new")
		Expect(err).NotTo(HaveOccurred())
		Expect(added).To(BeFalse())

		Expect(patch.RemoveFinalizer(ctx, c, deleting, mine)).To(Succeed())
		Expect(live(ng).GetFinalizers()).To(Equal([]string{"example.com/other"}))

		Expect(patch.RemoveFinalizer(ctx, c, deleting, "example.com/other")).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(ng), &unstructured.Unstructured{Object: map[string]any{"apiVersion": ng.GetAPIVersion(), "kind": ng.GetKind()}}))
		}).Should(BeTrue())
		Expect(patch.RemoveFinalizer(ctx, c, deleting, "example.com/other")).To(Succeed(), "gone is not an error")
	})

	It("annotates the resource it read, never another of the same name", func() {
		ns := namespace()
		ng := networkGroup(ns, "claim")
		Expect(patch.Annotate(ctx, c, ng, "example.com/claim", "v1")).To(Succeed())
		Expect(live(ng).GetAnnotations()).To(HaveKeyWithValue("example.com/claim", "v1"))

		Expect(c.Delete(ctx, live(ng))).To(Succeed())
		again := networkGroup(ns, "claim")
		Expect(again.GetUID()).NotTo(Equal(ng.GetUID()))
		Expect(patch.Annotate(ctx, c, ng, "example.com/claim", "v2")).NotTo(Succeed())
		Expect(live(again).GetAnnotations()).NotTo(HaveKey("example.com/claim"))
	})
})
