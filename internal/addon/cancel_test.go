package addon

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/status"
)

// A pass cancelled while it waits for or talks to Clever Cloud (the operator stopping, a lost
// lease) reports nothing: no condition, no event, only a retry. A real API error still does.
func TestCancelledPassReportsNothing(t *testing.T) {
	cancelled := &clevercloud.RequestError{Method: "GET", Route: clevercloud.RouteAddonEnv, Op: "waiting for rate limiter", Err: context.Canceled}
	for _, tc := range []struct {
		name   string
		fail   func(s *pass) error
		report bool
	}{
		{"API call cancelled", func(s *pass) error { return s.failAPI("reading the env", cancelled) }, false},
		{"deletion cancelled", func(s *pass) error { return s.failDeleteAPI(fmt.Errorf("deleting: %w", cancelled)) }, false},
		{"API error", func(s *pass) error {
			return s.failAPI("reading the env", &clevercloud.APIError{StatusCode: 400, Message: "bad"})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := kind(t, "Redis")
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(k.GVK)
			r := &Reconciler{Kind: k}
			s := r.newPass(context.Background(), u)
			if err := tc.fail(s); err == nil {
				t.Fatal("no retry")
			}
			_, has := status.Find(s.conds, status.TypeAddonReady)
			if has != tc.report || (len(s.events) > 0) != tc.report {
				t.Fatalf("condition %v, events %v; want reported %v", has, s.events, tc.report)
			}
		})
	}
}
