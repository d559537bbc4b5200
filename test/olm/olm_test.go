// Package olm_test installs the operator through real OLM v0 from the catalog we ship (issue
// #44, point 2): on the whole cluster of test/kube/cluster.Start (kube-apiserver, etcd,
// kube-controller-manager, kube-scheduler, KWOK), OLM's olm and catalog operators run as
// processes (cluster.StartOLM), `opm serve catalog/` serves the real catalog/ directory through a
// grpc CatalogSource with spec.address (no registry Pod), and the bundle's unpack Job, whose
// container cannot run here, is stood in for by running its own `opm alpha bundle extract`
// on bundle/ (see test/kube/cluster/olmunpack.go). Per install mode (OwnNamespace, AllNamespaces):
// OperatorGroup, credentials Secret, Subscription, InstallPlan created and approved, CSV
// Succeeded, Deployment Available with the bundle's image, args and resources; then the
// operator, standing in for the Pod of that Deployment (podStandIn: Cluster.RunPod with the env
// OLM rendered and a token of the ServiceAccount OLM created, so only the RBAC the CSV granted),
// makes one resource of every kind Ready and deletes it, with no 403 of that ServiceAccount in
// the audit log. Upgrade: the CatalogSource is pointed at the next release's catalog (two
// versions: catalog/'s bundle and the next patch version replacing it, built from bundle/:
// upgradeCatalog), and the upgrade approved with resources in place: the new CSV Succeeded, the
// old one gone, the operator restarted for the new Pod, every resource Ready throughout and no
// add-on created or deleted. Uninstall (Subscription and CSV deleted) with resources left: they
// and their add-ons stay, as docs/operator.md says, and the next install brings the operator
// back to delete them.
//
// Not proven here: the images themselves (that the bundle image holds bundle/, the operator
// image), pulling them, the kubelet, probes against a running container (KWOK reports the
// Pod Ready). --cellar-endpoint is added to the Pod's args (CellarBuckets reach the suite's
// S3 server; the fake Cellar hosts do not exist).
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
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/admission"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
	"github.com/clever-operator/clever-operator/test/kube/cluster"
)

func TestOLM(t *testing.T) {
	for _, err := range []error{cluster.CheckBinaries(cluster.Options{}), cluster.CheckOLMBinaries(cluster.OLMOptions{})} {
		if err != nil {
			t.Skip(err.Error()) // shown by go test -v; BeforeSuite skips on it too
		}
	}
	kube.RunSuite(t, "OLM install suite (real OLM v0 from catalog/ on the whole cluster)", 5*time.Minute, 250*time.Millisecond)
}

const (
	catalogSource  = "clever-operator-catalog"
	credentialsKey = "clever-operator-credentials"
)

var (
	whole *cluster.Cluster
	olm   *cluster.OLM
	k8s   client.Client
	// From catalog/: the package, its default channel, and its one bundle (CSV name, image).
	pkg, channel, csvName, bundleImage string
	// From bundle/: the Deployment the CSV installs.
	wantDeployment *appsv1.Deployment
	// The next release's catalog: two versions (v1: catalog/'s bundle), served at upgradeAddr.
	upgrade     *upgradeCatalog
	upgradeAddr string

	suite   *kube.Suite
	fake    *fakeapi.Server
	creds   = fakeapi.Credential{ConsumerKey: "ck-olm", ConsumerSecret: "cs-olm-41c2", Token: "tk-olm-0b7e", Secret: "ts-olm-93fa"}
	apiURL  string
	s3      *kube.S3Server
	standIn *podStandIn
)

