// Package faults describes the failures the fake Clever Cloud API injects into
// API requests (Faults, OwnerFault), their /admin/faults JSON form, and the
// Injector that applies them: outages, rate limits, latency, error rates,
// per-owner statuses and broken bodies, hidden providers and revoked tokens.
// It knows nothing of the server's state.
package faults

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/migration"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// Faults describes the failures the fake injects into API requests (never
// into /admin requests). They are applied in this order: outage, rate limit,
// latency, (authentication), error rate. MigrationFailures is different: it
// does not fail requests but makes the migrations they start end FAILED.
type Faults struct {
	// Latency is added to every API request.
	Latency time.Duration
	// Jitter adds a uniform random delay in [0, Jitter) on top of Latency.
	Jitter time.Duration
	// ErrorRate maps a route key (e.g.
	// "GET /v2/organisations/{ownerId}/addons/{addonId}") or "*" (every
	// route) to the probability of answering
	// 503 {"id":-500,"message":"Error from provider: injected fault","type":"error"}.
	// A route's own entry wins over "*".
	ErrorRate map[string]float64
	// RateLimitBurst, when > 0, allows at most that many API requests per
	// sliding RateLimitWindow (default 1s); extra requests get 429 with a
	// Retry-After header. Rejected requests do not consume the budget.
	RateLimitBurst  int
	RateLimitWindow time.Duration
	// RetryAfter is the Retry-After value (seconds, rounded up, at least 1)
	// sent with 429. Zero means "until the window frees a slot".
	RetryAfter time.Duration
	// OutageUntil: every API request before this instant answers 503.
	OutageUntil time.Time
	// MigrationFailures maps a provider id (e.g. "postgresql-addon") or "*"
	// to the step (one of migration.FailableSteps, e.g. "DUMP_AND_RESTORE")
	// at which every migration of that provider started from now on fails:
	// it ends FAILED, that step FAILED with a message, and the add-on is left
	// unchanged. A provider's own entry wins over "*"; an unknown step name
	// means DUMP_AND_RESTORE. fakeapi's Server.FailNextMigrations wins over this.
	MigrationFailures map[string]string
	// Owners maps an owner id (orga_… or user_…) to a fault applied, after authentication,
	// only to the requests about that owner: a 403 for an organisation the credentials
	// cannot access, 5xx or 429 storms, latency, malformed JSON, extra (huge, unicode) env
	// values. See OwnerFault.
	Owners map[string]OwnerFault
	// HiddenProviders are left out of the catalogue (GET /v2/products/addonproviders), are
	// 404 on GET /v2/products/addonproviders/{providerId} and 400 "unknown provider" on
	// create: a provider Clever Cloud does not (or no longer) offer.
	HiddenProviders []string
	// RevokedTokens: requests signed with one of these OAuth1 tokens (oauth_token) or bearer
	// tokens answer 401 "token revoked", as after a revocation in the console.
	RevokedTokens []string
}

// Clone returns a deep copy of f.
func (f Faults) Clone() Faults {
	f.ErrorRate = maps.Clone(f.ErrorRate)
	f.MigrationFailures = maps.Clone(f.MigrationFailures)
	if f.Owners != nil {
		owners := make(map[string]OwnerFault, len(f.Owners))
		for k, v := range f.Owners {
			v.ExtraEnv = slices.Clone(v.ExtraEnv)
			owners[k] = v
		}
		f.Owners = owners
	}
	f.HiddenProviders = slices.Clone(f.HiddenProviders)
	f.RevokedTokens = slices.Clone(f.RevokedTokens)
	return f
}

// Injector holds the current Faults and applies them to API requests. It is
// safe for concurrent use.
type Injector struct {
	mu     sync.Mutex // guards faults, rlHits, rng
	faults Faults
	rlHits []time.Time
	rng    *rand.Rand
}

// NewInjector returns an Injector applying (a copy of) f, drawing jitter and
// error-rate hits from rng.
func NewInjector(f Faults, rng *rand.Rand) *Injector {
	return &Injector{faults: f.Clone(), rng: rng}
}

// Set replaces the injected faults. It also resets the rate limiter.
func (in *Injector) Set(f Faults) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.faults = f.Clone()
	in.rlHits = nil
}

// Get returns a copy of the injected faults.
func (in *Injector) Get() Faults {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.faults.Clone()
}

