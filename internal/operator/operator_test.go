package operator

import (
	"sync/atomic"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestSyncedCheck(t *testing.T) {
	var synced atomic.Bool
	check := syncedCheck(&synced)
	if err := check(nil); err == nil {
		t.Fatal("ready before the caches synced")
	}
	synced.Store(true)
	if err := check(nil); err != nil {
		t.Fatalf("not ready after sync: %v", err)
	}
}

func TestManagerOptionsCacheOnlyOwnedSecrets(t *testing.T) {
	s, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	o := ManagerOptions(s, []string{" a ", "", "b"}, nil)
	if got := len(o.Cache.DefaultNamespaces); got != 2 {
		t.Fatalf("namespaces = %v", o.Cache.DefaultNamespaces)
	}
	var sel, cmSel labels.Selector
	for obj, by := range o.Cache.ByObject {
		switch obj.(type) {
		case *corev1.Secret:
			sel = by.Label
		case *corev1.ConfigMap:
			cmSel = by.Label
		}
	}
	if cmSel == nil || cmSel.String() != sel.String() {
		t.Fatalf("configmap selector = %v", cmSel)
	}
	if sel == nil || !sel.Matches(labels.Set{"api.clever-cloud.com/managed-by": "clever-operator"}) || sel.Matches(labels.Set{"owner": "helm"}) {
		t.Fatalf("secret selector = %v", sel)
	}
	if !o.Client.Cache.Unstructured {
		t.Fatal("unstructured reads must be cached")
	}
	if all := ManagerOptions(s, nil, nil); all.Cache.DefaultNamespaces != nil {
		t.Fatal("no namespaces must mean all namespaces")
	}
	// Cached objects are stored without managedFields.
	sec := &corev1.Secret{}
	sec.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}})
	if o.Cache.DefaultTransform == nil {
		t.Fatal("no cache transform")
	}
	out, err := o.Cache.DefaultTransform(sec)
	if err != nil || out.(*corev1.Secret).GetManagedFields() != nil {
		t.Fatalf("managedFields kept in the cache: %v %v", out, err)
	}
	// ... and share the strings they repeat (internal/intern): two Secrets of one namespace
	// decoded apart hold one copy of its name once cached.
	a, b := &corev1.Secret{}, &corev1.Secret{}
	a.Namespace, b.Namespace = string([]byte("team-a")), string([]byte("team-a"))
	for _, s := range []*corev1.Secret{a, b} {
		if _, err := o.Cache.DefaultTransform(s); err != nil {
			t.Fatal(err)
		}
	}
	if unsafe.StringData(a.Namespace) != unsafe.StringData(b.Namespace) {
		t.Fatal("cached Secrets do not share their namespace's string")
	}
	// The Secrets the chart renders are cached without their data; the source Secret, and
	// Secrets of other roles or without the operator's label, keep theirs.
	for role, keep := range map[string]bool{"credentials": false, "binding": false, "source": true, "config": true, "": true} {
		for _, ours := range []bool{true, false} {
			sec := &corev1.Secret{Data: map[string][]byte{"K": []byte("v")}}
			sec.Labels = map[string]string{"api.clever-cloud.com/role": role}
			if ours {
				sec.Labels["api.clever-cloud.com/managed-by"] = "clever-operator"
			}
			out, err := o.Cache.DefaultTransform(sec)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := out.(*corev1.Secret).Data != nil, keep || !ours; got != want {
				t.Errorf("role %q, operator's %v: data kept %v, want %v", role, ours, got, want)
			}
		}
	}
}
