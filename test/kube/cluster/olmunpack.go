package cluster

// The bundle unpack stand-in: the one piece of OLM that needs a container runtime.
//
// A catalog's olm.bundle names its bundle image (`make catalog` sets BUNDLE_IMG), so OLM
// resolves it to a bundle path and not to inline content, even though the catalog also
// carries olm.bundle.object properties: OLM v0 uses the content the registry returns only
// when the bundle has no image (resolver/source_registry.go: `if o.BundlePath == ""`).
// For such a bundle the catalog operator (bundle/bundle_unpacker.go) creates, in the
// CatalogSource's namespace, a ConfigMap, a ServiceAccount, a Role allowed to
// create/get/update that one ConfigMap, a RoleBinding, and a Job whose Pod copies the
// image's content to /bundle (init containers "util" and "pull") and then runs
//
//	opm alpha bundle extract -m /bundle/ -n <namespace> -c <configmap> -z
//
// with CONTAINER_IMAGE=<bundle image>, as that ServiceAccount. It waits for the Job to be
// Complete, then reads the ConfigMap (annotations of metadata/annotations.yaml, one
// gzip+base64 key per file of manifests/) and turns it into the InstallPlan's steps.
//
// Without a container runtime nothing pulls the image and nothing runs that command, so
// this stand-in does exactly the container's work: for each unpack Job it runs the Job's
// own command with the real opm (bin/opm, `make opm`), on the directory the image is built
// from (bundle.Dockerfile copies bundle/manifests and bundle/metadata), as the Job's
// ServiceAccount (a TokenRequest token, so the Role OLM made is what allows the write),
// with the Job's CONTAINER_IMAGE. The Pod's phase is left to KWOK and the Job's to the job
// controller (KWOK's pod-complete stage ends a Job's Pod Succeeded; OLM re-reads the ConfigMap
// every 5 s until it holds the bundle, so which comes first does not matter). Chosen over reimplementing the ConfigMap format (it is opm's own
// writer, byte for byte what production writes) and over having OLM skip unpacking (a
// catalog without images would not be the catalog we ship): everything OLM does — the
// resolution from the served catalog/, the Job, the RBAC, the loader, the steps — is the
// production path. What is not exercised: pulling the image, and that the published image
// holds bundle/ (bundle.Dockerfile) — the Job's image is only checked to be the one the
// catalog names (OLMOptions.Bundles maps it to its directory; other images are refused and
// stay unpacked, as a pull failure would).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// bundleUnpackRefLabel labels OLM's unpack Jobs (bundle.BundleUnpackRefLabel).
const bundleUnpackRefLabel = "operatorframework.io/bundle-unpack-ref"

type bundleUnpacker struct {
	cfg     *rest.Config
	cs      kubernetes.Interface
	opm     string
	logPath string
	bundles map[string]string
	logf    func(string)

	mu       sync.Mutex
	recs     []string
	handled  map[types.UID]int // attempts; -1 when done
	cancel   context.CancelFunc
	finished chan struct{}
}

