package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
	"github.com/clever-operator/clever-operator/test/kube/cluster"
)

// installThroughOLM is the --cluster demo's install: a whole cluster (kube-controller-manager,
// kube-scheduler and KWOK beside kube-apiserver and etcd), OLM v0, our catalog/ served by
// `opm serve`, and a Subscription as OperatorHub makes one; then the operator standing in for
// the Pod of the Deployment OLM created (cluster.Cluster.RunPod: the Pod's args and env, a token
// of the ServiceAccount OLM made). It returns the admin client, the cluster, the operator
// process's log, and a function that stops everything.
func installThroughOLM(ctx context.Context, assets string, fake fakeapi.Credential, endpoint, s3URL string) (client.Client, *cluster.Cluster, string, func(), error) {
	var stops []func()
	stopAll := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	fail := func(err error) (client.Client, *cluster.Cluster, string, func(), error) {
		stopAll()
		return nil, nil, "", nil, err
	}
	pkg, err := cluster.ReadCatalog("catalog")
	if err != nil {
		return fail(err)
	}
	step("starting a whole cluster: kube-apiserver, etcd, kube-controller-manager, kube-scheduler, KWOK (one Node)")
	c, err := cluster.Start(cluster.Options{Assets: assets})
	if err != nil {
		return fail(err)
	}
	stops = append(stops, func() { _ = c.Stop() })
	k8s, err := client.New(c.Config, client.Options{})
	if err != nil {
		return fail(err)
	}

	step("starting OLM v0 (olm and catalog operators) and serving catalog/ with opm serve")
	olm, err := cluster.StartOLM(ctx, c.KubeconfigPath, cluster.OLMOptions{LogDir: c.WorkDir, Bundles: map[string]string{pkg.BundleImage: "bundle"}})
	if err != nil {
		return fail(err)
	}
	stops = append(stops, olm.Stop)
	addr, stopCatalog, err := cluster.ServeCatalog(filepath.Join("bin", "opm"), "catalog", filepath.Join(c.WorkDir, "opm-serve.log"))
	if err != nil {
		return fail(err)
	}
	stops = append(stops, stopCatalog)
	const source = "clever-operator-catalog"
	if _, err := cluster.CreateGRPCCatalogSource(ctx, k8s, olm.Namespace, source, addr); err != nil {
		return fail(err)
	}

	ns := olm.OperatorsNamespace
	if err := k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "clever-operator-credentials", Namespace: ns},
		StringData: map[string]string{"CLEVER_OPERATOR_API_ENDPOINT": endpoint, "CLEVER_OPERATOR_API_CONSUMER_KEY": fake.ConsumerKey,
			"CLEVER_OPERATOR_API_CONSUMER_SECRET": fake.ConsumerSecret, "CLEVER_OPERATOR_API_TOKEN": fake.Token, "CLEVER_OPERATOR_API_SECRET": fake.Secret}}); err != nil {
		return fail(err)
	}
	step(fmt.Sprintf("subscribing to %s (channel %s) from the catalog, for all namespaces", pkg.Package, pkg.Channel))
	start := time.Now()
	if err := cluster.SubscribeAllNamespaces(ctx, olm, source, pkg, 5*time.Minute); err != nil {
		return fail(fmt.Errorf("the CSV %s did not succeed (phase %q): %w; OLM's logs in %s", pkg.CSV, cluster.CSVPhase(ctx, k8s, ns, pkg.CSV), err, olm.LogDir))
	}
	fmt.Printf("    CSV %s: %s after %s\n", pkg.CSV, cluster.CSVPhase(ctx, k8s, ns, pkg.CSV), time.Since(start).Round(100*time.Millisecond))

	var pod *corev1.Pod
	deadline := time.Now().Add(2 * time.Minute)
	for pod == nil {
		deps := &appsv1.DeploymentList{}
		if err := k8s.List(ctx, deps, client.InNamespace(ns)); err != nil {
			return fail(err)
		}
		for _, d := range deps.Items {
			for _, cond := range d.Status.Conditions {
				if cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue {
					fmt.Printf("    Deployment %s/%s: Available (%d/%d replicas)\n", ns, d.Name, d.Status.AvailableReplicas, d.Status.Replicas)
					pods := &corev1.PodList{}
					if err := k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
						return fail(err)
					}
					for i := range pods.Items {
						if pods.Items[i].Status.Phase == corev1.PodRunning {
							pod = &pods.Items[i]
						}
					}
				}
			}
		}
		if pod == nil {
			if time.Now().After(deadline) {
				return fail(fmt.Errorf("no Available Deployment with a Running Pod in %s", ns))
			}
			time.Sleep(500 * time.Millisecond)
		}
	}

	step("building the operator and running it in place of its Pod " + pod.Name + " (its args and env, a token of its ServiceAccount)")
	bin := filepath.Join(c.WorkDir, "manager")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return fail(fmt.Errorf("go build: %v: %s", err, out))
	}
	if _, err := c.RunPod(ctx, pod, pod.Spec.Containers[0].Name, bin, "operator", "--cellar-endpoint="+s3URL); err != nil {
		return fail(err)
	}
	return k8s, c, c.LogPath("operator"), stopAll, nil
}

// clusterSamples are the samples both demos apply.
func clusterSamples() ([]*unstructured.Unstructured, error) {
	samples, err := kube.Samples()
	if err != nil {
		return nil, err
	}
	generic, err := kube.AddonSample()
	if err != nil {
		return nil, err
	}
	bucket, err := kube.CellarBucketSampleObject()
	if err != nil {
		return nil, err
	}
	return append(samples, generic, bucket), nil
}
