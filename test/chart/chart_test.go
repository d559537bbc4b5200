package chart_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/clever-operator/clever-operator/test/kube"
)

// fakeCreds are the credentials given with --set-string; the key is the value name under
// .Values.credentials, the environment variable is in credentialEnv.
var fakeCreds = map[string]string{
	"token":          "tok-FAKE-2b8d7c41e0",
	"secret":         "sec-FAKE-9e0a33f5d1",
	"consumerKey":    "ck-FAKE-55c1d2aa07",
	"consumerSecret": "cs-FAKE-0f7e6b19c4",
	"bearerToken":    "bt-FAKE-c3a94e77b8",
	"endpoint":       "https://api.fake-clever.example",
}

var credentialEnv = map[string]string{
	"token":          "CLEVER_OPERATOR_API_TOKEN",
	"secret":         "CLEVER_OPERATOR_API_SECRET",
	"consumerKey":    "CLEVER_OPERATOR_API_CONSUMER_KEY",
	"consumerSecret": "CLEVER_OPERATOR_API_CONSUMER_SECRET",
	"bearerToken":    "CLEVER_OPERATOR_API_BEARER_TOKEN",
	"endpoint":       "CLEVER_OPERATOR_API_ENDPOINT",
}

const credentialsSecret = fullname + "-credentials"

// createArgs are the helm arguments of a chart-created credentials Secret holding every
// fake credential.
func createArgs() []string {
	args := []string{"--set", "credentials.create=true"}
	keys := make([]string, 0, len(fakeCreds))
	for k := range fakeCreds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--set-string", "credentials."+k+"="+fakeCreds[k])
	}
	return args
}

// fullArgs render everything the envtest API server can take: created credentials, 2
// replicas, NetworkPolicy and PodDisruptionBudget; no ServiceMonitor (no Prometheus
// Operator CRDs in envtest).
func fullArgs() []string {
	return append(createArgs(),
		"--set", "replicaCount=2",
		"--set", "networkPolicy.enabled=true",
		"--set", "pdb.enabled=true",
		"--set", "metrics.serviceMonitor.enabled=false",
	)
}

// kind describes one CRD of config/crd/bases.
type kind struct {
	file, name, plural, singular string
	cluster                      bool // cluster-scoped: its roles are not aggregated into edit/view
}

func configKinds() []kind {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "config", "crd", "bases", "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var kinds []kind
	for _, f := range files {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		raw, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		Expect(yaml.Unmarshal(raw, crd)).To(Succeed())
		kinds = append(kinds, kind{file: f, name: crd.Name, plural: crd.Spec.Names.Plural, singular: crd.Spec.Names.Singular,
			cluster: crd.Spec.Scope == apiextensionsv1.ClusterScoped})
	}
	Expect(len(kinds)).To(BeNumerically(">=", 15), "config/crd/bases should hold the 15 add-on CRDs (14 typed kinds and the generic Addon) and the credentials kinds")
	return kinds
}

// nKinds is the number of CRDs in config/crd/bases (the 15 add-on kinds and the credentials kinds).
func nKinds() int {
	GinkgoHelper()
	return len(configKinds())
}

// readYAML decodes a file of the repository (path relative to its root) into v.
func readYAML(path string, v any) {
	GinkgoHelper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, path))
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.Unmarshal(raw, v)).To(Succeed(), path)
}

func toTyped(u *unstructured.Unstructured, into any) {
	GinkgoHelper()
	Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)).To(Succeed())
}

// normalized returns v as generic JSON values, so that YAML decoded by different paths
// compares equal when the documents are.
func normalized(v any) any {
	GinkgoHelper()
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	var out any
	Expect(json.Unmarshal(b, &out)).To(Succeed())
	return out
}

func deployment(objs []*unstructured.Unstructured) *appsv1.Deployment {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	toTyped(findOne(objs, "Deployment", fullname), d)
	Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1))
	return d
}

// documents splits helm template output into its YAML documents (comments included).
func documents(manifest string) []string {
	var docs []string
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(manifest, -1) {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, d)
		}
	}
	return docs
}

var _ = Describe("helm lint", func() {
	It("passes with credentials from an existing Secret", func() {
		out, err := runHelm("lint", chartDir, "--strict", "--kube-version", kubeVersion, "--set", "credentials.existingSecret=x")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("0 chart(s) failed"))
	})

	It("passes with credentials created from values and every optional object", func() {
		args := append([]string{"lint", chartDir, "--strict", "--kube-version", kubeVersion}, fullArgs()...)
		args = append(args, "--set", "metrics.serviceMonitor.enabled=true")
		out, err := runHelm(args...)
		Expect(err).NotTo(HaveOccurred(), out)
	})

	It("passes with no values at all: the default is the existing Secret clever-operator-credentials", func() {
		out, err := runHelm("lint", chartDir, "--strict", "--kube-version", kubeVersion)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("0 chart(s) failed"))
	})
})

