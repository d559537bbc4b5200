// Package cluster is a whole cluster without containers, for the suites that need what
// kube-apiserver + etcd alone lack (issue #44): kube-controller-manager with every default
// controller (garbage collector, namespace, Deployment/ReplicaSet, Job, ServiceAccount and its
// tokens, kube-root-ca.crt publisher, ...), kube-scheduler, and KWOK as the kubelet of one
// Node, so Pods are scheduled and reported Running and Ready (Pods owned by a Job end
// Succeeded) without any container running. All binaries come from `make cluster-bins`.
//
// On it: OLM v0 from our catalog (StartOLM, olm.go; its bundle unpack stand-in, olmunpack.go),
// the operator's Pod run as a process (Cluster.RunPod, podprocess.go), and what the
// whole-cluster suites (test/cluster, test/wholecluster, test/chartinstall, test/olm) and
// `make demo` share to install the operator and drive it (StartSuite, install.go). The
// helpers of every suite (resources, conditions, the fake Clever Cloud API, the audit log's
// events) are test/kube's.
package cluster

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	_ "embed"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/clever-operator/clever-operator/test/kube"
)

// ErrBinariesMissing is wrapped by Start's error when a binary is not built: suites skip on it
// (errors.Is) and say `make cluster-bins`.
var ErrBinariesMissing = errors.New("whole-cluster binaries missing (run `make cluster-bins`)")

// kwokStages are KWOK's default Node and Pod stages (see the file's header).
//
//go:embed testdata/kwok-stages.yaml
var kwokStages []byte

// DefaultStartTimeout bounds the start of each component.
const DefaultStartTimeout = 60 * time.Second

// Options configures Start. The zero value is a usable cluster.
type Options struct {
	// Assets is the directory holding kube-apiserver, etcd, kube-controller-manager and
	// kube-scheduler (default $KUBEBUILDER_ASSETS, else <repo>/bin/envtest/1.35.4).
	Assets string
	// Kwok is KWOK's controller binary (default <repo>/bin/kwok, linked by `make cluster-bins`).
	Kwok string
	// WorkDir receives every process's log (<component>.log), the kubeconfigs, the keys and the
	// audit log. Default: a new temporary directory, removed by Stop unless KeepWorkDir.
	WorkDir     string
	KeepWorkDir bool
	// CRDDirs are installed before Start returns (as envtest's CRDDirectoryPaths).
	CRDDirs []string
	// AuditLog makes kube-apiserver log every request at level Metadata (no bodies) as JSON
	// lines to Cluster.AuditLogPath: read them with Cluster.AuditEvents.
	AuditLog bool
	// StartTimeout bounds the start of each component (default DefaultStartTimeout).
	StartTimeout time.Duration
	// NodeName is the name of the one Node KWOK manages (default "kwok-node-0").
	NodeName string
	// Log receives progress lines (nil: silent).
	Log func(string)
}

// Cluster is a running whole cluster. Stop tears all of it down.
type Cluster struct {
	// Config is the admin's (group system:masters) client config.
	Config *rest.Config
	// KubeconfigPath is the admin's kubeconfig, for other processes (KUBECONFIG=...).
	KubeconfigPath string
	// WorkDir holds <component>.log for apiserver, etcd, kube-controller-manager,
	// kube-scheduler, kwok and every process started with StartProcess.
	WorkDir string
	// AuditLogPath is kube-apiserver's audit log (Options.AuditLog; else "").
	AuditLogPath string
	// NodeName is the Node KWOK manages.
	NodeName string
	// Env is the envtest environment running kube-apiserver and etcd.
	Env *envtest.Environment

	opts    Options
	base    *rest.Config // envtest's, the base of every user's config
	certDir string
	mu      sync.Mutex
	procs   []*Process
	logs    []*os.File
	stopped bool
}

// Process is a process of the cluster (see StartProcess).
type Process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error // set before done is closed
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the process's exit error once Done is closed (nil: exit status 0).
func (p *Process) Err() error { return p.err }

// Stop sends the process (and its process group) SIGTERM, then SIGKILL after 10 s, and waits
// for it to exit. A stopped process can be started again with StartProcess (same name: its
// log is appended to).
func (p *Process) Stop() { stopProcess(p) }

