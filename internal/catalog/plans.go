// Package catalog caches what Clever Cloud offers: the providers, plans and regions of the
// catalogue (PlanCache, which resolves plan names and checks a generic Addon's provider, plan
// and region) and the price systems (PriceCache, status.price), each read at most once per
// TTL per credential set and owner.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// PlanCache resolves plan slugs and names to plan ids from the provider catalogue, fetched at
// most once per TTL per credential set and owner (the catalogue is asked for with ?orgaId=, so
// plans private to an organisation resolve), so a burst of new resources costs one catalogue
// call. It also caches what each provider announces at v4 (versions), per credential set.
type PlanCache struct {
	TTL time.Duration
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]planEntry
	infos   map[string]infoEntry
	group   singleflight.Group
}

type infoEntry struct {
	at   time.Time
	info *clevercloud.ProviderInfo
	err  error
}

type planEntry struct {
	at        time.Time
	providers []clevercloud.Provider
}

func (c *PlanCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *PlanCache) ttl() time.Duration {
	if c.TTL == 0 {
		return 10 * time.Minute
	}
	return c.TTL
}

func (c *PlanCache) providers(ctx context.Context, api credentials.API, credKey, owner string, refresh bool) ([]clevercloud.Provider, error) {
	key := credKey + "\x00" + owner
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && !refresh && c.now().Sub(e.at) < c.ttl() {
		return e.providers, nil
	}
	v, err, _ := c.group.Do("p\x00"+key, func() (any, error) {
		ps, err := api.ListProvidersForOwner(ctx, owner)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		if c.entries == nil {
			c.entries = map[string]planEntry{}
		}
		c.entries[key] = planEntry{at: c.now(), providers: ps}
		c.mu.Unlock()
		return ps, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]clevercloud.Provider), nil
}

// Resolve returns the plan id for what the user wrote in spec.instance.plan: a plan id
// (plan_…) is used as is; a slug, name or id is matched case-insensitively. The user's spec
// is never rewritten. An unknown plan is a *SpecError listing the available plans; the
// catalogue is refreshed once before giving that answer.
func (c *PlanCache) Resolve(ctx context.Context, api credentials.API, key, owner, providerID, plan string) (string, error) {
	if strings.HasPrefix(plan, "plan_") {
		return plan, nil
	}
	if plan == "" {
		return "", &kinds.SpecError{Msg: "spec.instance.plan is required"}
	}
	var lastErr error
	for _, refresh := range []bool{false, true} {
		ps, err := c.providers(ctx, api, key, owner, refresh)
		if err != nil {
			return "", err
		}
		id, err := findPlan(ps, providerID, plan)
		if err == nil {
			return id, nil
		}
		lastErr = err
		var se *kinds.SpecError
		if !errors.As(err, &se) {
			return "", err
		}
	}
	return "", lastErr
}

func findPlan(ps []clevercloud.Provider, providerID, plan string) (string, error) {
	for _, p := range ps {
		if p.ID != providerID {
			continue
		}
		if len(p.Plans) == 0 {
			return "", &kinds.SpecError{Msg: fmt.Sprintf("add-on provider %q offers no plans", providerID)}
		}
		for _, pl := range p.Plans {
			if strings.EqualFold(pl.Slug, plan) || strings.EqualFold(pl.Name, plan) || strings.EqualFold(pl.ID, plan) {
				return pl.ID, nil
			}
		}
		opts := make([]string, 0, len(p.Plans))
		for _, pl := range p.Plans {
			opts = append(opts, fmt.Sprintf("%s (%s)", pl.Slug, pl.Name))
		}
		sort.Strings(opts)
		return "", &kinds.SpecError{Msg: fmt.Sprintf("plan %q not found for add-on provider %q; available: %s", plan, providerID, strings.Join(opts, ", "))}
	}
	return "", fmt.Errorf("add-on provider %q is not in the Clever Cloud catalogue", providerID)
}

// Check validates what a generic Addon asks for against the owner's live catalogue and
// returns the plan id to create it with: providerID must be a provider of the catalogue
// (ProviderNotFound), plan a slug, name or id of one of its plans (PlanNotFound), and region
// one the provider and that plan are offered in (RegionNotAvailable); each message lists
// what is on offer. The catalogue is refreshed once before any of these answers.
func (c *PlanCache) Check(ctx context.Context, api credentials.API, key, owner, providerID, plan, region string) (string, error) {
	var lastErr error
	for _, refresh := range []bool{false, true} {
		ps, err := c.providers(ctx, api, key, owner, refresh)
		if err != nil {
			return "", err
		}
		id, err := checkCatalogue(ps, owner, providerID, plan, region)
		if err == nil {
			return id, nil
		}
		lastErr = err
	}
	return "", lastErr
}

