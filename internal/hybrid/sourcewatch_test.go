package hybrid

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

// TestSourceWatchWakesTheOwnerOfASourceSecret: a source Secret created or changed wakes the
// Helm side of the resource controlling it (its kind only; with a selector, only a resource
// it selects, as the cache holds it), and nothing else does.
func TestSourceWatchWakesTheOwnerOfASourceSecret(t *testing.T) {
	kind, other := &kinds.Kinds[0], &kinds.Kinds[1]
	owner := func(k *kinds.Kind, name string, uid types.UID, lbls map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.GVK)
		u.SetNamespace("ns")
		u.SetName(name)
		u.SetUID(uid)
		u.SetLabels(lbls)
		return u
	}
	source := func(k *kinds.Kind, ownerKind *kinds.Kind, ownerName string, uid types.UID) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: k.SourceSecretName(ownerName),
			Labels: map[string]string{kinds.LabelManagedBy: kinds.ManagedByValue, kinds.LabelRole: kinds.RoleSource, kinds.LabelKind: k.Lower()}}}
		if ownerKind != nil {
			s.OwnerReferences = []metav1.OwnerReference{{APIVersion: ownerKind.GVK.GroupVersion().String(), Kind: ownerKind.GVK.Kind,
				Name: ownerName, UID: uid, Controller: ptr.To(true)}}
		}
		return s
	}
	shard := &metav1.LabelSelector{MatchLabels: map[string]string{"shard": "a"}}
	reader := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(
		owner(kind, "in-a", "uid-a", map[string]string{"shard": "a"}),
		owner(kind, "in-b", "uid-b", map[string]string{"shard": "b"}),
	).Build()

	renamed := source(kind, kind, "db", "uid-db")
	renamed.Name = "something-else"
	notController := source(kind, kind, "db", "uid-db")
	notController.OwnerReferences[0].Controller = nil
	for _, tc := range []struct {
		name   string
		sel    *metav1.LabelSelector
		secret *corev1.Secret
		want   string // the resource woken, "" for none
	}{
		{"the source Secret of a resource of this kind", nil, source(kind, kind, "db", "uid-db"), "db"},
		{"a Secret the resource does not control", nil, notController, ""},
		{"a Secret with no owner", nil, source(kind, nil, "db", ""), ""},
		{"a source Secret of another kind", nil, source(other, other, "db", "uid-db"), ""},
		{"a Secret controlled by the resource but not named as its source", nil, renamed, ""},
		{"selected by this instance's selector", shard, source(kind, kind, "in-a", "uid-a"), "in-a"},
		{"another instance's resource", shard, source(kind, kind, "in-b", "uid-b"), ""},
		{"a resource the cache does not hold (yet)", shard, source(kind, kind, "db", "uid-db"), ""},
		{"a resource of that name with another uid", shard, source(kind, kind, "in-a", "uid-old"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := sourceOwners(reader, kind, kind.GVK, tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			got := m(context.Background(), tc.secret)
			switch {
			case tc.want == "" && len(got) != 0:
				t.Fatalf("woke %v, want nothing", got)
			case tc.want != "" && (len(got) != 1 || got[0].Name != tc.want || got[0].Namespace != "ns"):
				t.Fatalf("woke %v, want ns/%s", got, tc.want)
			}
		})
	}

	// Only source Secrets of the kind, and only their creates and updates.
	if !kind.IsSourceSecret(source(kind, kind, "db", "u")) || kind.IsSourceSecret(source(other, other, "db", "u")) {
		t.Fatal("IsSourceSecret: want this kind's source Secrets only")
	}
	plain := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{kinds.LabelRole: "credentials", kinds.LabelKind: kind.Lower()}}}
	if kind.IsSourceSecret(plain) {
		t.Fatal("IsSourceSecret: a published Secret is not a source Secret")
	}
	s := source(kind, kind, "db", "u")
	if !createsAndUpdates.Create(event.CreateEvent{Object: s}) || !createsAndUpdates.Update(event.UpdateEvent{ObjectOld: s, ObjectNew: s}) ||
		createsAndUpdates.Delete(event.DeleteEvent{Object: s}) || createsAndUpdates.Generic(event.GenericEvent{Object: s}) {
		t.Fatal("createsAndUpdates: want creates and updates only")
	}
	if _, err := sourceOwners(reader, kind, kind.GVK, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}); err == nil {
		t.Fatal("an invalid selector: want an error")
	}
}