var _ = Describe("helm template", func() {
	It("reads the existing Secret clever-operator-credentials by default (optional until created), and creates no Secret", func() {
		for _, args := range [][]string{nil, {"--skip-schema-validation"}} {
			objs := kube.Decode([]byte(mustTemplate(args...)))
			Expect(find(objs, "Secret")).To(BeEmpty(), "no credentials in the release by default")
			c := deployment(objs).Spec.Template.Spec.Containers[0]
			Expect(c.EnvFrom).To(Equal([]corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "clever-operator-credentials"}, Optional: ptr.To(true)}}}))
			Expect(deployment(objs).Spec.Template.Annotations).NotTo(HaveKey("checksum/credentials"))
		}
	})

	It("fails when both an existing Secret and a created one are asked for", func() {
		out, err := helmTemplate(append(createArgs(), "--set", "credentials.existingSecret=x")...)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("set either credentials.existingSecret or credentials.create=true, not both"))
	})

	It("fails when created credentials are incomplete", func() {
		args := []string{"--set", "credentials.create=true", "--set-string", "credentials.token=t", "--set-string", "credentials.secret=s", "--set-string", "credentials.consumerKey=k"}
		out, err := helmTemplate(args...)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("/credentials/bearerToken"))
		out, err = helmTemplate(append(args, "--skip-schema-validation")...)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("credentials.create=true needs credentials.bearerToken"))
		Expect(out).To(ContainSubstring("or credentials.token and credentials.secret (with both credentials.consumerKey and credentials.consumerSecret, or neither for clever-tools' published consumer)"))
	})

	It("accepts a token and secret alone (clever-tools' published consumer) and a clever-tools.json Secret alone", func() {
		objs := kube.Decode([]byte(mustTemplate("--set", "credentials.create=true", "--set-string", "credentials.token=t", "--set-string", "credentials.secret=s")))
		secret := &corev1.Secret{}
		toTyped(findOne(objs, "Secret", credentialsSecret), secret)
		Expect(secret.Data).To(Equal(map[string][]byte{"CLEVER_OPERATOR_API_TOKEN": []byte("t"), "CLEVER_OPERATOR_API_SECRET": []byte("s")}))

		d := deployment(kube.Decode([]byte(mustTemplate("--set", "credentials.cleverToolsSecret=clever-tools-login",
			"--set", "credentials.bridgeEndpoint=https://bridge.example.test"))))
		c := d.Spec.Template.Spec.Containers[0]
		Expect(c.EnvFrom).To(BeEmpty())
		Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "CLEVER_OPERATOR_API_BRIDGE_ENDPOINT", Value: "https://bridge.example.test"}))
		Expect(c.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "clever-tools", MountPath: "/etc/clever-operator/clever-tools", ReadOnly: true}))
		Expect(d.Spec.Template.Spec.Volumes).To(ContainElement(corev1.Volume{Name: "clever-tools", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "clever-tools-login", Items: []corev1.KeyToPath{{Key: "clever-tools.json", Path: "clever-tools.json"}}}}}))
	})

	It("accepts a lone token, which the operator reads as a bearer token", func() {
		objs := kube.Decode([]byte(mustTemplate("--set", "credentials.create=true", "--set-string", "credentials.token=lone")))
		secret := &corev1.Secret{}
		toTyped(findOne(objs, "Secret", credentialsSecret), secret)
		Expect(secret.Data).To(Equal(map[string][]byte{"CLEVER_OPERATOR_API_TOKEN": []byte("lone")}))
	})

	It("rejects a credential that --set turned into a number", func() {
		out, err := helmTemplate("--set", "credentials.create=true", "--set", "credentials.bearerToken=12345")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("/credentials/bearerToken"))
		Expect(out).To(ContainSubstring("want string"))
	})

	It("rejects unknown values", func() {
		out, err := helmTemplate("--set", "credentials.existingSecret=x", "--set", "replicas=2")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("replicas"))
	})

	Context("with created credentials, NetworkPolicy and PDB", func() {
		var manifest string
		var objs []*unstructured.Unstructured

		BeforeEach(func() {
			manifest = mustTemplate(fullArgs()...)
			objs = kube.Decode([]byte(manifest))
		})

		It("renders the CRDs of config/crd/bases unchanged, annotated keep", func() {
			crds := find(objs, "CustomResourceDefinition")
			Expect(crds).To(HaveLen(nKinds()))
			for _, k := range configKinds() {
				raw, err := os.ReadFile(k.file)
				Expect(err).NotTo(HaveOccurred())
				var want map[string]any
				Expect(yaml.Unmarshal(raw, &want)).To(Succeed())

				got := findOne(objs, "CustomResourceDefinition", k.name).DeepCopy()
				ann := got.GetAnnotations()
				Expect(ann).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"), k.name)
				delete(ann, "helm.sh/resource-policy")
				got.SetAnnotations(ann)
				Expect(normalized(got.Object)).To(Equal(normalized(want)), "chart CRD %s differs from %s: run hack/gen-chart.sh", k.name, k.file)
			}
		})

		It("gives the operator exactly the ClusterRole rules of config/rbac/role.yaml", func() {
			want := &rbacv1.ClusterRole{}
			readYAML(filepath.Join("config", "rbac", "role.yaml"), want)
			Expect(want.Rules).NotTo(BeEmpty())

			got := &rbacv1.ClusterRole{}
			toTyped(findOne(objs, "ClusterRole", fullname+"-manager"), got)
			Expect(got.Rules).To(Equal(want.Rules), "chart ClusterRole differs from config/rbac/role.yaml: run hack/gen-chart.sh")

			binding := &rbacv1.ClusterRoleBinding{}
			toTyped(findOne(objs, "ClusterRoleBinding", fullname+"-manager"), binding)
			Expect(binding.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: fullname + "-manager"}))
			Expect(binding.Subjects).To(ConsistOf(rbacv1.Subject{Kind: "ServiceAccount", Name: fullname, Namespace: namespace}))
			sa := &corev1.ServiceAccount{}
			toTyped(findOne(objs, "ServiceAccount", fullname), sa)
			Expect(sa.AutomountServiceAccountToken).To(Equal(ptr.To(false)), "no token for pods that merely use the ServiceAccount")
			Expect(deployment(objs).Spec.Template.Spec.AutomountServiceAccountToken).To(Equal(ptr.To(true)), "the manager calls the API")
		})

		It("gives the operator the namespaced rules of config/rbac/namespaced-role/role.yaml, cluster-wide when watching every namespace", func() {
			want := &rbacv1.ClusterRole{}
			readYAML(filepath.Join("config", "rbac", "namespaced-role", "role.yaml"), want)
			got := &rbacv1.ClusterRole{}
			toTyped(findOne(objs, "ClusterRole", fullname+"-manager-namespaced"), got)
			Expect(got.Rules).To(Equal(want.Rules), "chart ClusterRole differs from config/rbac/namespaced-role/role.yaml: run hack/gen-chart.sh")
			binding := &rbacv1.ClusterRoleBinding{}
			toTyped(findOne(objs, "ClusterRoleBinding", fullname+"-manager-namespaced"), binding)
			Expect(binding.RoleRef.Name).To(Equal(fullname + "-manager-namespaced"))
			Expect(binding.Subjects).To(ConsistOf(rbacv1.Subject{Kind: "ServiceAccount", Name: fullname, Namespace: namespace}))
			Expect(find(objs, "ClusterRoleBinding")).To(HaveLen(2))

			reader := &rbacv1.ClusterRole{}
			toTyped(findOne(objs, "ClusterRole", fullname+"-metrics-reader"), reader)
			Expect(reader.Rules).To(Equal([]rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}))
		})

		It("grants leader election, the claim key and Secrets by name in the release namespace only, as config/rbac/leader_election_role.yaml", func() {
			want := &rbacv1.Role{}
			readYAML(filepath.Join("config", "rbac", "leader_election_role.yaml"), want)
			role := &rbacv1.Role{}
			toTyped(findOne(objs, "Role", fullname+"-leader-election"), role)
			Expect(role.Namespace).To(Equal(namespace))
			Expect(role.Rules).To(Equal(want.Rules), "chart leader-election Role differs from config/: run hack/gen-chart.sh")
			Expect(role.Rules).To(ConsistOf(
				rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
					Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
				rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
				// Secrets by name (the claim key, ClusterCleverCredentials' Secrets), never listed.
				rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
				rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
			))
			rb := &rbacv1.RoleBinding{}
			toTyped(findOne(objs, "RoleBinding", fullname+"-leader-election"), rb)
			Expect(rb.Namespace).To(Equal(namespace))
			Expect(rb.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name}))
			Expect(rb.Subjects).To(ConsistOf(rbacv1.Subject{Kind: "ServiceAccount", Name: fullname, Namespace: namespace}))
		})

		It("renders the editor and viewer ClusterRoles of config/rbac for each kind, aggregated for the namespaced ones", func() {
			aggregateLabels := func(l map[string]string) map[string]string {
				out := map[string]string{}
				for k, v := range l {
					if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") {
						out[k] = v
					}
				}
				return out
			}
			for _, k := range configKinds() {
				for _, role := range []string{"editor", "viewer"} {
					want := &rbacv1.ClusterRole{}
					readYAML(filepath.Join("config", "rbac", k.singular+"_"+role+"_role.yaml"), want)
					got := &rbacv1.ClusterRole{}
					toTyped(findOne(objs, "ClusterRole", fullname+"-"+want.Name), got)
					Expect(got.Rules).To(Equal(want.Rules), "%s differs from config/rbac: run hack/gen-chart.sh", got.Name)
					Expect(aggregateLabels(got.Labels)).To(Equal(aggregateLabels(want.Labels)), got.Name)
				}

				// And what they grant, whatever config/ says.
				editor := &rbacv1.ClusterRole{}
				toTyped(findOne(objs, "ClusterRole", fullname+"-"+k.singular+"-editor-role"), editor)
				viewer := &rbacv1.ClusterRole{}
				toTyped(findOne(objs, "ClusterRole", fullname+"-"+k.singular+"-viewer-role"), viewer)
				if k.cluster {
					// A cluster-scoped kind (admin-managed credentials) is never aggregated into
					// the namespace roles edit/admin/view.
					Expect(aggregateLabels(editor.Labels)).To(BeEmpty(), k.plural)
					Expect(aggregateLabels(viewer.Labels)).To(BeEmpty(), k.plural)
					continue
				}
				Expect(editor.Labels).To(HaveKeyWithValue("rbac.authorization.k8s.io/aggregate-to-edit", "true"))
				Expect(editor.Rules).To(ConsistOf(
					rbacv1.PolicyRule{APIGroups: []string{"api.clever-cloud.com"}, Resources: []string{k.plural},
						Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
					rbacv1.PolicyRule{APIGroups: []string{"api.clever-cloud.com"}, Resources: []string{k.plural + "/status"}, Verbs: []string{"get"}},
				), k.plural)

				Expect(viewer.Labels).To(HaveKeyWithValue("rbac.authorization.k8s.io/aggregate-to-view", "true"))
				Expect(viewer.Labels).NotTo(HaveKey("rbac.authorization.k8s.io/aggregate-to-edit"))
				Expect(viewer.Rules).To(ConsistOf(
					rbacv1.PolicyRule{APIGroups: []string{"api.clever-cloud.com"}, Resources: []string{k.plural}, Verbs: []string{"get", "list", "watch"}},
					rbacv1.PolicyRule{APIGroups: []string{"api.clever-cloud.com"}, Resources: []string{k.plural + "/status"}, Verbs: []string{"get"}},
				), k.plural)
			}
			// The manager roles (cluster-scoped and namespaced), the metrics reader, and an editor
			// and a viewer per kind, nothing else.
			Expect(find(objs, "ClusterRole")).To(HaveLen(3 + 2*nKinds()))
		})

		It("runs the manager with a restricted security context", func() {
			pod := deployment(objs).Spec.Template.Spec
			Expect(pod.SecurityContext).NotTo(BeNil())
			Expect(pod.SecurityContext.RunAsNonRoot).To(Equal(ptr.To(true)))
			Expect(pod.SecurityContext.RunAsUser).To(Equal(ptr.To[int64](65532)))
			Expect(pod.SecurityContext.SeccompProfile).To(Equal(&corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}))
			Expect(pod.HostNetwork || pod.HostPID || pod.HostIPC).To(BeFalse())

			sc := pod.Containers[0].SecurityContext
			Expect(sc).NotTo(BeNil())
			Expect(sc.RunAsNonRoot).To(Equal(ptr.To(true)))
			Expect(sc.RunAsUser).To(Equal(ptr.To[int64](65532)))
			Expect(sc.ReadOnlyRootFilesystem).To(Equal(ptr.To(true)))
			Expect(sc.AllowPrivilegeEscalation).To(Equal(ptr.To(false)))
			Expect(sc.Privileged).To(Or(BeNil(), Equal(ptr.To(false))))
			Expect(sc.Capabilities).NotTo(BeNil())
			Expect(sc.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}))
			Expect(sc.Capabilities.Add).To(BeEmpty())
			Expect(sc.SeccompProfile).To(Equal(&corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}))
		})

		It("runs /manager with leader election, the probe and metrics ports, and writable /tmp for Helm", func() {
			d := deployment(objs)
			Expect(d.Spec.Replicas).To(Equal(ptr.To[int32](2)))
			c := d.Spec.Template.Spec.Containers[0]
			Expect(c.Name).To(Equal("manager"))
			Expect(c.Image).To(Equal("ghcr.io/clever-operator/clever-operator:v0.1.0"))
			Expect(c.Command).To(Equal([]string{"/manager"}))
			Expect(c.Args).To(ContainElements("--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8443",
				"--zap-log-level=info", "--zap-encoder=json"))
			Expect(c.Args).NotTo(ContainElement(HavePrefix("--watch-namespace")))
			Expect(c.Args).NotTo(ContainElement(HavePrefix("--metrics-secure")), "secure by default")
			Expect(c.Ports).To(ConsistOf(
				corev1.ContainerPort{Name: "metrics", ContainerPort: 8443, Protocol: corev1.ProtocolTCP},
				corev1.ContainerPort{Name: "probes", ContainerPort: 8081, Protocol: corev1.ProtocolTCP},
			))
			Expect(c.LivenessProbe.HTTPGet.Path).To(Equal("/healthz"))
			Expect(c.LivenessProbe.HTTPGet.Port.String()).To(Equal("probes"))
			Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))
			Expect(c.ReadinessProbe.HTTPGet.Port.String()).To(Equal("probes"))
			// From docs/performance.md's figures (values.yaml explains them).
			Expect(c.Resources.Requests.Cpu().String()).To(Equal("20m"))
			Expect(c.Resources.Requests.Memory().String()).To(Equal("128Mi"))
			Expect(c.Resources.Limits.Cpu().String()).To(Equal("500m"))
			Expect(c.Resources.Limits.Memory().String()).To(Equal("384Mi"))
			Expect(c.Env).To(ContainElements(
				corev1.EnvVar{Name: "HELM_CACHE_HOME", Value: "/tmp/helm/cache"},
				corev1.EnvVar{Name: "HELM_CONFIG_HOME", Value: "/tmp/helm/config"},
				corev1.EnvVar{Name: "HELM_DATA_HOME", Value: "/tmp/helm/data"},
			))
			Expect(c.VolumeMounts).To(ConsistOf(corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"}))
			Expect(d.Spec.Template.Spec.Volumes).To(ConsistOf(corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}))
			Expect(d.Spec.Template.Spec.ServiceAccountName).To(Equal(fullname))
		})

		It("reads credentials from the created Secret through envFrom, and rolls the pods when they change", func() {
			d := deployment(objs)
			c := d.Spec.Template.Spec.Containers[0]
			Expect(c.EnvFrom).To(Equal([]corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: credentialsSecret}}}}))
			for _, e := range c.Env {
				Expect(e.Name).NotTo(HavePrefix("CLEVER_OPERATOR_API_"), "credentials come from the Secret only")
			}
			sum := d.Spec.Template.Annotations["checksum/credentials"]
			Expect(sum).To(MatchRegexp(`^[0-9a-f]{64}$`))

			other := deployment(kube.Decode([]byte(mustTemplate(append(fullArgs(), "--set-string", "credentials.bearerToken=another")...))))
			Expect(other.Spec.Template.Annotations["checksum/credentials"]).NotTo(Equal(sum))

			secret := &corev1.Secret{}
			toTyped(findOne(objs, "Secret", credentialsSecret), secret)
			Expect(secret.Namespace).To(Equal(namespace))
			Expect(secret.Type).To(Equal(corev1.SecretTypeOpaque))
			want := map[string][]byte{}
			for k, v := range fakeCreds {
				want[credentialEnv[k]] = []byte(v)
			}
			Expect(secret.Data).To(Equal(want))
			Expect(secret.StringData).To(BeEmpty())
		})

		It("puts only non-empty credentials in the Secret", func() {
			o := kube.Decode([]byte(mustTemplate("--set", "credentials.create=true", "--set-string", "credentials.bearerToken=only-this")))
			secret := &corev1.Secret{}
			toTyped(findOne(o, "Secret", credentialsSecret), secret)
			Expect(secret.Data).To(Equal(map[string][]byte{"CLEVER_OPERATOR_API_BEARER_TOKEN": []byte("only-this")}))
		})

		It("renders no ConfigMap and references none", func() {
			Expect(find(objs, "ConfigMap")).To(BeEmpty())
			// The RBAC rules name configmaps (the add-ons' optional ConfigMaps) and the CRDs
			// describe spec.secret.configMap; the operator's own objects reference none.
			for _, doc := range documents(manifest) {
				o := kube.Decode([]byte(doc))
				if len(o) == 1 && o[0].GetKind() == "CustomResourceDefinition" {
					continue
				}
				lower := strings.ToLower(doc)
				for _, ref := range []string{"configmapref", "configmapkeyref", "configmap:"} {
					Expect(lower).NotTo(ContainSubstring(ref))
				}
			}
		})

		It("shows no credential value anywhere but in the Secret's data", func() {
			seenSecret := false
			for _, doc := range documents(manifest) {
				o := kube.Decode([]byte(doc))
				if len(o) == 1 && o[0].GetKind() == "Secret" && o[0].GetName() == credentialsSecret {
					seenSecret = true
					rest := o[0].DeepCopy()
					unstructured.RemoveNestedField(rest.Object, "data")
					unstructured.RemoveNestedField(rest.Object, "stringData")
					b, err := json.Marshal(rest.Object)
					Expect(err).NotTo(HaveOccurred())
					doc = string(b)
				}
				for k, v := range fakeCreds {
					Expect(doc).NotTo(ContainSubstring(v), "credentials.%s leaked", k)
					Expect(doc).NotTo(ContainSubstring(base64.StdEncoding.EncodeToString([]byte(v))), "credentials.%s leaked (base64)", k)
				}
			}
			Expect(seenSecret).To(BeTrue())
		})

		It("exposes metrics through a Service on port 8443 named metrics", func() {
			svc := &corev1.Service{}
			toTyped(findOne(objs, "Service", fullname+"-metrics"), svc)
			Expect(svc.Spec.Ports).To(ConsistOf(corev1.ServicePort{Name: "metrics", Port: 8443, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP}))
			d := deployment(objs)
			for k, v := range svc.Spec.Selector {
				Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(k, v))
			}
			Expect(find(objs, "ServiceMonitor")).To(BeEmpty())
		})

		It("lets only labelled namespaces reach the metrics port, and allows all egress", func() {
			np := findOne(objs, "NetworkPolicy", fullname)
			types, _, _ := unstructured.NestedStringSlice(np.Object, "spec", "policyTypes")
			Expect(types).To(ConsistOf("Ingress", "Egress"))
			ingress, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
			Expect(normalized(ingress)).To(Equal(normalized([]any{map[string]any{
				"from":  []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"metrics": "enabled"}}}},
				"ports": []any{map[string]any{"port": 8443, "protocol": "TCP"}},
			}})))
			egress, _, _ := unstructured.NestedSlice(np.Object, "spec", "egress")
			Expect(egress).To(Equal([]any{map[string]any{}}))
			selector, _, _ := unstructured.NestedStringMap(np.Object, "spec", "podSelector", "matchLabels")
			Expect(selector).NotTo(BeEmpty())
			for k, v := range selector {
				Expect(deployment(objs).Spec.Template.Labels).To(HaveKeyWithValue(k, v))
			}
		})

		It("renders a PodDisruptionBudget with minAvailable 1", func() {
			pdb := findOne(objs, "PodDisruptionBudget", fullname)
			Expect(pdb.Object["spec"]).To(HaveKeyWithValue("minAvailable", BeNumerically("==", 1)))
		})
	})

	It("uses an existing Secret through envFrom and creates none", func() {
		objs := kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=my-clever-creds", "--set", "credentials.endpoint=https://api.example.test")))
		Expect(find(objs, "Secret")).To(BeEmpty())
		d := deployment(objs)
		c := d.Spec.Template.Spec.Containers[0]
		Expect(c.EnvFrom).To(Equal([]corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "my-clever-creds"}}}}))
		Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "CLEVER_OPERATOR_API_ENDPOINT", Value: "https://api.example.test"}))
		Expect(d.Spec.Template.Annotations).NotTo(HaveKey("checksum/credentials"))
		Expect(d.Spec.Replicas).To(Equal(ptr.To[int32](1)))
		Expect(find(objs, "NetworkPolicy")).To(BeEmpty())
		Expect(find(objs, "PodDisruptionBudget")).To(BeEmpty())
	})

	It("turns watchNamespaces into one comma-separated --watch-namespace", func() {
		d := deployment(kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x", "--set", "watchNamespaces={a,b}"))))
		args := d.Spec.Template.Spec.Containers[0].Args
		Expect(args).To(ContainElement("--watch-namespace=a,b"))
		Expect(args).To(HaveLen(len(deployment(kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x")))).Spec.Template.Spec.Containers[0].Args) + 1))
	})

	It("appends extraArgs and honours the logging, image and pod values", func() {
		d := deployment(kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x",
			"--set", "extraArgs={--resync-period=30m}", "--set", "logging.level=debug", "--set", "logging.encoder=console",
			"--set", "image.repository=registry.example/op", "--set", "image.tag=dev",
			"--set", "podLabels.team=platform", "--set", "podAnnotations.a=b", "--set", "nodeSelector.disk=ssd"))))
		c := d.Spec.Template.Spec.Containers[0]
		Expect(c.Args).To(ContainElements("--zap-log-level=debug", "--zap-encoder=console"))
		Expect(c.Args[len(c.Args)-1]).To(Equal("--resync-period=30m"))
		Expect(c.Image).To(Equal("registry.example/op:dev"))
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "platform"))
		Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("a", "b"))
		Expect(d.Spec.Template.Spec.NodeSelector).To(Equal(map[string]string{"disk": "ssd"}))

		digest := "sha256:" + strings.Repeat("ab", 32)
		d = deployment(kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x", "--set", "image.digest="+digest))))
		Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("ghcr.io/clever-operator/clever-operator@" + digest))
	})

	It("leaves the CRDs out with crds.install=false and unkept with crds.keep=false", func() {
		objs := kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x", "--set", "crds.install=false")))
		Expect(find(objs, "CustomResourceDefinition")).To(BeEmpty())
		objs = kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x", "--set", "crds.keep=false")))
		crds := find(objs, "CustomResourceDefinition")
		Expect(crds).To(HaveLen(nKinds()))
		for _, c := range crds {
			Expect(c.GetAnnotations()).NotTo(HaveKey("helm.sh/resource-policy"))
		}
	})

	It("leaves the per-kind roles out with rbac.aggregateRoles=false", func() {
		objs := kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x", "--set", "rbac.aggregateRoles=false")))
		Expect(find(objs, "ClusterRole")).To(HaveLen(3), "the two manager roles and the metrics reader")
	})

	It("uses an existing ServiceAccount with serviceAccount.create=false", func() {
		objs := kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x", "--set", "serviceAccount.create=false", "--set", "serviceAccount.name=op")))
		Expect(find(objs, "ServiceAccount")).To(BeEmpty())
		Expect(deployment(objs).Spec.Template.Spec.ServiceAccountName).To(Equal("op"))
		rb := &rbacv1.ClusterRoleBinding{}
		toTyped(findOne(objs, "ClusterRoleBinding", fullname+"-manager"), rb)
		Expect(rb.Subjects[0].Name).To(Equal("op"))
		toTyped(findOne(objs, "ClusterRoleBinding", fullname+"-manager-namespaced"), rb)
		Expect(rb.Subjects[0].Name).To(Equal("op"))
	})

	It("binds the namespaced rules with one RoleBinding per watched namespace, and nothing grants Secrets cluster-wide", func() {
		objs := kube.Decode([]byte(mustTemplate("--set", "watchNamespaces={team-a,team-b}")))
		var nss []string
		for _, o := range find(objs, "RoleBinding") {
			rb := &rbacv1.RoleBinding{}
			toTyped(o, rb)
			if rb.RoleRef.Name == fullname+"-manager-namespaced" {
				Expect(rb.RoleRef.Kind).To(Equal("ClusterRole"))
				Expect(rb.Subjects).To(ConsistOf(rbacv1.Subject{Kind: "ServiceAccount", Name: fullname, Namespace: namespace}))
				nss = append(nss, rb.Namespace)
			}
		}
		Expect(nss).To(ConsistOf("team-a", "team-b"))
		roles := map[string]*rbacv1.ClusterRole{}
		for _, o := range find(objs, "ClusterRole") {
			r := &rbacv1.ClusterRole{}
			toTyped(o, r)
			roles[r.Name] = r
		}
		for _, o := range find(objs, "ClusterRoleBinding") {
			crb := &rbacv1.ClusterRoleBinding{}
			toTyped(o, crb)
			for _, rule := range roles[crb.RoleRef.Name].Rules {
				Expect(rule.Resources).NotTo(ContainElement("secrets"), "ClusterRoleBinding %s grants Secrets cluster-wide", crb.Name)
			}
		}
		Expect(deployment(objs).Spec.Template.Spec.Containers[0].Args).To(ContainElement("--watch-namespace=team-a,team-b"))
	})

	It("serves plain-HTTP metrics with metrics.secure=false, and none with metrics.enabled=false", func() {
		objs := kube.Decode([]byte(mustTemplate("--set", "metrics.secure=false", "--set", "metrics.serviceMonitor.enabled=true")))
		Expect(deployment(objs).Spec.Template.Spec.Containers[0].Args).To(ContainElements("--metrics-bind-address=:8443", "--metrics-secure=false"))
		endpoints, _, _ := unstructured.NestedSlice(findOne(objs, "ServiceMonitor", fullname+"-metrics").Object, "spec", "endpoints")
		Expect(endpoints[0]).To(HaveKeyWithValue("scheme", "http"))
		Expect(endpoints[0]).NotTo(HaveKey("bearerTokenFile"))

		objs = kube.Decode([]byte(mustTemplate("--set", "metrics.enabled=false", "--set", "metrics.serviceMonitor.enabled=true")))
		Expect(deployment(objs).Spec.Template.Spec.Containers[0].Args).To(ContainElement("--metrics-bind-address=0"))
		Expect(find(objs, "Service")).To(BeEmpty())
		Expect(find(objs, "ServiceMonitor")).To(BeEmpty())

		objs = kube.Decode([]byte(mustTemplate("--set", "metrics.certSecret=metrics-tls")))
		d := deployment(objs)
		Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs"))
		Expect(d.Spec.Template.Spec.Containers[0].VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "metrics-certs", MountPath: "/tmp/k8s-metrics-server/metrics-certs", ReadOnly: true}))
	})

	It("renders a ServiceMonitor selecting the metrics Service when enabled", func() {
		objs := kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x", "--set", "metrics.serviceMonitor.enabled=true",
			"--set", "metrics.serviceMonitor.additionalLabels.release=prom")))
		sm := findOne(objs, "ServiceMonitor", fullname+"-metrics")
		Expect(sm.GetAPIVersion()).To(Equal("monitoring.coreos.com/v1"))
		Expect(sm.GetLabels()).To(HaveKeyWithValue("release", "prom"))
		endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		Expect(endpoints).To(HaveLen(1))
		Expect(endpoints[0]).To(HaveKeyWithValue("port", "metrics"))
		Expect(endpoints[0]).To(HaveKeyWithValue("path", "/metrics"))
		Expect(endpoints[0]).To(HaveKeyWithValue("scheme", "https"))
		Expect(endpoints[0]).To(HaveKeyWithValue("bearerTokenFile", "/var/run/secrets/kubernetes.io/serviceaccount/token"))
		Expect(endpoints[0]).To(HaveKeyWithValue("tlsConfig", map[string]any{"insecureSkipVerify": true}))
		selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		svc := findOne(objs, "Service", fullname+"-metrics")
		for k, v := range selector {
			Expect(svc.GetLabels()).To(HaveKeyWithValue(k, v))
		}
	})

	It("ships the Grafana dashboard as a ConfigMap for the Grafana sidecar, only when asked", func() {
		for _, o := range find(kube.Decode([]byte(mustTemplate())), "ConfigMap") {
			Expect(o.GetLabels()).NotTo(HaveKey("grafana_dashboard"), "no dashboard by default")
		}
		want, err := os.ReadFile(filepath.Join(repoRoot, "config", "grafana", "clever-operator-dashboard.json"))
		Expect(err).NotTo(HaveOccurred())

		objs := kube.Decode([]byte(mustTemplate("--set", "metrics.grafanaDashboard.enabled=true")))
		cm := findOne(objs, "ConfigMap", fullname+"-dashboard")
		Expect(cm.GetNamespace()).To(Equal(namespace))
		Expect(cm.GetLabels()).To(HaveKeyWithValue("grafana_dashboard", "1"))
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		Expect(data).To(HaveLen(1))
		Expect(data["clever-operator.json"]).To(Equal(string(want)), "the dashboard, byte for byte")

		objs = kube.Decode([]byte(mustTemplate("--set", "metrics.grafanaDashboard.enabled=true", "--set", "metrics.grafanaDashboard.namespace=monitoring",
			"--set", "metrics.grafanaDashboard.label=dashboards", "--set-string", "metrics.grafanaDashboard.labelValue=clever",
			"--set", "metrics.grafanaDashboard.annotations.grafana_folder=Operators")))
		cm = findOne(objs, "ConfigMap", fullname+"-dashboard")
		Expect(cm.GetNamespace()).To(Equal("monitoring"))
		Expect(cm.GetLabels()).To(HaveKeyWithValue("dashboards", "clever"))
		Expect(cm.GetLabels()).NotTo(HaveKey("grafana_dashboard"))
		Expect(cm.GetAnnotations()).To(HaveKeyWithValue("grafana_folder", "Operators"))

		_, err = helmTemplate("--set", "metrics.grafanaDashboard.enabled=true", "--set", "metrics.grafanaDashboard.label=")
		Expect(err).To(HaveOccurred(), "an empty label key is refused by the schema")
	})

	It("is generated from config/ (hack/gen-chart.sh --check)", func() {
		cmd := exec.Command("go", "run", "./hack/genchart", "-root", ".", "-check")
		cmd.Dir = repoRoot
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
	})
})

