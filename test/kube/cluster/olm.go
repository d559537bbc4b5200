package cluster

// OLM v0 (operator-lifecycle-manager's olm and catalog operators, built by `make olm-bins`)
// run as plain processes against a cluster's kube-apiserver, the way OLM's own manifests
// (deploy/chart of the OLM module) run them as Deployments:
//
//   - CRDs: the eight of deploy/chart/crds, copied by `make olm-bins` from the module
//     source into bin/olm-crds (CatalogSource, ClusterServiceVersion, InstallPlan, OLMConfig,
//     OperatorCondition, OperatorGroup, Operator, Subscription).
//   - Objects of the chart that OLM needs and does not create itself: the namespaces "olm"
//     (OLM's own, and the global catalog namespace: a CatalogSource there serves every
//     namespace) and "operators", the OperatorGroup "global-operators" in "operators" (no
//     selector: AllNamespaces), and the OLMConfig "cluster". Not created: packageserver (the
//     aggregated packagemanifests API, its CSV and APIService), the "olm-operators"
//     OperatorGroup that only packageserver uses, the aggregated user ClusterRoles, the
//     operatorhub CatalogSource and the NetworkPolicies.
//   - olm (the CSV/OperatorGroup controller): `olm --namespace olm`, as the chart's
//     `--namespace $(OPERATOR_NAMESPACE)`; it reads no other environment but KUBECONFIG
//     (controller-runtime's GetConfig: without it, in-cluster config). The chart's
//     OPERATOR_NAME env is set too, though nothing reads it.
//   - catalog (catalogs, Subscriptions, InstallPlans): `catalog --namespace olm
//     --kubeconfig <path> --set-workload-user-id=true` (the chart's upstream values); it
//     reads GLOBAL_CATALOG_NAMESPACE (overrides --namespace; left unset). The images of
//     -configmapServerImage (ConfigMap catalogs), -opmImage (the unpack Job's "extract"
//     container) and -util-image (its "util" init container) keep OLM's built-in defaults
//     unless OLMOptions sets them: no container ever runs them here.
//   - --writeStatusName "" for both (no OpenShift ClusterOperator; also the default).
//   - Neither operator has leader election. olm's controller-runtime metrics server is off
//     (BindAddress "0", hard-coded). Both always serve /healthz, /metrics and pprof over HTTP
//     on :8080 (hard-coded; TLS only with --tls-cert/--tls-key, not given): the second to
//     start logs "address already in use" and runs on, so readiness is not read from
//     /healthz but from the API (see StartOLM).
//
// A bundle with an image (every olm.bundle of a catalog made by `make catalog`) is unpacked
// by a Job whose container cannot run without a container runtime: see olmunpack.go for the
// stand-in.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
)

// OLM's API groups and versions, for unstructured objects.
var (
	OperatorGroupGVK = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1", Kind: "OperatorGroup"}
	OLMConfigGVK     = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1", Kind: "OLMConfig"}
	CatalogSourceGVK = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "CatalogSource"}
	SubscriptionGVK  = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "Subscription"}
	InstallPlanGVK   = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "InstallPlan"}
	CSVGVK           = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "ClusterServiceVersion"}
)

// ErrOLMBinariesMissing is wrapped by StartOLM's error when bin/olm, bin/catalog, bin/opm or
// bin/olm-crds is missing: suites skip on it (errors.Is) and say `make olm-bins`.
var ErrOLMBinariesMissing = errors.New("OLM binaries missing (run `make olm-bins`)")

