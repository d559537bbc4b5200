package catalog

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/status"
)

// pricesAPI answers the catalogue and the two price systems as told.
type pricesAPI struct {
	credentials.API
	ps             []clevercloud.Provider
	org, list      *clevercloud.PriceSystem
	orgErr, lstErr error
	orgCalls       atomic.Int32
	listCalls      atomic.Int32
	listCurrency   string
}

func (p *pricesAPI) ListProvidersForOwner(context.Context, string) ([]clevercloud.Provider, error) {
	return p.ps, nil
}

func (p *pricesAPI) GetOrgPriceSystem(_ context.Context, owner, zone string) (*clevercloud.PriceSystem, error) {
	p.orgCalls.Add(1)
	return p.org, p.orgErr
}

func (p *pricesAPI) GetListPriceSystem(_ context.Context, zone, currency string) (*clevercloud.PriceSystem, error) {
	p.listCalls.Add(1)
	p.listCurrency = currency
	return p.list, p.lstErr
}

func strp(s string) *string { return &s }

func TestPrice(t *testing.T) {
	catalogue := []clevercloud.Provider{
		{ID: "postgresql-addon", Plans: []clevercloud.Plan{
			{ID: "plan_xs", Slug: "xs_sml", Price: 17.5, PriceID: strp("postgresql.xs_sml")},
			{ID: "plan_dev", Slug: "dev", Price: 0, PriceID: strp("postgresql.dev")},
			{ID: "plan_old", Slug: "old", Price: 36, PriceID: nil},
		}},
		{ID: "cellar-addon", Plans: []clevercloud.Plan{{ID: "plan_cellar", Slug: "S", Price: 0}}},
	}
	org := &clevercloud.PriceSystem{ZoneID: "par", Currency: "EUR", Runtime: []clevercloud.RuntimePrice{
		{Source: "postgresql", Flavor: "xs_sml", TimeUnit: "PT1H", Price: 0.0194444444, SlugID: "postgresql.XS_SML"},
		{Source: "postgresql", Flavor: "dev", TimeUnit: "PT1H", Price: 0, SlugID: "postgresql.DEV"},
	}}
	list := &clevercloud.PriceSystem{ZoneID: "par", Currency: "EUR", Runtime: []clevercloud.RuntimePrice{
		{Source: "postgresql", Flavor: "xs_sml", TimeUnit: "PT1H", Price: 0.0243055556, SlugID: "postgresql.XS_SML"},
	}}
	notFound := &clevercloud.APIError{StatusCode: http.StatusNotFound, Message: "price system not found"}
	down := &clevercloud.APIError{StatusCode: http.StatusServiceUnavailable, Message: "unavailable"}
	for _, c := range []struct {
		name                      string
		provider, plan            string
		orgErr, listErr           error
		hourly, per30, cur, src   string
		reason, inMessage         string
		wantOrgCalls, wantListCls int32
	}{
		{name: "the organisation's price, slug_id matched case-insensitively", provider: "postgresql-addon", plan: "plan_xs",
			hourly: "0.0194444444", per30: "14.00", cur: "EUR", src: PriceSourceOrganisation, wantOrgCalls: 1},
		{name: "a free plan is priced 0", provider: "postgresql-addon", plan: "plan_dev",
			hourly: "0", per30: "0.00", cur: "EUR", src: PriceSourceOrganisation, wantOrgCalls: 1},
		{name: "no price system of its own: the list price in EUR", provider: "postgresql-addon", plan: "plan_xs", orgErr: notFound,
			hourly: "0.0243055556", per30: "17.50", cur: "EUR", src: PriceSourceList, wantOrgCalls: 1, wantListCls: 1},
		{name: "a plan no price system lists: the catalogue's price per 30 days", provider: "postgresql-addon", plan: "plan_old",
			hourly: "0.05", per30: "36.00", cur: "EUR", src: PriceSourceCatalogue, wantOrgCalls: 1},
		{name: "the organisation's price system fails: the catalogue's price as a stand-in, not the list price", provider: "postgresql-addon", plan: "plan_xs", orgErr: down,
			hourly: "0.02430556", per30: "17.50", cur: "EUR", src: PriceSourceCatalogue, inMessage: "503 unavailable", wantOrgCalls: 1},
		{name: "no price system of its own and the list fails: the catalogue's price", provider: "postgresql-addon", plan: "plan_xs", orgErr: notFound, listErr: down,
			hourly: "0.02430556", per30: "17.50", cur: "EUR", src: PriceSourceCatalogue, inMessage: "503 unavailable", wantOrgCalls: 1, wantListCls: 1},
		{name: "no price system answers and the catalogue says 0: no price, with the reason", provider: "postgresql-addon", plan: "plan_dev", orgErr: down,
			reason: status.ReasonPriceUnavailable, inMessage: "503 unavailable", wantOrgCalls: 1},
		{name: "a plan the catalogue does not list", provider: "postgresql-addon", plan: "plan_gone",
			reason: status.ReasonPricePlanNotListed, inMessage: "plan_gone"},
		{name: "Cellar is billed by use", provider: "cellar-addon", plan: "plan_cellar", reason: status.ReasonPriceUsageBased},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := &pricesAPI{ps: catalogue, org: org, list: list, orgErr: c.orgErr, lstErr: c.listErr}
			if c.orgErr != nil {
				api.org = nil
			}
			if c.listErr != nil {
				api.list = nil
			}
			now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
			cache := &PriceCache{Now: func() time.Time { return now }}
			plans := &PlanCache{Now: func() time.Time { return now }}
			for i := 0; i < 3; i++ { // three resources: one read of each price system
				p := cache.Price(context.Background(), api, plans, "k", "orga_1", c.provider, c.plan, "par")
				if p.Hourly != c.hourly || p.Per30Days != c.per30 || p.Currency != c.cur || p.Source != c.src || p.Reason != c.reason {
					t.Fatalf("got %+v; want hourly %q per30 %q %s %s reason %q", p, c.hourly, c.per30, c.cur, c.src, c.reason)
				}
				if !strings.Contains(p.Message, c.inMessage) {
					t.Errorf("message %q does not say %q", p.Message, c.inMessage)
				}
				if p.Plan != c.plan || p.Zone != "par" || p.CheckedAt == nil || !p.CheckedAt.Time.Equal(now) {
					t.Errorf("plan, zone, checkedAt: %+v", p)
				}
			}
			if api.orgCalls.Load() != c.wantOrgCalls || api.listCalls.Load() != c.wantListCls {
				t.Errorf("price system reads: organisation %d, list %d; want %d, %d", api.orgCalls.Load(), api.listCalls.Load(), c.wantOrgCalls, c.wantListCls)
			}
			if c.wantListCls > 0 && api.listCurrency != "EUR" {
				t.Errorf("list price asked in %q", api.listCurrency)
			}
		})
	}
}