// Start starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and KWOK with one
// Node, and returns once each is healthy: the controller-manager's controllers have made the
// default ServiceAccount and kube-root-ca.crt of namespace default, and KWOK has made the Node
// Ready. On error everything started is stopped, and the error carries the last log lines of
// the component that failed.
func Start(opts Options) (c *Cluster, err error) {
	if opts.StartTimeout == 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.NodeName == "" {
		opts.NodeName = "kwok-node-0"
	}
	if opts.Log == nil {
		opts.Log = func(string) {}
	}
	if err := opts.resolveBinaries(); err != nil {
		return nil, err
	}
	c = &Cluster{opts: opts, NodeName: opts.NodeName}
	started := c // c is nil once a return statement has set the results
	if opts.WorkDir == "" {
		if c.WorkDir, err = os.MkdirTemp("", "clever-cluster-"); err != nil {
			return nil, err
		}
	} else {
		if c.WorkDir, err = filepath.Abs(opts.WorkDir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(c.WorkDir, 0o755); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			started.KeepWorkDir() // the logs named in err stay readable
			_ = started.Stop()
			c, err = nil, fmt.Errorf("starting the whole cluster (logs in %s): %w", started.WorkDir, err)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	if err := c.startControlPlane(); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}

	// kube-controller-manager and kube-scheduler authenticate with client certificates of
	// the users the bootstrap RBAC policy binds to their roles, as kubeadm sets them up.
	kcmKubeconfig, err := c.userKubeconfig("system:kube-controller-manager")
	if err != nil {
		return nil, err
	}
	schedKubeconfig, err := c.userKubeconfig("system:kube-scheduler")
	if err != nil {
		return nil, err
	}
	caFile := filepath.Join(c.WorkDir, "ca.crt")
	if err := os.WriteFile(caFile, c.Config.CAData, 0o644); err != nil {
		return nil, err
	}

	opts.Log("starting kube-controller-manager")
	kcmPort, err := freePort()
	if err != nil {
		return nil, err
	}
	kcm, err := c.StartProcess("kube-controller-manager", filepath.Join(opts.Assets, "kube-controller-manager"), []string{
		"--kubeconfig=" + kcmKubeconfig,
		"--authentication-kubeconfig=" + kcmKubeconfig,
		"--authorization-kubeconfig=" + kcmKubeconfig,
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + filepath.Join(c.certDir, "sa-signer.key"),
		"--root-ca-file=" + caFile,
		"--controllers=*",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(kcmPort),
		"--cert-dir=" + filepath.Join(c.WorkDir, "kube-controller-manager-certs"),
		"--kube-api-qps=100",
		"--kube-api-burst=200",
		"--v=2",
	})
	if err != nil {
		return nil, err
	}

	opts.Log("starting kube-scheduler")
	schedPort, err := freePort()
	if err != nil {
		return nil, err
	}
	sched, err := c.StartProcess("kube-scheduler", filepath.Join(opts.Assets, "kube-scheduler"), []string{
		"--kubeconfig=" + schedKubeconfig,
		"--authentication-kubeconfig=" + schedKubeconfig,
		"--authorization-kubeconfig=" + schedKubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(schedPort),
		"--cert-dir=" + filepath.Join(c.WorkDir, "kube-scheduler-certs"),
		"--v=2",
	})
	if err != nil {
		return nil, err
	}

	opts.Log("starting kwok")
	stages := filepath.Join(c.WorkDir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, kwokStages, 0o644); err != nil {
		return nil, err
	}
	kwok, err := c.StartProcess("kwok", opts.Kwok, []string{
		"--kubeconfig=" + c.KubeconfigPath,
		"--config=" + stages,
		"--manage-all-nodes=true",
		"--node-lease-duration-seconds=40",
		"--cidr=10.244.0.0/16",
	})
	if err != nil {
		return nil, err
	}

	if err := c.waitHealthz(ctx, kcm, kcmPort); err != nil {
		return nil, err
	}
	if err := c.waitHealthz(ctx, sched, schedPort); err != nil {
		return nil, err
	}
	// The controllers run: the serviceaccount and root-ca-cert-publisher controllers fill
	// namespace default.
	if err := c.waitFor(ctx, kcm, "the default ServiceAccount and kube-root-ca.crt in namespace default", func(ctx context.Context) (bool, error) {
		if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return false, nil
		}
		_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return nil, err
	}

	opts.Log("creating Node " + opts.NodeName + " (managed by kwok)")
	if _, err := cs.CoreV1().Nodes().Create(ctx, c.node(), metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating Node %s: %w", opts.NodeName, err)
	}
	if err := c.waitFor(ctx, kwok, "Node "+opts.NodeName+" Ready", func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, opts.NodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	}); err != nil {
		return nil, err
	}
	opts.Log("cluster up; logs in " + c.WorkDir)
	return c, nil
}

