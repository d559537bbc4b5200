package catalog

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
)

type providersAPI struct {
	credentials.API
	calls  atomic.Int32
	ps     []clevercloud.Provider
	owners []string
}

func (p *providersAPI) ListProvidersForOwner(_ context.Context, owner string) ([]clevercloud.Provider, error) {
	p.calls.Add(1)
	p.owners = append(p.owners, owner)
	if owner == "orga_private" {
		// The catalogue as that organisation sees it: its private plan too.
		ps := append([]clevercloud.Provider(nil), p.ps...)
		ps[0].Plans = append(append([]clevercloud.Plan(nil), ps[0].Plans...), clevercloud.Plan{ID: "plan_private", Slug: "private_xl", Name: "Private XL"})
		return ps, nil
	}
	return p.ps, nil
}

func TestPlanCacheResolve(t *testing.T) {
	api := &providersAPI{ps: []clevercloud.Provider{
		{ID: "postgresql-addon", Plans: []clevercloud.Plan{{ID: "plan_a", Slug: "xs_sml", Name: "XS Small Space"}, {ID: "plan_b", Slug: "dev", Name: "DEV"}}},
		{ID: "empty", Plans: nil},
	}}
	c := &PlanCache{}
	ctx := context.Background()
	for _, in := range []string{"xs_sml", "XS_SML", "XS Small Space", "plan_a"} {
		id, err := c.Resolve(ctx, api, "k", "orga_1", "postgresql-addon", in)
		if err != nil || id != "plan_a" {
			t.Fatalf("Resolve(%q) = %q, %v", in, id, err)
		}
	}
	if id, _ := c.Resolve(ctx, api, "k", "orga_1", "postgresql-addon", "plan_unknown"); id != "plan_unknown" {
		t.Fatalf("plan ids pass through, got %q", id)
	}
	if n := api.calls.Load(); n != 1 {
		t.Fatalf("catalogue fetched %d times, want 1 (cached)", n)
	}
	_, err := c.Resolve(ctx, api, "k", "orga_1", "postgresql-addon", "huge")
	var se *kinds.SpecError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "dev (DEV), xs_sml (XS Small Space)") {
		t.Fatalf("unknown plan: %v", err)
	}
	if n := api.calls.Load(); n != 2 {
		t.Fatalf("an unknown plan refreshes the catalogue once: %d calls", n)
	}
	if _, err := c.Resolve(ctx, api, "k", "orga_1", "empty", "x"); !errors.As(err, &se) {
		t.Fatalf("provider without plans: %v", err)
	}
	if _, err := c.Resolve(ctx, api, "k", "orga_1", "missing-provider", "x"); err == nil || errors.As(err, &se) {
		t.Fatalf("unknown provider must be an API-side error, got %v", err)
	}
	if _, err := c.Resolve(ctx, api, "other-credentials", "orga_1", "postgresql-addon", "dev"); err != nil || api.calls.Load() < 3 {
		t.Fatalf("cache is per credential set: %v, %d calls", err, api.calls.Load())
	}
	// Per owner: the catalogue is asked for with the organisation, so its private plans resolve.
	before := api.calls.Load()
	if id, err := c.Resolve(ctx, api, "k", "orga_private", "postgresql-addon", "private_xl"); err != nil || id != "plan_private" {
		t.Fatalf("private plan: %q, %v", id, err)
	}
	if api.calls.Load() != before+1 || api.owners[len(api.owners)-1] != "orga_private" {
		t.Fatalf("the private catalogue was not asked for with its owner: %v", api.owners)
	}
	if _, err := c.Resolve(ctx, api, "k", "orga_1", "postgresql-addon", "private_xl"); !errors.As(err, &se) {
		t.Fatalf("another organisation must not see the private plan: %v", err)
	}
}

func TestPlanCacheCheck(t *testing.T) {
	api := &providersAPI{ps: []clevercloud.Provider{
		{ID: "postgresql-addon", Regions: []string{"par"}, Plans: []clevercloud.Plan{{ID: "plan_pg", Slug: "xs_sml", Name: "XS"}}},
		{ID: "fs-bucket", Regions: []string{"par", "rbx", "mtl"}, Plans: []clevercloud.Plan{
			{ID: "plan_s", Slug: "s", Name: "Basic", Zones: []string{"par", "rbx", "mtl"}},
			{ID: "plan_l", Slug: "l", Name: "Large", Zones: []string{"par"}},
		}},
	}}
	c := &PlanCache{}
	ctx := context.Background()
	for _, in := range []string{"s", "S", "Basic", "plan_s"} {
		if id, err := c.Check(ctx, api, "k", "orga_1", "fs-bucket", in, "rbx"); err != nil || id != "plan_s" {
			t.Fatalf("Check(%q) = %q, %v", in, id, err)
		}
	}
	for _, tc := range []struct {
		provider, plan, region, reason string
		msg                            []string
	}{
		{"fs-buket", "s", "par", "ProviderNotFound", []string{`spec.providerId "fs-buket"`, "available: fs-bucket, postgresql-addon"}},
		{"fs-bucket", "xl", "par", "PlanNotFound", []string{`spec.plan "xl"`, "available: l (Large), s (Basic)"}},
		{"fs-bucket", "plan_other", "par", "PlanNotFound", []string{`spec.plan "plan_other"`}},
		{"fs-bucket", "s", "syd", "RegionNotAvailable", []string{`spec.region "syd"`, "available: par, rbx, mtl"}},
		{"fs-bucket", "l", "rbx", "RegionNotAvailable", []string{"plan l", "available: par"}},
	} {
		before := api.calls.Load()
		_, err := c.Check(ctx, api, "k", "orga_1", tc.provider, tc.plan, tc.region)
		var se *kinds.SpecError
		if !errors.As(err, &se) || se.Reason != tc.reason {
			t.Fatalf("%+v: err = %v, want a SpecError with reason %s", tc, err, tc.reason)
		}
		for _, m := range tc.msg {
			if !strings.Contains(se.Msg, m) {
				t.Errorf("%+v: message %q lacks %q", tc, se.Msg, m)
			}
		}
		if n := api.calls.Load() - before; n != 1 {
			t.Errorf("%+v: %d catalogue reads, want 1 (one refresh before answering)", tc, n)
		}
	}
}
