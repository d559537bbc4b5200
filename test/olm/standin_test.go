package olm_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube/cluster"
)

// podStandIn plays the kubelet's part for the operator's Pods: for every Running Pod of the
// Deployment OLM created (the CSV's selector, in any namespace) it runs the operator binary
// with Cluster.RunPod (the container's args and env as OLM rendered them, a token of the Pod's
// ServiceAccount), stops that process when its Pod is deleted or terminating (an upgrade's
// rollout, an uninstall), and restarts a process that exits while its Pod is still there, as
// restartPolicy Always would (counted: the specs expect none).
type podStandIn struct {
	whole  *cluster.Cluster
	k8s    client.Client
	binary string
	labels map[string]string
	extra  []string

	mu       sync.Mutex
	procs    map[types.UID]*standInProc
	events   []string
	restarts int
	stopping sync.WaitGroup
	cancel   context.CancelFunc
	done     chan struct{}
}

type standInProc struct {
	ns, pod, name string
	p             *cluster.Process
}

func startPodStandIn(c *cluster.Cluster, k client.Client, binary string, labels map[string]string, extraArgs ...string) *podStandIn {
	ctx, cancel := context.WithCancel(context.Background())
	s := &podStandIn{whole: c, k8s: k, binary: binary, labels: labels, extra: extraArgs,
		procs: map[types.UID]*standInProc{}, cancel: cancel, done: make(chan struct{})}
	go s.run(ctx)
	return s
}

func (s *podStandIn) record(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, time.Now().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
}

func (s *podStandIn) run(ctx context.Context) {
	defer close(s.done)
	for {
		s.sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (s *podStandIn) sync(ctx context.Context) {
	pods := &corev1.PodList{}
	if err := s.k8s.List(ctx, pods, client.MatchingLabels(s.labels)); err != nil {
		return
	}
	live := map[types.UID]bool{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
			continue
		}
		live[pod.UID] = true
		s.mu.Lock()
		sp := s.procs[pod.UID]
		s.mu.Unlock()
		if sp != nil {
			select {
			case <-sp.p.Done():
				s.mu.Lock()
				s.restarts++
				s.mu.Unlock()
				s.record("%s/%s: process exited (%v) while its Pod runs: restarted", pod.Namespace, pod.Name, sp.p.Err())
				time.Sleep(time.Second) // the kubelet's back-off, shortened
			default:
				continue
			}
		}
		name := "operator-" + pod.Name
		p, err := s.whole.RunPod(ctx, pod, "manager", s.binary, name, s.extra...)
		if err != nil {
			s.record("%s/%s: RunPod: %v", pod.Namespace, pod.Name, err)
			continue
		}
		s.mu.Lock()
		s.procs[pod.UID] = &standInProc{ns: pod.Namespace, pod: pod.Name, name: name, p: p}
		s.mu.Unlock()
		s.record("%s/%s: operator started (log %s)", pod.Namespace, pod.Name, s.whole.LogPath(name))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid, sp := range s.procs {
		if live[uid] {
			continue
		}
		delete(s.procs, uid)
		s.stopping.Add(1)
		go func() {
			defer s.stopping.Done()
			sp.p.Stop()
			s.record("%s/%s: Pod gone: operator stopped (exit: %v)", sp.ns, sp.pod, sp.p.Err())
		}()
	}
}

// running returns the log names of the operator processes running for Pods of namespace ns.
func (s *podStandIn) running(ns string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, sp := range s.procs {
		if sp.ns == ns {
			select {
			case <-sp.p.Done():
			default:
				out = append(out, sp.name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Events returns what the stand-in did, in order.
func (s *podStandIn) Events() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

// Restarts counts the processes that exited while their Pod was running.
func (s *podStandIn) Restarts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

// Stop stops following Pods and stops every process it runs.
func (s *podStandIn) Stop() {
	s.cancel()
	<-s.done
	s.mu.Lock()
	for uid, sp := range s.procs {
		delete(s.procs, uid)
		s.stopping.Add(1)
		go func() { defer s.stopping.Done(); sp.p.Stop() }()
	}
	s.mu.Unlock()
	s.stopping.Wait()
}
