package wire

import (
	"fmt"
	"slices"
	"strings"
)

// ValidateVars checks an env list as the API accepts it: no empty name, no
// name twice.
func ValidateVars(vars []Variable) error {
	seen := map[string]bool{}
	for i, v := range vars {
		if v.Name == "" {
			return fmt.Errorf("variable #%d has an empty name", i)
		}
		if seen[v.Name] {
			return fmt.Errorf("variable %q is defined twice", v.Name)
		}
		seen[v.Name] = true
	}
	return nil
}

// SortVars sorts an env list by name, as the API answers it.
func SortVars(v []Variable) {
	slices.SortStableFunc(v, func(a, b Variable) int { return strings.Compare(a.Name, b.Name) })
}

// VarNames returns the names of an env list, in order (an add-on's configKeys).
func VarNames(v []Variable) []string {
	out := make([]string, 0, len(v))
	for _, x := range v {
		out = append(out, x.Name)
	}
	return out
}
