package kube

import (
	"io"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/clever-operator/clever-operator/internal/logging"
	"github.com/clever-operator/clever-operator/test/envtestutil"
	"github.com/clever-operator/clever-operator/test/harness"
)

// ControlPlane is kube-apiserver + etcd started for a suite that runs the operator
// in-process, with the operator's CRDs.
type ControlPlane struct {
	Env    *envtest.Environment
	Config *rest.Config
	// Client is the suite's admin client.
	Client client.Client
}

// StartControlPlane logs the operator's output, capped as main caps it but opened to the
// highest verbosity, to GinkgoWriter and logs (for the leak checks); moves to the repository
// root (watches.yaml names its charts relative to it, as for `make run`); and starts the
// control plane. unthrottled turns client-go's client-side rate limit off (QPS -1), as main
// runs the operator.
func StartControlPlane(logs io.Writer, unthrottled bool) *ControlPlane {
	GinkgoHelper()
	ctrl.SetLogger(logging.Capped(zap.New(zap.WriteTo(io.MultiWriter(GinkgoWriter, logs)), zap.UseDevMode(true), zap.Level(zapcore.Level(-10))), logging.MaxVerbosity))
	root, err := harness.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	Expect(os.Chdir(root)).To(Succeed())
	cp := &ControlPlane{}
	cp.Env, err = envtestutil.New(filepath.Join("config", "crd", "bases"))
	Expect(err).NotTo(HaveOccurred())
	cp.Config, err = cp.Env.Start()
	Expect(err).NotTo(HaveOccurred())
	if unthrottled {
		cp.Config.QPS = -1
	}
	cp.Client, err = client.New(cp.Config, client.Options{})
	Expect(err).NotTo(HaveOccurred())
	return cp
}
