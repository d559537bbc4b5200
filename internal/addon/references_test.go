package addon

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/memberships"
	"github.com/clever-operator/clever-operator/internal/status"
)

// TestResolveGroupById: an ng_ entry of spec.networkGroups is used only when a NetworkGroup
// of the namespace records it or the credentials allow binding it; a refusal is
// BindingNotAllowed, decided without any Clever Cloud call (the pass has no API).
func TestResolveGroupById(t *testing.T) {
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(kinds.NetworkGroupGVK, &unstructured.Unstructured{})
	scheme.AddKnownTypeWithName(kinds.NetworkGroupGVK.GroupVersion().WithKind("NetworkGroupList"), &unstructured.UnstructuredList{})
	ng := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"id": "ng_mine"}}}
	ng.SetGroupVersionKind(kinds.NetworkGroupGVK)
	ng.SetNamespace("team-b")
	ng.SetName("private")
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(ng).Build()
	cases := []struct {
		name, ref string
		grant     *credentials.Grant
		reason    string
	}{
		{"recorded by a NetworkGroup of the namespace", "ng_mine", nil, ""},
		{"another team's group", "ng_theirs", &credentials.Grant{Source: "ClusterCleverCredentials b"}, status.ReasonBindingNotAllowed},
		{"another team's group, no grant", "ng_theirs", nil, status.ReasonBindingNotAllowed},
		{"another team's group, binding.any", "ng_theirs", &credentials.Grant{BindAny: true}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{}}
			obj.SetNamespace("team-b")
			obj.SetName("cache")
			s := &pass{obj: obj, org: "orga_b", grant: tc.grant}
			id, reason, msg := memberships.Resolve(context.Background(), c, s, tc.ref)
			if reason != tc.reason {
				t.Fatalf("reason %q (%s), want %q", reason, msg, tc.reason)
			}
			if tc.reason == "" && id != tc.ref {
				t.Fatalf("id %q, want %q", id, tc.ref)
			}
			if tc.reason != "" && (id != "" || !strings.Contains(msg, tc.ref) || !strings.Contains(msg, "team-b")) {
				t.Fatalf("refused with id %q, message %q", id, msg)
			}
		})
	}
}