// PreAuth applies outage, rate limit and latency to a request arriving at
// now. It returns true when it has answered the request.
func (in *Injector) PreAuth(w http.ResponseWriter, r *http.Request, now time.Time) bool {
	in.mu.Lock()
	f := in.faults
	if !f.OutageUntil.IsZero() && now.Before(f.OutageUntil) {
		in.mu.Unlock()
		wire.WriteError(w, http.StatusServiceUnavailable, 503, "Service unavailable: injected outage")
		return true
	}
	if f.RateLimitBurst > 0 {
		window := f.RateLimitWindow
		if window <= 0 {
			window = time.Second
		}
		cut := now.Add(-window)
		kept := in.rlHits[:0]
		for _, t := range in.rlHits {
			if t.After(cut) {
				kept = append(kept, t)
			}
		}
		in.rlHits = kept
		if len(in.rlHits) >= f.RateLimitBurst {
			wait := f.RetryAfter
			if wait <= 0 {
				wait = in.rlHits[0].Add(window).Sub(now)
			}
			in.mu.Unlock()
			secs := max(1, int(math.Ceil(wait.Seconds())))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			wire.WriteError(w, http.StatusTooManyRequests, 429, "Too many requests: injected rate limit")
			return true
		}
		in.rlHits = append(in.rlHits, now)
	}
	delay := f.Latency
	if f.Jitter > 0 {
		delay += time.Duration(in.rng.Int64N(int64(f.Jitter)))
	}
	in.mu.Unlock()

	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			// The client went away; the answer is only for the counters.
			wire.WriteError(w, http.StatusServiceUnavailable, 503, "request cancelled during injected latency")
			return true
		}
	}
	return false
}

// InjectError applies the error rate of route. It returns true when it has
// answered the request.
func (in *Injector) InjectError(w http.ResponseWriter, route string) bool {
	in.mu.Lock()
	rate, ok := in.faults.ErrorRate[route]
	if !ok {
		rate = in.faults.ErrorRate["*"]
	}
	hit := rate > 0 && (rate >= 1 || in.rng.Float64() < rate)
	in.mu.Unlock()
	if hit {
		wire.WriteError(w, http.StatusServiceUnavailable, -500, "Error from provider: injected fault")
	}
	return hit
}

// JSON is the wire form of Faults used by /admin/faults.
type JSON struct {
	Latency         string             `json:"latency"`
	Jitter          string             `json:"jitter"`
	ErrorRate       map[string]float64 `json:"errorRate"`
	RateLimitBurst  int                `json:"rateLimitBurst"`
	RateLimitWindow string             `json:"rateLimitWindow"`
	RetryAfter      string             `json:"retryAfter"`
	// OutageUntil is RFC 3339; empty when there is no outage.
	OutageUntil string `json:"outageUntil,omitempty"`
	// OutageFor (input only) sets OutageUntil = now + OutageFor.
	OutageFor string `json:"outageFor,omitempty"`
	// MigrationFailures: provider id or "*" -> step name.
	MigrationFailures map[string]string `json:"migrationFailures"`
	// Owners: owner id -> fault (OwnerFault).
	Owners          map[string]OwnerJSON `json:"owners,omitempty"`
	HiddenProviders []string             `json:"hiddenProviders,omitempty"`
	RevokedTokens   []string             `json:"revokedTokens,omitempty"`
}

// OwnerJSON is the wire form of OwnerFault.
type OwnerJSON struct {
	Status        int             `json:"status,omitempty"`
	Message       string          `json:"message,omitempty"`
	RetryAfter    string          `json:"retryAfter,omitempty"`
	Latency       string          `json:"latency,omitempty"`
	MalformedJSON bool            `json:"malformedJSON,omitempty"`
	ExtraEnv      []wire.Variable `json:"extraEnv,omitempty"`
}

// ToJSON renders f in its /admin/faults form.
func ToJSON(f Faults) JSON {
	out := JSON{
		Latency:         f.Latency.String(),
		Jitter:          f.Jitter.String(),
		ErrorRate:       maps.Clone(f.ErrorRate),
		RateLimitBurst:  f.RateLimitBurst,
		RateLimitWindow: f.RateLimitWindow.String(),
		RetryAfter:      f.RetryAfter.String(),
	}
	if out.ErrorRate == nil {
		out.ErrorRate = map[string]float64{}
	}
	out.MigrationFailures = maps.Clone(f.MigrationFailures)
	if out.MigrationFailures == nil {
		out.MigrationFailures = map[string]string{}
	}
	if !f.OutageUntil.IsZero() {
		out.OutageUntil = f.OutageUntil.UTC().Format(time.RFC3339Nano)
	}
	for owner, of := range f.Owners {
		if out.Owners == nil {
			out.Owners = map[string]OwnerJSON{}
		}
		j := OwnerJSON{Status: of.Status, Message: of.Message, MalformedJSON: of.MalformedJSON, ExtraEnv: slices.Clone(of.ExtraEnv)}
		if of.RetryAfter > 0 {
			j.RetryAfter = of.RetryAfter.String()
		}
		if of.Latency > 0 {
			j.Latency = of.Latency.String()
		}
		out.Owners[owner] = j
	}
	out.HiddenProviders = slices.Clone(f.HiddenProviders)
	out.RevokedTokens = slices.Clone(f.RevokedTokens)
	return out
}

