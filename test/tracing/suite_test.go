// Package tracing_test runs the whole operator in-process on a real kube-apiserver + etcd
// (envtest) against the fake Clever Cloud API over HTTP, with OpenTelemetry tracing on and the
// SDK's in-memory exporter, and asserts the span trees that creating, failing and deleting
// resources make (internal/tracing; docs/operator.md "Tracing").
package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/tracing"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestTracing(t *testing.T) {
	kube.RunSuite(t, "Tracing suite (envtest + fake Clever Cloud API + in-memory span exporter)", 30*time.Second, 100*time.Millisecond)
}

// Long enough (≥ kube.MinSecretLen) for the leak check to look for them.
var creds = fakeapi.Credential{ConsumerKey: "ck-trace", ConsumerSecret: "cs-trace-4e1b7c90", Token: "tk-trace-a93f0d21", Secret: "ts-trace-66c2e8b5"}

var (
	k8s     client.Client
	fake    *fakeapi.Server
	fakeSrv *httptest.Server
	mgr     *kube.Manager
	suite   *kube.Suite
	// spans receives every span the operator ends, synchronously.
	spans    = tracetest.NewInMemoryExporter()
	provider *sdktrace.TracerProvider
	// variables are the ConfigProvider variable values the specs set (secrets to look for).
	variables []string
)

var _ = BeforeSuite(func() {
	suite = kube.StartSuite(kube.SuiteOptions{Name: "test/tracing", NamespacePrefix: "tr", Fake: fakeapi.Options{
		Credentials:       []fakeapi.Credential{creds},
		ProvisioningDelay: 300 * time.Millisecond,
		Seed:              19,
	}})
	k8s, fake, fakeSrv = suite.Client, suite.Fake, suite.FakeServer
	provider = sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	tracing.Use(provider)
	mgr = suite.StartManager(kube.ManagerOptions{API: suite.APIConfig(creds), Workers: 2})
})

var _ = AfterSuite(func() {
	if fake != nil && len(spans.GetSpans()) > 0 {
		// No span (name, attribute, event, link, status) carries a credential, an add-on's
		// environment value or a ConfigProvider variable.
		secrets := append(kube.AddonSecretValues(fake), kube.CredentialValues(creds)...)
		secrets = append(secrets, variables...)
		Expect(len(secrets)).To(BeNumerically(">", 8), "the suite handled secrets")
		Expect(kube.Leaks(secrets, map[string]string{"spans": dumpSpans(spans.GetSpans())})).To(BeEmpty())
	}
	mgr.Stop()
	tracing.Use(nil)
	if provider != nil {
		Expect(provider.Shutdown(context.Background())).To(Succeed())
	}
})

// dumpSpans is everything the spans would export, as text.
func dumpSpans(ss tracetest.SpanStubs) string {
	var out []string
	for _, s := range ss {
		b, err := json.Marshal(map[string]any{
			"name": s.Name, "attributes": s.Attributes, "events": s.Events, "links": s.Links,
			"status": s.Status, "resource": s.Resource.Attributes(),
		})
		Expect(err).NotTo(HaveOccurred())
		out = append(out, string(b))
	}
	return fmt.Sprint(out)
}
