package operator

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper counts the RESTMapping calls reaching it.
type countingMapper struct {
	meta.RESTMapper
	calls int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.calls++
	return c.RESTMapper.RESTMapping(gk, versions...)
}

func TestMemoMapperRemembersMappingsNotMisses(t *testing.T) {
	gv := schema.GroupVersion{Group: "api.clever-cloud.com", Version: "v1"}
	d := meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	d.Add(gv.WithKind("PostgreSql"), meta.RESTScopeNamespace)
	c := &countingMapper{RESTMapper: d}
	m := &memoMapper{RESTMapper: c}
	gk := schema.GroupKind{Group: gv.Group, Kind: "PostgreSql"}

	first, err := m.RESTMapping(gk, "v1")
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.RESTMapping(gk, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if c.calls != 1 {
		t.Fatalf("the second mapping reached the mapper: %d calls", c.calls)
	}
	if first == second || *first != *second || second.Scope.Name() != meta.RESTScopeNameNamespace {
		t.Fatalf("want an equal copy, got %+v and %+v", first, second)
	}
	second.Resource.Resource = "changed"
	if third, _ := m.RESTMapping(gk, "v1"); third.Resource.Resource == "changed" {
		t.Fatal("a caller's change reached the remembered mapping")
	}

	// Another version is another question; a miss is asked again every time.
	if _, err := m.RESTMapping(gk, "v2"); !meta.IsNoMatchError(err) {
		t.Fatalf("v2: want no match, got %v", err)
	}
	if _, err := m.RESTMapping(gk, "v2"); !meta.IsNoMatchError(err) {
		t.Fatalf("v2 again: want no match, got %v", err)
	}
	if c.calls != 3 {
		t.Fatalf("misses: want 3 calls in all, got %d", c.calls)
	}
}
