package credentials

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/status"
)

// Grant is what the credentials a resource resolved to allow it to do (docs/security.md,
// "Credentials as resources"): which API client to use, in which organisations, and which
// existing add-ons it may bind although its namespace did not create them. Every Clever Cloud
// call of a pass goes through a Grant, checked before the first call.
type Grant struct {
	API API
	// Key identifies the credential set (for caches); it reveals nothing about it.
	Key string
	// Source names where the credentials came from, for messages: "ClusterCleverCredentials
	// default", "CleverCredentials team-a/ci", "Secret team-a/clever-operator".
	Source string
	// Tenant, when set, is the key under which passes with these credentials share a kind's
	// workers (at most Reconciler.TenantWorkers at once, fairness.go): the namespace, for
	// credentials a namespace supplied or whose endpoint is not the operator's. "": not
	// limited (the operator's endpoint with credentials an admin chose).
	Tenant string
	// Organisations the resource may act in; empty: any the credentials reach.
	Organisations []string
	// BindAny allows binding any add-on of an allowed organisation; BindIDs these add-ons.
	BindAny bool
	BindIDs []string
}

// AllowsOrganisation says whether the grant lets a resource act in org.
func (g *Grant) AllowsOrganisation(org string) bool {
	return len(g.Organisations) == 0 || slices.Contains(g.Organisations, org)
}

// AllowsBinding says whether the grant lets a resource bind add-on id although its namespace
// did not create it.
func (g *Grant) AllowsBinding(id string) bool {
	return g.BindAny || slices.Contains(g.BindIDs, id)
}

// RefusedError is a credentials resolution that refuses the resource before any Clever Cloud
// call: Reason is one of status.ReasonCredentialsNotFound, ReasonCredentialsNotAllowed,
// ReasonInvalidCredentials; Message is for the condition and the Warning event (never a
// secret value).
type RefusedError struct {
	Reason  string
	Message string
}

func (e *RefusedError) Error() string { return e.Message }

// AsRefused returns the RefusedError in err's chain, if any.
func AsRefused(err error) (*RefusedError, bool) {
	var r *RefusedError
	ok := errors.As(err, &r)
	return r, ok
}

// Connect resolves obj's credentials and checks they allow org: what every controller does
// before its first Clever Cloud call. A refusal (credentials not found, not allowed for the
// namespace, or an organisation they do not allow) is a *RefusedError, which waits for a
// change; any other error is transient, its message ready for a condition.
func Connect(ctx context.Context, creds Credentials, obj *unstructured.Unstructured, org string) (*Grant, error) {
	g, err := creds.Resolve(ctx, obj)
	if err != nil {
		if _, ok := AsRefused(err); ok {
			return nil, err
		}
		return nil, fmt.Errorf("no usable Clever Cloud credentials for %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	if !g.AllowsOrganisation(org) {
		return nil, &RefusedError{Reason: status.ReasonOrganisationNotAllowed, Message: fmt.Sprintf(
			"organisation %q is not allowed by the credentials in use (%s), which allow only %s; nothing was done at Clever Cloud",
			org, g.Source, strings.Join(g.Organisations, ", "))}
	}
	return g, nil
}
