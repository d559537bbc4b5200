// Package olm_test installs the operator through real OLM v0 from the catalog we ship (issue
// #44, point 2): on the whole cluster of kube.StartCluster (kube-apiserver, etcd,
// kube-controller-manager, kube-scheduler, KWOK), OLM's olm and catalog operators run as
// processes (kube.StartOLM), `opm serve catalog/` serves the real catalog/ directory through a
// grpc CatalogSource with spec.address (no registry Pod), and the bundle's unpack Job, whose
// container cannot run here, is stood in for by running its own `opm alpha bundle extract`
// on bundle/ (see test/kube/olmunpack.go). Per install mode: OperatorGroup, Subscription,
// InstallPlan created and approved, CSV Succeeded, Deployment Available with the bundle's
// image, args and resources.
//
// Not proven here: the images themselves (that the bundle image holds bundle/, the operator
// image), pulling them, the kubelet, probes against a running container (KWOK reports the
// Pod Ready). The operator's own run as the ServiceAccount OLM created is not in this suite yet.
//
// The binaries come from `make cluster-bins olm-bins`; without them the suite is skipped. On
// its own:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/envtest/1.35.4 go test ./test/olm -count=1 -v
package olm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/harness"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestOLM(t *testing.T) {
	for _, err := range []error{kube.CheckClusterBinaries(kube.ClusterOptions{}), kube.CheckOLMBinaries(kube.OLMOptions{})} {
		if err != nil {
			t.Skip(err.Error()) // shown by go test -v; BeforeSuite skips on it too
		}
	}
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(5 * time.Minute)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	RunSpecs(t, "OLM install suite (real OLM v0 from catalog/ on the whole cluster)")
}

const catalogSource = "clever-operator-catalog"

var (
	cluster *kube.Cluster
	olm     *kube.OLM
	k8s     client.Client
	// From catalog/: the package, its default channel, and its one bundle (CSV name, image).
	pkg, channel, csvName, bundleImage string
	// From bundle/: the Deployment the CSV installs.
	wantDeployment *appsv1.Deployment
)

var _ = BeforeSuite(func(ctx SpecContext) {
	root, err := harness.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	Expect(os.Chdir(root)).To(Succeed())
	readCatalog()

	start := time.Now()
	cluster, err = kube.StartCluster(kube.ClusterOptions{Log: func(s string) { GinkgoWriter.Println(s) }})
	if errors.Is(err, kube.ErrClusterBinariesMissing) {
		Skip(err.Error())
	}
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cluster.Stop()).To(Succeed()) })
	clusterUp := time.Since(start)

	start = time.Now()
	olm, err = kube.StartOLM(ctx, cluster.KubeconfigPath, kube.OLMOptions{
		LogDir:  filepath.Join(cluster.WorkDir, "olm"),
		Bundles: map[string]string{bundleImage: "bundle"},
		Log:     func(s string) { GinkgoWriter.Println(s) },
	})
	if errors.Is(err, kube.ErrOLMBinariesMissing) {
		Skip(err.Error())
	}
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(olm.Stop)
	k8s = olm.Client
	olmUp := time.Since(start)

	start = time.Now()
	addr, stop, err := kube.ServeCatalog(filepath.Join("bin", "opm"), "catalog", filepath.Join(olm.LogDir, "opm-serve.log"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(stop)
	_, err = kube.CreateGRPCCatalogSource(ctx, k8s, olm.Namespace, catalogSource, addr)
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("startup", fmt.Sprintf("cluster %s, OLM %s, opm serve catalog/ + CatalogSource READY %s (logs: %s)",
		clusterUp.Round(time.Millisecond), olmUp.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), cluster.WorkDir))
}, NodeTimeout(10*time.Minute))

// On a failure, keep the cluster's logs and show the end of OLM's and the cluster's.
var _ = AfterEach(func() {
	if CurrentSpecReport().Failed() && cluster != nil {
		cluster.KeepWorkDir()
		if olm != nil {
			AddReportEntry("OLM logs", olm.LogTails(40))
		}
		AddReportEntry("cluster logs", cluster.LogTails(20))
	}
})

