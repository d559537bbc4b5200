// Package cluster_test proves that test/kube/cluster.Start's cluster is whole (issue #44, Done
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
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
	"github.com/clever-operator/clever-operator/test/kube/cluster"
)

func TestCluster(t *testing.T) {
	if err := cluster.CheckBinaries(cluster.Options{}); err != nil {
		t.Skip(err.Error()) // shown by go test -v; BeforeSuite skips on it too
	}
	kube.RunSuite(t, "Whole cluster suite (apiserver + etcd + controller-manager + scheduler + KWOK)", 60*time.Second, 200*time.Millisecond)
}

var (
	whole *cluster.Cluster
	k8s   client.Client
	suite *kube.Suite
)

var _ = BeforeSuite(func() {
	whole, k8s = cluster.StartSuite()
	suite = &kube.Suite{Name: "test/cluster", Client: k8s, NamespacePrefix: "cluster"}
})

// On a failure, keep the cluster's logs and show the end of each.
var _ = AfterEach(func() {
	if CurrentSpecReport().Failed() && whole != nil {
		whole.KeepWorkDir()
		AddReportEntry("cluster logs", whole.LogTails(40))
	}
})
