package clevercloud

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the Prometheus collectors of the client. A nil *Metrics records nothing.
type Metrics struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	retries     *prometheus.CounterVec
	limiterWait prometheus.Histogram
	circuitOpen prometheus.GaugeFunc
	opened      prometheus.Counter
	// now is the clock of clevercloud_api_circuit_open (tests set it).
	now func() time.Time
}

// NewMetrics creates the client's collectors and registers them on reg (nil: not
// registered). Registering twice on the same registry reuses the collectors that are
// already there instead of panicking, so every client shares the same series.
//
//   - clevercloud_api_requests_total{method,route,code}: attempts, code is the HTTP
//     status or "error" for transport errors;
//   - clevercloud_api_request_duration_seconds{method,route}: attempt duration;
//   - clevercloud_api_retries_total{method,route}: automatic retries;
//   - clevercloud_api_rate_limiter_wait_seconds: time spent waiting for the
//     client-side rate limiter;
//   - clevercloud_api_circuit_open: credential sets whose circuit is open at scrape time
//     (no label: a credential set has no name that is not derived from its secrets);
//   - clevercloud_api_circuit_opens_total: times a circuit opened (every opening is
//     counted, even one shorter than the scrape interval).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clevercloud_api_requests_total",
			Help: "HTTP requests (attempts) sent to the Clever Cloud API, by method, route template and status code (\"error\" for transport errors).",
		}, []string{"method", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "clevercloud_api_request_duration_seconds",
			Help:    "Duration of Clever Cloud API requests (one attempt, including reading the body).",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"method", "route"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clevercloud_api_retries_total",
			Help: "Automatic retries of Clever Cloud API requests, by method and route template.",
		}, []string{"method", "route"}),
		limiterWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "clevercloud_api_rate_limiter_wait_seconds",
			Help:    "Time spent waiting for the client-side Clever Cloud API rate limiter.",
			Buckets: []float64{0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}),
		opened: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "clevercloud_api_circuit_opens_total",
			Help: "Times a Clever Cloud API circuit opened (after repeated 429/5xx/transport failures of one credential set, or a failed probe).",
		}),
		now: time.Now,
	}
	m.circuitOpen = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "clevercloud_api_circuit_open",
		Help: "Credential sets whose Clever Cloud API circuit is open (requests refused without being sent after repeated 429/5xx/transport failures).",
	}, func() float64 { return float64(openCircuits(m.now())) })
	if reg == nil {
		return m
	}
	m.requests = register(reg, m.requests)
	m.duration = register(reg, m.duration)
	m.retries = register(reg, m.retries)
	m.limiterWait = register(reg, m.limiterWait)
	m.circuitOpen = register(reg, m.circuitOpen)
	m.opened = register(reg, m.opened)
	return m
}

// register registers c, or returns the collector already registered under the
// same descriptor. On any other registration error c is used unregistered.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}

func (m *Metrics) observeRequest(method, route, code string, seconds float64) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(method, route, code).Inc()
	m.duration.WithLabelValues(method, route).Observe(seconds)
}

func (m *Metrics) observeRetry(method, route string) {
	if m == nil {
		return
	}
	m.retries.WithLabelValues(method, route).Inc()
}

func (m *Metrics) observeLimiterWait(seconds float64) {
	if m == nil {
		return
	}
	m.limiterWait.Observe(seconds)
}

func (m *Metrics) observeCircuitOpened() {
	if m == nil {
		return
	}
	m.opened.Inc()
}