var _ = BeforeSuite(func(ctx SpecContext) {
	root, err := kube.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	Expect(os.Chdir(root)).To(Succeed())
	readCatalog()

	binDir, err := os.MkdirTemp("", "olm-suite-manager-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, binDir)
	manager := filepath.Join(binDir, "manager")
	buildDone := make(chan error, 1)
	go func() {
		if out, err := exec.Command("go", "build", "-o", manager, ".").CombinedOutput(); err != nil {
			buildDone <- fmt.Errorf("go build of the operator: %v: %s", err, out)
		}
		close(buildDone)
	}()

	start := time.Now()
	whole, k8s = cluster.StartSuite()
	clusterUp := time.Since(start)

	// The operator binary (the image's /manager, built while the cluster starts), the fake
	// Clever Cloud API and the S3 server CellarBuckets reach, and the two-version catalog.
	start = time.Now()
	Expect(<-buildDone).To(Succeed())
	f, srv := kube.NewFake(fakeapi.Options{Credentials: []fakeapi.Credential{creds}, ProvisioningDelay: 100 * time.Millisecond, Seed: 44})
	fake, apiURL = f, srv.URL
	s3 = kube.NewS3Server("")
	DeferCleanup(s3.Close)
	upgrade = buildUpgradeCatalog(whole.WorkDir)
	built := time.Since(start)

	start = time.Now()
	olm, err = cluster.StartOLM(ctx, whole.KubeconfigPath, cluster.OLMOptions{
		LogDir:  filepath.Join(whole.WorkDir, "olm"),
		Bundles: map[string]string{bundleImage: "bundle", upgrade.V2Image: upgrade.V2Bundle},
		Log:     func(s string) { GinkgoWriter.Println(s) },
	})
	if errors.Is(err, cluster.ErrOLMBinariesMissing) {
		Skip(err.Error())
	}
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(olm.Stop)
	k8s = olm.Client
	suite = &kube.Suite{Name: "test/olm", Client: k8s, Fake: fake, NamespacePrefix: "olm-res"}
	olmUp := time.Since(start)

	start = time.Now()
	addr, stop, err := cluster.ServeCatalog(filepath.Join("bin", "opm"), "catalog", filepath.Join(olm.LogDir, "opm-serve.log"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(stop)
	_, err = cluster.CreateGRPCCatalogSource(ctx, k8s, olm.Namespace, catalogSource, addr)
	Expect(err).NotTo(HaveOccurred())
	// The next release's catalog, served from the start; the CatalogSource points at it when
	// the upgrade spec publishes it.
	upgradeAddr, stop, err = cluster.ServeCatalog(filepath.Join("bin", "opm"), upgrade.Dir, filepath.Join(olm.LogDir, "opm-serve-upgrade.log"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(stop)

	standIn = startPodStandIn(whole, k8s, manager, wantDeployment.Spec.Selector.MatchLabels, "--cellar-endpoint="+s3.URL)
	DeferCleanup(standIn.Stop)
	AddReportEntry("startup", fmt.Sprintf("cluster %s, operator build + fake API + two-version catalog %s, OLM %s, opm serve catalog/ and the upgrade catalog, CatalogSource READY %s (logs: %s)",
		clusterUp.Round(time.Millisecond), built.Round(time.Millisecond), olmUp.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), whole.WorkDir))
}, NodeTimeout(10*time.Minute))

// On a failure, keep the cluster's logs and show the end of OLM's, the operator's and the
// cluster's.
var _ = AfterEach(func() {
	if CurrentSpecReport().Failed() && whole != nil {
		whole.KeepWorkDir()
		if olm != nil {
			AddReportEntry("OLM logs", olm.LogTails(40))
		}
		if standIn != nil {
			AddReportEntry("operator stand-in", strings.Join(standIn.Events(), "\n"))
			var names []string
			for _, ns := range []string{olm.OperatorsNamespace, ownNamespace} {
				names = append(names, standIn.running(ns)...)
			}
			if len(names) > 0 {
				AddReportEntry("operator logs", whole.LogTails(40, names...))
			}
		}
		AddReportEntry("cluster logs", whole.LogTails(20))
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

const ownNamespace = "clever-own"

// createCredentials creates the credentials Secret the CSV's Deployment reads (envFrom
// clever-operator-credentials, optional) in the install namespace ns, as the docs say: keys
// named after the CLEVER_OPERATOR_API_* variables, here for the suite's fake API.
func createCredentials(ctx context.Context, ns string) {
	GinkgoHelper()
	sec := cluster.OperatorCredentials(ns, apiURL, creds)
	Expect(sec.Name).To(Equal(credentialsKey))
	if err := k8s.Create(ctx, sec); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}

func getCSV(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	csv := &unstructured.Unstructured{}
	csv.SetGroupVersionKind(cluster.CSVGVK)
	return csv, k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, csv)
}

// installPlanOf waits for the Subscription's InstallPlan for csv (the one it references)
// and returns it.
func installPlanOf(ctx context.Context, sub *unstructured.Unstructured, csv string) *unstructured.Unstructured {
	GinkgoHelper()
	var ip *unstructured.Unstructured
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sub), sub)).To(Succeed())
		name := field(sub, "status", "installPlanRef", "name")
		g.Expect(name).NotTo(BeEmpty(), "Subscription status: %v", sub.Object["status"])
		ip = &unstructured.Unstructured{}
		ip.SetGroupVersionKind(cluster.InstallPlanGVK)
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: sub.GetNamespace(), Name: name}, ip)).To(Succeed())
		names, _, _ := unstructured.NestedStringSlice(ip.Object, "spec", "clusterServiceVersionNames")
		g.Expect(names).To(ConsistOf(csv), "InstallPlan %s", name)
	}).Should(Succeed())
	return ip
}

