package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// floors are the packages of internal/ by floor (docs/design.md, "Packages"): a package
// imports only packages of its own floor or a lower one.
var floors = map[string]int{
	"status": 0, "patch": 0, "queue": 0, "config": 0, "templates": 0, "tracing": 0, "logging": 0, "intern": 0, "admission": 0, "rbac/namespaced": 0,
	"clevercloud": 1, "config/check": 1, "config/configtest": 1,
	"kinds": 2, "statusmerge": 2, "secrets": 2, "waits": 2, "metrics": 2, "rollout": 2,
	"credentials": 3, "catalog": 3,
	"step": 4, "backups": 4, "operatoraddons": 4, "configprovider": 4, "memberships": 4, "migrations": 4,
	"addon": 5, "hybrid": 5, "standalone": 5, "networkgroup": 5, "cellarbucket": 5,
	"operator": 6, "plugin": 6, "plugin/kubectl-clever": 6,
}

// maxPackageLines is the most non-test lines a package of internal/ or pkg/ may hold: past it,
// a package holds more than one thing and is split by what it holds.
const maxPackageLines = 3000

// TestPackageFloors: no package of internal/ imports one of a higher floor, and every package
// has a floor; the kubectl plugin does not import the operator's controllers; no package of
// internal/ or pkg/ is over maxPackageLines.
func TestPackageFloors(t *testing.T) {
	const prefix = "github.com/clever-operator/clever-operator/internal/"
	imports := map[string]map[string]bool{}
	sizes := map[string]int{}
	for _, root := range []string{"internal", "pkg"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			sizes[filepath.ToSlash(filepath.Dir(path))] += bytes.Count(b, []byte("\n"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for pkg, n := range sizes {
		if n > maxPackageLines {
			t.Errorf("%s has %d non-test lines (at most %d): split it by what it holds", pkg, n, maxPackageLines)
		}
	}
	err := filepath.WalkDir("internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		pkg := strings.TrimPrefix(filepath.ToSlash(filepath.Dir(path)), "internal/")
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, im := range f.Imports {
			if p := strings.Trim(im.Path.Value, `"`); strings.HasPrefix(p, prefix) {
				imports[pkg][strings.TrimPrefix(p, prefix)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, deps := range imports {
		floor, ok := floors[pkg]
		if !ok {
			t.Errorf("internal/%s has no floor: add it to floors and to docs/design.md's Packages", pkg)
			continue
		}
		for dep := range deps {
			if floors[dep] > floor {
				t.Errorf("internal/%s (floor %d) imports internal/%s (floor %d)", pkg, floor, dep, floors[dep])
			}
			if strings.HasPrefix(pkg, "plugin") && !strings.HasPrefix(dep, "plugin") && floors[dep] > floors["credentials"] {
				t.Errorf("the kubectl plugin imports internal/%s", dep)
			}
		}
	}
	if len(imports) < 20 {
		t.Fatalf("found %d packages under internal/", len(imports))
	}
}