func startBundleUnpacker(cfg *rest.Config, opm, logPath string, bundles map[string]string, logf func(string)) (*bundleUnpacker, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	for img, dir := range bundles {
		for _, sub := range []string{"manifests", "metadata"} {
			if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
				return nil, fmt.Errorf("bundle directory %s of %s has no %s/", dir, img, sub)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	u := &bundleUnpacker{cfg: cfg, cs: cs, opm: opm, logPath: logPath, bundles: bundles, logf: logf,
		handled: map[types.UID]int{}, cancel: cancel, finished: make(chan struct{})}
	go u.run(ctx)
	return u, nil
}

func (u *bundleUnpacker) stop() {
	if u == nil {
		return
	}
	u.cancel()
	<-u.finished
}

func (u *bundleUnpacker) records() []string {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.recs)
}

func (u *bundleUnpacker) record(s string) {
	u.mu.Lock()
	u.recs = append(u.recs, s)
	u.mu.Unlock()
	if u.logf != nil {
		u.logf("bundle unpack stand-in: " + s)
	}
}

func (u *bundleUnpacker) run(ctx context.Context) {
	defer close(u.finished)
	for {
		jobs, err := u.cs.BatchV1().Jobs("").List(ctx, metav1.ListOptions{LabelSelector: bundleUnpackRefLabel})
		if err == nil {
			for i := range jobs.Items {
				job := &jobs.Items[i]
				if n := u.handled[job.UID]; n < 0 || n >= 5 {
					continue
				}
				if err := u.unpack(ctx, job); err != nil {
					u.handled[job.UID]++
					u.record(fmt.Sprintf("%s/%s: attempt %d: %v", job.Namespace, job.Name, u.handled[job.UID], err))
				} else {
					u.handled[job.UID] = -1
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// unpack does the Job's "extract" container's work.
func (u *bundleUnpacker) unpack(ctx context.Context, job *batchv1.Job) error {
	start := time.Now()
	spec := job.Spec.Template.Spec
	var extract *corev1.Container
	for i := range spec.Containers {
		if spec.Containers[i].Name == "extract" {
			extract = &spec.Containers[i]
		}
	}
	if extract == nil {
		return fmt.Errorf("no container \"extract\"")
	}
	var image string
	for _, e := range extract.Env {
		if e.Name == "CONTAINER_IMAGE" {
			image = e.Value
		}
	}
	dir, ok := u.bundles[image]
	if !ok {
		u.handled[job.UID] = 4 // no retry: the image will not appear
		return fmt.Errorf("image %q is not one of the stand-in's bundles %v: left unpacked, as a failed pull", image, sortedKeys(u.bundles))
	}
	// The command, with the content's mount replaced by the directory the image is built from.
	args := slices.Clone(extract.Command)
	if len(args) < 4 || strings.Join(args[:4], " ") != "opm alpha bundle extract" {
		return fmt.Errorf("unexpected command %q", extract.Command)
	}
	m := slices.Index(args, "-m")
	if m < 0 || m+1 >= len(args) || args[m+1] != "/bundle/" {
		return fmt.Errorf("command %q has no -m /bundle/", extract.Command)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	args[m+1] = abs + "/"
	kubeconfig, cleanup, err := u.serviceAccountKubeconfig(ctx, job.Namespace, spec.ServiceAccountName)
	if err != nil {
		return err
	}
	defer cleanup()
	args = append(args[1:], "-k", kubeconfig)

	log, err := os.OpenFile(u.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	fmt.Fprintf(log, "--- %s job %s/%s: CONTAINER_IMAGE=%s %s %s\n", time.Now().Format(time.RFC3339Nano), job.Namespace, job.Name, image, u.opm, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, u.opm, args...)
	cmd.Stdout, cmd.Stderr = log, log
	env := slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "KUBECONFIG=") })
	cmd.Env = append(env, "CONTAINER_IMAGE="+image)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("opm alpha bundle extract: %v (see %s)", err, u.logPath)
	}
	u.record(fmt.Sprintf("%s/%s: %s unpacked from %s into ConfigMap %s/%s as ServiceAccount %s (%s)",
		job.Namespace, job.Name, image, dir, job.Namespace, job.Name, spec.ServiceAccountName, time.Since(start).Round(time.Millisecond)))
	return nil
}

// serviceAccountKubeconfig writes a kubeconfig holding a TokenRequest token of ns/sa (what
// the Job's Pod would mount) and returns its path.
func (u *bundleUnpacker) serviceAccountKubeconfig(ctx context.Context, ns, sa string) (string, func(), error) {
	exp := int64(600)
	tr, err := u.cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return "", nil, fmt.Errorf("TokenRequest for ServiceAccount %s/%s: %w", ns, sa, err)
	}
	ca := u.cfg.CAData
	if len(ca) == 0 && u.cfg.CAFile != "" {
		if ca, err = os.ReadFile(u.cfg.CAFile); err != nil {
			return "", nil, err
		}
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: u.cfg.Host, CertificateAuthorityData: ca}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u", Namespace: ns}
	kc.CurrentContext = "c"
	f, err := os.CreateTemp("", "unpack-kubeconfig-")
	if err != nil {
		return "", nil, err
	}
	f.Close()
	if err := clientcmd.WriteToFile(*kc, f.Name()); err != nil {
		os.Remove(f.Name())
		return "", nil, err
	}
	return f.Name(), func() { os.Remove(f.Name()) }, nil
}
