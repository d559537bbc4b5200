// Package alerts checks the shipped Prometheus alert rules: the chart's copy matches
// config/prometheus, and every metric they use is one the operator exports.
package alerts

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/yaml"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/metrics"
	"github.com/clever-operator/clever-operator/internal/operator"
)

func load(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

type rules struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert string `json:"alert"`
			Expr  string `json:"expr"`
		} `json:"rules"`
	} `json:"groups"`
}

func TestChartAlertsMatchConfig(t *testing.T) {
	var cfg struct {
		Spec map[string]any `json:"spec"`
	}
	load(t, "config/prometheus/alerts.yaml", &cfg)
	var chart map[string]any
	load(t, "dist/chart/files/alert-rules.yaml", &chart)
	if !reflect.DeepEqual(cfg.Spec, chart) {
		t.Fatal("dist/chart/files/alert-rules.yaml differs from the spec of config/prometheus/alerts.yaml")
	}
}

func TestAlertsUseExportedMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	// One real API call, so the client's request metrics have samples to gather.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	defer srv.Close()
	c, err := clevercloud.New(clevercloud.Config{Endpoint: srv.URL, Credentials: clevercloud.Credentials{BearerToken: "alerts-test"}, Metrics: clevercloud.NewMetrics(reg)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Self(context.Background()); err != nil {
		t.Fatal(err)
	}
	metrics.NewEngine(reg, nil, nil)
	// collected from the cache at scrape time, and set by the credentials expiry watcher
	exported := map[string]bool{"clever_operator_resources": true, "clever_operator_backup_stale_resources": true, operator.MetricCredentialsExpiry: true}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		exported[f.GetName()] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				exported[f.GetName()+suffix] = true
			}
		}
	}
	// Vectors without samples are not gathered: describe them instead.
	descs := make(chan *prometheus.Desc, 64)
	go func() {
		m := metrics.NewEngine(reg, nil, nil)
		m.TimeToReady.Describe(descs)
		m.DeletionDuration.Describe(descs)
		m.ReconcileErrors.Describe(descs)
		close(descs)
	}()
	nameRe := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	for d := range descs {
		if m := nameRe.FindStringSubmatch(d.String()); m != nil {
			exported[m[1]] = true
			// TimeToReady and DeletionDuration are histograms.
			if strings.HasSuffix(m[1], "_seconds") {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					exported[m[1]+suffix] = true
				}
			}
		}
	}

	var r struct {
		Spec rules `json:"spec"`
	}
	load(t, "config/prometheus/alerts.yaml", &r)
	metricRe := regexp.MustCompile(`\b(clever[a-z_]*)\b`)
	n := 0
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			for _, m := range metricRe.FindAllStringSubmatch(rule.Expr, -1) {
				n++
				if !exported[m[1]] {
					t.Errorf("alert %s uses %s, which the operator does not export", rule.Alert, m[1])
				}
			}
		}
	}
	if n < 4 {
		t.Fatalf("only %d metric references found", n)
	}
}
