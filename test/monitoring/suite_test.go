// Package monitoring checks what users look at on top of the operator's metrics, against a
// live operator: every metric the Grafana dashboard (config/grafana) and the alert rules
// (config/prometheus/alerts.yaml) query is one the operator's /metrics really serves. The
// operator runs in-process as main wires it (controller-runtime's registry and metrics
// server, plain HTTP) on envtest's kube-apiserver + etcd, against the fake Clever Cloud API.
package monitoring

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/clever-operator/clever-operator/internal/operator"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestMonitoring(t *testing.T) {
	kube.RunSuite(t, "Monitoring suite: the Grafana dashboard and alert rules against a live operator's /metrics (envtest + fake Clever Cloud API)", 90*time.Second, 250*time.Millisecond)
}

// Long enough (≥ kube.MinSecretLen) for the leak checks.
var creds = fakeapi.Credential{ConsumerKey: "ck-monitoring", ConsumerSecret: "cs-monitoring-4d1f8a62", Token: "tk-monitoring-93b0c7e5", Secret: "ts-monitoring-1a6e2f94"}

var (
	k8s   client.Client
	fake  *fakeapi.Server
	mgr   *kube.Manager
	suite *kube.Suite
	// metricsURL is the operator's /metrics.
	metricsURL string
)

var _ = BeforeSuite(func() {
	suite = kube.StartSuite(kube.SuiteOptions{Name: "test/monitoring", NamespacePrefix: "mon", Fake: fakeapi.Options{
		Credentials:       []fakeapi.Credential{creds},
		ProvisioningDelay: 200 * time.Millisecond,
		Seed:              23,
	}})
	k8s, fake = suite.Client, suite.Fake
	addr := kube.FreeAddr()
	metricsURL = "http://" + addr + "/metrics"
	api := suite.APIConfig(creds)
	// A known expiry, so that clever_operator_credentials_expiry_timestamp_seconds is set.
	api.TokenExpiration = time.Now().Add(90 * 24 * time.Hour).UTC().Format(time.RFC3339)
	mgr = suite.StartManager(kube.ManagerOptions{
		API: api,
		// What main does: the operator's metrics on controller-runtime's registry (with the
		// controller, workqueue and client-go metrics), served by the manager's metrics server.
		Registerer: ctrlmetrics.Registry,
		Workers:    2,
		Configure: func(o *ctrl.Options) {
			o.Metrics = operator.MetricsServerOptions(operator.MetricsConfig{BindAddress: addr})
		},
	})
})

var _ = AfterSuite(func() {
	if suite != nil {
		suite.ExpectNoLeak(suite.Logs.String(), secretValues())
	}
	mgr.Stop()
})

// secretValues are the credentials and the add-ons' secret values of this suite.
func secretValues() []string {
	return append(kube.AddonSecretValues(fake), kube.CredentialValues(creds)...)
}

// scrape GETs the operator's /metrics and returns the exposition text.
func scrape() (string, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(metricsURL)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", &httpError{resp.StatusCode}
	}
	return string(b), nil
}

type httpError struct{ code int }

func (e *httpError) Error() string { return http.StatusText(e.code) }

// seriesNames returns the names of the series in a Prometheus text exposition (a histogram's
// <name>_bucket, <name>_sum and <name>_count; a family without samples is not there).
func seriesNames(text string) map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names
}