// readCatalog reads the package, channel and bundle from catalog/ and the Deployment from
// bundle/'s CSV: what OLM must end up running.
func readCatalog() {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join("catalog", "*", "index.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).To(HaveLen(1), "catalog/ holds one package")
	b, err := os.ReadFile(files[0])
	Expect(err).NotTo(HaveOccurred())
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else {
			Expect(err).NotTo(HaveOccurred(), "decoding %s", files[0])
		}
		switch u.Object["schema"] {
		case "olm.package":
			pkg, channel = str(u, "name"), str(u, "defaultChannel")
		case "olm.bundle":
			Expect(csvName).To(BeEmpty(), "catalog/ holds one bundle")
			csvName, bundleImage = str(u, "name"), str(u, "image")
		}
	}
	Expect([]string{pkg, channel, csvName, bundleImage}).NotTo(ContainElement(""), "catalog/ names a package, default channel, bundle and image")

	b, err = os.ReadFile(filepath.Join("bundle", "manifests", pkg+".clusterserviceversion.yaml"))
	Expect(err).NotTo(HaveOccurred())
	csv := kube.Decode(b)[0]
	deps, _, _ := unstructured.NestedSlice(csv.Object, "spec", "install", "spec", "deployments")
	Expect(deps).To(HaveLen(1))
	d := deps[0].(map[string]any)
	wantDeployment = &appsv1.Deployment{}
	Expect(runtimeConvert(d["spec"], &wantDeployment.Spec)).To(Succeed())
	wantDeployment.Name = d["name"].(string)
}

func str(u *unstructured.Unstructured, name string) string {
	s, _ := u.Object[name].(string)
	return s
}

