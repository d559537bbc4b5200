// Package chartinstall_test installs the operator the two ways a platform engineer installs it
// without OLM, on a whole cluster (test/kube/cluster.Start: kube-apiserver, etcd,
// kube-controller-manager, kube-scheduler, KWOK), and uninstalls it while resources still
// exist (issue #44, point 3):
//
//   - the Helm chart (dist/chart), `helm install` with no values: its credentials come from
//     the Secret clever-operator-credentials the chart's README has you create first;
//   - `make deploy` as written, then `make undeploy`.
//
// The operator process stands in for the Deployment's Pod (Cluster.RunPod: the Pod's args and
// environment, a token of the ServiceAccount the install created), so every permission check
// is the RBAC that install granted; it is stopped when its Pod is deleted, as the kubelet
// stops a container. What the stand-in does not prove: the image itself, the kubelet, probes
// against a running container, resource limits. --cellar-endpoint points CellarBuckets at the
// suite's S3 server (the fake Cellar hosts do not exist), and the Pod's /tmp (an emptyDir)
// is a directory of the cluster's work directory.
//
// The binaries come from `make cluster-bins` and `make helm`; without them the suite is
// skipped. On its own:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/envtest/1.35.4 go test ./test/chartinstall -count=1
package chartinstall_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
	"github.com/clever-operator/clever-operator/test/kube/cluster"
)

func TestChartInstall(t *testing.T) {
	kube.RunSuite(t, "Operator installed by the Helm chart and by make deploy on a whole cluster, uninstalled with resources left", 60*time.Second, 250*time.Millisecond)
}

// systemNamespace is the namespace of both installs: `make deploy`'s, and the one the suite
// gives `helm install -n ... --create-namespace`.
const systemNamespace = "clever-operator-system"

// An install: its Deployment and ServiceAccount in systemNamespace.
type install struct {
	name           string // "chart" or "make deploy"
	deployment     string
	serviceAccount string
}

var (
	chart  = install{name: "chart", deployment: "clever-operator", serviceAccount: "clever-operator"}
	deploy = install{name: "make deploy", deployment: "clever-operator-controller-manager", serviceAccount: "clever-operator-controller-manager"}
)

var (
	whole   *cluster.Cluster
	k8s     client.Client
	suite   *kube.Suite
	fake    *fakeapi.Server
	creds   = fakeapi.Credential{ConsumerKey: "ck-chart", ConsumerSecret: "cs-chart-3b7e", Token: "tk-chart-51c9", Secret: "ts-chart-c02a"}
	apiURL  string
	s3      *kube.S3Server
	manager string // the operator binary (the image's /manager)
	helmBin string
)

var _ = BeforeSuite(func() {
	Expect(os.Chdir(filepath.Join("..", ".."))).To(Succeed())
	var err error
	helmBin, err = filepath.Abs(filepath.Join("bin", "helm"))
	Expect(err).NotTo(HaveOccurred())
	if _, err := os.Stat(helmBin); err != nil {
		Skip("bin/helm not found: make helm")
	}
	start := time.Now()
	whole, k8s = cluster.StartSuite()

	f, srv := kube.NewFake(fakeapi.Options{Credentials: []fakeapi.Credential{creds}, ProvisioningDelay: 100 * time.Millisecond, Seed: 44})
	fake, apiURL = f, srv.URL
	suite = &kube.Suite{Name: "test/chartinstall", Client: k8s, Fake: fake, NamespacePrefix: "chart"}
	s3 = kube.NewS3Server("")
	DeferCleanup(s3.Close)

	manager = filepath.Join(whole.WorkDir, "manager")
	out, err := exec.Command("go", "build", "-o", manager, ".").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build of the operator: %s", out)
	GinkgoWriter.Printf("cluster up and operator built in %s (logs in %s)\n", time.Since(start).Round(time.Millisecond), whole.WorkDir)
})

// On a failure, keep the cluster's logs and show the end of each, the operators' included.
var _ = AfterEach(func() {
	if CurrentSpecReport().Failed() && whole != nil {
		whole.KeepWorkDir()
		AddReportEntry("cluster logs", whole.LogTails(40, append([]string{"kube-controller-manager", "kwok"}, operatorNames...)...))
	}
})

// run runs a command as a person would against the cluster (KUBECONFIG, Helm's directories in
// the cluster's work directory) and returns its combined output; it fails the spec on error.
func run(name string, args ...string) string {
	GinkgoHelper()
	out, err := runErr(name, args...)
	Expect(err).NotTo(HaveOccurred(), "%s %s: %s", name, strings.Join(args, " "), out)
	return out
}

func runErr(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	helmHome := filepath.Join(whole.WorkDir, "helm-client")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+whole.KubeconfigPath,
		"HELM_CACHE_HOME="+filepath.Join(helmHome, "cache"), "HELM_CONFIG_HOME="+filepath.Join(helmHome, "config"),
		"HELM_DATA_HOME="+filepath.Join(helmHome, "data"))
	out, err := cmd.CombinedOutput()
	GinkgoWriter.Printf("$ %s %s\n%s\n", filepath.Base(name), strings.Join(args, " "), out)
	return string(out), err
}

// createCredentials creates the operator's credentials Secret, clever-operator-credentials in
// systemNamespace (what `make deploy` prints and the chart's README asks for), for the
// suite's fake API.
func createCredentials() {
	GinkgoHelper()
	Expect(k8s.Create(context.Background(), cluster.OperatorCredentials(systemNamespace, apiURL, creds))).To(Succeed())
}

func createNamespace(name string) {
	GinkgoHelper()
	err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}

var operatorNames []string

// startOperator runs the operator process standing in for the install's Pod (stopped when
// that Pod goes, as the kubelet stops its container).
func startOperator(in install, name string) *cluster.Process {
	GinkgoHelper()
	p, err := whole.RunPod(context.Background(), cluster.AvailablePod(k8s, systemNamespace, in.deployment), "manager", manager, name, "--cellar-endpoint="+s3.URL)
	Expect(err).NotTo(HaveOccurred())
	operatorNames = append(operatorNames, name)
	Eventually(func() string { return whole.LogTails(400, name) }, 60*time.Second).Should(
		ContainSubstring("Starting workers"), "the operator starts its controllers")
	return p
}

// denials returns the requests of the install's ServiceAccount that RBAC refused, in the
// audit log from offset on.
func denials(in install, offset int64) []string {
	GinkgoHelper()
	return whole.Denials("system:serviceaccount:"+systemNamespace+":"+in.serviceAccount, offset)
}

func auditOffset() int64 {
	GinkgoHelper()
	o, err := whole.AuditOffset()
	Expect(err).NotTo(HaveOccurred())
	return o
}
