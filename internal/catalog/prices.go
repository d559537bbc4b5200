package catalog

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clever-operator/clever-operator/api/shared"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// PriceAPI is what the price cache needs beyond API (*clevercloud.Client implements it). A
// client without it (test doubles) gets catalogue prices only.
type PriceAPI interface {
	GetOrgPriceSystem(ctx context.Context, ownerID, zone string) (*clevercloud.PriceSystem, error)
	GetListPriceSystem(ctx context.Context, zone, currency string) (*clevercloud.PriceSystem, error)
}

// Price sources and reasons (status.price.source, status.price.reason).
const (
	PriceSourceOrganisation = "Organisation"
	PriceSourceList         = "List"
	PriceSourceCatalogue    = "Catalogue"

	// DefaultPriceRefresh is how long a price system is used before it is read again.
	DefaultPriceRefresh = 6 * time.Hour
	// hoursPer30Days: the console's "30 days".
	hoursPer30Days = 720
)

// PriceCache caches price systems per credential set, owner and zone.
type PriceCache struct {
	// TTL is how long a price system is used (default DefaultPriceRefresh).
	TTL time.Duration
	// RetryAfter is how long a failure to read any price system is remembered (default 15m).
	RetryAfter time.Duration
	Now        func() time.Time

	mu      sync.Mutex
	entries map[string]*priceEntry
	group   singleflight.Group
}

// priceEntry is one zone's runtime prices as one owner sees them.
type priceEntry struct {
	at       time.Time
	source   string
	currency string
	hourly   map[string]float64 // lower-cased slug_id -> price per hour
	err      error              // no price system could be read
}

func (c *PriceCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *PriceCache) ttl() time.Duration {
	if c.TTL <= 0 {
		return DefaultPriceRefresh
	}
	return c.TTL
}

func (c *PriceCache) retryAfter() time.Duration {
	if c.RetryAfter <= 0 {
		return 15 * time.Minute
	}
	return c.RetryAfter
}

// system is owner's price system for zone (from the cache while fresh).
func (c *PriceCache) system(ctx context.Context, api credentials.API, credKey, owner, zone string) *priceEntry {
	key := credKey + "\x00" + owner + "\x00" + zone
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e != nil {
		life := c.ttl()
		if e.err != nil {
			life = c.retryAfter()
		}
		if c.now().Sub(e.at) < life {
			return e
		}
	}
	v, _, _ := c.group.Do(key, func() (any, error) {
		e := readPriceSystem(ctx, api, owner, zone)
		if e.err != nil && ctx.Err() != nil {
			return e, nil // this pass was cancelled: remember nothing
		}
		e.at = c.now()
		c.mu.Lock()
		if c.entries == nil {
			c.entries = map[string]*priceEntry{}
		}
		c.entries[key] = e
		c.mu.Unlock()
		return e, nil
	})
	return v.(*priceEntry)
}

// readPriceSystem reads the organisation's price system, else the list price system.
func readPriceSystem(ctx context.Context, api credentials.API, owner, zone string) *priceEntry {
	pa, ok := api.(PriceAPI)
	if !ok {
		return &priceEntry{err: fmt.Errorf("this client reads no price system")}
	}
	ps, err := pa.GetOrgPriceSystem(ctx, owner, zone)
	source := PriceSourceOrganisation
	if err != nil && !clevercloud.IsNotFound(err) {
		// Not "no price system of its own": the organisation's prices are unknown for now
		// (retried after RetryAfter); the list price would hide its discount for hours.
		return &priceEntry{err: fmt.Errorf("reading the organisation's price system of zone %s: %s", zone, clevercloud.Message(err))}
	}
	if err != nil {
		var lerr error
		ps, lerr = pa.GetListPriceSystem(ctx, zone, "EUR")
		if lerr != nil {
			return &priceEntry{err: fmt.Errorf("reading the price system of zone %s: %s", zone, clevercloud.Message(lerr))}
		}
		source = PriceSourceList
	}
	e := &priceEntry{source: source, currency: ps.Currency, hourly: make(map[string]float64, len(ps.Runtime))}
	for _, rp := range ps.Runtime {
		if rp.TimeUnit != "" && rp.TimeUnit != "PT1H" {
			continue // only hourly prices are understood
		}
		e.hourly[strings.ToLower(rp.SlugID)] = rp.Price
	}
	return e
}

// Price is what the plan planID of providerID costs in zone for owner. It never fails: a
// price that cannot be had is a status with a reason.
func (c *PriceCache) Price(ctx context.Context, api credentials.API, plans *PlanCache, credKey, owner, providerID, planID, zone string) shared.PriceStatus {
	out := shared.PriceStatus{Plan: planID, Zone: zone}
	now := metav1.NewTime(c.now().UTC().Truncate(time.Second))
	out.CheckedAt = &now
	if kinds.UsageBilled(providerID) {
		out.Reason, out.Message = status.ReasonPriceUsageBased, "billed by use (storage and outbound traffic per GB), not by plan"
		return out
	}
	plan, ok := plans.Plan(ctx, api, credKey, owner, providerID, planID)
	if !ok {
		out.Reason, out.Message = status.ReasonPricePlanNotListed, fmt.Sprintf("the catalogue of %s does not list plan %s (or could not be read)", owner, planID)
		return out
	}
	e := c.system(ctx, api, credKey, owner, zone)
	if plan.PriceID != nil && e.err == nil {
		if h, ok := e.hourly[strings.ToLower(*plan.PriceID)]; ok {
			setAmounts(&out, h, e.currency, e.source)
			return out
		}
	}
	if plan.Price > 0 || plan.PriceID == nil || e.err == nil {
		// The catalogue price: euros per 30 days (a free plan is priced 0).
		setAmounts(&out, float64(plan.Price)/hoursPer30Days, "EUR", PriceSourceCatalogue)
		if e.err != nil {
			// A stand-in until the price system answers (Due retries it sooner).
			out.Message = "price system unavailable (" + e.err.Error() + "): the catalogue's price"
		}
		return out
	}
	out.Reason, out.Message = status.ReasonPriceUnavailable, e.err.Error()
	return out
}

func setAmounts(p *shared.PriceStatus, hourly float64, currency, source string) {
	p.Hourly = strconv.FormatFloat(hourly, 'f', -1, 64)
	if len(p.Hourly) > 12 {
		p.Hourly = strconv.FormatFloat(hourly, 'g', 7, 64)
		if f, err := strconv.ParseFloat(p.Hourly, 64); err == nil {
			p.Hourly = strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	p.Per30Days = strconv.FormatFloat(hourly*hoursPer30Days, 'f', 2, 64)
	p.Currency, p.Source = currency, source
}

// Due says whether a resource's status.price (p) should be looked up again: none yet, the
// plan or zone changed, or older than the cache's TTL.
func (c *PriceCache) Due(p *shared.PriceStatus, planID, zone string) bool {
	if p == nil || p.CheckedAt == nil {
		return true
	}
	life := c.ttl()
	if p.Reason == status.ReasonPriceUnavailable || p.Reason == status.ReasonPricePlanNotListed || (p.Source == PriceSourceCatalogue && p.Message != "") {
		life = c.retryAfter() // a stand-in or a failure: looked up again sooner
	}
	return p.Plan != planID || p.Zone != zone || c.now().Sub(p.CheckedAt.Time) >= life
}
