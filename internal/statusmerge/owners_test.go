package statusmerge

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/clever-operator/clever-operator/api/v1"
	"github.com/clever-operator/clever-operator/api/v1alpha1"
	"github.com/clever-operator/clever-operator/api/v1beta1"
	"github.com/clever-operator/clever-operator/internal/kinds"
)

// TestEngineOwnedFieldsComeFromTheTypes: the fields the Helm side keeps from the engine are
// every field of kinds.Status but Helm's own, and kinds.Status is exactly the union of the
// add-on kinds' status types in api/: a field a kind's type declares that kinds.Status lacks
// would never be read or written by the engine, and one kinds.Status has that no kind
// declares would be pruned by the CRD.
func TestEngineOwnedFieldsComeFromTheTypes(t *testing.T) {
	for _, f := range HelmFields {
		if slices.Contains(EngineFields, f) {
			t.Errorf("EngineFields holds %q, which the Helm reconciler writes", f)
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(HelmFields)), slices.Sorted(slices.Values(kinds.NotEncoded))) {
		t.Errorf("kinds.Status leaves %v alone, the Helm side writes %v", kinds.NotEncoded, HelmFields)
	}
	union := map[string][]string{} // field: the kinds declaring it
	for _, k := range kinds.Kinds {
		for _, f := range kinds.JSONFields(statusType(t, k)) {
			union[f] = append(union[f], k.GVK.Kind)
			if !slices.Contains(kinds.StatusFields, f) {
				t.Errorf("%s's status declares %q, which kinds.Status lacks", k.GVK.Kind, f)
			}
		}
	}
	for _, f := range kinds.StatusFields {
		if union[f] == nil {
			t.Errorf("kinds.Status has %q, which no add-on kind's status type declares", f)
		}
	}
	// The kinds' own fields are found too, beyond CommonStatus: a URL, the operator add-ons'
	// facts, the memberships of Network Groups.
	for _, f := range []string{"url", "admin_url", "accessUrl", "networkGroups", "backups", "credentials", "price"} {
		if !slices.Contains(EngineFields, f) {
			t.Errorf("EngineFields lacks %q", f)
		}
	}
	if !slices.Equal(union["admin_url"], []string{"Keycloak"}) {
		t.Errorf("admin_url is declared by %v", union["admin_url"])
	}
}

// statusType is the Go type of kind k's status, from api/.
func statusType(t *testing.T, k kinds.Kind) reflect.Type {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1.AddToScheme, v1alpha1.AddToScheme, v1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	obj, err := scheme.New(k.GVK)
	if err != nil {
		t.Fatalf("kind %s has no Go type in api/: %v", k.GVK, err)
	}
	f, ok := reflect.TypeOf(obj).Elem().FieldByName("Status")
	if !ok {
		t.Fatalf("kind %s has no Status field", k.GVK)
	}
	return f.Type
}