func parseDur(field, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a Go duration (e.g. \"250ms\")", field, v)
	}
	if d < 0 {
		return 0, fmt.Errorf("%s: must not be negative", field)
	}
	return d, nil
}

// FromJSON decodes the /admin/faults wire form received at now (outageFor
// counts from it). Missing fields are zero.
func FromJSON(data []byte, now time.Time) (Faults, error) {
	var in JSON
	if err := json.Unmarshal(data, &in); err != nil {
		return Faults{}, fmt.Errorf("invalid JSON: %v", err)
	}
	var f Faults
	var err error
	if f.Latency, err = parseDur("latency", in.Latency); err != nil {
		return Faults{}, err
	}
	if f.Jitter, err = parseDur("jitter", in.Jitter); err != nil {
		return Faults{}, err
	}
	if f.RateLimitWindow, err = parseDur("rateLimitWindow", in.RateLimitWindow); err != nil {
		return Faults{}, err
	}
	if f.RetryAfter, err = parseDur("retryAfter", in.RetryAfter); err != nil {
		return Faults{}, err
	}
	if in.RateLimitBurst < 0 {
		return Faults{}, fmt.Errorf("rateLimitBurst: must not be negative")
	}
	f.RateLimitBurst = in.RateLimitBurst
	for k, v := range in.ErrorRate {
		if v < 0 || v > 1 || math.IsNaN(v) {
			return Faults{}, fmt.Errorf("errorRate[%q]: must be between 0 and 1", k)
		}
	}
	f.ErrorRate = maps.Clone(in.ErrorRate)
	failableSteps := migration.FailableSteps()
	for k, step := range in.MigrationFailures {
		if k == "" || !slices.Contains(failableSteps, step) {
			return Faults{}, fmt.Errorf("migrationFailures[%q]: %q is not a step a migration can fail at (%s)",
				k, step, strings.Join(failableSteps, ", "))
		}
	}
	f.MigrationFailures = maps.Clone(in.MigrationFailures)
	if in.OutageUntil != "" {
		t, err := time.Parse(time.RFC3339Nano, in.OutageUntil)
		if err != nil {
			return Faults{}, fmt.Errorf("outageUntil: %q is not an RFC 3339 time", in.OutageUntil)
		}
		f.OutageUntil = t
	}
	if in.OutageFor != "" {
		d, err := parseDur("outageFor", in.OutageFor)
		if err != nil {
			return Faults{}, err
		}
		f.OutageUntil = now.Add(d)
	}
	for owner, j := range in.Owners {
		if !wire.ValidOwner(owner) {
			return Faults{}, fmt.Errorf("owners: %q is not an owner id (orga_… or user_…)", owner)
		}
		if j.Status != 0 && (j.Status < 400 || j.Status > 599) {
			return Faults{}, fmt.Errorf("owners[%q].status: %d is not an HTTP error status", owner, j.Status)
		}
		of := OwnerFault{Status: j.Status, Message: j.Message, MalformedJSON: j.MalformedJSON, ExtraEnv: slices.Clone(j.ExtraEnv)}
		if of.RetryAfter, err = parseDur("owners[\""+owner+"\"].retryAfter", j.RetryAfter); err != nil {
			return Faults{}, err
		}
		if of.Latency, err = parseDur("owners[\""+owner+"\"].latency", j.Latency); err != nil {
			return Faults{}, err
		}
		if err := wire.ValidateVars(of.ExtraEnv); err != nil {
			return Faults{}, fmt.Errorf("owners[%q].extraEnv: %v", owner, err)
		}
		if f.Owners == nil {
			f.Owners = map[string]OwnerFault{}
		}
		f.Owners[owner] = of
	}
	f.HiddenProviders = slices.Clone(in.HiddenProviders)
	f.RevokedTokens = slices.Clone(in.RevokedTokens)
	return f, nil
}
