// Package plugin_test runs kubectl-clever (internal/plugin) against the whole operator
// in-process on a real kube-apiserver + etcd (envtest) and the fake Clever Cloud API over HTTP:
// add-ons made outside the operator are imported, the output applied, and every resource
// becomes Ready with no add-on created, migrated or deleted.
package plugin_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cfgpkg "github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/plugin"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestPlugin(t *testing.T) {
	kube.RunSuite(t, "kubectl-clever suite (envtest + fake Clever Cloud API + operator)", 60*time.Second, 200*time.Millisecond)
}

var creds = fakeapi.Credential{ConsumerKey: "ck-plugin", ConsumerSecret: "cs-plugin-7d41c2e9", Token: "tk-plugin-0b9e5f13", Secret: "ts-plugin-e62a8c44"}

var (
	restCfg *rest.Config
	k8s     client.Client
	fake    *fakeapi.Server
	fakeSrv *httptest.Server
	mgr     *kube.Manager
	suite   *kube.Suite
	// logs receives everything the operator logs (console encoding, every verbosity): what
	// trace reads with --logs -.
	logs *kube.LogBuffer
)

var _ = BeforeSuite(func() {
	suite = kube.StartSuite(kube.SuiteOptions{Name: "test/plugin", NamespacePrefix: "p", Fake: fakeapi.Options{
		Credentials:       []fakeapi.Credential{creds},
		ProvisioningDelay: 100 * time.Millisecond,
		Seed:              16,
	}})
	restCfg, k8s, fake, fakeSrv, logs = suite.Config, suite.Client, suite.Fake, suite.FakeServer, suite.Logs
	mgr = suite.StartManager(kube.ManagerOptions{API: apiConfig(), Workers: 4})
})

var _ = AfterSuite(func() {
	if suite != nil {
		for _, v := range []string{creds.ConsumerSecret, creds.Token, creds.Secret} {
			Expect(logs.String()).NotTo(ContainSubstring(v), "a credential reached the operator's logs")
		}
	}
	mgr.Stop()
})

func apiConfig() cfgpkg.APIConfig { return suite.APIConfig(creds) }

// apiEnv is the environment import reads its credentials from: the operator's variables.
func apiEnv() map[string]string {
	return map[string]string{
		"CLEVER_OPERATOR_API_ENDPOINT":        fakeSrv.URL,
		"CLEVER_OPERATOR_API_TOKEN":           creds.Token,
		"CLEVER_OPERATOR_API_SECRET":          creds.Secret,
		"CLEVER_OPERATOR_API_CONSUMER_KEY":    creds.ConsumerKey,
		"CLEVER_OPERATOR_API_CONSUMER_SECRET": creds.ConsumerSecret,
	}
}

// run runs kubectl clever in-process (the kubeconfig replaced by the suite's REST config) and
// returns stdout and stderr.
func run(stdin string, args ...string) (string, string, error) {
	var out, errOut strings.Builder
	e := apiEnv()
	err := plugin.Run(context.Background(), args, &plugin.Env{
		Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(stdin),
		Getenv:     func(k string) string { return e[k] },
		RESTConfig: restCfg,
	})
	return out.String(), errOut.String(), err
}