// OLMOptions configures StartOLM. The zero value runs OLM as its upstream chart does.
type OLMOptions struct {
	// BinDir holds olm, catalog and olm-crds/ (links made by `make olm-bins`) and opm (the
	// unpack stand-in's; also linked by `make olm-bins`). Default: <repo>/bin.
	BinDir string
	// LogDir receives olm.log, catalog.log and unpack.log (each unpack's opm output).
	// Default: a new temporary directory (kept: Stop does not remove it).
	LogDir string
	// Namespace is OLM's namespace and the global catalog namespace (default "olm").
	Namespace string
	// OperatorsNamespace holds the global OperatorGroup "global-operators" (default "operators").
	OperatorsNamespace string
	// Bundles maps a bundle image, as a catalog's olm.bundle names it, to the directory
	// holding what that image holds (manifests/ and metadata/: bundle.Dockerfile copies
	// bundle/ of the repository). The unpack stand-in refuses any other image.
	Bundles map[string]string
	// OPMImage, UtilImage and ConfigMapServerImage are the catalog operator's -opmImage,
	// -util-image and -configmapServerImage (empty: OLM's defaults).
	OPMImage, UtilImage, ConfigMapServerImage string
	// Debug passes --debug to both operators.
	Debug bool
	// ReadyTimeout bounds StartOLM's wait for both operators (default 2 min).
	ReadyTimeout time.Duration
	// Log receives progress lines (nil: silent).
	Log func(string)
}

// OLM is OLM v0 running against a cluster. Stop stops both operators and the unpack
// stand-in (the CRDs and objects stay).
type OLM struct {
	Namespace, OperatorsNamespace string
	// LogDir holds olm.log, catalog.log and unpack.log.
	LogDir string
	// Config is the admin client config read from the kubeconfig StartOLM was given.
	Config *rest.Config
	Client client.Client

	opts     OLMOptions
	procs    []*olmProc
	unpacker *bundleUnpacker
	stopOnce sync.Once
}

type olmProc struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error
}

