package chartinstall_test

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube/cluster"
)

const release = "clever-operator"

func helmInstall() string {
	GinkgoHelper()
	return run(helmBin, "install", release, "dist/chart", "-n", systemNamespace, "--create-namespace")
}

// makeTarget runs `make <target>` against the cluster. `make deploy` the first time runs as
// written; other runs skip regenerating config/ (`-o manifests`: controller-gen, about 40 s on
// 2 cores, for the same output: the first deploy checks that config/ stays as committed).
var deployedAsWritten bool

func makeTarget(target string) string {
	GinkgoHelper()
	args := []string{target, "KUBECTL=" + cluster.Kubectl()}
	asWritten := target == "deploy" && !deployedAsWritten
	if !asWritten {
		args = append([]string{"-o", "manifests"}, args...)
	}
	out := run("make", args...)
	if asWritten {
		st, err := exec.Command("git", "status", "--porcelain", "config").Output()
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.TrimSpace(string(st))).To(BeEmpty(), "make deploy with the default IMG leaves config/ as committed")
		deployedAsWritten = true
	}
	return out
}

// fewKinds is one PostgreSql, Redis and MySql in namespace ns.
func fewKinds(ns string) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		suite.Sample("api_v1_postgresql.yaml", ns), suite.Sample("api_v1_redis.yaml", ns), suite.Sample("api_v1_mysql.yaml", ns),
	}
}

// operator is the process standing in for the current install's Pod.
var operator *cluster.Process

