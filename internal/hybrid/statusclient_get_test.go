package hybrid

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

// After uninstalling a deleted resource's release, helm-operator-plugins polls Get with the
// deleted object until NotFound: a new resource of the same name ends that wait at once.
func TestGetOfADeletedResourceRecreatedUnderItsName(t *testing.T) {
	kind := &kinds.Kinds[0]
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(kind.GVK)
	live.SetNamespace("ns")
	live.SetName("db")
	live.SetUID("uid-new")
	c := NewStatusClient(fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(live).Build(), kind)
	key := client.ObjectKey{Namespace: "ns", Name: "db"}

	cases := []struct {
		name     string
		uid      string
		deleting bool
		notFound bool
	}{
		{"the deleted resource's name holds a new one", "uid-old", true, true},
		{"the deleted resource is still there", "uid-new", true, false},
		{"a live resource read by another UID (not a deletion wait)", "uid-old", false, false},
		{"a fresh object (the reconciler's first read)", "", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(kind.GVK)
			obj.SetUID(k8stypes.UID(tc.uid))
			if tc.deleting {
				now := metav1.Now()
				obj.SetDeletionTimestamp(&now)
			}
			err := c.Get(context.Background(), key, obj)
			if apierrors.IsNotFound(err) != tc.notFound {
				t.Fatalf("Get: %v, want NotFound %v", err, tc.notFound)
			}
		})
	}
}
