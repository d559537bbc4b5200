package standalone

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/queue"
)

// grants resolves every resource to a grant of the tenant its "tenant" label names.
type grants struct{}

func (grants) Resolve(_ context.Context, obj *unstructured.Unstructured) (*credentials.Grant, error) {
	return &credentials.Grant{Source: "test", Tenant: obj.GetLabels()["tenant"]}, nil
}

func object(name, tenant string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kinds.NetworkGroupGVK)
	u.SetNamespace("ns")
	u.SetName(name)
	if tenant != "" {
		u.SetLabels(map[string]string{"tenant": tenant})
	}
	return u
}

// A tenant's passes hold at most its share of the workers: over it, a pass makes no call
// (Connect returns ErrTenantBusy before the pass goes on), writes no status, and comes back in
// 1 to 2 s; other tenants and the operator's own credentials are not held back, and the slot
// is free again when the pass ends.
func TestRunHoldsATenantToItsShare(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).
		WithObjects(object("held", "team-b"), object("over", "team-b"), object("other", "team-a"), object("admin", "")).
		WithStatusSubresource(object("", "")).Build()
	tenants := &Tenants{} // 2 workers: a share of one
	ctx := context.Background()
	req := func(name string) ctrl.Request {
		return ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}

	inside, leave := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, c, req("held"), kinds.NetworkGroupGVK, "f", tenants, func(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, error) {
			_, _, _, err := Connect(ctx, grants{}, obj, "orga_x")
			close(inside)
			<-leave
			return ctrl.Result{}, err
		})
		done <- err
	}()
	<-inside
	if n := tenants.slots.InFlight("team-b"); n != 1 {
		t.Fatalf("team-b holds %d slots, want 1", n)
	}

	called := false
	res, err := Run(ctx, c, req("over"), kinds.NetworkGroupGVK, "f", tenants, func(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, error) {
		_ = unstructured.SetNestedField(obj.Object, "decided", "status", "phase")
		g, _, _, err := Connect(ctx, grants{}, obj, "orga_x")
		if err != nil {
			return Reporter{}.Fail(obj, "calling", err)
		}
		called = g != nil
		return ctrl.Result{}, nil
	})
	if err != nil || res.RequeueAfter < queue.TenantRetry || res.RequeueAfter > 2*queue.TenantRetry || called {
		t.Fatalf("over the share: result %+v, err %v, called %v; want a retry in 1-2 s, no error, no call", res, err, called)
	}
	over := object("over", "")
	if err := c.Get(ctx, req("over").NamespacedName, over); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(over.Object, "status"); found {
		t.Fatalf("a pass over the share wrote status: %v", over.Object["status"])
	}

	for _, name := range []string{"other", "admin"} {
		res, err := Run(ctx, c, req(name), kinds.NetworkGroupGVK, "f", tenants, func(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, error) {
			g, _, _, err := Connect(ctx, grants{}, obj, "orga_x")
			if g == nil || err != nil {
				return ctrl.Result{}, errors.Join(errors.New("no grant"), err)
			}
			return ctrl.Result{}, nil
		})
		if err != nil || res.RequeueAfter != 0 {
			t.Fatalf("%s: result %+v, err %v; want a pass of its own", name, res, err)
		}
	}
	if n := tenants.slots.InFlight("team-a"); n != 0 {
		t.Fatalf("team-a's slot was not given back: %d", n)
	}

	close(leave)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held pass did not end")
	}
	if n := tenants.slots.InFlight("team-b"); n != 0 {
		t.Fatalf("team-b's slot was not given back: %d", n)
	}
}
