package kube

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/clever-operator/clever-operator/internal/logging"
)

// DefaultAssets is where `make envtest-bins` puts kube-apiserver and etcd, relative to the
// repository root.
const DefaultAssets = "bin/envtest/1.35.4"

// AssetsDir returns the directory holding kube-apiserver and etcd, or an error telling the
// reader how to build them. Suites fail (never skip) when the binaries are missing.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		return "", fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the tests with `make test`, which builds kube-apiserver and etcd into bin/envtest")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("%s not found in KUBEBUILDER_ASSETS=%s: run `make envtest-bins`", bin, dir)
		}
	}
	return dir, nil
}

// AssetsDirOr returns dir, else $KUBEBUILDER_ASSETS, else DefaultAssets under the repository
// root (for the programs: they run without `make test`).
func AssetsDirOr(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if dir != "" {
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, DefaultAssets), nil
}

// NewEnvironment returns an envtest environment on our own binaries with the given CRD
// directories.
func NewEnvironment(crdDirs ...string) (*envtest.Environment, error) {
	dir, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	return &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDDirectoryPaths:     crdDirs,
		ErrorIfCRDPathMissing: len(crdDirs) > 0,
	}, nil
}

// WriteAdminKubeconfig adds user name, in group system:masters, to the started env and writes
// its kubeconfig to path (for helm, kubectl, an operator process); it returns the user's
// config.
func WriteAdminKubeconfig(env *envtest.Environment, name, path string) (*rest.Config, error) {
	user, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		return nil, err
	}
	return rest.CopyConfig(user.Config()), nil
}

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
// control plane. unthrottled turns client-go's client-side
// rate limit off (QPS -1), as main runs the operator.
func StartControlPlane(logs io.Writer, unthrottled bool) *ControlPlane {
	GinkgoHelper()
	ctrl.SetLogger(logging.Capped(zap.New(zap.WriteTo(io.MultiWriter(GinkgoWriter, logs)), zap.UseDevMode(true), zap.Level(zapcore.Level(-10))), logging.MaxVerbosity))
	root, err := RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	Expect(os.Chdir(root)).To(Succeed())
	cp := &ControlPlane{}
	cp.Env, err = NewEnvironment(filepath.Join("config", "crd", "bases"))
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

// LogBuffer collects log output safely from many goroutines (suites read it to prove that
// no credential is logged).
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
