package catalog

import (
	"slices"
	"testing"
)

// TestVersionTableInvariants keeps the version table and the catalogue in step.
func TestVersionTableInvariants(t *testing.T) {
	c := New()
	for id, vs := range providerVersions {
		k := c.ByID[id]
		if k == nil {
			t.Fatalf("%s is not in the catalogue", id)
		}
		if !slices.Contains(vs.Offered, k.Spec.DefaultVersion) {
			t.Errorf("%s: default version %s not offered", id, k.Spec.DefaultVersion)
		}
		if !slices.IsSortedFunc(vs.Offered, CompareVersions) {
			t.Errorf("%s: offered versions not sorted", id)
		}
	}
	for _, tc := range []struct {
		target, current string
		less            bool
	}{{"14", "15", true}, {"8", "8.19.9", false}, {"7", "8.19.9", true}, {"8.0", "8.4", true}, {"8.8.0", "7.2.4", false}, {"16", "15", false}} {
		if got := VersionPrefixLess(tc.target, tc.current); got != tc.less {
			t.Errorf("VersionPrefixLess(%s, %s) = %v", tc.target, tc.current, got)
		}
	}
}
