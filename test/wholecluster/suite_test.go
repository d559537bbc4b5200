// Package wholecluster_test runs the operator as people install it, on a whole cluster
// (test/kube/cluster.Start: kube-apiserver, etcd, kube-controller-manager, kube-scheduler,
// KWOK): `make deploy` as written, the Deployment Available, and the operator process standing
// in for its Pod with the Pod's arguments and environment and a token of the ServiceAccount
// `make deploy` created (Cluster.RunPod), so every permission check is the RBAC config/default
// grants. On that cluster the namespace controller and the garbage collector are real: the
// specs delete namespaces full of resources and delete resources with each propagation
// policy (issue #44, points 3 to 5).
//
// What the stand-in does not prove: the image itself (its files, user, entrypoint), the
// kubelet, probes against a running container, resource limits. Ports the Pod binds are
// given free local ones (a Pod's ports are its own), and --cellar-endpoint points
// CellarBuckets at the suite's S3 server (the fake Cellar hosts do not exist).
//
// The binaries come from `make cluster-bins`; without them the suite is skipped. On its own:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/envtest/1.35.4 go test ./test/wholecluster -count=1
package wholecluster_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
	"github.com/clever-operator/clever-operator/test/kube/cluster"
)

func TestWholeCluster(t *testing.T) {
	kube.RunSuite(t, "Operator on a whole cluster (make deploy, namespace deletion, garbage collection)", 60*time.Second, 250*time.Millisecond)
}

const (
	systemNamespace = "clever-operator-system"
	deployment      = "clever-operator-controller-manager"
	serviceAccount  = "clever-operator-controller-manager"
)

var (
	whole    *cluster.Cluster
	k8s      client.Client
	suite    *kube.Suite
	fake     *fakeapi.Server
	creds    = fakeapi.Credential{ConsumerKey: "ck-whole", ConsumerSecret: "cs-whole-5e1f", Token: "tk-whole-9a2c", Secret: "ts-whole-77d0"}
	apiURL   string
	s3       *kube.S3Server
	manager  string // the operator binary (the image's /manager)
	operator *cluster.Process
)

var _ = BeforeSuite(func() {
	Expect(os.Chdir(filepath.Join("..", ".."))).To(Succeed())
	start := time.Now()
	whole, k8s = cluster.StartSuite()
	suite = &kube.Suite{Name: "test/wholecluster", Client: k8s, NamespacePrefix: "whole"}

	var srv *httptest.Server
	fake, srv = kube.NewFake(fakeapi.Options{Credentials: []fakeapi.Credential{creds}, ProvisioningDelay: 100 * time.Millisecond, Seed: 44})
	apiURL = srv.URL
	s3 = kube.NewS3Server("")
	DeferCleanup(s3.Close)

	manager = cluster.BuildOperator(whole.WorkDir)

	makeDeploy()
	operator = startOperator("operator")
	GinkgoWriter.Printf("cluster, make deploy and the operator up in %s (logs in %s)\n", time.Since(start).Round(time.Millisecond), whole.WorkDir)
})

// On a failure, keep the cluster's logs and show the end of each, the operator's included.
var _ = AfterEach(func() {
	if CurrentSpecReport().Failed() && whole != nil {
		whole.KeepWorkDir()
		AddReportEntry("cluster logs", whole.LogTails(40, "kube-controller-manager", "kwok", "operator"))
	}
})

// makeDeploy runs `make deploy` as written against the cluster, creates the credentials
// Secret its message asks for (the suite's fake API), and waits for the Deployment to be
// Available.
func makeDeploy() {
	GinkgoHelper()
	cmd := exec.Command("make", "deploy", "KUBECTL="+cluster.Kubectl())
	cmd.Env = append(os.Environ(), "KUBECONFIG="+whole.KubeconfigPath)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "make deploy: %s", out)
	GinkgoWriter.Printf("make deploy:\n%s\n", out)
	st, err := exec.Command("git", "status", "--porcelain", "config").Output()
	Expect(err).NotTo(HaveOccurred())
	Expect(strings.TrimSpace(string(st))).To(BeEmpty(), "make deploy with the default IMG leaves config/ as committed")

	Expect(k8s.Create(context.Background(), cluster.OperatorCredentials(systemNamespace, apiURL, creds))).To(Succeed())
	cluster.AvailablePod(k8s, systemNamespace, deployment)
}

// startOperator runs the operator process standing in for the Deployment's Pod.
func startOperator(name string) *cluster.Process {
	GinkgoHelper()
	p, err := whole.RunPod(context.Background(), cluster.AvailablePod(k8s, systemNamespace, deployment), "manager", manager, name, "--cellar-endpoint="+s3.URL)
	Expect(err).NotTo(HaveOccurred())
	Eventually(func() string { return whole.LogTails(400, name) }, 60*time.Second).Should(
		ContainSubstring("Starting workers"), "the operator starts its controllers")
	return p
}

// denials returns the requests of the operator's ServiceAccount that RBAC refused.
func denials() []string {
	GinkgoHelper()
	return whole.Denials("system:serviceaccount:"+systemNamespace+":"+serviceAccount, 0)
}