// CheckBinaries returns an error wrapping ErrBinariesMissing, naming the missing files, when a
// binary Start(opts) needs is not built; nil when all are there.
func CheckBinaries(opts Options) error { return opts.resolveBinaries() }

// resolveBinaries fills in the default paths and checks that every binary exists.
func (o *Options) resolveBinaries() error {
	root, err := kube.RepoRoot()
	if err != nil {
		return err
	}
	if o.Assets, err = kube.AssetsDirOr(o.Assets); err != nil {
		return err
	}
	if o.Kwok == "" {
		o.Kwok = filepath.Join(root, "bin", "kwok")
	}
	var missing []string
	for _, p := range []string{
		filepath.Join(o.Assets, "etcd"),
		filepath.Join(o.Assets, "kube-apiserver"),
		filepath.Join(o.Assets, "kube-controller-manager"),
		filepath.Join(o.Assets, "kube-scheduler"),
		o.Kwok,
	} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s not found", ErrBinariesMissing, strings.Join(missing, ", "))
	}
	return nil
}

// startControlPlane starts etcd and kube-apiserver through envtest, with what a normal
// cluster's apiserver has and envtest's lacks: the default admission plugins (envtest turns
// ServiceAccount admission off) and the service-account signing key that the
// controller-manager signs tokens with. Client certificates are issued by envtest's client CA.
func (c *Cluster) startControlPlane() error {
	c.opts.Log("starting etcd and kube-apiserver")
	c.certDir = filepath.Join(c.WorkDir, "apiserver")
	if err := os.MkdirAll(c.certDir, 0o700); err != nil {
		return err
	}
	apiLog, err := c.openLog("kube-apiserver")
	if err != nil {
		return err
	}
	etcdLog, err := c.openLog("etcd")
	if err != nil {
		return err
	}
	api := &envtest.APIServer{CertDir: c.certDir, Out: apiLog, Err: apiLog, StartTimeout: c.opts.StartTimeout}
	args := api.Configure()
	args.Disable("disable-admission-plugins") // the default set, ServiceAccount included
	args.Set("service-account-issuer", "https://kubernetes.default.svc.cluster.local")
	args.Set("service-account-key-file", filepath.Join(c.certDir, "sa-signer.crt"))
	args.Set("service-account-signing-key-file", filepath.Join(c.certDir, "sa-signer.key"))
	args.Set("authorization-mode", "RBAC")
	// The front proxy (request header) CA and client, as kubeadm sets them: the
	// controller-manager's and scheduler's delegated authentication read them, and
	// kube-apiserver proxies to aggregated APIs with that client.
	if err := c.writeFrontProxyPKI(); err != nil {
		return err
	}
	args.Set("requestheader-client-ca-file", filepath.Join(c.certDir, "front-proxy-ca.crt"))
	args.Set("requestheader-allowed-names", "front-proxy-client")
	args.Set("requestheader-username-headers", "X-Remote-User")
	args.Set("requestheader-group-headers", "X-Remote-Group")
	args.Set("requestheader-extra-headers-prefix", "X-Remote-Extra-")
	args.Set("proxy-client-cert-file", filepath.Join(c.certDir, "front-proxy-client.crt"))
	args.Set("proxy-client-key-file", filepath.Join(c.certDir, "front-proxy-client.key"))
	args.Set("v", "1")
	if c.opts.AuditLog {
		policy := filepath.Join(c.WorkDir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(clusterAuditPolicy), 0o644); err != nil {
			return err
		}
		c.AuditLogPath = filepath.Join(c.WorkDir, "audit.log")
		args.Set("audit-policy-file", policy).
			Set("audit-log-path", c.AuditLogPath).
			Set("audit-log-format", "json").
			Set("audit-log-mode", "blocking").
			Set("audit-log-maxsize", "0")
	}
	c.Env = &envtest.Environment{
		BinaryAssetsDirectory:    c.opts.Assets,
		CRDDirectoryPaths:        c.opts.CRDDirs,
		ErrorIfCRDPathMissing:    len(c.opts.CRDDirs) > 0,
		ControlPlaneStartTimeout: c.opts.StartTimeout,
		ControlPlane: envtest.ControlPlane{
			APIServer: api,
			Etcd:      &envtest.Etcd{Out: etcdLog, Err: etcdLog, StartTimeout: c.opts.StartTimeout},
		},
	}
	base, err := c.Env.Start()
	if err != nil {
		return fmt.Errorf("starting etcd and kube-apiserver: %w\n%s", err, c.LogTails(20, "etcd", "kube-apiserver"))
	}
	c.base = base
	user, err := c.Env.AddUser(envtest.User{Name: "cluster-admin", Groups: []string{"system:masters"}}, base)
	if err != nil {
		return err
	}
	c.Config = rest.CopyConfig(user.Config())
	c.Config.QPS, c.Config.Burst = 100, 200
	c.KubeconfigPath = filepath.Join(c.WorkDir, "kubeconfig")
	return WriteKubeconfig(c.KubeconfigPath, c.Config, "")
}