var _ = Describe("the Helm chart and make deploy on a whole cluster", Ordered, func() {
	ctx := context.Background()

	It("renders with no values: helm lint and helm template succeed", func() {
		run(helmBin, "lint", "dist/chart")
		out := run(helmBin, "template", "dist/chart")
		Expect(out).To(ContainSubstring("kind: Deployment"))
	})

	It("helm install with no values but the credentials Secret: the Deployment is Available and the operator, as the chart's ServiceAccount, runs a full create → Ready → delete cycle of every kind with no RBAC denial", func() {
		start := time.Now()
		createNamespace(systemNamespace)
		createCredentials()
		out := helmInstall()
		Expect(out).To(ContainSubstring("nothing is deleted at Clever Cloud"), "NOTES say what helm uninstall leaves")
		cluster.AvailablePod(k8s, systemNamespace, chart.deployment)
		available := since(start)
		operator = startOperator(chart, "chart-operator")
		up := since(start)

		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		objs := everyKind(ns)
		start = time.Now()
		refused := createAll(objs...)
		Eventually(suite.NotReady(objs...), 3*time.Minute, time.Second).Should(BeEmpty())
		ready := since(start)
		for _, u := range objs {
			if u.GetKind() == "NetworkGroup" || u.GetKind() == "CellarBucket" {
				continue
			}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: u.GetName() + "-secrets"}, &corev1.Secret{})).To(Succeed(), u.GetKind())
		}
		start = time.Now()
		for _, u := range objs {
			Expect(k8s.Delete(ctx, u)).To(Succeed())
		}
		Eventually(suite.Remaining(objs...), 2*time.Minute, time.Second).Should(BeEmpty())
		Expect(fake.Addons(org)).To(BeEmpty(), "every add-on deleted")
		Expect(denials(chart, 0)).To(BeEmpty(), "no request of the chart's ServiceAccount refused")
		AddReportEntry("chart timings", fmt.Sprintf("helm install → Deployment Available %s, operator stand-in started %s; 17 resources Ready in %s (creates refused by the credentials policy's warm-up for %s), deleted in %s",
			available, up, ready, refused, since(start)))
	})

	// uninstallWithResources: resources Ready in two namespaces, the operator uninstalled;
	// nothing is deleted at Clever Cloud; one namespace is deleted and waits for the operator;
	// reinstalled, it finishes (its add-ons deleted once) and the other namespace's resource is
	// Ready on its add-on with no new add-on.
	uninstallWithResources := func(in install, uninstall func() string, afterUninstall func(), reinstall func() *cluster.Process) {
		GinkgoHelper()
		ns, kept := suite.NewNamespace(), suite.NewNamespace()
		org, keptOrg := suite.OrgOf(ns), suite.OrgOf(kept)
		objs := fewKinds(ns)
		keptPG := suite.Sample("api_v1_postgresql.yaml", kept)
		createAll(append(objs, keptPG)...)
		Eventually(suite.NotReady(append(objs, keptPG)...), 2*time.Minute, time.Second).Should(BeEmpty())
		ids, keptIDs := addonIDs(objs...), addonIDs(keptPG)
		Expect(ids).To(HaveLen(3))
		c0, d0, kc0 := creates(org), deletes(org), creates(keptOrg)
		Expect(denials(in, 0)).To(BeEmpty())

		start, uninstallOffset := time.Now(), auditOffset()
		out := uninstall()
		AddReportEntry(in.name+": uninstall output", out)
		Eventually(operator.Done(), 30*time.Second).Should(BeClosed(), "the operator's Pod is deleted and its process stopped")
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: in.deployment}, &appsv1.Deployment{}))
		}).Should(BeTrue(), "the Deployment is gone")
		afterUninstall()
		uninstalled := since(start)

		// Nothing of the users' is touched: resources, their Secrets and add-ons stay.
		Consistently(func(g Gomega) {
			g.Expect(suite.Remaining(append(objs, keptPG)...)()).To(HaveLen(4))
			g.Expect(addonsAt(org)).To(ConsistOf(slices.Collect(maps.Values(ids))))
			g.Expect(addonsAt(keptOrg)).To(ConsistOf(slices.Collect(maps.Values(keptIDs))))
		}, 5*time.Second, time.Second).Should(Succeed())
		Expect(deletes(org)).To(Equal(d0))
		for _, u := range objs {
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: u.GetName() + "-secrets"}, &corev1.Secret{})).To(Succeed(), "%s keeps its Secret", u.GetKind())
		}
		getOut := run(cluster.Kubectl(), "get", "postgresql,redis,mysql", "-n", ns)

		// The namespace deleted without the operator waits on the resources' finalizers.
		Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Consistently(namespacePhase(ns), 5*time.Second, time.Second).Should(Equal("Terminating"))
		Expect(addonsAt(org)).To(HaveLen(3), "no add-on deleted while the operator is gone")
		Eventually(func() string { return namespaceConditions(ns) }, 30*time.Second, time.Second).Should(
			ContainSubstring("finalizers remaining"), "the namespace controller says what it waits for")
		waiting := namespaceConditions(ns)
		Expect(addonsAt(org)).To(HaveLen(3))

		// Reinstalled, the operator finishes the deletion: no finalizer edited by hand.
		gap := len(denials(in, uninstallOffset))
		start2 := time.Now()
		operator = reinstall()
		Eventually(namespacePhase(ns), 60*time.Second, time.Second).Should(Equal("gone"), "the namespace is gone once the operator is back")
		gone := since(start2)
		Expect(addonsAt(org)).To(BeEmpty(), "its add-ons are deleted")
		Expect(deletes(org)-d0).To(Equal(3), "each exactly once")
		Expect(creates(org)).To(Equal(c0), "and none created")

		// The resource of the other namespace is Ready on its add-on again, none created.
		Eventually(suite.NotReady(keptPG), time.Minute).Should(BeEmpty())
		Expect(addonIDs(keptPG)).To(Equal(keptIDs))
		Consistently(func() int { return creates(keptOrg) }, 5*time.Second, time.Second).Should(Equal(kc0), "no add-on created for the resource that stayed")
		Expect(addonsAt(keptOrg)).To(ConsistOf(slices.Collect(maps.Values(keptIDs))))
		Expect(k8s.Delete(ctx, keptPG)).To(Succeed())
		Eventually(suite.Remaining(keptPG), time.Minute).Should(BeEmpty())
		Expect(addonsAt(keptOrg)).To(BeEmpty())

		AddReportEntry(in.name+": what the user sees", fmt.Sprintf(
			"uninstall done in %s (requests of the stopping operator refused by RBAC meanwhile: %d); resources still there:\n%s\nthe namespace deleted meanwhile stays Terminating: %s\nreinstalled: that namespace gone in %s",
			uninstalled, gap, getOut, waiting, gone))
	}

	It("helm uninstall with resources left keeps them and their add-ons; a namespace deleted meanwhile waits, and finishes once the chart is installed again", func() {
		reinstallOffset := int64(0)
		uninstallWithResources(chart,
			func() string { return run(helmBin, "uninstall", release, "-n", systemNamespace) },
			func() {
				Expect(namespacePhase(systemNamespace)()).To(Equal("Active"), "helm uninstall leaves the release namespace (and the credentials Secret) in place")
			},
			func() *cluster.Process {
				reinstallOffset = auditOffset()
				helmInstall()
				cluster.AvailablePod(k8s, systemNamespace, chart.deployment)
				return startOperator(chart, "chart-operator-2")
			})
		Expect(denials(chart, reinstallOffset)).To(BeEmpty())
	})

	It("is removed cleanly once no resource is left: helm uninstall, the release namespace deleted, the CRDs deleted with make uninstall", func() {
		start := time.Now()
		run(helmBin, "uninstall", release, "-n", systemNamespace)
		Eventually(operator.Done(), 30*time.Second).Should(BeClosed())
		uninstalled := since(start)
		Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: systemNamespace}})).To(Succeed())
		Eventually(namespacePhase(systemNamespace), 60*time.Second, time.Second).Should(Equal("gone"))
		nsGone := since(start)
		makeTarget("uninstall")
		crds := &metav1.PartialObjectMetadataList{}
		crds.SetGroupVersionKind(schemaCRDList)
		Expect(k8s.List(ctx, crds)).To(Succeed())
		for _, c := range crds.Items {
			Expect(c.Name).NotTo(HaveSuffix(".api.clever-cloud.com"))
		}
		AddReportEntry("chart removed", fmt.Sprintf("helm uninstall and the operator stopped %s, its namespace gone %s, make uninstall done %s", uninstalled, nsGone, since(start)))
	})

	It("make deploy with no resource left behind by the chart: Deployment Available, no RBAC denial", func() {
		start := time.Now()
		makeTarget("deploy")
		createCredentials()
		cluster.AvailablePod(k8s, systemNamespace, deploy.deployment)
		operator = startOperator(deploy, "deploy-operator")
		AddReportEntry("make deploy timings", fmt.Sprintf("Deployment Available and operator started in %s", since(start)))
	})

	It("make undeploy with resources left keeps them and their add-ons, its namespace goes; a namespace deleted meanwhile waits, and finishes after make deploy", func() {
		reinstallOffset := int64(0)
		uninstallWithResources(deploy,
			func() string { return makeTarget("undeploy") },
			func() {
				Eventually(namespacePhase(systemNamespace), 60*time.Second, time.Second).Should(Equal("gone"), "make undeploy deletes the operator's namespace; it does not stay Terminating")
			},
			func() *cluster.Process {
				reinstallOffset = auditOffset()
				makeTarget("deploy")
				createCredentials()
				cluster.AvailablePod(k8s, systemNamespace, deploy.deployment)
				return startOperator(deploy, "deploy-operator-2")
			})
		Expect(denials(deploy, reinstallOffset)).To(BeEmpty())
	})

	It("make uninstall with the operator running deletes every resource and its add-on", func() {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		objs := fewKinds(ns)
		createAll(objs...)
		Eventually(suite.NotReady(objs...), 2*time.Minute, time.Second).Should(BeEmpty())
		d0 := deletes(org)
		start := time.Now()
		makeTarget("uninstall")
		Expect(suite.Remaining(objs...)()).To(BeEmpty())
		Expect(addonsAt(org)).To(BeEmpty())
		Expect(deletes(org) - d0).To(Equal(3))
		AddReportEntry("make uninstall with 3 resources", since(start).String())
		makeTarget("undeploy")
		Eventually(operator.Done(), 30*time.Second).Should(BeClosed())
		Expect(strings.TrimSpace(run(cluster.Kubectl(), "get", "namespaces", "--no-headers", "-o", "custom-columns=:metadata.name,:status.phase"))).NotTo(ContainSubstring("Terminating"))
	})
})