var _ = Describe("on the envtest API server", Ordered, func() {
	var objs []*unstructured.Unstructured
	var crds []*unstructured.Unstructured

	BeforeAll(func() {
		objs = kube.Decode([]byte(mustTemplate(fullArgs()...)))
		crds = find(objs, "CustomResourceDefinition")
		Expect(crds).To(HaveLen(nKinds()))
	})

	It("creates the chart's CRDs for real", func() {
		var typed []*apiextensionsv1.CustomResourceDefinition
		for _, c := range crds {
			Expect(k8s.Create(ctx, c.DeepCopy())).To(Succeed(), c.GetName())
			crd := &apiextensionsv1.CustomResourceDefinition{}
			toTyped(c, crd)
			typed = append(typed, crd)
		}
		Expect(envtest.WaitForCRDs(restCfg, typed, envtest.CRDInstallOptions{PollInterval: 100 * time.Millisecond, MaxTime: 20 * time.Second})).To(Succeed())
	})

	It("accepts every other object in a server-side dry-run apply", func() {
		// The release namespace enforces the restricted Pod Security Standard.
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: map[string]string{
			"pod-security.kubernetes.io/enforce":         "restricted",
			"pod-security.kubernetes.io/enforce-version": "latest",
		}}})).To(Succeed())

		applied := map[string]int{}
		for _, o := range objs {
			if o.GetKind() == "CustomResourceDefinition" {
				continue
			}
			obj := o.DeepCopy()
			Expect(k8s.Patch(ctx, obj, client.Apply, client.DryRunAll, client.FieldOwner("chart-test"), client.ForceOwnership)).
				To(Succeed(), "%s %s", o.GetKind(), o.GetName())
			Expect(obj.GetUID()).NotTo(BeEmpty(), "the API server answered with the object it would store")
			applied[o.GetKind()]++
		}
		Expect(applied).To(Equal(map[string]int{
			"ServiceAccount": 1, "Secret": 1, "ClusterRole": 3 + 2*nKinds(), "ClusterRoleBinding": 2, "Role": 1, "RoleBinding": 1,
			"Service": 1, "Deployment": 1, "NetworkPolicy": 1, "PodDisruptionBudget": 1,
			"ValidatingAdmissionPolicy": 2, "ValidatingAdmissionPolicyBinding": 2, // deletion protection, credentials
		}))

		// Dry run: nothing was stored.
		err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: fullname}, &appsv1.Deployment{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Deployment must not exist after a dry run: %v", err)
	})

	It("admits the operator's pod under the restricted Pod Security Standard, with the default and other values", func() {
		d := deployment(objs)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "manager-", Namespace: namespace, Labels: d.Spec.Template.Labels},
			Spec:       d.Spec.Template.Spec,
		}
		Expect(k8s.Create(ctx, pod.DeepCopy(), client.DryRunAll)).To(Succeed())
		for _, args := range [][]string{
			nil, // no values at all
			{"--set", "credentials.cleverToolsSecret=login", "--set", "metrics.certSecret=metrics-tls", "--set", "watchNamespaces={a,b}"},
			{"--set", "metrics.enabled=false", "--set", "credentials.existingSecret=mine"},
		} {
			other := deployment(kube.Decode([]byte(mustTemplate(args...))))
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "manager-", Namespace: namespace}, Spec: other.Spec.Template.Spec}
			Expect(k8s.Create(ctx, p, client.DryRunAll)).To(Succeed(), "values %v", args)
			c := other.Spec.Template.Spec.Containers[0]
			Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(Equal(ptr.To(true)), "values %v", args)
		}

		// Control: the same pod allowed to escalate privileges is refused, so the check above is real.
		bad := pod.DeepCopy()
		bad.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
		err := k8s.Create(ctx, bad, client.DryRunAll)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "expected a PodSecurity rejection, got %v", err)
		Expect(err.Error()).To(ContainSubstring("allowPrivilegeEscalation"))
	})

	It("installs, upgrades and uninstalls with helm, adopting existing CRDs and keeping them", func() {
		const rel, ns = "real", "helm-real"
		// The CRDs already exist (as after `make install`): adopt them as values.yaml says.
		for _, c := range crds {
			patch := fmt.Sprintf(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"Helm"},"annotations":{"meta.helm.sh/release-name":%q,"meta.helm.sh/release-namespace":%q}}}`, rel, ns)
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: c.GetName()}}
			Expect(k8s.Patch(ctx, crd, client.RawPatch("application/merge-patch+json", []byte(patch)))).To(Succeed())
		}

		// Installed into a namespace that enforces the restricted Pod Security Standard.
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest",
		}}})).To(Succeed())
		install := append([]string{"install", rel, chartDir, "--kubeconfig", kubeconfig, "--namespace", ns}, createArgs()...)
		out, err := runHelm(install...)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("NOTES:"))
		Expect(out).To(ContainSubstring("real-clever-operator-credentials"))
		// credentials.create=true: NOTES warns that the values live in Helm's release history.
		Expect(out).To(ContainSubstring("WARNING: credentials.create=true puts the credentials in this release's values"))
		Expect(out).To(ContainSubstring("sh.helm.release.v1.real.v<N>"))
		for k, v := range fakeCreds {
			Expect(out).NotTo(ContainSubstring(v), "helm install output (NOTES) shows credentials.%s", k)
		}

		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "real-clever-operator"}, d)).To(Succeed())
		Expect(d.Spec.Replicas).To(Equal(ptr.To[int32](1)))
		// envtest runs no controllers, so no ReplicaSet makes the pod: ask admission directly
		// whether the installed Deployment's pod would be admitted in this namespace.
		installed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "manager-", Namespace: ns}, Spec: d.Spec.Template.Spec}
		Expect(k8s.Create(ctx, installed, client.DryRunAll)).To(Succeed())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: "postgresqls.api.clever-cloud.com"}, crd)).To(Succeed())
		Expect(crd.Annotations).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"))

		out, err = runHelm("upgrade", rel, chartDir, "--kubeconfig", kubeconfig, "--namespace", ns, "--reuse-values", "--set", "replicaCount=2")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "real-clever-operator"}, d)).To(Succeed())
		Expect(d.Spec.Replicas).To(Equal(ptr.To[int32](2)))

		out, err = runHelm("uninstall", rel, "--kubeconfig", kubeconfig, "--namespace", ns)
		Expect(err).NotTo(HaveOccurred(), out)
		err = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "real-clever-operator"}, d)
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Deployment should be gone: %v", err)
		for _, c := range crds {
			Expect(k8s.Get(ctx, client.ObjectKey{Name: c.GetName()}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed(), "CRD %s must be kept", c.GetName())
		}
	})

	It("installs with no values at all: the default existing Secret, no credentials in the release, no warning", func() {
		const rel, ns = "plain", "helm-plain"
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest",
		}}})).To(Succeed())
		// The CRDs are the previous release's (kept): leave them out here.
		out, err := runHelm("install", rel, chartDir, "--kubeconfig", kubeconfig, "--namespace", ns, "--set", "crds.install=false")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("read from the Secret " + ns + "/clever-operator-credentials, which this chart does not manage (the default credentials.existingSecret)"))
		Expect(out).NotTo(ContainSubstring("WARNING"))
		Expect(out).To(ContainSubstring("https://plain-clever-operator-metrics." + ns + ".svc:8443/metrics"))
		secrets := &corev1.SecretList{}
		Expect(k8s.List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
		for _, sec := range secrets.Items {
			Expect(string(sec.Type)).To(Equal("helm.sh/release.v1"), "only Helm's release record, no credentials Secret: %s", sec.Name)
		}
		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "plain-clever-operator"}, d)).To(Succeed())
		Expect(k8s.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "manager-", Namespace: ns}, Spec: d.Spec.Template.Spec}, client.DryRunAll)).To(Succeed())
		out, err = runHelm("uninstall", rel, "--kubeconfig", kubeconfig, "--namespace", ns)
		Expect(err).NotTo(HaveOccurred(), out)
	})
})