// writeFrontProxyPKI writes front-proxy-ca.crt and front-proxy-client.{crt,key} (ECDSA P-256,
// valid a day) into the apiserver's directory.
func (c *Cluster) writeFrontProxyPKI() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "front-proxy-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "front-proxy-client"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	for name, block := range map[string]*pem.Block{
		"front-proxy-ca.crt":     {Type: "CERTIFICATE", Bytes: caDER},
		"front-proxy-client.crt": {Type: "CERTIFICATE", Bytes: der},
		"front-proxy-client.key": {Type: "PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(c.certDir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// userKubeconfig writes a kubeconfig with a client certificate of user name (no groups) and
// returns its path.
func (c *Cluster) userKubeconfig(name string) (string, error) {
	u, err := c.Env.AddUser(envtest.User{Name: name}, c.base)
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.WorkDir, "kubeconfig-"+strings.ReplaceAll(name, ":", "-"))
	return path, WriteKubeconfig(path, u.Config(), "")
}

// node is the Node KWOK manages: room for every Pod a suite makes, no taint.
func (c *Cluster) node() *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("250"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: c.NodeName,
			Labels: map[string]string{
				"kubernetes.io/hostname": c.NodeName,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
			Annotations: map[string]string{
				"kwok.x-k8s.io/node":           "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
		},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res},
	}
}

// StartProcess runs binary with args as part of the cluster (output to <WorkDir>/<name>.log,
// environment: this process's plus env), stopped by Stop in reverse start order. For
// processes a suite adds to the cluster, such as OLM's operators or the operator itself.
func (c *Cluster) StartProcess(name, binary string, args []string, env ...string) (*Process, error) {
	return c.startProcess(name, binary, args, append(os.Environ(), env...))
}

// Stop stops every process (those of StartProcess first, newest first, then kwok, the
// scheduler, the controller-manager, kube-apiserver and etcd), each with SIGTERM, then SIGKILL
// after 10 s, and removes WorkDir unless KeepWorkDir. Safe to call more than once.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	procs := c.procs
	keep := c.opts.KeepWorkDir
	c.mu.Unlock()
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		stopProcess(procs[i])
	}
	if c.Env != nil {
		if err := c.Env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping etcd and kube-apiserver: %w", err))
		}
	}
	for _, f := range c.logs {
		_ = f.Close()
	}
	if !keep && c.WorkDir != "" && len(errs) == 0 {
		errs = append(errs, os.RemoveAll(c.WorkDir))
	}
	return errors.Join(errs...)
}