// A price system is read again after the TTL; a failure after RetryAfter only.
func TestPriceCacheRefresh(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	api := &pricesAPI{
		ps:  []clevercloud.Provider{{ID: "postgresql-addon", Plans: []clevercloud.Plan{{ID: "plan_xs", Slug: "xs_sml", PriceID: strp("postgresql.xs_sml")}}}},
		org: &clevercloud.PriceSystem{Currency: "EUR", Runtime: []clevercloud.RuntimePrice{{TimeUnit: "PT1H", Price: 0.02, SlugID: "postgresql.xs_sml"}}},
	}
	cache := &PriceCache{TTL: time.Hour, RetryAfter: 10 * time.Minute, Now: func() time.Time { return now }}
	plans := &PlanCache{TTL: 24 * time.Hour, Now: func() time.Time { return now }}
	price := func() string {
		return cache.Price(context.Background(), api, plans, "k", "orga_1", "postgresql-addon", "plan_xs", "par").Per30Days
	}
	if got := price(); got != "14.40" {
		t.Fatalf("price %q", got)
	}
	now = now.Add(59 * time.Minute)
	price()
	if n := api.orgCalls.Load(); n != 1 {
		t.Fatalf("read %d times within the TTL", n)
	}
	now = now.Add(2 * time.Minute)
	api.org.Runtime[0].Price = 0.03
	if got := price(); got != "21.60" || api.orgCalls.Load() != 2 {
		t.Fatalf("after the TTL: %q, %d reads", got, api.orgCalls.Load())
	}
	// Another zone is another price system.
	cache.Price(context.Background(), api, plans, "k", "orga_1", "postgresql-addon", "plan_xs", "rbx")
	if n := api.orgCalls.Load(); n != 3 {
		t.Fatalf("zone rbx: %d reads", n)
	}
	// A failure is remembered for RetryAfter, then retried.
	api.org, api.orgErr = nil, &clevercloud.APIError{StatusCode: 500}
	api.lstErr = &clevercloud.APIError{StatusCode: 500}
	now = now.Add(time.Hour)
	price()
	now = now.Add(9 * time.Minute)
	price()
	if n := api.orgCalls.Load(); n != 4 {
		t.Fatalf("failure retried within RetryAfter: %d reads", n)
	}
	now = now.Add(2 * time.Minute)
	price()
	if n := api.orgCalls.Load(); n != 5 {
		t.Fatalf("failure not retried after RetryAfter: %d reads", n)
	}
}
