package addon

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	apiv1 "github.com/clever-operator/clever-operator/api/v1"
	"github.com/clever-operator/clever-operator/internal/catalog"
	"github.com/clever-operator/clever-operator/internal/credentials"
)

// resolveCounter counts credential resolutions: the first thing a pass that may call Clever
// Cloud does.
type resolveCounter struct{ n int }

func (c *resolveCounter) Resolve(context.Context, *unstructured.Unstructured) (*credentials.Grant, error) {
	c.n++
	return nil, context.Canceled
}

// TestReconcileHonoursTheSelector: a request for a resource the engine's selector does not
// match (a credentials wake-up or a waiter, which the For predicate does not filter) changes
// nothing and resolves no credentials; a matching one is handled.
func TestReconcileHonoursTheSelector(t *testing.T) {
	k := kind(t, "Redis")
	scheme := runtime.NewScheme()
	if err := apiv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	obj := func(name, shard string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.GVK)
		u.SetNamespace("ns")
		u.SetName(name)
		u.SetUID(types.UID("uid-" + name))
		u.SetGeneration(1)
		u.SetLabels(map[string]string{"shard": shard})
		_ = unstructured.SetNestedField(u.Object, map[string]any{"organisation": "orga_00000000-0000-0000-0000-000000000001",
			"instance": map[string]any{"region": "par", "plan": "s_mono"}}, "spec")
		return u
	}
	cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(obj("mine", "a"), obj("theirs", "b")).WithStatusSubresource(&apiv1.Redis{}).Build()
	creds := &resolveCounter{}
	r := &Reconciler{Kind: k, Client: cl, APIReader: cl, Recorder: record.NewFakeRecorder(10), Credentials: creds, Plans: &catalog.PlanCache{},
		Selector: labels.SelectorFromSet(labels.Set{"shard": "a"})}
	finalizers := func(name string) []string {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(k.GVK)
		if err := cl.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, live); err != nil {
			t.Fatal(err)
		}
		return live.GetFinalizers()
	}

	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "theirs"}}); err != nil {
		t.Fatal(err)
	}
	if creds.n != 0 || len(finalizers("theirs")) != 0 {
		t.Fatalf("a resource outside the selector was handled: %d resolutions, finalizers %v", creds.n, finalizers("theirs"))
	}
	_, _ = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "mine"}})
	if creds.n == 0 && len(finalizers("mine")) == 0 {
		t.Fatal("a resource the selector matches was not handled")
	}
}