func stopProcess(p *Process) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	// Anything the process started and left in its group.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// TokenConfig issues a token for ServiceAccount namespace/serviceAccount through the
// TokenRequest API (valid 1 h, the API's default audience) and returns a client config that
// carries only that token and the cluster's CA: a client acting with exactly that
// ServiceAccount's RBAC, as a Pod running under it would.
func (c *Cluster) TokenConfig(ctx context.Context, namespace, serviceAccount string) (*rest.Config, error) {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	exp := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("TokenRequest for ServiceAccount %s/%s: %w", namespace, serviceAccount, err)
	}
	return &rest.Config{
		Host:            c.Config.Host,
		BearerToken:     tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.Config.CAData},
		QPS:             c.Config.QPS,
		Burst:           c.Config.Burst,
	}, nil
}

// TokenKubeconfig writes a kubeconfig (path) holding TokenConfig's token, its context's
// namespace set to namespace: what a process standing in for a Pod of that ServiceAccount
// runs with (KUBECONFIG=path).
func (c *Cluster) TokenKubeconfig(ctx context.Context, namespace, serviceAccount, path string) error {
	cfg, err := c.TokenConfig(ctx, namespace, serviceAccount)
	if err != nil {
		return err
	}
	return WriteKubeconfig(path, cfg, namespace)
}

// WriteKubeconfig writes cfg (server, CA, and its client certificate or bearer token) as a
// kubeconfig file (mode 0600) whose one context has namespace (may be empty).
func WriteKubeconfig(path string, cfg *rest.Config, namespace string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["cluster"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
	}
	kc.Contexts["default"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "user", Namespace: namespace}
	kc.CurrentContext = "default"
	b, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// KeepWorkDir makes Stop leave WorkDir (logs, audit log) in place, e.g. after a failure.
func (c *Cluster) KeepWorkDir() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opts.KeepWorkDir = true
}

// LogPath is the log file of a component ("kube-apiserver", "etcd", "kube-controller-manager",
// "kube-scheduler", "kwok") or of a process started with StartProcess.
func (c *Cluster) LogPath(name string) string { return filepath.Join(c.WorkDir, name+".log") }

// LogTails returns the last n lines of the named components' logs (all five when none is
// named), each under a header with its path: for failure messages.
func (c *Cluster) LogTails(n int, names ...string) string {
	if len(names) == 0 {
		names = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}
	}
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "--- last %d lines of %s\n%s", n, c.LogPath(name), tail(c.LogPath(name), n))
	}
	return b.String()
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")\n"
	}
	lines := strings.SplitAfter(string(bytes.TrimRight(b, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "") + "\n"
}

func (c *Cluster) openLog(name string) (*os.File, error) {
	f, err := os.OpenFile(c.LogPath(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.logs = append(c.logs, f)
	c.mu.Unlock()
	return f, nil
}

// waitHealthz waits for https://127.0.0.1:port/healthz of p to answer 200.
func (c *Cluster) waitHealthz(ctx context.Context, p *Process, port int) error {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a local self-signed serving cert
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
	return c.waitFor(ctx, p, url, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, nil
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// waitFor polls cond every 250 ms for StartTimeout; it fails at once when p exits, and its
// error names what it waited for and ends with p's last log lines.
func (c *Cluster) waitFor(ctx context.Context, p *Process, what string, cond func(context.Context) (bool, error)) error {
	deadline := time.Now().Add(c.opts.StartTimeout)
	for {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v) while waiting for %s\n%s", p.name, p.err, what, c.LogTails(30, p.name))
		default:
		}
		ok, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not healthy after %s (waiting for %s)\n%s", p.name, c.opts.StartTimeout, what, c.LogTails(30, p.name))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// clusterAuditPolicy logs every request at level Metadata (who, verb, object, response code;
// no bodies, so no Secret value), once per stage past RequestReceived.
const clusterAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// AuditOffset is the audit log's current size: AuditEvents(offset) reads what comes after.
func (c *Cluster) AuditOffset() (int64, error) {
	if c.AuditLogPath == "" {
		return 0, errors.New("the cluster was started without Options.AuditLog")
	}
	return kube.AuditLogSize(c.AuditLogPath)
}

// AuditEvents returns the audit events logged from offset on (complete lines only; pass 0 for
// all) and the offset after the last one.
func (c *Cluster) AuditEvents(offset int64) ([]kube.AuditEvent, int64, error) {
	if c.AuditLogPath == "" {
		return nil, offset, errors.New("the cluster was started without Options.AuditLog")
	}
	return kube.ReadAuditLog[kube.AuditEvent](c.AuditLogPath, offset, nil)
}
