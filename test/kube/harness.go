package kube

// The harness runs the whole operator locally for programs that drive it from outside: a real
// kube-apiserver and etcd (envtest, binaries built by `make envtest-bins`) with the operator's
// CRDs, an admin user and its kubeconfig, the fake Clever Cloud API (pkg/fakeapi) over real
// HTTP, and the operator binary (bin/manager) as separate processes (Operator) that can be
// started, killed and restarted any number of times, each logging at the highest verbosity to
// a file. hack/demo, test/bench, test/chaos and test/realapi are built on it.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// HarnessOptions configures StartHarness.
type HarnessOptions struct {
	// Assets is the directory holding kube-apiserver and etcd (default $KUBEBUILDER_ASSETS,
	// else DefaultAssets under the repository root).
	Assets string
	// WorkDir receives the kubeconfig and the operator logs (created; relative to the
	// repository root).
	WorkDir string
	// Fake configures the fake Clever Cloud API. When Credentials and BearerTokens are both
	// empty, Start generates random credential sets (CredentialSets of them, default 1), so
	// that a leak scan can look for values found nowhere else.
	Fake           fakeapi.Options
	CredentialSets int
	// Build builds the operator from the working tree first, into <WorkDir>/manager (never
	// into bin/, which may be shared with another checkout); operators run it by default.
	Build bool
	// Log receives progress lines (nil: silent).
	Log func(string)
	// AuditLog makes kube-apiserver write an audit log (Harness.AuditLogPath) of every write
	// of the operators' user (OperatorUser), at level Metadata: see audit.go.
	AuditLog bool
}

// Harness is a running control plane plus fake Clever Cloud API.
type Harness struct {
	Root       string // repository root (the working directory after Start)
	WorkDir    string // absolute
	Kubeconfig string // absolute path of the admin kubeconfig
	// OperatorKubeconfig is the operators' own kubeconfig (user OperatorUser, also in
	// system:masters), so that the apiserver tells their requests from the drivers'.
	OperatorKubeconfig string
	// AuditLogPath is kube-apiserver's audit log when HarnessOptions.AuditLog is set.
	AuditLogPath string
	// Binary is the operator binary operators run by default: <WorkDir>/manager with
	// HarnessOptions.Build, else bin/manager.
	Binary     string
	RestConfig *rest.Config
	Client     client.Client
	// Endpoint is the fake API's base URL (http://127.0.0.1:port).
	Endpoint string
	// Creds are the credential sets the fake accepts; operators use Creds[i].
	Creds []fakeapi.Credential
	// Requests counts every API request reaching the fake (per second, per credential set).
	Requests *RequestRecorder

	env       *envtest.Environment
	fake      atomic.Pointer[fakeapi.Server]
	srv       *http.Server
	intercept atomic.Pointer[http.HandlerFunc]
	log       func(string)
}

