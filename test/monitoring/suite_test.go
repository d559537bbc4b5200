// Package monitoring checks what users look at on top of the operator's metrics, against a
// live operator: every metric the Grafana dashboard (config/grafana) and the alert rules
// (config/prometheus/alerts.yaml) query is one the operator's /metrics really serves. The
// operator runs in-process as main wires it (controller-runtime's registry and metrics
// server, plain HTTP) on envtest's kube-apiserver + etcd, against the fake Clever Cloud API.
package monitoring

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	cfgpkg "github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/operator"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestMonitoring(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	RunSpecs(t, "Monitoring suite: the Grafana dashboard and alert rules against a live operator's /metrics (envtest + fake Clever Cloud API)")
}

// Long enough (≥ kube.MinSecretLen) for the leak checks.
var creds = fakeapi.Credential{ConsumerKey: "ck-monitoring", ConsumerSecret: "cs-monitoring-4d1f8a62", Token: "tk-monitoring-93b0c7e5", Secret: "ts-monitoring-1a6e2f94"}

var (
	env     *envtest.Environment
	restCfg *rest.Config
	k8s     client.Client
	fake    *fakeapi.Server
	fakeSrv *httptest.Server
	mgr     *kube.Manager
	suite   *kube.Suite
	logs    = &kube.LogBuffer{}
	// metricsURL is the operator's /metrics.
	metricsURL string
)

var _ = BeforeSuite(func() {
	cp := kube.StartControlPlane(logs, true)
	env, restCfg, k8s = cp.Env, cp.Config, cp.Client
	fake, fakeSrv = fakeapi.NewTestServer(fakeapi.Options{
		Credentials:       []fakeapi.Credential{creds},
		ProvisioningDelay: 200 * time.Millisecond,
		Seed:              23,
	})
	suite = &kube.Suite{Name: "test/monitoring", Client: k8s, Fake: fake, NamespacePrefix: "mon"}
	addr := kube.FreeAddr()
	metricsURL = "http://" + addr + "/metrics"
	mgr = kube.StartManager(restCfg, kube.ManagerOptions{
		// A known expiry, so that clever_operator_credentials_expiry_timestamp_seconds is set.
		API: cfgpkg.APIConfig{Endpoint: fakeSrv.URL, ConsumerKey: creds.ConsumerKey, ConsumerSecret: creds.ConsumerSecret, Token: creds.Token, Secret: creds.Secret,
			TokenExpiration: time.Now().Add(90 * 24 * time.Hour).UTC().Format(time.RFC3339)},
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
	if fake != nil && k8s != nil {
		suite.ExpectNoLeak(logs.String(), secretValues())
	}
	mgr.Stop()
	if fakeSrv != nil {
		fakeSrv.Close()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
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
