package addon

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/internal/status"
)

// tenantCredentials resolves every resource to one tenant's credentials.
type tenantCredentials struct {
	api    credentials.API
	tenant string
}

func (c tenantCredentials) Resolve(context.Context, *unstructured.Unstructured) (*credentials.Grant, error) {
	return &credentials.Grant{API: c.api, Key: "k", Source: "Secret ns/clever-operator", BindAny: true, Tenant: c.tenant}, nil
}

// stuckAPI never answers the catalogue, create or list: each call waits for the pass's
// context (a stuck endpoint behind the client's timeouts).
type stuckAPI struct {
	fakeAPI
	creates atomic.Int32
}

func (a *stuckAPI) CreateAddon(ctx context.Context, _ string, _ clevercloud.CreateOpts) (*clevercloud.Addon, error) {
	a.creates.Add(1)
	<-ctx.Done()
	return nil, &clevercloud.RequestError{Method: "POST", Route: clevercloud.RouteAddons, Op: "sending request", Err: ctx.Err()}
}

func TestTenantShare(t *testing.T) {
	for _, c := range []struct{ workers, tenant, want int }{
		{0, 0, 2}, {4, 0, 2}, {1, 0, 1}, {2, 0, 1}, {8, 0, 4}, {4, 3, 3}, {4, -1, 0},
	} {
		r := &Reconciler{MaxConcurrentReconciles: c.workers, TenantWorkers: c.tenant}
		if got := r.tenantShare(); got != c.want {
			t.Errorf("workers %d, TenantWorkers %d: share %d, want %d", c.workers, c.tenant, got, c.want)
		}
	}
}

// A pass of a tenant whose share of workers is in use makes no call and writes nothing: it
// comes back after one to two seconds (no backoff growth), and is still a first pass then.
// Once the slot is free, it runs; its slot is released at the end of the pass.
func TestPassOverTenantShareWaitsWithoutCalling(t *testing.T) {
	k, u := testResource(t, nil)
	api := &fakeAPI{env: []clevercloud.Variable{{Name: "AZIMUTT_URL", Value: "https://az"}}}
	h := newHarness(t, k, api, u)
	h.r.Credentials = tenantCredentials{api: api, tenant: "namespace ns"}
	h.r.MaxConcurrentReconciles = 4
	// Two passes of the tenant are in flight (stuck at its endpoint).
	h.r.slots.Acquire("namespace ns", 2)
	h.r.slots.Acquire("namespace ns", 2)
	res, err := h.r.reconcileObject(context.Background(), h.get(t, u))
	if err != nil || res.RequeueAfter < queue.TenantRetry || res.RequeueAfter > 2*queue.TenantRetry {
		t.Fatalf("over the share: %+v, %v; want a requeue after 1-2 s without error", res, err)
	}
	if len(api.calls) != 0 || h.statusWrites != 0 {
		t.Fatalf("over the share: calls %v, status writes %d; want none", api.calls, h.statusWrites)
	}
	h.r.slots.Release("namespace ns")
	live := h.pass(t, u)
	if got := ready(live); got != "True/"+status.ReasonProvisioned {
		t.Fatalf("with a free slot: %s (calls %v)", got, api.calls)
	}
	for _, c := range api.calls {
		if c == "list" {
			t.Fatalf("the pass after the wait listed the organisation (not a first pass any more): %v", api.calls)
		}
	}
	if n := h.r.slots.InFlight("namespace ns"); n != 1 {
		t.Fatalf("slots held after the pass: %d, want 1 (the pass's own released)", n)
	}
	// The operator's credentials (no Tenant) are never limited.
	h.r.Credentials = staticCredentials{api}
	if _, err := h.r.reconcileObject(context.Background(), h.get(t, live)); err != nil {
		t.Fatal(err)
	}
}

// A pass whose endpoint never answers is cut by the pass deadline: AddonReady says the
// endpoint did not answer in time (ApiUnavailable), the work queue backs off (an error), and
// the status is written although the deadline has passed. The create's outcome is unknown,
// so the next pass looks the add-on up by name before creating again.
func TestPassDeadline(t *testing.T) {
	k, u := testResource(t, nil)
	api := &stuckAPI{}
	h := newHarness(t, k, api, u)
	h.r.Credentials = tenantCredentials{api: api, tenant: "namespace ns"}
	h.r.PassTimeout = 200 * time.Millisecond
	start := time.Now()
	_, err := h.r.reconcileObject(context.Background(), h.get(t, u))
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the pass took %s, deadline 200ms", took)
	}
	if err == nil {
		t.Fatal("a pass cut by its deadline must back off (an error for the work queue)")
	}
	live := h.get(t, u)
	a, _ := status.Find(status.Conditions(live), status.TypeAddonReady)
	if a.Reason != status.ReasonAPIUnavailable || !strings.Contains(a.Message, "did not answer in time") || !strings.Contains(a.Message, "Secret ns/clever-operator") {
		t.Fatalf("AddonReady %s: %q", a.Reason, a.Message)
	}
	if h.statusWrites != 1 {
		t.Fatalf("status writes %d, want 1 (written after the deadline)", h.statusWrites)
	}
	if n := h.r.slots.InFlight("namespace ns"); n != 0 {
		t.Fatalf("slot not released: %d", n)
	}
	// The next pass is not a first pass: it lists the organisation before any create.
	api.fakeAPI.calls = nil
	_, _ = h.r.reconcileObject(context.Background(), h.get(t, u))
	if api.creates.Load() != 2 || len(api.fakeAPI.calls) == 0 || api.fakeAPI.calls[0] != "list" {
		t.Fatalf("second pass calls %v: want the lookup by name first", api.fakeAPI.calls)
	}
}
