package statusmerge

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

// TestEngineOwnedFieldsComeFromTheTypes: the fields the Helm side keeps from the engine are
// every status field of the kinds' Go types but Helm's own, and they include every status
// field the engine writes (the paths of internal/kinds): a field the engine writes
// that no type declares would be erased by the Helm side's writes (and pruned by the CRD).
func TestEngineOwnedFieldsComeFromTheTypes(t *testing.T) {
	for _, f := range HelmFields {
		if slices.Contains(EngineFields, f) {
			t.Errorf("EngineFields holds %q, which the Helm reconciler writes", f)
		}
	}
	written := engineWrittenFields(t)
	if len(written) < 15 {
		t.Fatalf("found %d status fields in internal/kinds/fields.go", len(written))
	}
	for _, f := range written {
		if !slices.Contains(EngineFields, f) {
			t.Errorf("the engine writes status.%s (internal/kinds), which no kind's status type declares", f)
		}
	}
	// The kinds' own fields are found too, beyond CommonStatus: a URL, the operator add-ons'
	// facts, the memberships of Network Groups.
	for _, f := range []string{"url", "admin_url", "accessUrl", "networkGroups", "backups"} {
		if !slices.Contains(EngineFields, f) {
			t.Errorf("EngineFields lacks %q", f)
		}
	}
	// A kind with a field of its own adds it: the derivation reads each kind's type.
	if fs := statusFields([]kinds.Kind{*kinds.MustNamed("Keycloak")}, HelmFields); !slices.Contains(fs, "admin_url") {
		t.Errorf("Keycloak's status fields %v lack admin_url", fs)
	}
}

// engineWrittenFields are the top-level status fields named by the Path literals of
// internal/kinds (Path{"status", "<field>", …}).
func engineWrittenFields(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../kinds/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || len(lit.Elts) < 2 {
				return true
			}
			if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "Path" {
				return true
			}
			first, ok1 := lit.Elts[0].(*ast.BasicLit)
			second, ok2 := lit.Elts[1].(*ast.BasicLit)
			if !ok1 || !ok2 {
				return true
			}
			if s, _ := strconv.Unquote(first.Value); s == "status" {
				if name, _ := strconv.Unquote(second.Value); name != "conditions" && !slices.Contains(out, name) {
					out = append(out, name)
				}
			}
			return true
		})
	}
	return out
}
