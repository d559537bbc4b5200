package ecosystem

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/operator"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestEcosystem(t *testing.T) {
	kube.RunSuite(t, "Ecosystem suite: Argo CD health, kstatus, two operator instances (envtest + fake Clever Cloud API)", 60*time.Second, 100*time.Millisecond)
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
	k8s   client.Client
	fake  *fakeapi.Server
	suite *kube.Suite
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
	return kube.RoundTripFunc(func(req *http.Request) (*http.Response, error) {
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

func startInstance(name, selector string, creds fakeapi.Credential) *instance {
	GinkgoHelper()
	sel, err := operator.ParseWatchSelector(selector)
	Expect(err).NotTo(HaveOccurred())
	in := &instance{name: name, lease: "clever-operator-" + name, creds: creds, writes: &writeLog{names: map[string]int{}}}
	in.Manager = suite.StartManager(kube.ManagerOptions{
		API:      suite.APIConfig(creds),
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
	suite = kube.StartSuite(kube.SuiteOptions{Name: "test/ecosystem", NamespacePrefix: "eco", Fake: fakeapi.Options{
		Credentials:       []fakeapi.Credential{credsA, credsB},
		ProvisioningDelay: 200 * time.Millisecond,
		// Long enough for a spec to read a resource while its migration runs.
		MigrationDuration: 20 * time.Second,
		Seed:              19,
	}})
	k8s, fake = suite.Client, suite.Fake
	suite.CreateNamespace(systemNamespace)
	shardA = startInstance("a", "shard=a", credsA)
	shardB = startInstance("b", "shard=b", credsB)
})

var _ = AfterSuite(func() {
	if suite != nil {
		suite.ExpectNoLeak(suite.Logs.String(), suite.SecretValues(credsA, credsB))
	}
	for _, in := range []*instance{shardA, shardB} {
		if in != nil {
			in.Stop()
		}
	}
})
