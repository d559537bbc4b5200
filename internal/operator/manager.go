package operator

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
)

// NewManager builds the manager of the command line's Options (after Validate, with Watches
// loaded): ManagerOptions' cache layout over Namespaces, restricted to Selector and the
// watched kinds (RestrictCache), serving what Metrics, ProbeAddr and PprofAddr say, with
// leader election as asked, on the cluster of Kubeconfig (else controller-runtime's lookup:
// in-cluster, $KUBECONFIG, ~/.kube/config). It sets o.CacheGuard, which Setup arms with the
// claim key. TuneMemory is the process's side of the same start-up.
func NewManager(o *Options) (ctrl.Manager, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	o.CacheGuard = NewCacheGuard()
	mopts := ManagerOptions(scheme, o.Namespaces, o.CacheGuard)
	RestrictCache(&mopts, o.Selector, o.Watches)
	mopts.LeaderElectionID = o.LeaderElectionID
	mopts.Metrics = MetricsServerOptions(o.Metrics)
	mopts.HealthProbeBindAddress = o.ProbeAddr
	mopts.PprofBindAddress = o.PprofAddr
	mopts.LeaderElection = o.LeaderElect
	mopts.LeaderElectionNamespace = o.LeaderElectionNamespace
	restCfg, err := restConfig(o.Kubeconfig)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(restCfg, mopts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	return mgr, nil
}

// restConfig is the cluster of kubeconfig, else controller-runtime's lookup.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
		}
		if cfg.QPS == 0 {
			cfg.QPS = -1 // as ctrl.GetConfig: rely on the apiserver's priority and fairness
		}
		return cfg, nil
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no Kubernetes configuration: %w", err)
	}
	return cfg, nil
}