// StartHarness boots the control plane and the fake API. The caller must call Stop.
func StartHarness(ctx context.Context, o HarnessOptions) (*Harness, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	// watches.yaml names its charts relative to the working directory, as for `make run`.
	if err := os.Chdir(root); err != nil {
		return nil, err
	}
	// The drivers' own controller-runtime clients log nothing (the operator logs to its file).
	ctrllog.SetLogger(logr.Discard())
	h := &Harness{Root: root, log: o.Log}
	if h.log == nil {
		h.log = func(string) {}
	}
	if o.WorkDir == "" {
		o.WorkDir = ".harness"
	}
	if h.WorkDir, err = filepath.Abs(o.WorkDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(h.WorkDir, 0o755); err != nil {
		return nil, err
	}
	h.Binary = filepath.Join(root, "bin", "manager")
	if o.Build {
		h.Binary = filepath.Join(h.WorkDir, "manager")
		h.log("building the operator (CGO_ENABLED=0 go build -ldflags='-s -w' -o " + h.Binary + " .)")
		if err := BuildOperatorTo(ctx, h.Binary); err != nil {
			return nil, err
		}
	}
	if o.Assets, err = AssetsDirOr(o.Assets); err != nil {
		return nil, err
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(o.Assets, b)); err != nil {
			return nil, fmt.Errorf("%s not found in %s: run `make envtest-bins` first", b, o.Assets)
		}
	}

	h.log("starting the control plane (kube-apiserver + etcd from " + o.Assets + ")")
	h.env = &envtest.Environment{
		BinaryAssetsDirectory: o.Assets,
		CRDDirectoryPaths:     []string{filepath.Join("config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	if o.AuditLog {
		if err := h.configureAudit(); err != nil {
			return nil, err
		}
	}
	if _, err := h.env.Start(); err != nil {
		return nil, fmt.Errorf("starting the control plane: %w (run `make envtest-bins` first)", err)
	}
	ok := false
	defer func() {
		if !ok {
			h.Stop()
		}
	}()
	h.Kubeconfig = filepath.Join(h.WorkDir, "kubeconfig")
	adminCfg, err := WriteAdminKubeconfig(h.env, "harness-admin", h.Kubeconfig)
	if err != nil {
		return nil, err
	}
	h.OperatorKubeconfig = filepath.Join(h.WorkDir, "kubeconfig-operator")
	if _, err := WriteAdminKubeconfig(h.env, OperatorUser, h.OperatorKubeconfig); err != nil {
		return nil, err
	}
	h.RestConfig = adminCfg
	// No client-side throttling (client-go's default is 5 QPS): the drivers measure the
	// control plane, as the operator does (main sets QPS -1 for a kubeconfig).
	h.RestConfig.QPS = -1
	if h.Client, err = client.New(h.RestConfig, client.Options{}); err != nil {
		return nil, err
	}

	h.log("starting the fake Clever Cloud API")
	fo := o.Fake
	if len(fo.Credentials) == 0 && len(fo.BearerTokens) == 0 {
		n := max(o.CredentialSets, 1)
		for i := range n {
			fo.Credentials = append(fo.Credentials, fakeapi.Credential{
				ConsumerKey:    fmt.Sprintf("harness-consumer-key-%d-%s", i, randHex(6)),
				ConsumerSecret: "harness-consumer-secret-" + randHex(16),
				Token:          "harness-token-" + randHex(16),
				Secret:         "harness-token-secret-" + randHex(16),
			})
		}
	}
	h.Creds = fo.Credentials
	h.fake.Store(fakeapi.New(fo))
	h.Requests = newRequestRecorder(h.Creds)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h.srv = &http.Server{Handler: h.Requests.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := h.intercept.Load(); f != nil {
			(*f)(w, r)
			return
		}
		h.fake.Load().ServeHTTP(w, r)
	})), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = h.srv.Serve(ln) }()
	h.Endpoint = "http://" + ln.Addr().String()
	ok = true
	return h, nil
}

// Fake returns the fake Clever Cloud API currently serving.
func (h *Harness) Fake() *fakeapi.Server { return h.fake.Load() }

// ReplaceFake serves a new, empty fake from now on (same endpoint and credentials; options
// such as the provisioning delay can only be set at creation). It returns the new one.
func (h *Harness) ReplaceFake(o fakeapi.Options) *fakeapi.Server {
	o.Credentials = h.Creds
	f := fakeapi.New(o)
	h.fake.Store(f)
	return f
}

// SetFake serves f from now on (e.g. a fake kept from before ReplaceFake).
func (h *Harness) SetFake(f *fakeapi.Server) { h.fake.Store(f) }

// Intercept answers every request to the API endpoint with f instead of the fake, until
// called with nil: e.g. a proxy or an incident where every route answers 404.
func (h *Harness) Intercept(f http.HandlerFunc) {
	if f == nil {
		h.intercept.Store(nil)
		return
	}
	h.intercept.Store(&f)
}

// Stop tears down the fake API and the control plane (operators are the caller's to stop).
func (h *Harness) Stop() {
	if h.srv != nil {
		_ = h.srv.Close()
	}
	if h.env != nil {
		_ = h.env.Stop()
	}
}

// EnsureNamespace creates namespace ns if it does not exist.
func (h *Harness) EnsureNamespace(ctx context.Context, ns string) error {
	err := h.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// BuildOperatorTo builds the operator binary at path (relative to the repository root), e.g.
// a test's own temporary directory, so that concurrent test packages do not share one.
func BuildOperatorTo(ctx context.Context, path string) error {
	// Built as the image builds it (Dockerfile): static (CGO_ENABLED=0: no dynamic loader, no
	// dynamic symbol table, which Go keeps whole when a dependency imports "plugin", as
	// kustomize does through Helm), without symbol table and DWARF; what is measured is what
	// runs in the pod.
	c := exec.CommandContext(ctx, "go", "build", "-ldflags=-s -w", "-o", path, ".")
	c.Env = append(os.Environ(), "CGO_ENABLED=0")
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("building %s: %w", path, err)
	}
	return nil
}

// RepoRoot returns the closest directory above the working directory holding go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory: run from the repository")
		}
		dir = parent
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