// StartOLM installs OLM's CRDs and objects (idempotent: existing ones are kept), starts the
// olm and catalog operators with KUBECONFIG=kubeconfigPath (an admin kubeconfig: OLM's
// ServiceAccount is cluster-admin in OLM's own manifests), starts the bundle unpack stand-in,
// and returns once both operators act: olm has written the global OperatorGroup's status, and
// catalog has recorded the probe CatalogSource "olm-ready-probe" (an address no one serves,
// deleted again) in its status.
func StartOLM(ctx context.Context, kubeconfigPath string, opts OLMOptions) (o *OLM, err error) {
	start := time.Now()
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfigPath, err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	o = &OLM{Namespace: opts.Namespace, OperatorsNamespace: opts.OperatorsNamespace, LogDir: opts.LogDir, Config: cfg, Client: c, opts: opts}
	defer func() {
		if err != nil {
			o.Stop()
			err = fmt.Errorf("%w (OLM logs in %s)", err, opts.LogDir)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, opts.ReadyTimeout)
	defer cancel()

	if err := o.installCRDs(ctx); err != nil {
		return o, err
	}
	if err := o.installObjects(ctx); err != nil {
		return o, err
	}
	o.logf("OLM CRDs and objects installed (%s)", time.Since(start).Round(time.Millisecond))

	env := []string{"KUBECONFIG=" + kubeconfigPath}
	olmArgs := []string{"--namespace", opts.Namespace, "--writeStatusName", ""}
	catArgs := []string{"--namespace", opts.Namespace, "--kubeconfig", kubeconfigPath, "--writeStatusName", "", "--set-workload-user-id=true"}
	for flag, v := range map[string]string{"-opmImage": opts.OPMImage, "-util-image": opts.UtilImage, "-configmapServerImage": opts.ConfigMapServerImage} {
		if v != "" {
			catArgs = append(catArgs, flag+"="+v)
		}
	}
	if opts.Debug {
		olmArgs = append(olmArgs, "--debug")
		catArgs = append(catArgs, "--debug")
	}
	if err := o.startProc("olm", filepath.Join(opts.BinDir, "olm"), olmArgs, append(env, "OPERATOR_NAMESPACE="+opts.Namespace, "OPERATOR_NAME=olm-operator")); err != nil {
		return o, err
	}
	if err := o.startProc("catalog", filepath.Join(opts.BinDir, "catalog"), catArgs, env); err != nil {
		return o, err
	}
	o.unpacker, err = startBundleUnpacker(cfg, filepath.Join(opts.BinDir, "opm"), filepath.Join(opts.LogDir, "unpack.log"), opts.Bundles, opts.Log)
	if err != nil {
		return o, err
	}

	if err := o.waitOLMReady(ctx); err != nil {
		return o, err
	}
	o.logf("OLM ready: olm and catalog operators act (%s since StartOLM)", time.Since(start).Round(time.Millisecond))
	return o, nil
}

// CheckOLMBinaries returns StartOLM's error for missing binaries (wrapping
// ErrOLMBinariesMissing), or nil: for a suite to skip before starting anything.
func CheckOLMBinaries(opts OLMOptions) error {
	opts.LogDir = os.DevNull // not created
	return opts.defaults()
}

func (opts *OLMOptions) defaults() error {
	if opts.BinDir == "" {
		root, err := kube.RepoRoot()
		if err != nil {
			return err
		}
		opts.BinDir = filepath.Join(root, "bin")
	}
	var missing []string
	for _, f := range []string{"olm", "catalog", "opm", "olm-crds"} {
		if _, err := os.Stat(filepath.Join(opts.BinDir, f)); err != nil {
			missing = append(missing, filepath.Join(opts.BinDir, f))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s", ErrOLMBinariesMissing, strings.Join(missing, ", "))
	}
	if opts.LogDir == os.DevNull {
		return nil
	}
	if opts.LogDir == "" {
		d, err := os.MkdirTemp("", "olm-")
		if err != nil {
			return err
		}
		opts.LogDir = d
	} else if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
		return err
	}
	if opts.Namespace == "" {
		opts.Namespace = "olm"
	}
	if opts.OperatorsNamespace == "" {
		opts.OperatorsNamespace = "operators"
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 2 * time.Minute
	}
	return nil
}

func (o *OLM) logf(format string, args ...any) {
	if o.opts.Log != nil {
		o.opts.Log(fmt.Sprintf(format, args...))
	}
}

// installCRDs creates OLM's CRDs (those already there are kept) and waits until each is
// Established.
func (o *OLM) installCRDs(ctx context.Context) error {
	dir := filepath.Join(o.opts.BinDir, "olm-crds")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("%w: no CRD in %s", ErrOLMBinariesMissing, dir)
	}
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		objs, err := decodeAll(b)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, u := range objs {
			if err := o.Client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating CRD %s: %w", u.GetName(), err)
			}
			names = append(names, u.GetName())
		}
	}
	for _, name := range names {
		if err := poll(ctx, 100*time.Millisecond, func() (bool, error) {
			crd := &unstructured.Unstructured{}
			crd.SetAPIVersion("apiextensions.k8s.io/v1")
			crd.SetKind("CustomResourceDefinition")
			if err := o.Client.Get(ctx, types.NamespacedName{Name: name}, crd); err != nil {
				return false, err
			}
			return strings.HasPrefix(kube.Condition(crd, "Established"), "True/"), nil
		}); err != nil {
			return fmt.Errorf("CRD %s not Established: %w", name, err)
		}
	}
	// The client's REST mapper learns the new kinds lazily; a fresh client sees them.
	c, err := client.New(o.Config, client.Options{})
	if err != nil {
		return err
	}
	o.Client = c
	return nil
}