// approve approves a Manual InstallPlan once OLM asks for it.
func approve(ctx context.Context, ip *unstructured.Unstructured) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ip), ip)).To(Succeed())
		g.Expect(field(ip, "status", "phase")).To(Equal("RequiresApproval"))
		g.Expect(unstructured.SetNestedField(ip.Object, true, "spec", "approved")).To(Succeed())
		g.Expect(k8s.Update(ctx, ip)).To(Succeed()) // retried on conflict: OLM writes it too
	}).Should(Succeed())
}

// install creates sub, approves its InstallPlan when Manual, and waits for csv to be
// Succeeded and the Deployment Available with the bundle's args and resources and image; it
// reports the timings under mode and returns the InstallPlan.
func install(ctx context.Context, sub *unstructured.Unstructured, csv, image, mode string) *unstructured.Unstructured {
	GinkgoHelper()
	ns := sub.GetNamespace()
	approval := field(sub, "spec", "installPlanApproval")
	start := time.Now()
	since := func() string { return time.Since(start).Round(100 * time.Millisecond).String() }
	Expect(k8s.Create(ctx, sub)).To(Succeed())

	By(mode + ": the InstallPlan is created for " + csv)
	ip := installPlanOf(ctx, sub, csv)
	Expect(field(ip, "spec", "approval")).To(Equal(approval))
	ipCreated := since()
	if approval == "Manual" {
		By("approving the InstallPlan")
		approve(ctx, ip)
	}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ip), ip)).To(Succeed())
		g.Expect(field(ip, "status", "phase")).To(Equal("Complete"), "InstallPlan status: %v", ip.Object["status"])
	}).Should(Succeed())
	ipComplete := since()

	By("the CSV reaches Succeeded")
	Eventually(func(g Gomega) {
		u, err := getCSV(ctx, ns, csv)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(field(u, "status", "phase")).To(Equal("Succeeded"), "CSV status: %v", u.Object["status"])
	}).Should(Succeed())
	csvSucceeded := since()

	By("the Deployment is Available as the bundle says")
	dep := waitDeployment(ctx, ns, image)
	got, want := dep.Spec.Template.Spec.Containers, wantDeployment.Spec.Template.Spec.Containers
	Expect(got).To(HaveLen(len(want)))
	for i := range want {
		Expect(got[i].Args).To(Equal(want[i].Args))
		Expect(got[i].Resources).To(Equal(want[i].Resources))
	}
	Expect(dep.Spec.Template.Spec.ServiceAccountName).To(Equal(wantDeployment.Spec.Template.Spec.ServiceAccountName))
	Expect(dep.Spec.Template.Annotations).To(HaveKey("olm.targetNamespaces"))

	AddReportEntry(mode+" timings", fmt.Sprintf(
		"Subscription created → InstallPlan %s, InstallPlan Complete %s, CSV Succeeded %s, Deployment Available %s",
		ipCreated, ipComplete, csvSucceeded, since()))
	return ip
}