func checkCatalogue(ps []clevercloud.Provider, owner, providerID, plan, region string) (string, error) {
	var prov *clevercloud.Provider
	ids := make([]string, 0, len(ps))
	for i := range ps {
		ids = append(ids, ps[i].ID)
		if ps[i].ID == providerID {
			prov = &ps[i]
		}
	}
	if prov == nil {
		sort.Strings(ids)
		return "", &kinds.SpecError{Reason: status.ReasonProviderNotFound, Msg: fmt.Sprintf(
			"spec.providerId %q is not an add-on provider of the Clever Cloud catalogue (as organisation %s sees it); available: %s",
			providerID, owner, strings.Join(ids, ", "))}
	}
	var pl *clevercloud.Plan
	for i := range prov.Plans {
		p := &prov.Plans[i]
		if strings.EqualFold(p.Slug, plan) || strings.EqualFold(p.Name, plan) || strings.EqualFold(p.ID, plan) {
			pl = p
			break
		}
	}
	if pl == nil {
		opts := make([]string, 0, len(prov.Plans))
		for _, p := range prov.Plans {
			opts = append(opts, fmt.Sprintf("%s (%s)", p.Slug, p.Name))
		}
		sort.Strings(opts)
		return "", &kinds.SpecError{Reason: status.ReasonPlanNotFound, Msg: fmt.Sprintf(
			"spec.plan %q is not a plan of add-on provider %q; available: %s", plan, providerID, strings.Join(opts, ", "))}
	}
	if len(prov.Regions) > 0 && !containsFold(prov.Regions, region) {
		return "", &kinds.SpecError{Reason: status.ReasonRegionNotAvailable, Msg: fmt.Sprintf(
			"spec.region %q is not a region add-on provider %q is offered in; available: %s", region, providerID, strings.Join(prov.Regions, ", "))}
	}
	if len(pl.Zones) > 0 && !containsFold(pl.Zones, region) {
		return "", &kinds.SpecError{Reason: status.ReasonRegionNotAvailable, Msg: fmt.Sprintf(
			"spec.region %q is not a region plan %s of add-on provider %q is offered in; available: %s", region, pl.Slug, providerID, strings.Join(pl.Zones, ", "))}
	}
	return pl.ID, nil
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// Plan returns a plan of the owner's catalogue by id (from the cache when it is fresh); false
// when the catalogue cannot be read or does not list it.
func (c *PlanCache) Plan(ctx context.Context, api credentials.API, key, owner, providerID, planID string) (clevercloud.Plan, bool) {
	ps, err := c.providers(ctx, api, key, owner, false)
	if err != nil {
		return clevercloud.Plan{}, false
	}
	for _, p := range ps {
		if p.ID != providerID {
			continue
		}
		for _, pl := range p.Plans {
			if pl.ID == planID {
				return pl, true
			}
		}
	}
	return clevercloud.Plan{}, false
}

// ProviderInfo returns what the provider announces at v4 (GET /v4/addon-providers/{id}),
// cached per credential set for the TTL (failures too, so a provider that does not offer the
// endpoint costs one call per TTL). A nil info with a nil error never happens.
func (c *PlanCache) ProviderInfo(ctx context.Context, api credentials.API, key, providerID string) (*clevercloud.ProviderInfo, error) {
	k := key + "\x00" + providerID
	c.mu.Lock()
	e, ok := c.infos[k]
	c.mu.Unlock()
	if ok && c.now().Sub(e.at) < c.ttl() {
		return e.info, e.err
	}
	v, err, _ := c.group.Do("i\x00"+k, func() (any, error) {
		info, err := api.GetProviderInfo(ctx, providerID)
		if err != nil && (clevercloud.IsRetryable(err) || clevercloud.IsThrottled(err)) {
			return nil, err // transient: not cached
		}
		c.mu.Lock()
		if c.infos == nil {
			c.infos = map[string]infoEntry{}
		}
		c.infos[k] = infoEntry{at: c.now(), info: info, err: err}
		c.mu.Unlock()
		return info, err
	})
	if err != nil {
		return nil, err
	}
	return v.(*clevercloud.ProviderInfo), nil
}

// SharedPlan says whether a plan runs on a shared cluster (DEV and free plans): Clever Cloud
// ignores the version and encryption asked for on those (the version is the cluster's). The
// plan's "type" feature says so (clever-tools src/models/addon.js reads a feature named
// "type", value shared or dedicated; the Terraform provider pkg/tmp/addon.go reads name_code
// "is-dedicated"); without either, a plan with the slug dev or a zero price is shared.
func SharedPlan(p clevercloud.Plan) bool {
	for _, f := range p.Features {
		if strings.EqualFold(f.Name, "type") {
			return strings.EqualFold(f.Value, "shared")
		}
		if f.NameCode != nil && *f.NameCode == "is-dedicated" {
			v := f.Value
			if f.ComputableValue != nil {
				v = *f.ComputableValue
			}
			return !strings.EqualFold(v, "dedicated")
		}
	}
	return strings.EqualFold(p.Slug, "dev") || p.Price == 0
}
