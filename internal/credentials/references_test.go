package credentials

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// TestMayReference: every reference by id obeys one rule: allowed when the namespace created
// the object (the caller's evidence from operator-written records) or the grant allows
// binding the id; otherwise BindingNotAllowed, naming the id, the namespace and the grant.
func TestMayReference(t *testing.T) {
	none := &Grant{Source: "ClusterCleverCredentials for-team-b"}
	any := &Grant{Source: "ClusterCleverCredentials for-team-b", BindAny: true}
	listed := &Grant{Source: "ClusterCleverCredentials for-team-b", BindIDs: []string{"addon_a", "ng_a"}}
	cases := []struct {
		name    string
		ref     Reference
		grant   *Grant
		allowed bool
		msg     []string
	}{
		{"add-on created here, no grant", Reference{What: ReferenceAddon, ID: "addon_a", Namespace: "team-a", CreatedHere: true}, nil, true, nil},
		{"add-on created here, grant without binding", Reference{What: ReferenceAddon, ID: "addon_a", Namespace: "team-a", CreatedHere: true}, none, true, nil},
		{"add-on of another namespace, no binding", Reference{What: ReferenceAddon, ID: "addon_a", Organisation: "orga_a", Namespace: "team-b"}, none, false,
			[]string{"add-on addon_a in organisation orga_a", "namespace team-b", "ClusterCleverCredentials for-team-b", "spec.binding", "binding.addonIds"}},
		{"add-on of another namespace, nil grant", Reference{What: ReferenceAddon, ID: "addon_a", Namespace: "team-b"}, nil, false,
			[]string{"addon_a", "namespace team-b", "the operator's credentials", "spec.binding"}},
		{"add-on of another namespace, binding.any", Reference{What: ReferenceAddon, ID: "addon_a", Namespace: "team-b"}, any, true, nil},
		{"add-on of another namespace, listed", Reference{What: ReferenceAddon, ID: "addon_a", Namespace: "team-b"}, listed, true, nil},
		{"add-on of another namespace, another listed", Reference{What: ReferenceAddon, ID: "addon_other", Namespace: "team-b"}, listed, false, []string{"addon_other"}},
		{"Cellar of a CellarBucket, not recorded here", Reference{What: ReferenceAddon, ID: "addon_c", Organisation: "orga_a", Namespace: "team-b", Field: "spec.cellar.addonId"}, none, false,
			[]string{"add-on addon_c in organisation orga_a (spec.cellar.addonId)", "namespace team-b", "no Cellar of the namespace records it", "spec.binding"}},
		{"Cellar of a CellarBucket, recorded here", Reference{What: ReferenceAddon, ID: "addon_c", Namespace: "team-a", Field: "spec.cellar.addonId", CreatedHere: true}, none, true, nil},
		{"Network Group of another namespace", Reference{What: ReferenceNetworkGroup, ID: "ng_a", Organisation: "orga_a", Namespace: "team-b", Field: "spec.networkGroups"}, none, false,
			[]string{"Network Group ng_a in organisation orga_a (spec.networkGroups)", "namespace team-b", "no NetworkGroup of the namespace records it", "binding.any"}},
		{"Network Group recorded here", Reference{What: ReferenceNetworkGroup, ID: "ng_a", Namespace: "team-a", CreatedHere: true}, none, true, nil},
		{"Network Group, binding.any", Reference{What: ReferenceNetworkGroup, ID: "ng_a", Namespace: "team-b"}, any, true, nil},
		{"Network Group, listed", Reference{What: ReferenceNetworkGroup, ID: "ng_a", Namespace: "team-b"}, listed, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := MayReference(c.ref, c.grant)
			if (err == nil) != c.allowed {
				t.Fatalf("allowed %v, want %v (%v)", err == nil, c.allowed, err)
			}
			if err == nil {
				return
			}
			ref, ok := AsRefused(err)
			if !ok || ref.Reason != status.ReasonBindingNotAllowed {
				t.Fatalf("refusal %#v, want a RefusedError with reason %s", err, status.ReasonBindingNotAllowed)
			}
			for _, want := range c.msg {
				if !strings.Contains(ref.Message, want) {
					t.Errorf("message %q does not say %q", ref.Message, want)
				}
			}
		})
	}
}

// TestRecordedIn: the evidence that a namespace created an object is a resource of that
// namespace recording its id in status, never in spec, never in another namespace.
func TestRecordedIn(t *testing.T) {
	cellar := schema.GroupVersionKind{Group: kinds.Group, Version: "v1", Kind: "Cellar"}
	scheme := runtime.NewScheme()
	for _, gvk := range []schema.GroupVersionKind{cellar, kinds.NetworkGroupGVK} {
		scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
		scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
	}
	obj := func(gvk schema.GroupVersionKind, ns, name string, fields map[string]any) client.Object {
		u := &unstructured.Unstructured{Object: fields}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetCreationTimestamp(metav1.Now())
		return u
	}
	cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		obj(cellar, "team-a", "cellar", map[string]any{"status": map[string]any{"addon": "addon_a"}}),
		obj(cellar, "team-b", "forged", map[string]any{"spec": map[string]any{"addonId": "addon_f"}}),
		obj(kinds.NetworkGroupGVK, "team-a", "private", map[string]any{"status": map[string]any{"id": "ng_a"}}),
	).Build()
	ctx := context.Background()
	cases := []struct {
		name  string
		gvk   schema.GroupVersionKind
		ns    string
		id    string
		field string
		want  bool
	}{
		{"Cellar of the namespace", cellar, "team-a", "addon_a", "addon", true},
		{"Cellar of another namespace", cellar, "team-b", "addon_a", "addon", false},
		{"an id in spec only", cellar, "team-b", "addon_f", "addon", false},
		{"another id", cellar, "team-a", "addon_x", "addon", false},
		{"empty id", cellar, "team-b", "", "addon", false},
		{"NetworkGroup of the namespace", kinds.NetworkGroupGVK, "team-a", "ng_a", "id", true},
		{"NetworkGroup of another namespace", kinds.NetworkGroupGVK, "team-b", "ng_a", "id", false},
		{"a Cellar's add-on is no NetworkGroup", kinds.NetworkGroupGVK, "team-a", "addon_a", "id", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := RecordedIn(ctx, cl, c.gvk, c.ns, c.id, c.field)
			if err != nil || got != c.want {
				t.Fatalf("RecordedIn = %v, %v; want %v", got, err, c.want)
			}
		})
	}
}