// waitDeployment waits for the CSV's Deployment in ns to be Available with image (its
// rollout done) and returns it.
func waitDeployment(ctx context.Context, ns, image string) *appsv1.Deployment {
	GinkgoHelper()
	dep := &appsv1.Deployment{}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: wantDeployment.Name}, dep)).To(Succeed())
		g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
		g.Expect(deploymentAvailable(dep)).To(BeTrue(), "Deployment status: %+v", dep.Status)
		g.Expect(dep.Status.ObservedGeneration).To(Equal(dep.Generation))
		g.Expect(dep.Status.UpdatedReplicas).To(Equal(dep.Status.Replicas), "rollout done")
	}).Should(Succeed())
	return dep
}

// uninstall deletes the Subscription and the CSV, as the README's removal says, and waits for
// the Deployment to go (the garbage collector removes what the CSV owns) and the operator with
// its Pod.
func uninstall(ctx context.Context, ns, csv string) {
	GinkgoHelper()
	sub := cluster.NewSubscription(ns, pkg, pkg, channel, catalogSource, olm.Namespace, "")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(cluster.CSVGVK)
	u.SetNamespace(ns)
	u.SetName(csv)
	for _, o := range []client.Object{sub, u} {
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed())
	}
	Eventually(func() bool {
		err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: wantDeployment.Name}, &appsv1.Deployment{})
		return apierrors.IsNotFound(err)
	}).Should(BeTrue(), "the Deployment is deleted with its CSV")
	Eventually(func() []string { return standIn.running(ns) }, time.Minute).Should(BeEmpty(), "the operator stops with its Pod")
}

// serviceAccount is the ServiceAccount the CSV's Deployment runs as (OLM creates it).
func serviceAccount() string { return wantDeployment.Spec.Template.Spec.ServiceAccountName }

// operatorUp waits for an operator process for a Pod of ns that has started its controllers
// (it holds the lease) and returns its log name.
func operatorUp(ns string) string {
	GinkgoHelper()
	var name string
	Eventually(func(g Gomega) {
		names := standIn.running(ns)
		g.Expect(names).To(HaveLen(1), "one operator process for the Pod of %s; stand-in: %v", ns, standIn.Events())
		name = names[0]
		g.Expect(whole.LogTails(1<<20, name)).To(ContainSubstring("Starting workers"))
	}, 2*time.Minute, time.Second).Should(Succeed())
	return name
}

// fullCycle creates one resource of every kind in ns, waits for all to be Ready and their
// Secrets, deletes them all and waits for them and their add-ons to go; the operator runs as
// the ServiceAccount of installNS, which must have no request refused.
func fullCycle(ns, installNS string) {
	GinkgoHelper()
	org := suite.OrgOf(ns)
	objs := everyKind(ns)
	start := time.Now()
	createAll(objs...)
	Eventually(suite.NotReady(objs...), 3*time.Minute, time.Second).Should(BeEmpty())
	ready := since(start)
	for _, u := range objs {
		if u.GetKind() == "NetworkGroup" || u.GetKind() == "CellarBucket" {
			continue
		}
		Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: u.GetName() + "-secrets"}, &corev1.Secret{})).To(Succeed(), u.GetKind())
	}
	Expect(atFake(org)).To(HaveLen(16), "15 add-ons (the 14 typed kinds and the Addon) and the Network Group")
	start = time.Now()
	deleteAll(objs...)
	Eventually(suite.Remaining(objs...), 2*time.Minute, time.Second).Should(BeEmpty())
	Expect(atFake(org)).To(BeEmpty(), "every add-on and the Network Group deleted")
	Expect(denials(installNS)).To(BeEmpty(), "no request of the ServiceAccount OLM created refused")
	Expect(standIn.Restarts()).To(BeZero(), "the operator never exited under its Pod: %v", standIn.Events())
	AddReportEntry("full cycle", fmt.Sprintf("17 resources in %s Ready in %s, deleted with their add-ons in %s, 0 RBAC denials of %s/%s",
		ns, ready, since(start), installNS, serviceAccount()))
}

