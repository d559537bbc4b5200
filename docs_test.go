package main

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clever-operator/clever-operator/internal/addon"
	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/kinds"
	op "github.com/clever-operator/clever-operator/internal/operator"
	"github.com/clever-operator/clever-operator/internal/rollout"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/internal/status"
)

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section returns the part of doc from the heading line to the next heading of the same or a
// higher level (fewer #).
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("no section %q", heading)
	}
	level := strings.Index(heading, " ")
	lines := strings.Split(doc[i+1:], "\n")
	fenced := false
	for n, l := range lines[1:] {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if h := strings.Index(l, "# "); !fenced && h >= 0 && h < level && strings.Trim(l[:h+1], "#") == "" {
			return strings.Join(lines[:n+1], "\n")
		}
	}
	return doc[i+1:]
}

// TestDocsMatchTheCode fails when a kind, flag, environment variable, annotation, condition
// reason, event reason or engine metric is missing from the reference documentation.
func TestDocsMatchTheCode(t *testing.T) {
	kindsDoc := readDoc(t, "docs/kinds.md")
	operator := readDoc(t, "docs/operator.md")
	readme := readDoc(t, "README.md")

	for _, k := range kinds.Kinds {
		if !strings.Contains(kindsDoc, "## "+k.GVK.Kind) && !strings.Contains(kindsDoc, "## `"+k.GVK.Kind+"`") {
			t.Errorf("docs/kinds.md has no section for %s", k.GVK.Kind)
		}
		for _, s := range []string{k.ProviderID, k.Finalizer()} {
			if !strings.Contains(kindsDoc, s) {
				t.Errorf("docs/kinds.md does not mention %s of %s", s, k.GVK.Kind)
			}
		}
		if !strings.Contains(readme, "`"+k.GVK.Kind+"`") {
			t.Errorf("README.md does not list %s", k.GVK.Kind)
		}
	}

	// Every flag the operator defines (operator.Options.BindFlags, which main parses).
	fs := flag.NewFlagSet("clever-operator", flag.ContinueOnError)
	new(op.Options).BindFlags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		if len(f.Name) == 1 { // shorthands (-c, -t) are documented with their long form
			return
		}
		if !strings.Contains(operator, "--"+f.Name) {
			t.Errorf("docs/operator.md does not document the flag --%s", f.Name)
		}
	})

	for _, env := range []string{config.EnvEndpoint, config.EnvToken, config.EnvSecret, config.EnvConsumerKey, config.EnvConsumerSecret, config.EnvBearerToken} {
		if !strings.Contains(operator, env) {
			t.Errorf("docs/operator.md does not document %s", env)
		}
		if !strings.Contains(readme, env) {
			t.Errorf("README.md does not document %s", env)
		}
	}

	for _, a := range []string{kinds.AnnotationSkipDeprovision, kinds.AnnotationAddonID, secrets.AnnotationCredentialsHash, secrets.AnnotationRealID, kinds.LabelManagedBy,
		kinds.AnnotationPaused, kinds.AnnotationReconcileRequestedAt, kinds.AnnotationResyncPeriod, kinds.AnnotationDeletionPolicy, kinds.AnnotationOnAddonMissing,
		addon.AnnotationRotateRequestedAt, rollout.AnnotationRolloutOnSecretChange} {
		if !strings.Contains(operator, a) {
			t.Errorf("docs/operator.md does not document %s", a)
		}
	}

	// Every condition reason has a row in the Reasons table of docs/operator.md, where a user
	// reading a resource's status looks it up.
	reasons := section(t, operator, "### Reasons")
	for _, r := range []string{status.ReasonProvisioning, status.ReasonProvisioned, status.ReasonPlanNotFound, status.ReasonInvalidSpec,
		status.ReasonInvalidCredentials, status.ReasonAPIUnavailable, status.ReasonAPIError, status.ReasonSecretConflict,
		status.ReasonRendering, status.ReasonRenderFailed, status.ReasonDeleting, status.ReasonDeleteFailed,
		status.ReasonAddonNotFound, status.ReasonAddonMissing, status.ReasonPauseRequested, status.ReasonSecretTemplateInvalid,
		status.ReasonMigrating, status.ReasonMigrated, status.ReasonMigrationFailed, status.ReasonProviderNotFound, status.ReasonRegionNotAvailable} {
		if !strings.Contains(reasons, "\n| `"+r+"` |") {
			t.Errorf("docs/operator.md's Reasons table has no row for the reason %s", r)
		}
	}
	// The README stays short: instead of listing the reasons it points at that table.
	if !strings.Contains(readme, "](docs/operator.md#reasons)") {
		t.Error("README.md does not link to docs/operator.md#reasons")
	}

	// Every event reason of internal/status has its row in the Events section, and every
	// condition reason is documented where a user reading a status finds it.
	events := section(t, operator, "## Events")
	docs := readDocs(t)
	for name, value := range statusConstants(t) {
		switch {
		case strings.HasPrefix(name, "Event") && !inCode(events, value):
			t.Errorf("docs/operator.md's Events section does not document the event %s (status.%s)", value, name)
		case strings.HasPrefix(name, "Reason") && !inCode(docs, value):
			t.Errorf("no doc under docs/ documents the reason %s (status.%s)", value, name)
		}
	}

	// The engine's metrics (internal/metrics).
	for _, m := range []string{"clever_operator_resources", "clever_operator_time_to_ready_seconds",
		"clever_operator_deletion_duration_seconds", "clever_operator_reconcile_errors_total", "clever_operator_status_handoffs_total"} {
		if !strings.Contains(operator, "`"+m+"`") {
			t.Errorf("docs/operator.md does not document the metric %s", m)
		}
	}
}

// statusConstants are the string constants of internal/status named Reason… or Event….
func statusConstants(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	files, err := filepath.Glob("internal/status/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i >= len(vs.Values) || !(strings.HasPrefix(n.Name, "Reason") || strings.HasPrefix(n.Name, "Event")) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						out[n.Name] = strings.Trim(lit.Value, "`\"")
					}
				}
			}
		}
	}
	if len(out) < 50 {
		t.Fatalf("found %d reasons and events in internal/status", len(out))
	}
	return out
}

// readDocs is every doc under docs/, one after the other.
func readDocs(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range files {
		b.WriteString(readDoc(t, f))
	}
	return b.String()
}

// inCode says whether word appears, as a word, in a code span of md (`Word`, `True/Word`).
func inCode(md, word string) bool {
	w := regexp.MustCompile(`(^|[^A-Za-z])` + regexp.QuoteMeta(word) + `($|[^A-Za-z])`)
	for _, span := range codeSpan.FindAllString(md, -1) {
		if w.MatchString(span) {
			return true
		}
	}
	return false
}

var codeSpan = regexp.MustCompile("`[^`\n]+`")
