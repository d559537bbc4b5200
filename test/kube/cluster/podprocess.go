package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A Pod of a whole cluster (Start) is Running under KWOK, but no container runs. A
// suite stands in for the operator's container with the operator process itself, given what
// the kubelet would give the container: PodProcess reads the Pod (as the kubelet reads it)
// and returns the container's command line and environment, resolved as the kubelet resolves
// them; Cluster.RunPod runs it with a token of the Pod's ServiceAccount. What this does not
// prove: the image itself (its files, user, entrypoint), the kubelet, probes against a running
// container, resource limits.

// PodProcess is what the container named container of pod runs with: its args (command is the
// image's entrypoint, which the caller supplies) and its environment: env (value, and
// valueFrom fieldRef, secretKeyRef, configMapKeyRef) and envFrom (Secrets and ConfigMaps,
// with their prefix), later entries winning as in the kubelet. An optional source that does
// not exist is skipped; a required one is an error, as the kubelet refuses to start the
// container.
func PodProcess(ctx context.Context, c client.Client, pod *corev1.Pod, container string) (args, env []string, err error) {
	var ctr *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == container {
			ctr = &pod.Spec.Containers[i]
		}
	}
	if ctr == nil {
		return nil, nil, fmt.Errorf("pod %s/%s has no container %q", pod.Namespace, pod.Name, container)
	}
	vars := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	for _, from := range ctr.EnvFrom {
		data, err := sourceData(ctx, c, pod.Namespace, from)
		if err != nil {
			return nil, nil, err
		}
		for k, v := range data {
			set(from.Prefix+k, v)
		}
	}
	for _, e := range ctr.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, vars))
			continue
		}
		v, ok, err := valueFrom(ctx, c, pod, e.ValueFrom)
		if err != nil {
			return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			set(e.Name, v)
		}
	}
	for _, k := range order {
		env = append(env, k+"="+vars[k])
	}
	for _, a := range append(append([]string{}, ctr.Command...)[min(len(ctr.Command), 1):], ctr.Args...) {
		args = append(args, expand(a, vars))
	}
	return args, env, nil
}

// expand replaces $(VAR) with the value of an earlier variable, as the kubelet does ($$ is a
// literal $).
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			b.WriteByte('$')
			i++
		case strings.HasPrefix(s[i:], "$("):
			end := strings.IndexByte(s[i:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+end+1])
			}
			i += end
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func sourceData(ctx context.Context, c client.Client, ns string, from corev1.EnvFromSource) (map[string]string, error) {
	out := map[string]string{}
	switch {
	case from.SecretRef != nil:
		s := &corev1.Secret{}
		err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: from.SecretRef.Name}, s)
		if apierrors.IsNotFound(err) && from.SecretRef.Optional != nil && *from.SecretRef.Optional {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("envFrom Secret %s: %w", from.SecretRef.Name, err)
		}
		for k, v := range s.Data {
			out[k] = string(v)
		}
	case from.ConfigMapRef != nil:
		cm := &corev1.ConfigMap{}
		err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: from.ConfigMapRef.Name}, cm)
		if apierrors.IsNotFound(err) && from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("envFrom ConfigMap %s: %w", from.ConfigMapRef.Name, err)
		}
		for k, v := range cm.Data {
			out[k] = v
		}
	}
	return out, nil
}

// valueFrom resolves an env var source; ok is false for an optional key that is absent.
func valueFrom(ctx context.Context, c client.Client, pod *corev1.Pod, src *corev1.EnvVarSource) (string, bool, error) {
	switch {
	case src.FieldRef != nil:
		v, err := podField(pod, src.FieldRef.FieldPath)
		return v, err == nil, err
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		s := &corev1.Secret{}
		err := c.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}, s)
		optional := ref.Optional != nil && *ref.Optional
		if err != nil {
			if apierrors.IsNotFound(err) && optional {
				return "", false, nil
			}
			return "", false, err
		}
		v, ok := s.Data[ref.Key]
		if !ok && !optional {
			return "", false, fmt.Errorf("secret %s has no key %s", ref.Name, ref.Key)
		}
		return string(v), ok, nil
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		cm := &corev1.ConfigMap{}
		err := c.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}, cm)
		optional := ref.Optional != nil && *ref.Optional
		if err != nil {
			if apierrors.IsNotFound(err) && optional {
				return "", false, nil
			}
			return "", false, err
		}
		v, ok := cm.Data[ref.Key]
		if !ok && !optional {
			return "", false, fmt.Errorf("configmap %s has no key %s", ref.Name, ref.Key)
		}
		return v, ok, nil
	}
	return "", false, fmt.Errorf("unsupported env source (resourceFieldRef): stand-in cannot resolve it")
}