// publishUpgrade points the CatalogSource at the next release's catalog (upgradeAddr), as a
// catalog image updated in place would, and waits for OLM to be connected to it.
func publishUpgrade(ctx context.Context) {
	GinkgoHelper()
	cs := cluster.NewGRPCCatalogSource(olm.Namespace, catalogSource, upgradeAddr)
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cs), cs)).To(Succeed())
		g.Expect(unstructured.SetNestedField(cs.Object, upgradeAddr, "spec", "address")).To(Succeed())
		g.Expect(k8s.Update(ctx, cs)).To(Succeed())
	}).Should(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cs), cs)).To(Succeed())
		g.Expect(field(cs, "status", "connectionState", "address")).To(Equal(upgradeAddr))
		g.Expect(field(cs, "status", "connectionState", "lastObservedState")).To(Equal("READY"))
	}).Should(Succeed())
}

// The specs share one cluster and OLM, in order: OwnNamespace install of the shipped catalog/
// and a full cycle; the catalog gains the next version and the upgrade is approved, with
// resources in place; uninstall leaving those resources; AllNamespaces install (a new
// Subscription: the operator is back, and watches the resources the uninstall left) and a full
// cycle. Two install modes, one upgrade and one reinstall for three InstallPlans of about a
// minute each (OLM's catalog operator writes the bundle's ~60 objects at client-go's default 5
// requests per second).
var _ = Describe("OLM install from catalog/", Ordered, func() {
	var (
		ownSub  *unstructured.Unstructured
		firstIP string
		// Resources through the upgrade and the uninstall, in ownNamespace.
		left []*unstructured.Unstructured
		ids  map[string]string
	)
	org := func() string { return suite.OrgOf(ownNamespace) }

	It("installs in OwnNamespace mode (an OperatorGroup targeting its own namespace, the README's Subscription, manual approval), and the operator as the ServiceAccount OLM created runs a full cycle of every kind there", func(ctx SpecContext) {
		ns := ownNamespace
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metaName(ns)})).To(Succeed())
		Expect(k8s.Create(ctx, cluster.NewOperatorGroup(ns, "clever-own", ns))).To(Succeed())
		createCredentials(ctx, ns)
		ownSub = cluster.NewSubscription(ns, pkg, pkg, channel, catalogSource, olm.Namespace, "Manual")
		Expect(unstructured.SetNestedSlice(ownSub.Object, []any{map[string]any{"secretRef": map[string]any{"name": credentialsKey}}},
			"spec", "config", "envFrom")).To(Succeed())
		firstIP = install(ctx, ownSub, csvName, wantImage(), "OwnNamespace").GetName()
		dep := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: wantDeployment.Name}, dep)).To(Succeed())
		Expect(dep.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", ns))
		operatorUp(ns)
		fullCycle(ns, ns)
	}, SpecTimeout(6*time.Minute))

	It("upgrades through the catalog on approval: the new CSV Succeeded, the old one gone, the operator restarted for the new Pod, every resource Ready throughout, no add-on created or deleted", func(ctx SpecContext) {
		ns := ownNamespace
		left = samples(ns, "api_v1_postgresql.yaml", "api_v1_configprovider.yaml", "api_v1alpha1_networkgroup.yaml")
		createAll(left...)
		Eventually(suite.NotReady(left...), 2*time.Minute, time.Second).Should(BeEmpty())
		ids = addonIDs(left...)
		Expect(ids).To(HaveLen(3))
		before := fake.CountsFor(org())
		oldOperator := standIn.running(ns)
		Expect(oldOperator).To(HaveLen(1))

		By("the catalog gains " + upgrade.V2 + ", which replaces " + upgrade.V1 + ": OLM offers it as an InstallPlan")
		start := time.Now()
		publishUpgrade(ctx)
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ownSub), ownSub)).To(Succeed())
			g.Expect(field(ownSub, "status", "installPlanRef", "name")).NotTo(Equal(firstIP), "Subscription status: %v", ownSub.Object["status"])
		}, 3*time.Minute).Should(Succeed())
		ip := installPlanOf(ctx, ownSub, upgrade.V2)
		offered := since(start)
		Expect(suite.NotReady(left...)()).To(BeEmpty())

		By("approving it, and polling every resource's Ready until the new operator has run a while")
		start = time.Now()
		approve(ctx, ip)
		var lapses []string
		var newOperator string
		var leaderAt time.Time
		phases := map[string]string{}
		for {
			for _, l := range suite.NotReady(left...)() {
				lapses = append(lapses, since(start).String()+" "+l)
			}
			if u, err := getCSV(ctx, ns, upgrade.V2); err == nil {
				phases["new"] = field(u, "status", "phase")
			}
			if u, err := getCSV(ctx, ns, upgrade.V1); apierrors.IsNotFound(err) {
				phases["old"] = "gone"
			} else if err == nil {
				phases["old"] = field(u, "status", "phase")
			}
			if names := standIn.running(ns); leaderAt.IsZero() && len(names) == 1 && names[0] != oldOperator[0] &&
				strings.Contains(whole.LogTails(1<<20, names[0]), "Starting workers") {
				newOperator, leaderAt = names[0], time.Now()
			}
			if phases["new"] == "Succeeded" && phases["old"] == "gone" && !leaderAt.IsZero() && time.Since(leaderAt) > 10*time.Second {
				break
			}
			Expect(time.Since(start)).To(BeNumerically("<", 4*time.Minute), "upgrade not done: CSVs %v, operator processes %v; stand-in: %v",
				phases, standIn.running(ns), standIn.Events())
			time.Sleep(250 * time.Millisecond)
		}
		done := leaderAt.Sub(start).Round(100 * time.Millisecond)
		Expect(lapses).To(BeEmpty(), "every resource stays Ready during the upgrade")
		waitDeployment(ctx, ns, upgrade.V2OperatorImage)
		Expect(standIn.running(ns)).To(Equal([]string{newOperator}), "the old Pod's operator stopped")

		calls := callsSince(org(), before)
		for _, k := range []string{addonCreate, addonDelete, ngCreate, ngDelete} {
			Expect(calls).NotTo(HaveKey(k), "no add-on created or deleted during the upgrade: %v", calls)
		}
		Expect(addonIDs(left...)).To(Equal(ids))
		Expect(atFake(org())).To(ConsistOf(slices.Collect(maps.Values(ids))))
		Expect(denials(ns)).To(BeEmpty())
		Expect(standIn.Restarts()).To(BeZero(), "%v", standIn.Events())
		AddReportEntry("upgrade", fmt.Sprintf("%s → %s: InstallPlan offered %s after the catalog changed; approved → new CSV Succeeded, old gone, new operator leading after %s; Ready polled throughout, 0 lapses; Clever Cloud calls during the upgrade: %v",
			upgrade.V1, upgrade.V2, offered, done, calls))
	}, SpecTimeout(6*time.Minute))

	It("uninstalls (Subscription and CSV deleted) with resources left: they, their finalizers, Secrets and add-ons stay, nothing is deleted at Clever Cloud", func(ctx SpecContext) {
		before := fake.CountsFor(org())
		uninstall(ctx, ownNamespace, upgrade.V2)
		Consistently(func(g Gomega) {
			for _, u := range left {
				cur := suite.Get(u)
				g.Expect(cur).NotTo(BeNil(), "%s is left in place", u.GetKind())
				g.Expect(cur.GetFinalizers()).NotTo(BeEmpty(), "%s keeps its finalizers", u.GetKind())
				g.Expect(cur.GetDeletionTimestamp()).To(BeNil())
				if u.GetKind() != "NetworkGroup" {
					g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ownNamespace, Name: u.GetName() + "-secrets"}, &corev1.Secret{})).To(Succeed(), "%s keeps its Secret", u.GetKind())
				}
			}
			g.Expect(atFake(org())).To(ConsistOf(slices.Collect(maps.Values(ids))), "the add-ons stay at Clever Cloud")
		}, 5*time.Second, 500*time.Millisecond).Should(Succeed())
		calls := callsSince(org(), before)
		Expect(calls).NotTo(HaveKey(addonDelete))
		Expect(calls).NotTo(HaveKey(ngDelete))

		By("what the operator made outside the CSV stays too: the credentials admission policy and its binding, the default ClusterCleverCredentials")
		for _, gvk := range []schema.GroupVersionKind{
			{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"},
			{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding"},
		} {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			Expect(k8s.Get(ctx, client.ObjectKey{Name: admission.PolicyName}, u)).To(Succeed(), gvk.Kind)
		}
		ccc := &unstructured.Unstructured{}
		ccc.SetGroupVersionKind(schema.GroupVersionKind{Group: "api.clever-cloud.com", Version: "v1alpha1", Kind: "ClusterCleverCredentials"})
		Expect(k8s.Get(ctx, client.ObjectKey{Name: "default"}, ccc)).To(Succeed())
	}, SpecTimeout(3*time.Minute))

	It("installs in AllNamespaces mode (a new Subscription in the global OperatorGroup's namespace, manual approval, startingCSV the shipped bundle): the operator is back, deleting a resource the uninstall left deletes its add-on, and a full cycle of every kind runs", func(ctx SpecContext) {
		ns := olm.OperatorsNamespace
		createCredentials(ctx, ns)
		sub := cluster.NewSubscription(ns, pkg, pkg, channel, catalogSource, olm.Namespace, "Manual")
		Expect(unstructured.SetNestedField(sub.Object, csvName, "spec", "startingCSV")).To(Succeed())
		install(ctx, sub, csvName, wantImage(), "AllNamespaces")
		DeferCleanup(uninstall, ns, csvName)
		dep := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: wantDeployment.Name}, dep)).To(Succeed())
		Expect(dep.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", ""))
		operatorUp(ns)

		By("deleting a resource the uninstall left: its add-on goes")
		Expect(suite.NotReady(left...)()).To(BeEmpty())
		pg := left[0]
		Expect(pg.GetKind()).To(Equal("PostgreSql"))
		before := fake.CountsFor(org())
		deleteAll(pg)
		Eventually(suite.Remaining(pg), time.Minute).Should(BeEmpty())
		Expect(atFake(org())).NotTo(ContainElement(ids["PostgreSql/"+pg.GetName()]))
		Expect(callsSince(org(), before)).To(HaveKeyWithValue(addonDelete, 1))
		deleteAll(left[1:]...)
		Eventually(suite.Remaining(left...), time.Minute).Should(BeEmpty())
		Expect(atFake(org())).To(BeEmpty())

		fullCycle(suite.NewNamespace(), ns)
	}, SpecTimeout(6*time.Minute))
})

// wantImage is the operator image bundle/'s CSV runs.
func wantImage() string { return wantDeployment.Spec.Template.Spec.Containers[0].Image }

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