// field returns the string at path in u ("" when absent).
func field(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

var _ = Describe("OLM install from catalog/", Ordered, func() {
	// install subscribes ns to the package with approval, approves the InstallPlan when
	// Manual, and waits for the CSV and the Deployment; it reports the timings.
	install := func(ctx context.Context, ns, mode, approval string) {
		start := time.Now()
		since := func() string { return time.Since(start).Round(100 * time.Millisecond).String() }
		sub := kube.NewSubscription(ns, pkg, pkg, channel, catalogSource, olm.Namespace, approval)
		Expect(k8s.Create(ctx, sub)).To(Succeed())

		By("the InstallPlan is created for " + csvName)
		var ip *unstructured.Unstructured
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sub), sub)).To(Succeed())
			name := field(sub, "status", "installPlanRef", "name")
			g.Expect(name).NotTo(BeEmpty(), "Subscription status: %v", sub.Object["status"])
			ip = &unstructured.Unstructured{}
			ip.SetGroupVersionKind(kube.InstallPlanGVK)
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ip)).To(Succeed())
		}).Should(Succeed())
		names, _, _ := unstructured.NestedStringSlice(ip.Object, "spec", "clusterServiceVersionNames")
		Expect(names).To(ConsistOf(csvName))
		Expect(field(ip, "spec", "approval")).To(Equal(approval))
		ipCreated := since()

		if approval == "Manual" {
			By("approving the InstallPlan")
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ip), ip)).To(Succeed())
				g.Expect(field(ip, "status", "phase")).To(Equal("RequiresApproval"))
				g.Expect(unstructured.SetNestedField(ip.Object, true, "spec", "approved")).To(Succeed())
				g.Expect(k8s.Update(ctx, ip)).To(Succeed()) // retried on conflict: OLM writes it too
			}).Should(Succeed())
		}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ip), ip)).To(Succeed())
			g.Expect(field(ip, "status", "phase")).To(Equal("Complete"), "InstallPlan status: %v", ip.Object["status"])
		}).Should(Succeed())
		ipComplete := since()

		By("the CSV reaches Succeeded")
		csv := &unstructured.Unstructured{}
		csv.SetGroupVersionKind(kube.CSVGVK)
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: csvName}, csv)).To(Succeed())
			g.Expect(field(csv, "status", "phase")).To(Equal("Succeeded"),
				"CSV status: %v", csv.Object["status"])
		}).Should(Succeed())
		csvSucceeded := since()

		By("the Deployment is Available as the bundle says")
		dep := &appsv1.Deployment{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: wantDeployment.Name}, dep)).To(Succeed())
			g.Expect(deploymentAvailable(dep)).To(BeTrue(), "Deployment status: %+v", dep.Status)
		}).Should(Succeed())
		got, want := dep.Spec.Template.Spec.Containers, wantDeployment.Spec.Template.Spec.Containers
		Expect(got).To(HaveLen(len(want)))
		for i := range want {
			Expect(got[i].Image).To(Equal(want[i].Image))
			Expect(got[i].Args).To(Equal(want[i].Args))
			Expect(got[i].Resources).To(Equal(want[i].Resources))
		}
		Expect(dep.Spec.Template.Spec.ServiceAccountName).To(Equal(wantDeployment.Spec.Template.Spec.ServiceAccountName))
		Expect(dep.Spec.Template.Annotations).To(HaveKey("olm.targetNamespaces"))

		AddReportEntry(mode+" timings", fmt.Sprintf(
			"Subscription created → InstallPlan %s, InstallPlan Complete %s, CSV Succeeded %s, Deployment Available %s; unpack stand-in so far: %v",
			ipCreated, ipComplete, csvSucceeded, since(), olm.Unpacked()))
	}

	uninstall := func(ctx context.Context, ns string) {
		sub := kube.NewSubscription(ns, pkg, pkg, channel, catalogSource, olm.Namespace, "")
		csv := &unstructured.Unstructured{}
		csv.SetGroupVersionKind(kube.CSVGVK)
		csv.SetNamespace(ns)
		csv.SetName(csvName)
		for _, u := range []client.Object{sub, csv} {
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, u))).To(Succeed())
		}
		// The garbage collector removes what the CSV owns.
		Eventually(func() bool {
			err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: wantDeployment.Name}, &appsv1.Deployment{})
			return apierrors.IsNotFound(err)
		}).Should(BeTrue(), "the Deployment is deleted with its CSV")
	}

	It("installs in AllNamespaces mode: the global OperatorGroup of operators, manual approval", func(ctx SpecContext) {
		install(ctx, olm.OperatorsNamespace, "AllNamespaces", "Manual")
		DeferCleanup(uninstall, olm.OperatorsNamespace)
		dep := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: olm.OperatorsNamespace, Name: wantDeployment.Name}, dep)).To(Succeed())
		Expect(dep.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", ""))
	}, SpecTimeout(10*time.Minute))

	It("installs in OwnNamespace mode: an OperatorGroup targeting its own namespace, automatic approval", func(ctx SpecContext) {
		ns := "clever-own"
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metaName(ns)})).To(Succeed())
		Expect(k8s.Create(ctx, kube.NewOperatorGroup(ns, "clever-own", ns))).To(Succeed())
		install(ctx, ns, "OwnNamespace", "Automatic")
		DeferCleanup(uninstall, ns)
		dep := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: wantDeployment.Name}, dep)).To(Succeed())
		Expect(dep.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", ns))
	}, SpecTimeout(10*time.Minute))
})

func deploymentAvailable(d *appsv1.Deployment) bool {
	return slices.ContainsFunc(d.Status.Conditions, func(c appsv1.DeploymentCondition) bool {
		return c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue
	})
}

func metaName(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// runtimeConvert converts an object read from YAML (a map) into a typed one.
func runtimeConvert(in any, out any) error {
	m, ok := in.(map[string]any)
	if !ok {
		return fmt.Errorf("not an object: %T", in)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, out)
}