// installObjects creates the namespaces, the global OperatorGroup and the OLMConfig of OLM's
// chart (kept when they exist).
func (o *OLM) installObjects(ctx context.Context) error {
	for _, ns := range []string{o.Namespace, o.OperatorsNamespace} {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if err := o.Client.Create(ctx, n); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	og := NewOperatorGroup(o.OperatorsNamespace, "global-operators")
	cfg := &unstructured.Unstructured{}
	cfg.SetGroupVersionKind(OLMConfigGVK)
	cfg.SetName("cluster")
	for _, u := range []*unstructured.Unstructured{og, cfg} {
		if err := o.Client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

func (o *OLM) startProc(name, bin string, args, env []string) error {
	log, err := os.OpenFile(filepath.Join(o.LogDir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &olmProc{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	o.procs = append(o.procs, p)
	o.logf("started %s (pid %d): %s %s", name, cmd.Process.Pid, bin, strings.Join(args, " "))
	return nil
}

// exited returns an error naming the first operator process that has exited.
func (o *OLM) exited() error {
	for _, p := range o.procs {
		select {
		case <-p.done:
			return stopPolling{fmt.Errorf("%s exited: %v; last lines of %s:\n%s", p.name, p.err, p.log.Name(), lastLines(p.log.Name(), 20))}
		default:
		}
	}
	return nil
}

const readyProbe = "olm-ready-probe"

func (o *OLM) waitOLMReady(ctx context.Context) error {
	og := NewOperatorGroup(o.OperatorsNamespace, "global-operators")
	if err := poll(ctx, 200*time.Millisecond, func() (bool, error) {
		if err := o.exited(); err != nil {
			return false, err
		}
		if err := o.Client.Get(ctx, client.ObjectKeyFromObject(og), og); err != nil {
			return false, err
		}
		_, found, _ := unstructured.NestedString(og.Object, "status", "lastUpdated")
		return found, nil
	}); err != nil {
		return fmt.Errorf("olm operator: global OperatorGroup %s/%s has no status: %w", o.OperatorsNamespace, og.GetName(), err)
	}
	// The catalog operator: a CatalogSource it must record a connection attempt for.
	probe := NewGRPCCatalogSource(o.Namespace, readyProbe, "127.0.0.1:1")
	if err := o.Client.Create(ctx, probe); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	defer func() { _ = o.Client.Delete(context.Background(), probe) }()
	if err := poll(ctx, 200*time.Millisecond, func() (bool, error) {
		if err := o.exited(); err != nil {
			return false, err
		}
		if err := o.Client.Get(ctx, client.ObjectKeyFromObject(probe), probe); err != nil {
			return false, err
		}
		state, _, _ := unstructured.NestedString(probe.Object, "status", "connectionState", "lastObservedState")
		return state != "", nil
	}); err != nil {
		return fmt.Errorf("catalog operator: CatalogSource %s/%s has no connection state: %w", o.Namespace, readyProbe, err)
	}
	return nil
}

// Stop stops the unpack stand-in and both operators (SIGTERM, SIGKILL after 10 s). nil-safe
// and idempotent. The log files stay.
func (o *OLM) Stop() {
	if o == nil {
		return
	}
	o.stopOnce.Do(func() {
		o.unpacker.stop()
		for i := len(o.procs) - 1; i >= 0; i-- {
			p := o.procs[i]
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
				<-p.done
			}
			p.log.Close()
		}
	})
}

// LogTails returns the last n lines of olm.log, catalog.log and unpack.log, each under its name.
func (o *OLM) LogTails(n int) string {
	var b strings.Builder
	for _, name := range []string{"olm.log", "catalog.log", "unpack.log"} {
		fmt.Fprintf(&b, "==> %s <==\n%s\n", filepath.Join(o.LogDir, name), lastLines(filepath.Join(o.LogDir, name), n))
	}
	return b.String()
}

// Unpacked returns what the unpack stand-in did, one line per unpack Job, in order.
func (o *OLM) Unpacked() []string { return o.unpacker.records() }

// ServeCatalog runs `opm serve dir` (opm: the binary, e.g. bin/opm) on a free port of
// 127.0.0.1 (opm listens on every interface), with its log in logFile, and returns once the
// gRPC port accepts connections (opm listens only after loading the catalog). addr is what a
// CatalogSource's spec.address takes. stop kills opm (idempotent).
func ServeCatalog(opm, dir, logFile string) (addr string, stop func(), err error) {
	port, err := olmFreePort()
	if err != nil {
		return "", nil, err
	}
	log, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(opm, "serve", dir, "--port", strconv.Itoa(port), "--pprof-addr", "",
		"--termination-log", logFile+".termination")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return "", nil, fmt.Errorf("starting opm serve: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
			log.Close()
		})
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case <-done:
			stop()
			return "", nil, fmt.Errorf("opm serve %s exited; last lines of %s:\n%s", dir, logFile, lastLines(logFile, 20))
		default:
		}
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return addr, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("opm serve %s: %s not accepting connections after 2 min", dir, addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// NewGRPCCatalogSource returns a CatalogSource of sourceType grpc whose registry is the
// server at address (host:port): OLM connects to it directly and runs no registry Pod.
func NewGRPCCatalogSource(ns, name, address string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"sourceType":  "grpc",
			"address":     address,
			"displayName": name,
		},
	}}
	u.SetGroupVersionKind(CatalogSourceGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// CreateGRPCCatalogSource creates NewGRPCCatalogSource(ns, name, address) and waits until the
// catalog operator reports its connection READY; it returns the CatalogSource as last read.
func CreateGRPCCatalogSource(ctx context.Context, c client.Client, ns, name, address string) (*unstructured.Unstructured, error) {
	cs := NewGRPCCatalogSource(ns, name, address)
	if err := c.Create(ctx, cs); err != nil {
		return nil, err
	}
	var state string
	err := poll(ctx, 200*time.Millisecond, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cs), cs); err != nil {
			return false, err
		}
		state, _, _ = unstructured.NestedString(cs.Object, "status", "connectionState", "lastObservedState")
		return state == "READY", nil
	})
	if err != nil {
		return cs, fmt.Errorf("CatalogSource %s/%s at %s not READY (last state %q): %w", ns, name, address, state, err)
	}
	return cs, nil
}

// NewOperatorGroup returns an OperatorGroup; with no targetNamespaces it selects every
// namespace (install mode AllNamespaces), with its own namespace only: OwnNamespace.
func NewOperatorGroup(ns, name string, targetNamespaces ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(OperatorGroupGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	if len(targetNamespaces) > 0 {
		t := make([]any, len(targetNamespaces))
		for i, n := range targetNamespaces {
			t[i] = n
		}
		u.Object["spec"] = map[string]any{"targetNamespaces": t}
	}
	return u
}

// NewSubscription returns a Subscription to package in channel of CatalogSource
// catalogNS/catalog, with installPlanApproval "Automatic" or "Manual".
func NewSubscription(ns, name, pkg, channel, catalog, catalogNS, approval string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"name":                pkg,
			"channel":             channel,
			"source":              catalog,
			"sourceNamespace":     catalogNS,
			"installPlanApproval": approval,
		},
	}}
	u.SetGroupVersionKind(SubscriptionGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// poll calls cond every interval until it returns true, or an error wrapped by stopPolling,
// or ctx ends (then the error says the last error cond returned, if any: errors are retried).
func poll(ctx context.Context, interval time.Duration, cond func() (bool, error)) error {
	var last error
	for {
		ok, err := cond()
		var stop stopPolling
		if errors.As(err, &stop) {
			return stop.error
		}
		if err != nil {
			last = err
		} else if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
			}
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// stopPolling wraps an error that ends poll at once.
type stopPolling struct{ error }

func olmFreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lastLines returns the last n lines of the file at path (best effort).
func lastLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// decodeAll returns the objects of a multi-document YAML or JSON stream, skipping empty
// documents (kube.Decode's error-returning twin, for code outside a spec).
func decodeAll(manifest []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for {
		var m map[string]any
		err := d.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}
