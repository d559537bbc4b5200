package clevercloud

import (
	"errors"
	"net/http"
	"sync"
	"time"
)

// ErrCircuitOpen is returned without any request while Clever Cloud (the endpoint) keeps
// answering 429 or 5xx, or not answering, to a credential set (or to a source:
// Client.KeyCircuit): after CircuitThreshold consecutive such failures the circuit opens for
// CircuitCooldown (doubling each time the probe fails too, up to 5 minutes; no longer than
// the failure's Retry-After when it has one), then lets a request through to probe.
var ErrCircuitOpen = errors.New("circuit open: the Clever Cloud API endpoint keeps refusing, failing or not answering requests; waiting before trying again")

const maxCircuitCooldown = 5 * time.Minute

// circuit is shared per credential set, like the rate limiter, or per source and endpoint host
// (Client.KeyCircuit: the operator names where the credentials come from, so a namespace
// cannot reset its circuit by minting a new token).
type circuit struct {
	mu        sync.Mutex
	failures  int
	openUntil time.Time
	cooldown  time.Duration
	threshold int
	base      time.Duration
}

var circuits = struct {
	sync.Mutex
	m map[string]*circuit
}{m: map[string]*circuit{}}

func sharedCircuit(key string, threshold int, cooldown time.Duration) *circuit {
	circuits.Lock()
	defer circuits.Unlock()
	c, ok := circuits.m[key]
	if !ok {
		c = &circuit{}
		circuits.m[key] = c
	}
	c.mu.Lock()
	c.threshold, c.base = threshold, cooldown
	c.mu.Unlock()
	return c
}

// openFor returns how long the circuit stays open from now (0: closed, a request may be sent).
func (c *circuit) openFor(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return max(c.openUntil.Sub(now), 0)
}

// openCircuits counts the credential sets whose circuit is open at now (the metric
// clevercloud_api_circuit_open).
func openCircuits(now time.Time) int {
	circuits.Lock()
	defer circuits.Unlock()
	n := 0
	for _, c := range circuits.m {
		if c.openFor(now) > 0 {
			n++
		}
	}
	return n
}

// record counts the outcome of a request and says whether it opened the circuit.
func (c *circuit) record(err error, now time.Time) (opened bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !countsAgainstCircuit(err) {
		c.failures, c.cooldown = 0, 0
		return false
	}
	c.failures++
	if c.failures < c.threshold || now.Before(c.openUntil) {
		// Not enough failures yet, or a request sent before the circuit opened failed after:
		// the open circuit already accounts for it (only a failed probe doubles the cooldown).
		return false
	}
	switch {
	case c.cooldown == 0:
		c.cooldown = c.base
	case c.cooldown < maxCircuitCooldown:
		c.cooldown = min(2*c.cooldown, maxCircuitCooldown)
	}
	open := c.cooldown
	var ae *APIError
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		// The server said when to come back: no need to stay away longer than that.
		open = min(open, ae.RetryAfter)
	}
	c.openUntil = now.Add(open)
	return true
}

// countsAgainstCircuit: 429, 5xx and transport failures: no connection, no answer in time
// (sending the request), or an answer cut short (reading its body).
func countsAgainstCircuit(err error) bool {
	if err == nil {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.StatusCode == http.StatusTooManyRequests || ae.StatusCode >= 500
	}
	var re *RequestError
	return errors.As(err, &re) && (re.Op == opSend || re.Op == opRead)
}

// IsThrottled says whether err means "too many requests for now": a 429, the circuit open,
// or the client-side rate limit. Callers keep their state and try again later.
func IsThrottled(err error) bool {
	return statusIs(err, http.StatusTooManyRequests) || errors.Is(err, ErrCircuitOpen) || errors.Is(err, errRateLimiterWait)
}
