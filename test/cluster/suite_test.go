// Package cluster_test proves that test/kube.StartCluster's cluster is whole (issue #44, Done
// when 1): each spec checks something a bare kube-apiserver + etcd (envtest) never does. A
// Deployment becomes Available with its Pods scheduled onto the KWOK Node and Running/Ready;
// a Job completes; the garbage collector honours background, orphan and foreground
// propagation; a namespace holding objects is deleted to the end; a ServiceAccount token from
// the TokenRequest API authenticates as that ServiceAccount, is refused (403) what its RBAC
// does not grant, and the refusal is in the audit log.
//
// One cluster for the suite; each spec works in its own namespace. The binaries come from
// `make cluster-bins`; without them the suite is skipped. On its own:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/envtest/1.35.4 go test ./test/cluster -count=1
package cluster_test

import (
	"errors"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/clever-operator/clever-operator/test/kube"
)

func TestCluster(t *testing.T) {
	if err := kube.CheckClusterBinaries(kube.ClusterOptions{}); err != nil {
		t.Skip(err.Error()) // shown by go test -v; BeforeSuite skips on it too
	}
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	RunSpecs(t, "Whole cluster suite (apiserver + etcd + controller-manager + scheduler + KWOK)")
}

var (
	cluster *kube.Cluster
	k8s     client.Client
	suite   *kube.Suite
)

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	start := time.Now()
	var err error
	cluster, err = kube.StartCluster(kube.ClusterOptions{
		AuditLog: true,
		Log:      func(s string) { GinkgoWriter.Println(s) },
	})
	if errors.Is(err, kube.ErrClusterBinariesMissing) {
		Skip(err.Error())
	}
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cluster.Stop()).To(Succeed()) })
	GinkgoWriter.Printf("cluster up in %s, logs in %s\n", time.Since(start).Round(time.Millisecond), cluster.WorkDir)
	k8s, err = client.New(cluster.Config, client.Options{})
	Expect(err).NotTo(HaveOccurred())
	suite = &kube.Suite{Name: "test/cluster", Client: k8s, NamespacePrefix: "cluster"}
})

// On a failure, keep the cluster's logs and show the end of each.
var _ = AfterEach(func() {
	if CurrentSpecReport().Failed() && cluster != nil {
		cluster.KeepWorkDir()
		AddReportEntry("cluster logs", cluster.LogTails(40))
	}
})
