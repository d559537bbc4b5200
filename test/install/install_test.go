// Package install_test checks the `make deploy` path on a real kube-apiserver: the kustomize
// output of config/default is accepted by the server (server-side dry-run), and the RBAC it
// grants is enough for the operator, which runs impersonating the generated ServiceAccount
// through a full create → Ready → delete cycle against the fake Clever Cloud API.
package install_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

const (
	systemNamespace = "clever-operator-system"
	serviceAccount  = "clever-operator-controller-manager"
)

func TestInstall(t *testing.T) {
	kube.RunSuite(t, "Install path suite (kustomize config/default on envtest)", 60*time.Second, 200*time.Millisecond)
}

var (
	restCfg *rest.Config
	k8s     client.Client
	objects []*unstructured.Unstructured
)

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	Expect(os.Chdir(filepath.Join("..", ".."))).To(Succeed())
	kustomize := filepath.Join("bin", "kustomize")
	_, err := os.Stat(kustomize)
	Expect(err).NotTo(HaveOccurred(), "bin/kustomize missing: run `make kustomize`")
	out, err := exec.Command(kustomize, "build", filepath.Join("config", "default")).Output()
	Expect(err).NotTo(HaveOccurred(), "kustomize build config/default: %s", stderrOf(err))
	objects = kube.Decode(out)
	Expect(objects).NotTo(BeEmpty())

	env, err := kube.NewEnvironment()
	Expect(err).NotTo(HaveOccurred())
	restCfg, k8s = kube.StartEnvironment(env, client.Options{})
})

