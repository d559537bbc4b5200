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
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cfgpkg "github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/plugin"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestPlugin(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	RunSpecs(t, "kubectl-clever suite (envtest + fake Clever Cloud API + operator)")
}

var creds = fakeapi.Credential{ConsumerKey: "ck-plugin", ConsumerSecret: "cs-plugin-7d41c2e9", Token: "tk-plugin-0b9e5f13", Secret: "ts-plugin-e62a8c44"}

var (
	env     *envtest.Environment
	restCfg *rest.Config
	k8s     client.Client
	fake    *fakeapi.Server
	fakeSrv *httptest.Server
	mgr     *kube.Manager
	suite   *kube.Suite
	// logs receives everything the operator logs (console encoding, every verbosity): what
	// trace reads with --logs -.
	logs = &kube.LogBuffer{}
)

var _ = BeforeSuite(func() {
	cp := kube.StartControlPlane(logs, true)
	env, restCfg, k8s = cp.Env, cp.Config, cp.Client
	fake, fakeSrv = fakeapi.NewTestServer(fakeapi.Options{
		Credentials:       []fakeapi.Credential{creds},
		ProvisioningDelay: 100 * time.Millisecond,
		Seed:              16,
	})
	suite = &kube.Suite{Name: "test/plugin", Client: k8s, Fake: fake, NamespacePrefix: "p"}
	mgr = kube.StartManager(restCfg, kube.ManagerOptions{API: apiConfig(), Workers: 4})
})

var _ = AfterSuite(func() {
	if logs != nil && fake != nil {
		for _, v := range []string{creds.ConsumerSecret, creds.Token, creds.Secret} {
			Expect(logs.String()).NotTo(ContainSubstring(v), "a credential reached the operator's logs")
		}
	}
	mgr.Stop()
	if fakeSrv != nil {
		fakeSrv.Close()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

func apiConfig() cfgpkg.APIConfig {
	return cfgpkg.APIConfig{Endpoint: fakeSrv.URL, ConsumerKey: creds.ConsumerKey, ConsumerSecret: creds.ConsumerSecret, Token: creds.Token, Secret: creds.Secret}
}

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
