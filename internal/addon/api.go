package addon

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
)

// API is the small per-resource client the engine drives (crossplane-runtime's
// ExternalClient, reduced to the Clever Cloud calls). *clevercloud.Client implements it.
type API interface {
	ListProviders(ctx context.Context) ([]clevercloud.Provider, error)
	GetAddon(ctx context.Context, ownerID, addonID string) (*clevercloud.Addon, error)
	ListAddons(ctx context.Context, ownerID string) ([]clevercloud.Addon, error)
	CreateAddon(ctx context.Context, ownerID string, opts clevercloud.CreateOpts) (*clevercloud.Addon, error)
	DeleteAddon(ctx context.Context, ownerID, addonID string) error
	GetAddonEnv(ctx context.Context, ownerID, addonID string) ([]clevercloud.Variable, error)
	GetConfigProviderEnv(ctx context.Context, realID string) ([]clevercloud.Variable, error)
	PutConfigProviderEnv(ctx context.Context, realID string, vars []clevercloud.Variable) ([]clevercloud.Variable, error)
	StartMigration(ctx context.Context, ownerID, addonID string, req clevercloud.MigrationRequest) (*clevercloud.Migration, error)
	GetMigration(ctx context.Context, ownerID, addonID, migrationID string) (*clevercloud.Migration, error)
	ListMigrations(ctx context.Context, ownerID, addonID string) ([]clevercloud.Migration, error)
	RenewCellarCredentials(ctx context.Context, ownerID, realID string) error
}

// Credentials gives the API client for a namespace: the namespace's own credentials when it
// has an override Secret, else the operator's global ones. The key identifies the credential
// set (for caches); it reveals nothing about it.
type Credentials interface {
	For(ctx context.Context, namespace string) (api API, key string, err error)
}

// PlanCache resolves plan slugs and names to plan ids from the provider catalogue, fetched at
// most once per TTL per credential set, so a burst of new resources costs one catalogue call.
type PlanCache struct {
	TTL time.Duration
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]planEntry
	group   singleflight.Group
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

func (c *PlanCache) providers(ctx context.Context, api API, key string, refresh bool) ([]clevercloud.Provider, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	ttl := c.TTL
	if ttl == 0 {
		ttl = 10 * time.Minute
	}
	if ok && !refresh && c.now().Sub(e.at) < ttl {
		return e.providers, nil
	}
	v, err, _ := c.group.Do(key, func() (any, error) {
		ps, err := api.ListProviders(ctx)
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
func (c *PlanCache) Resolve(ctx context.Context, api API, key, providerID, plan string) (string, error) {
	if strings.HasPrefix(plan, "plan_") {
		return plan, nil
	}
	if plan == "" {
		return "", &SpecError{Msg: "spec.instance.plan is required"}
	}
	var lastErr error
	for _, refresh := range []bool{false, true} {
		ps, err := c.providers(ctx, api, key, refresh)
		if err != nil {
			return "", err
		}
		id, err := findPlan(ps, providerID, plan)
		if err == nil {
			return id, nil
		}
		lastErr = err
		var se *SpecError
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
			return "", &SpecError{Msg: fmt.Sprintf("add-on provider %q offers no plans", providerID)}
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
		return "", &SpecError{Msg: fmt.Sprintf("plan %q not found for add-on provider %q; available: %s", plan, providerID, strings.Join(opts, ", "))}
	}
	return "", fmt.Errorf("add-on provider %q is not in the Clever Cloud catalogue", providerID)
}