var _ = Describe("make deploy (kustomize build config/default)", Ordered, func() {
	ctx := context.Background()

	It("creates every CustomResourceDefinition for real", func() {
		n := 0
		for _, o := range objects {
			if o.GetKind() == "CustomResourceDefinition" {
				Expect(k8s.Create(ctx, o.DeepCopy())).To(Succeed(), o.GetName())
				n++
			}
		}
		bases, err := filepath.Glob(filepath.Join("config", "crd", "bases", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(len(bases)), "every CRD of config/crd/bases (the 15 add-on kinds and the credentials kinds)")
		// Wait until the new types are served.
		Eventually(func() error {
			l := &unstructured.UnstructuredList{}
			l.SetAPIVersion("api.clever-cloud.com/v1")
			l.SetKind("CellarList")
			return k8s.List(ctx, l)
		}).Should(Succeed())
	})

	It("is accepted by the API server with a server-side dry-run", func() {
		ns := find("Namespace", systemNamespace)
		Expect(ns).NotTo(BeNil(), "config/default creates the %s namespace", systemNamespace)
		Expect(k8s.Create(ctx, ns.DeepCopy())).To(Succeed())
		for _, o := range objects {
			if o.GetKind() == "CustomResourceDefinition" || o.GetKind() == "Namespace" {
				continue
			}
			err := k8s.Patch(ctx, o.DeepCopy(), client.Apply, client.DryRunAll, client.ForceOwnership, client.FieldOwner("install-test"))
			Expect(err).NotTo(HaveOccurred(), "%s %s", o.GetKind(), o.GetName())
		}
	})

	It("runs restricted: non-root, read-only root filesystem, no privilege escalation, no capabilities, RuntimeDefault seccomp", func() {
		dep := find("Deployment", "clever-operator-controller-manager")
		Expect(dep).NotTo(BeNil())
		Expect(find("Namespace", systemNamespace).GetLabels()).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))
		containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
		Expect(containers).NotTo(BeEmpty())
		for _, c := range containers {
			sc := c.(map[string]any)["securityContext"].(map[string]any)
			Expect(sc["readOnlyRootFilesystem"]).To(Equal(true))
			Expect(sc["allowPrivilegeEscalation"]).To(Equal(false))
			Expect(sc["capabilities"]).To(HaveKeyWithValue("drop", ContainElement("ALL")))
			envFrom, _ := c.(map[string]any)["envFrom"].([]any)
			Expect(envFrom).NotTo(BeEmpty(), "credentials come from a Secret through env")
			Expect(envFrom[0]).To(HaveKey("secretRef"))
		}
		podSC, _, _ := unstructured.NestedMap(dep.Object, "spec", "template", "spec", "securityContext")
		Expect(podSC).To(HaveKeyWithValue("runAsNonRoot", true))
		Expect(podSC).To(HaveKeyWithValue("seccompProfile", HaveKeyWithValue("type", "RuntimeDefault")))
		for _, o := range objects {
			Expect(o.GetKind()).NotTo(Equal("ConfigMap"), "credentials never live in a ConfigMap")
		}
	})

	It("admits the manager's pod, and the OLM bundle's, under the restricted Pod Security Standard (server-side dry-run)", func() {
		// The namespace was created from config/default above, with its enforce=restricted label:
		// the API server's PodSecurity admission judges the real pod specs, not our reading of them.
		ns := &corev1.Namespace{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: systemNamespace}, ns)).To(Succeed())
		Expect(ns.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))

		dep := find("Deployment", "clever-operator-controller-manager")
		Expect(dep).NotTo(BeNil())
		kustomized := podFrom(dep.Object, "spec", "template")

		csvFile := filepath.Join("bundle", "manifests", "clever-operator.clusterserviceversion.yaml")
		b, err := os.ReadFile(csvFile)
		Expect(err).NotTo(HaveOccurred())
		csv := kube.Decode(b)
		Expect(csv).To(HaveLen(1))
		deps, _, _ := unstructured.NestedSlice(csv[0].Object, "spec", "install", "spec", "deployments")
		Expect(deps).To(HaveLen(1), csvFile)
		bundled := podFrom(deps[0].(map[string]any), "spec", "template")

		for name, pod := range map[string]*corev1.Pod{"config/default": kustomized, "OLM bundle": bundled} {
			Expect(k8s.Create(ctx, pod.DeepCopy(), client.DryRunAll)).To(Succeed(), "%s: restricted admits the manager's pod", name)
		}

		// Controls: each restricted requirement the manager meets, broken in turn, is refused,
		// so the admission above is a real check.
		for what, breakIt := range map[string]func(*corev1.Pod){
			"allowPrivilegeEscalation": func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true) },
			"runAsNonRoot": func(p *corev1.Pod) {
				p.Spec.SecurityContext.RunAsNonRoot = ptr.To(false)
				p.Spec.Containers[0].SecurityContext.RunAsNonRoot = nil
			},
			"capabilities": func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.Capabilities = nil },
			"seccompProfile": func(p *corev1.Pod) {
				p.Spec.SecurityContext.SeccompProfile, p.Spec.Containers[0].SecurityContext.SeccompProfile = nil, nil
			},
		} {
			bad := kustomized.DeepCopy()
			breakIt(bad)
			err := k8s.Create(ctx, bad, client.DryRunAll)
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "without %s: expected a PodSecurity rejection, got %v", what, err)
			Expect(err.Error()).To(ContainSubstring(`violates PodSecurity "restricted:latest"`))
		}
	})

	It("grants the operator's ServiceAccount enough to run a full create/delete cycle, and no wildcard", func() {
		for _, o := range objects {
			switch o.GetKind() {
			case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
				Expect(k8s.Create(ctx, o.DeepCopy())).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
				rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
				for _, r := range rules {
					for _, f := range []string{"verbs", "resources", "apiGroups"} {
						vals, _, _ := unstructured.NestedStringSlice(r.(map[string]any), f)
						Expect(vals).NotTo(ContainElement("*"), "%s %s: wildcard %s", o.GetKind(), o.GetName(), f)
					}
				}
			}
		}

		creds := fakeapi.Credential{ConsumerKey: "ck-i", ConsumerSecret: "cs-i", Token: "tk-i", Secret: "ts-i"}
		fake, srv := kube.NewFake(fakeapi.Options{Credentials: []fakeapi.Credential{creds}, ProvisioningDelay: 200 * time.Millisecond})

		// The operator's identity: exactly the generated ServiceAccount.
		saCfg := rest.CopyConfig(restCfg)
		saCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + systemNamespace + ":" + serviceAccount}
		logs := &kube.LogBuffer{}
		log := zap.New(zap.WriteTo(io.MultiWriter(GinkgoWriter, logs)))
		mgr := kube.StartManager(saCfg, kube.ManagerOptions{
			API: kube.APIConfig(srv.URL, creds),
			Log: log,
			Configure: func(o *ctrl.Options) {
				o.LeaderElection = true
				o.LeaderElectionNamespace = systemNamespace
				o.Logger = log
			},
		})
		defer mgr.Stop()

		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: objectMeta("apps")})).To(Succeed())
		for _, file := range []string{"api_v1_postgresql.yaml", "api_v1_configprovider.yaml", "api_v1_keycloak.yaml"} {
			cr := kube.Sample(file, "apps", "")
			Expect(k8s.Create(ctx, cr)).To(Succeed())
			Eventually(func() string { return ready(cr) }).Should(Equal("True"), file)
			Eventually(func() error {
				return k8s.Get(ctx, client.ObjectKey{Namespace: "apps", Name: cr.GetName() + "-secrets"}, &corev1.Secret{})
			}).Should(Succeed())
			Expect(k8s.Delete(ctx, cr)).To(Succeed())
			Eventually(func() bool {
				err := k8s.Get(ctx, client.ObjectKeyFromObject(cr), cr.DeepCopy())
				return apierrors.IsNotFound(err)
			}).Should(BeTrue(), file)
		}
		total := 0
		for _, l := range fake.AllAddons() {
			total += len(l)
		}
		Expect(total).To(BeZero(), "every add-on deleted")
		Expect(logs.String()).NotTo(ContainSubstring("is forbidden"), "no RBAC denial during the cycle")
	})

	It("config/namespaced: the operator runs a full cycle in a watched namespace with its namespaced rules bound there only", func() {
		out, err := exec.Command(filepath.Join("bin", "kustomize"), "build", filepath.Join("config", "namespaced")).Output()
		Expect(err).NotTo(HaveOccurred(), "kustomize build config/namespaced: %s", stderrOf(err))
		nsObjs := kube.Decode(out)
		// Switch the install of the previous specs to config/namespaced: no cluster-wide binding
		// of the namespaced rules, one RoleBinding per watched namespace.
		var crbs []string
		for _, o := range nsObjs {
			if o.GetKind() == "ClusterRoleBinding" {
				crbs = append(crbs, o.GetName())
			}
		}
		for _, o := range objects {
			if o.GetKind() == "ClusterRoleBinding" && !slices.Contains(crbs, o.GetName()) {
				Expect(k8s.Delete(ctx, o.DeepCopy())).To(Succeed(), o.GetName())
			}
		}
		watched := []string{"team-a", "team-b"}
		for _, ns := range append([]string{"team-c"}, watched...) {
			Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: objectMeta(ns)})).To(Succeed())
		}
		for _, o := range nsObjs {
			if o.GetKind() == "RoleBinding" && o.GetNamespace() != systemNamespace {
				Expect(slices.Contains(watched, o.GetNamespace())).To(BeTrue(), o.GetNamespace())
				Expect(k8s.Create(ctx, o.DeepCopy())).To(Succeed())
			}
		}

		creds := fakeapi.Credential{ConsumerKey: "ck-n", ConsumerSecret: "cs-n", Token: "tk-n", Secret: "ts-n"}
		fake, srv := kube.NewFake(fakeapi.Options{Credentials: []fakeapi.Credential{creds}, ProvisioningDelay: 200 * time.Millisecond})
		saCfg := rest.CopyConfig(restCfg)
		saCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + systemNamespace + ":" + serviceAccount}
		logs := &kube.LogBuffer{}
		log := zap.New(zap.WriteTo(io.MultiWriter(GinkgoWriter, logs)))
		mgr := kube.StartManager(saCfg, kube.ManagerOptions{
			API:        kube.APIConfig(srv.URL, creds),
			Log:        log,
			Namespaces: watched,
			Configure: func(o *ctrl.Options) {
				o.LeaderElection = true
				o.LeaderElectionNamespace = systemNamespace
				o.Logger = log
			},
		})
		defer mgr.Stop()

		cr := kube.Sample("api_v1_postgresql.yaml", "team-a", "")
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(func() string { return ready(cr) }).Should(Equal("True"))
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: cr.GetName() + "-secrets"}, &corev1.Secret{})
		}).Should(Succeed())
		// Outside the watched namespaces nothing happens (and nothing could be read).
		other := kube.Sample("api_v1_postgresql.yaml", "team-c", "")
		Expect(k8s.Create(ctx, other)).To(Succeed())
		Consistently(func() string { return ready(other) }, 3*time.Second).Should(BeEmpty())
		Expect(k8s.Delete(ctx, cr)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(cr), cr.DeepCopy()))
		}).Should(BeTrue())
		total := 0
		for _, l := range fake.AllAddons() {
			total += len(l)
		}
		Expect(total).To(BeZero(), "the add-on of team-a deleted, none created for team-c")
		Expect(logs.String()).NotTo(ContainSubstring("is forbidden"), "no RBAC denial with the namespaced RBAC")
	})
})

func find(kind, name string) *unstructured.Unstructured {
	for _, o := range objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func ready(cr *unstructured.Unstructured) string {
	cur := cr.DeepCopy()
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(cr), cur); err != nil {
		return err.Error()
	}
	conds, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == "Ready" {
			return fmt.Sprint(m["status"])
		}
	}
	return ""
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// podFrom builds the Pod a controller would create from the pod template at path in obj.
func podFrom(obj map[string]any, path ...string) *corev1.Pod {
	tmpl, found, err := unstructured.NestedMap(obj, path...)
	Expect(err).NotTo(HaveOccurred())
	Expect(found).To(BeTrue(), "pod template at %v", path)
	spec := &corev1.PodTemplateSpec{}
	Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, spec)).To(Succeed())
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "manager-", Namespace: systemNamespace, Labels: spec.Labels, Annotations: spec.Annotations},
		Spec:       spec.Spec,
	}
}
