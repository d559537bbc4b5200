package operator

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/secrets"
)

var guardKey = []byte("a claim key of at least 32 bytes, for tests")

func labelled(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "team-b", Name: name,
		Labels: map[string]string{kinds.LabelManagedBy: kinds.ManagedByValue, kinds.LabelRole: kinds.RoleSource, kinds.LabelKind: "postgresql"}}
}

// The cache keeps the data of the Secrets the operator signed, and only theirs: a Secret or
// ConfigMap a tenant labels as the operator's is cached without its data, its metadata cut
// down when oversized.
func TestCacheGuard(t *testing.T) {
	g := NewCacheGuard()
	g.SetKey(guardKey)
	big := []byte(strings.Repeat("x", 1<<20))

	signed := &corev1.Secret{ObjectMeta: labelled("db-postgresql-source"), Data: map[string][]byte{"PASSWORD": []byte("pw")}}
	signed.Annotations = map[string]string{kinds.AnnotationAddonID: "addon_b"}
	secrets.Sign(guardKey, signed)
	if out, _ := g.Transform(signed.DeepCopy()); len(out.(*corev1.Secret).Data) != 1 {
		t.Fatal("a signed Secret lost its data")
	}

	forged := &corev1.Secret{ObjectMeta: labelled("big-postgresql-source"), Data: map[string][]byte{"PASSWORD": big}}
	forged.Annotations = map[string]string{secrets.AnnotationSignature: "v1/forged", "huge": string(big[:200<<10])}
	for i := range 2000 {
		forged.Labels["tenant.example/l"+strings.Repeat("x", 20)+string(rune('a'+i%26))+strings.Repeat("y", i%50)] = "v"
	}
	out, _ := g.Transform(forged.DeepCopy())
	s := out.(*corev1.Secret)
	if s.Data != nil || metaSize(&s.ObjectMeta) > maxCachedMeta {
		t.Fatalf("a forged Secret is cached with %d data keys and %d bytes of metadata", len(s.Data), metaSize(&s.ObjectMeta))
	}
	if s.Labels[kinds.LabelRole] != kinds.RoleSource || s.Annotations[secrets.AnnotationSignature] == "" {
		t.Fatal("the operator's own labels and annotations are kept (the watches select on them)")
	}

	edited := signed.DeepCopy()
	edited.Annotations[kinds.AnnotationAddonID] = "addon_a" // another team's add-on
	if out, _ := g.Transform(edited); out.(*corev1.Secret).Data != nil {
		t.Fatal("an edited Secret keeps its data")
	}

	cm := &corev1.ConfigMap{ObjectMeta: labelled("c"), Data: map[string]string{"k": string(big)}}
	if out, _ := g.Transform(cm); out.(*corev1.ConfigMap).Data != nil {
		t.Fatal("a labelled ConfigMap keeps its data")
	}

	unlabelled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Data: map[string][]byte{"k": []byte("v")}}
	if out, _ := g.Transform(unlabelled); out.(*corev1.Secret).Data == nil {
		t.Fatal("a Secret outside the guard's selection was changed")
	}

	if out, _ := NewCacheGuard().Transform(signed.DeepCopy()); out.(*corev1.Secret).Data != nil {
		t.Fatal("a guard without a key verifies a signature")
	}
}

// With the guard, the cache still selects only the operator's labelled Secrets and
// ConfigMaps (one entry each, label selector kept) and runs the guard on them.
func TestManagerOptionsWithGuard(t *testing.T) {
	s, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	g := NewCacheGuard()
	g.SetKey(guardKey)
	o := ManagerOptions(s, nil, g)
	if len(o.Cache.ByObject) != 2 {
		t.Fatalf("%d cache entries by object, want 2 (Secret, ConfigMap)", len(o.Cache.ByObject))
	}
	for obj, by := range o.Cache.ByObject {
		if by.Label == nil || !by.Label.Matches(labels.Set{kinds.LabelManagedBy: kinds.ManagedByValue}) || by.Label.Matches(labels.Set{}) {
			t.Fatalf("%T: selector %v", obj, by.Label)
		}
		if by.Transform == nil {
			t.Fatalf("%T: no transform", obj)
		}
	}
	for obj, by := range o.Cache.ByObject {
		if _, ok := obj.(*corev1.Secret); !ok {
			continue
		}
		forged := &corev1.Secret{ObjectMeta: labelled("x-postgresql-source"), Data: map[string][]byte{"k": []byte("v")}}
		out, _ := by.Transform(forged)
		if out.(*corev1.Secret).Data != nil {
			t.Fatal("the Secret informer's transform does not run the guard")
		}
	}
}
