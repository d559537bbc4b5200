package main

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/clever-operator/clever-operator/internal/addon"
	"github.com/clever-operator/clever-operator/internal/config"
	op "github.com/clever-operator/clever-operator/internal/operator"
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

// TestDocsMatchTheCode fails when a kind, flag, environment variable, annotation, condition
// reason, event reason or engine metric is missing from the reference documentation.
func TestDocsMatchTheCode(t *testing.T) {
	kinds := readDoc(t, "docs/kinds.md")
	operator := readDoc(t, "docs/operator.md")
	readme := readDoc(t, "README.md")

	for _, k := range addon.Kinds {
		if !strings.Contains(kinds, "## "+k.GVK.Kind) && !strings.Contains(kinds, "## `"+k.GVK.Kind+"`") {
			t.Errorf("docs/kinds.md has no section for %s", k.GVK.Kind)
		}
		for _, s := range []string{k.ProviderID, k.Finalizer()} {
			if !strings.Contains(kinds, s) {
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

	for _, a := range []string{addon.AnnotationSkipDeprovision, addon.AnnotationAddonID, addon.AnnotationCredentialsHash, addon.AnnotationRealID, addon.LabelManagedBy,
		addon.AnnotationPaused, addon.AnnotationReconcileRequestedAt, addon.AnnotationResyncPeriod, addon.AnnotationDeletionPolicy, addon.AnnotationOnAddonMissing,
		addon.AnnotationRotateRequestedAt, addon.AnnotationRolloutOnSecretChange} {
		if !strings.Contains(operator, a) {
			t.Errorf("docs/operator.md does not document %s", a)
		}
	}

	for _, r := range []string{status.ReasonProvisioning, status.ReasonProvisioned, status.ReasonPlanNotFound, status.ReasonInvalidSpec,
		status.ReasonInvalidCredentials, status.ReasonAPIUnavailable, status.ReasonAPIError, status.ReasonSecretConflict,
		status.ReasonRendering, status.ReasonRenderFailed, status.ReasonDeleting, status.ReasonDeleteFailed,
		status.ReasonAddonNotFound, status.ReasonAddonMissing, status.ReasonPauseRequested, status.ReasonSecretTemplateInvalid,
		status.ReasonMigrating, status.ReasonMigrated, status.ReasonMigrationFailed, status.ReasonProviderNotFound, status.ReasonRegionNotAvailable} {
		if !strings.Contains(operator, "`"+r+"`") {
			t.Errorf("docs/operator.md does not document the reason %s", r)
		}
		if !strings.Contains(readme, "`"+r+"`") {
			t.Errorf("README.md does not list the reason %s", r)
		}
	}

	for _, e := range []string{addon.EventAddonCreated, addon.EventAddonAdopted, addon.EventAddonDeleted, addon.EventAddonLeftBehind,
		addon.EventAddonMissing, addon.EventCredentialsWritten, addon.EventCredentialsUpdated, addon.EventVariablesPushed, addon.EventSecretAdopted,
		addon.EventAddonOrphaned, addon.EventMigrationStarted, addon.EventMigrationSucceeded, addon.EventMigrationFailed,
		addon.EventCredentialsRotated, addon.EventRotationNotSupport, addon.EventRolloutTriggered, addon.EventRolloutFailed} {
		if !strings.Contains(operator, "`"+e+"`") {
			t.Errorf("docs/operator.md does not document the event %s", e)
		}
	}

	// The engine's metrics (internal/addon/metrics.go).
	for _, m := range []string{"clever_operator_resources", "clever_operator_time_to_ready_seconds",
		"clever_operator_deletion_duration_seconds", "clever_operator_reconcile_errors_total", "clever_operator_status_handoffs_total"} {
		if !strings.Contains(operator, "`"+m+"`") {
			t.Errorf("docs/operator.md does not document the metric %s", m)
		}
	}
}