// podField is a downward API field of pod.
func podField(pod *corev1.Pod, path string) (string, error) {
	switch path {
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.name":
		return pod.Name, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	}
	for _, m := range []struct {
		prefix string
		values map[string]string
	}{{"metadata.annotations", pod.Annotations}, {"metadata.labels", pod.Labels}} {
		if key, ok := strings.CutPrefix(path, m.prefix+"['"); ok {
			return m.values[strings.TrimSuffix(key, "']")], nil
		}
	}
	return "", fmt.Errorf("unsupported fieldPath %q", path)
}

// bindAddress matches the flags that bind a port on every interface (":8081"): inside a Pod
// that port is the Pod's own; on this host it is shared, so RunPod gives each a free local one.
var bindAddress = regexp.MustCompile(`^(--?[a-z-]*bind-address)=:(\d+)$`)

// RunPod runs binary as the container of pod (PodProcess: its args and environment, and
// nothing of this process's environment but PATH), with KUBECONFIG holding a token of the
// Pod's ServiceAccount (Cluster.TokenKubeconfig) and, as in a Pod, POD-private ports: each
// ":port" bind address becomes a free 127.0.0.1 port. extraArgs are appended (say why where
// a suite uses them). The working directory is this process's (the repository root for the
// operator: the image's /, where watches.yaml and helm-charts/ are). Its output goes to
// <WorkDir>/<name>.log; Cluster.Stop stops it.
func (c *Cluster) RunPod(ctx context.Context, pod *corev1.Pod, container, binary, name string, extraArgs ...string) (*Process, error) {
	args, env, err := PodProcess(ctx, c.client(), pod, container)
	if err != nil {
		return nil, err
	}
	for i, a := range args {
		if m := bindAddress.FindStringSubmatch(a); m != nil {
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			args[i] = fmt.Sprintf("%s=127.0.0.1:%d", m[1], port)
		}
	}
	args = append(args, extraArgs...)
	// The Pod's emptyDir volumes are its own: what its env points into them (HELM_*_HOME under
	// /tmp, say) goes to a directory of its own in WorkDir.
	emptyDirs := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil {
			emptyDirs[v.Name] = true
		}
	}
	for _, ctr := range pod.Spec.Containers {
		if ctr.Name != container {
			continue
		}
		for _, m := range ctr.VolumeMounts {
			if !emptyDirs[m.Name] {
				continue
			}
			dir := filepath.Join(c.WorkDir, name+"."+m.Name)
			prefix := strings.TrimSuffix(m.MountPath, "/") + "/"
			for i, e := range env {
				k, v, _ := strings.Cut(e, "=")
				if rest, ok := strings.CutPrefix(v, prefix); ok || v == strings.TrimSuffix(prefix, "/") {
					env[i] = k + "=" + filepath.Join(dir, rest)
				}
			}
		}
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	kubeconfig := filepath.Join(c.WorkDir, name+".kubeconfig")
	if err := c.TokenKubeconfig(ctx, pod.Namespace, sa, kubeconfig); err != nil {
		return nil, err
	}
	home := filepath.Join(c.WorkDir, name+".home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "KUBECONFIG=" + kubeconfig}, env...)
	p, err := c.startProcess(name, binary, args, env)
	if err != nil {
		return nil, err
	}
	go c.stopWithPod(pod, p)
	return p, nil
}

// stopWithPod stops p once pod is being deleted or gone, as the kubelet stops its container.
func (c *Cluster) stopWithPod(pod *corev1.Pod, p *Process) {
	cl := c.client()
	for {
		select {
		case <-p.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		cur := &corev1.Pod{}
		err := cl.Get(context.Background(), client.ObjectKeyFromObject(pod), cur)
		if apierrors.IsNotFound(err) || (err == nil && (cur.UID != pod.UID || cur.DeletionTimestamp != nil)) {
			p.Stop()
			return
		}
	}
}

// Kubectl is the pinned kubectl of `make cluster-bins` (bin/kubectl) when built, else the one on
// PATH. Run from the repository root.
func Kubectl() string {
	if p, err := filepath.Abs(filepath.Join("bin", "kubectl")); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "kubectl"
}

// client is an admin client of the cluster (what the kubelet's reads stand for).
func (c *Cluster) client() client.Client {
	cl, err := client.New(c.Config, client.Options{})
	if err != nil {
		panic(err)
	}
	return cl
}

// startProcess runs binary with exactly env as its environment, in its own process group (Stop
// signals the process and whatever it started), output to <WorkDir>/<name>.log.
func (c *Cluster) startProcess(name, binary string, args, env []string) (*Process, error) {
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if stopped {
		return nil, errors.New("cluster stopped")
	}
	log, err := c.openLog(name)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = env
	// Its own process group: Stop signals the process and whatever it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p, nil
}
