// Package metrics holds the engine's Prometheus metrics (docs/operator.md lists them); the
// Clever Cloud client keeps its own (internal/clevercloud).
package metrics

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Engine is the add-on engine's metrics (internal/addon records them).
type Engine struct {
	TimeToReady      *prometheus.HistogramVec
	DeletionDuration *prometheus.HistogramVec
	ReconcileErrors  *prometheus.CounterVec
	// StatusHandoffs counts the first publications whose status the engine handed to the
	// Helm side's write (internal/statusmerge), by who wrote it: helm, engine (at the deadline), missed
	// (the Helm side wrote before the pass had filled it; the engine wrote at once).
	StatusHandoffs *prometheus.CounterVec
	resources      *resourcesCollector
}

var (
	metricsOnce sync.Map // prometheus.Registerer -> *Engine
)

// NewEngine registers the engine metrics on reg (once per registry) and, when reader is
// set, a collector of resources by kind and Ready state read from the cache on each scrape.
func NewEngine(reg prometheus.Registerer, reader client.Reader, ks []kinds.Kind) *Engine {
	if v, ok := metricsOnce.Load(reg); ok {
		// Registered already (a new manager on the same registry): read the new cache.
		m := v.(*Engine)
		m.resources.set(reader, ks)
		return m
	}
	m := &Engine{
		TimeToReady: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "clever_operator_time_to_ready_seconds",
			Help:    "Time from a resource's creation to its add-on first being provisioned and published.",
			Buckets: []float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800},
		}, []string{"kind"}),
		DeletionDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "clever_operator_deletion_duration_seconds",
			Help:    "Time from a resource's deletion request to the release of its finalizer.",
			Buckets: []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600},
		}, []string{"kind"}),
		ReconcileErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clever_operator_reconcile_errors_total",
			Help: "Failed engine passes, by kind and condition reason.",
		}, []string{"kind", "reason"}),
		StatusHandoffs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clever_operator_status_handoffs_total",
			Help: "First publications whose status the engine handed to the Helm side's write after the install, by kind and by who wrote it (helm; engine: the Helm side had not within the deadline; missed: the Helm side wrote before the handoff was ready).",
		}, []string{"kind", "outcome"}),
	}
	m.resources = &resourcesCollector{desc: prometheus.NewDesc(
		"clever_operator_resources", "Custom resources by kind and Ready condition status (True, False, Unknown).", []string{"kind", "ready"}, nil),
		stale: prometheus.NewDesc("clever_operator_backup_stale_resources",
			"Resources of the kinds Clever Cloud backs up whose newest backup is older than their maximum backup age (condition BackupStale=True), by kind.", []string{"kind"}, nil),
		price: prometheus.NewDesc("clever_operator_ready_resources_price_per_hour",
			"Sum of the hourly prices (status.price.hourly, excluding VAT) of the Ready resources, by namespace, kind and currency: what each team's add-ons cost. Multiply by 720 for the console's 30 days.", []string{"resource_namespace", "kind", "currency"}, nil)}
	m.resources.set(reader, ks)
	for _, c := range []prometheus.Collector{m.TimeToReady, m.DeletionDuration, m.ReconcileErrors, m.StatusHandoffs, m.resources} {
		_ = reg.Register(c)
	}
	metricsOnce.Store(reg, m)
	return m
}

// resourcesCollector counts resources by Ready state from the informer cache at scrape time.
type resourcesCollector struct {
	mu     sync.Mutex
	reader client.Reader
	kinds  []kinds.Kind
	desc   *prometheus.Desc
	// stale counts, for the kinds Clever Cloud backs up, the resources whose BackupStale is
	// True (per kind: the names are in the condition and the Warning event).
	stale *prometheus.Desc
	// price sums status.price.hourly of Ready resources by namespace, kind and currency.
	price *prometheus.Desc
}

func (c *resourcesCollector) set(reader client.Reader, ks []kinds.Kind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reader, c.kinds = reader, ks
}

func (c *resourcesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	ch <- c.stale
	ch <- c.price
}

func (c *resourcesCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reader, ks := c.reader, c.kinds
	c.mu.Unlock()
	if reader == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, k := range ks {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		if err := reader.List(ctx, list); err != nil {
			continue
		}
		counts := map[string]float64{"True": 0, "False": 0, "Unknown": 0}
		stale := 0.0
		type priceKey struct{ ns, currency string }
		prices := map[priceKey]float64{}
		for i := range list.Items {
			if b, ok := status.Find(status.Conditions(&list.Items[i]), status.TypeBackupStale); ok && b.Status == "True" {
				stale++
			}
			r, ok := status.Find(status.Conditions(&list.Items[i]), status.TypeReady)
			switch {
			case !ok:
				counts["Unknown"]++
			default:
				counts[r.Status]++
			}
			if ok && r.Status == "True" {
				if p := kinds.StatusOf(&list.Items[i]).Price; p != nil && p.Currency != "" {
					if h, err := strconv.ParseFloat(p.Hourly, 64); err == nil {
						prices[priceKey{list.Items[i].GetNamespace(), p.Currency}] += h
					}
				}
			}
		}
		for pk, sum := range prices {
			ch <- prometheus.MustNewConstMetric(c.price, prometheus.GaugeValue, sum, pk.ns, k.GVK.Kind, pk.currency)
		}
		for state, n := range counts {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, n, k.GVK.Kind, state)
		}
		if k.Backups {
			ch <- prometheus.MustNewConstMetric(c.stale, prometheus.GaugeValue, stale, k.GVK.Kind)
		}
	}
}
