package ecosystem

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cfgpkg "github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/operator"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestEcosystem(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "Ecosystem suite: Argo CD health, kstatus, two operator instances (envtest + fake Clever Cloud API)")
}

// Two credential sets, one per operator instance, so the fake tells who made each call
// (CountsForToken). Long enough (≥ kube.MinSecretLen) for the leak check.
var (
	credsA = fakeapi.Credential{ConsumerKey: "ck-shard-a", ConsumerSecret: "cs-shard-a-71c2e9d4", Token: "tk-shard-a-0d8e3b51", Secret: "ts-shard-a-a5f60c27"}
	credsB = fakeapi.Credential{ConsumerKey: "ck-shard-b", ConsumerSecret: "cs-shard-b-3e9a1f08", Token: "tk-shard-b-c4b7d692", Secret: "ts-shard-b-58e2a0f3"}
)

// systemNamespace holds both instances' leases and the shared claim key.
const systemNamespace = "clever-operator-system"

var (
	env     *envtest.Environment
	restCfg *rest.Config
	k8s     client.Client
	fake    *fakeapi.Server
	fakeSrv *httptest.Server
	suite   *kube.Suite
	logs    = &kube.LogBuffer{}
	// shardA and shardB are the two operator instances: --watch-selector shard=a and shard=b,
	// each with its own lease and credentials, both leader-elected.
	shardA, shardB *instance
)

// instance is one operator instance and the writes it made to add-on resources.
type instance struct {
	*kube.Manager
	name   string
	lease  string
	creds  fakeapi.Credential
	writes *writeLog
}

// writeLog records, per instance, which add-on resources it wrote to (any verb but reads)
// through its own connection to the API server.
type writeLog struct {
	mu    sync.Mutex
	names map[string]int // namespace/name -> writes
}

func (w *writeLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		switch req.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			// /apis/api.clever-cloud.com/<version>/namespaces/<ns>/<plural>/<name>[/status|/finalizers]
			parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
			if len(parts) >= 7 && parts[0] == "apis" && parts[1] == "api.clever-cloud.com" && parts[3] == "namespaces" &&
				!strings.Contains(parts[5], "clevercredentials") {
				w.mu.Lock()
				w.names[parts[4]+"/"+parts[6]]++
				w.mu.Unlock()
			}
		}
		return rt.RoundTrip(req)
	})
}

// touched returns the resources written to, with their write counts.
func (w *writeLog) touched() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.names))
	for k, v := range w.names {
		out[k] = v
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func startInstance(name, selector string, creds fakeapi.Credential) *instance {
	GinkgoHelper()
	sel, err := operator.ParseWatchSelector(selector)
	Expect(err).NotTo(HaveOccurred())
	in := &instance{name: name, lease: "clever-operator-" + name, creds: creds, writes: &writeLog{names: map[string]int{}}}
	in.Manager = kube.StartManager(restCfg, kube.ManagerOptions{
		API:      cfgpkg.APIConfig{Endpoint: fakeSrv.URL, ConsumerKey: creds.ConsumerKey, ConsumerSecret: creds.ConsumerSecret, Token: creds.Token, Secret: creds.Secret},
		Selector: sel, Workers: 4, ResyncPeriod: time.Hour,
		Wrap:           in.writes.wrap,
		Log:            ctrl.Log.WithName(name),
		ClaimKeySecret: types.NamespacedName{Namespace: systemNamespace, Name: "clever-operator-claim-key"},
		Configure: func(o *ctrl.Options) {
			o.LeaderElection = true
			o.LeaderElectionNamespace = systemNamespace
			o.LeaderElectionID = in.lease
		},
	})
	return in
}

var _ = BeforeSuite(func() {
	cp := kube.StartControlPlane(logs, true)
	env, restCfg, k8s = cp.Env, cp.Config, cp.Client
	fake, fakeSrv = fakeapi.NewTestServer(fakeapi.Options{
		Credentials:       []fakeapi.Credential{credsA, credsB},
		ProvisioningDelay: 200 * time.Millisecond,
		// Long enough for a spec to read a resource while its migration runs.
		MigrationDuration: 20 * time.Second,
		Seed:              19,
	})
	suite = &kube.Suite{Name: "test/ecosystem", Client: k8s, Fake: fake, NamespacePrefix: "eco"}
	suite.CreateNamespace(systemNamespace)
	shardA = startInstance("a", "shard=a", credsA)
	shardB = startInstance("b", "shard=b", credsB)
})

var _ = AfterSuite(func() {
	if fake != nil && k8s != nil {
		suite.ExpectNoLeak(logs.String(), suite.SecretValues(credsA, credsB))
	}
	for _, in := range []*instance{shardA, shardB} {
		if in != nil {
			in.Stop()
		}
	}
	if fakeSrv != nil {
		fakeSrv.Close()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
