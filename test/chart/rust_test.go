package chart_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/clever-operator/clever-operator/test/kube"
)

// The Rust operator's chart (CleverCloud/clever-operator, deployments/kubernetes/helm):
// testdata/rust-values.yaml is its values.yaml, testdata/rust-chart the rest of it.

// rustCreds are credentials given to the Rust chart under config.*; the key is the name
// under config (and under credentials), the value a fake.
var rustCreds = map[string]string{
	"token":          "rtok-FAKE-6d1e0b7a93",
	"secret":         "rsec-FAKE-a40c2f9e15",
	"consumerKey":    "rck-FAKE-3b7f80d2c6",
	"consumerSecret": "rcs-FAKE-e95a1c4b08",
}

// rustCredArgs are the --set-string arguments of rustCreds under config.*.
func rustCredArgs() []string {
	var args []string
	for _, k := range []string{"token", "secret", "consumerKey", "consumerSecret"} {
		args = append(args, "--set-string", "config."+k+"="+rustCreds[k])
	}
	return args
}

// rustCredEnv is what the created credentials Secret must hold for rustCreds.
func rustCredEnv() map[string][]byte {
	out := map[string][]byte{}
	for k, v := range rustCreds {
		out[credentialEnv[k]] = []byte(v)
	}
	return out
}

func rustValuesFile() string {
	return filepath.Join(repoRoot, "test", "chart", "testdata", "rust-values.yaml")
}

// rustChart returns a copy of the vendored Rust chart with testdata/rust-values.yaml as its
// values.yaml.
func rustChart() string {
	GinkgoHelper()
	dir := filepath.Join(GinkgoT().TempDir(), "rust-chart")
	Expect(os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot, "test", "chart", "testdata", "rust-chart")))).To(Succeed())
	raw, err := os.ReadFile(rustValuesFile())
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(dir, "values.yaml"), raw, 0o644)).To(Succeed())
	return dir
}

// reuseValuesChart returns a copy of dist/chart rendered the way `helm upgrade
// --reuse-values` from the Rust chart renders it: Helm replaces the new chart's values.yaml
// by the old release's coalesced values (pkg/action/upgrade.go: `chart.Values = oldVals`),
// here the Rust chart's values.yaml.
func reuseValuesChart() string {
	GinkgoHelper()
	dir := filepath.Join(GinkgoT().TempDir(), "chart")
	Expect(os.CopyFS(dir, os.DirFS(chartDir))).To(Succeed())
	raw, err := os.ReadFile(rustValuesFile())
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(dir, "values.yaml"), raw, 0o644)).To(Succeed())
	return dir
}

// templateChart renders a chart directory like helmTemplate renders dist/chart: stdout
// only, or stdout and stderr on error.
func templateChart(dir, rel string, args ...string) (string, error) {
	cmd := exec.Command(helmBin, append([]string{"template", rel, dir, "--namespace", namespace, "--kube-version", kubeVersion}, args...)...)
	cmd.Env = helmEnv
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

func credentialsSecretOf(objs []*unstructured.Unstructured, name string) map[string][]byte {
	GinkgoHelper()
	s := &corev1.Secret{}
	toTyped(findOne(objs, "Secret", name), s)
	return s.Data
}

var _ = Describe("the Rust operator chart's values", func() {
	It("pass helm lint and render the credentials Secret from config.*, this operator's image and resources", func() {
		out, err := runHelm(append([]string{"lint", chartDir, "--strict", "--kube-version", kubeVersion, "-f", rustValuesFile()}, rustCredArgs()...)...)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("0 chart(s) failed"))

		// -f: as `helm upgrade -f values.yaml` (or --reset-then-reuse-values) gives them,
		// coalesced with this chart's values.yaml; then as --reuse-values gives them, alone.
		viaFile := mustTemplate(append([]string{"-f", rustValuesFile()}, rustCredArgs()...)...)
		reused, err := templateChart(reuseValuesChart(), release, rustCredArgs()...)
		Expect(err).NotTo(HaveOccurred(), reused)
		for name, manifest := range map[string]string{"-f rust-values.yaml": viaFile, "--reuse-values": reused} {
			objs := kube.Decode([]byte(manifest))
			Expect(credentialsSecretOf(objs, credentialsSecret)).To(Equal(rustCredEnv()), name)
			d := deployment(objs)
			c := d.Spec.Template.Spec.Containers[0]
			Expect(c.EnvFrom).To(Equal([]corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: credentialsSecret}}}}), name)
			Expect(d.Spec.Template.Annotations).To(HaveKey("checksum/credentials"), name)
			// Never the Rust operator's image (its tag is a commit of that operator).
			Expect(c.Image).To(Equal("ghcr.io/clever-operator/clever-operator:v0.1.0"), name)
			Expect(c.Command).To(Equal([]string{"/manager"}), name)
			// The Rust chart's 64M (requests = limits) become this chart's defaults.
			Expect(c.Resources.Limits.Memory().String()).To(Equal("384Mi"), name)
			Expect(c.Resources.Requests.Memory().String()).To(Equal("128Mi"), name)
			Expect(c.Resources.Limits).NotTo(HaveKey(corev1.ResourceEphemeralStorage), name)
			// Its securityContext's uid and gid stay, merged with this chart's restricted one.
			Expect(c.SecurityContext.RunAsUser).To(Equal(ptr.To[int64](20000)), name)
			Expect(c.SecurityContext.RunAsGroup).To(Equal(ptr.To[int64](25000)), name)
			Expect(c.SecurityContext.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}), name)
			Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(Equal(ptr.To(true)), name)
			Expect(d.Spec.Template.Spec.SecurityContext.SeccompProfile).NotTo(BeNil(), name)
			Expect(c.ImagePullPolicy).To(Equal(corev1.PullAlways), name)
			Expect(find(objs, "PodDisruptionBudget")).To(BeEmpty(), name)
			Expect(find(objs, "NetworkPolicy")).To(BeEmpty(), name)
			Expect(find(objs, "CustomResourceDefinition")).To(HaveLen(nKinds()), name)
			Expect(find(objs, "ValidatingAdmissionPolicy")).To(HaveLen(2), name)
		}
	})

	It("render with --reuse-values' values alone, keeping the user's other values", func() {
		dir := reuseValuesChart()
		args := []string{"--set-string", "config.token=lone", "--set", "podDisruptionBudget.enabled=true", "--set", "podDisruptionBudget.minAvailable=1",
			"--set", "networkPolicy.enabled=true", "--set", "replicaCount=2", "--set", "nodeSelector.disk=ssd",
			"--set", "resources.limits.memory=96M", "--set", "forceNamespace=elsewhere"}
		out, err := templateChart(dir, release, args...)
		Expect(err).NotTo(HaveOccurred(), out)
		objs := kube.Decode([]byte(out))
		Expect(credentialsSecretOf(objs, credentialsSecret)).To(Equal(map[string][]byte{"CLEVER_OPERATOR_API_TOKEN": []byte("lone")}))
		d := deployment(objs)
		Expect(d.Spec.Replicas).To(Equal(ptr.To[int32](2)))
		Expect(d.Spec.Template.Spec.NodeSelector).To(Equal(map[string]string{"disk": "ssd"}))
		// A limit the user changed is theirs: kept (NOTES warns, see below).
		Expect(d.Spec.Template.Spec.Containers[0].Resources.Limits.Memory().Cmp(resource.MustParse("96M"))).To(Equal(0))
		// This chart's defaults fill in what the Rust chart had no value for.
		Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElements("--leader-elect", `--zap-log-level=info`))
		Expect(d.Namespace).To(Equal(namespace), "forceNamespace is ignored")

		pdb := &policyv1.PodDisruptionBudget{}
		toTyped(findOne(objs, "PodDisruptionBudget", fullname), pdb)
		Expect(pdb.Spec.MinAvailable).To(Equal(ptr.To(intstr.FromInt32(1))))
		// The Rust chart's NetworkPolicy rules (allow all, its default) are used as they are.
		np := &networkingv1.NetworkPolicy{}
		toTyped(findOne(objs, "NetworkPolicy", fullname), np)
		Expect(np.Spec.Ingress).To(Equal([]networkingv1.NetworkPolicyIngressRule{{}}))
		Expect(np.Spec.Egress).To(Equal([]networkingv1.NetworkPolicyEgressRule{{}}))
		Expect(np.Spec.PodSelector.MatchLabels).To(Equal(d.Spec.Selector.MatchLabels))
	})

	It("get NOTES warnings: a memory limit below the measured need, the Rust chart's PDB values, forceNamespace", func() {
		notes := func(args ...string) string {
			GinkgoHelper()
			// The CRDs may belong to another spec's release on this API server: left out.
			all := append([]string{"install", "notes", chartDir, "--dry-run=server", "--kubeconfig", kubeconfig, "--namespace", "notes-check",
				"--set", "crds.install=false"}, args...)
			out, err := runHelm(all...)
			Expect(err).NotTo(HaveOccurred(), out)
			return out[strings.Index(out, "NOTES:"):]
		}
		for _, limit := range []string{"64M", "64Mi", "100Mi", "157286399"} {
			out := notes("--set", "resources.limits.memory="+limit)
			Expect(out).To(ContainSubstring("WARNING: resources.limits.memory="+limit+" is below the 150Mi this operator needs"), limit)
		}
		for _, limit := range []string{"150Mi", "256Mi", "1Gi", "157286400", "0.5Gi"} { // 0.5Gi: not read, no warning
			Expect(notes("--set", "resources.limits.memory="+limit)).NotTo(ContainSubstring("WARNING: resources.limits.memory"), limit)
		}
		out := notes("--set", "podDisruptionBudget.enabled=true", "--set", "podDisruptionBudget.minAvailable=0", "--set", "forceNamespace=elsewhere")
		Expect(out).To(ContainSubstring("DEPRECATED: podDisruptionBudget.* (the Rust operator chart's names) were read as pdb.enabled=true,\npdb.minAvailable=0."))
		Expect(out).To(ContainSubstring("WARNING: forceNamespace=elsewhere (a Rust operator chart value) is ignored"))
		// The default values: none of these.
		Expect(notes()).NotTo(Or(ContainSubstring("WARNING"), ContainSubstring("DEPRECATED"), ContainSubstring("Rust")))
	})

	DescribeTable("never run the Rust operator's image",
		func(repository, tag, want string) {
			c := deployment(kube.Decode([]byte(mustTemplate("--set", "image.repository="+repository, "--set-string", "image.tag="+tag)))).Spec.Template.Spec.Containers[0]
			Expect(c.Image).To(Equal(want))
		},
		Entry("Docker Hub short name, a Rust commit tag", "clevercloud/clever-operator", "ca53fedf01d1f813df6f061ef511b6e576084531", "ghcr.io/clever-operator/clever-operator:v0.1.0"),
		Entry("docker.io/", "docker.io/clevercloud/clever-operator", "0.6.0", "ghcr.io/clever-operator/clever-operator:v0.1.0"),
		Entry("index.docker.io/", "index.docker.io/clevercloud/clever-operator", "", "ghcr.io/clever-operator/clever-operator:v0.1.0"),
		Entry("another repository is used as given", "registry.example/clevercloud/clever-operator", "v0.1.0", "registry.example/clevercloud/clever-operator:v0.1.0"),
		Entry("this operator's image, another tag", "ghcr.io/clever-operator/clever-operator", "v0.2.0", "ghcr.io/clever-operator/clever-operator:v0.2.0"),
	)

	It("keeps rejecting typos, under config.* too", func() {
		out, err := helmTemplate("-f", rustValuesFile(), "--set-string", "config.tokne=x")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("tokne"))
		out, err = helmTemplate("-f", rustValuesFile(), "--set", "config.token=12345")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("/config/token"))
	})

	DescribeTable("fail with a readable message on contradictory values",
		func(args []string, message string) {
			out, err := helmTemplate(args...)
			Expect(err).To(HaveOccurred(), out)
			Expect(out).To(ContainSubstring(message))
			for _, v := range rustCreds {
				Expect(out).NotTo(ContainSubstring(v), "the error shows a credential")
			}
		},
		Entry("config.token and credentials.token differ",
			[]string{"--set-string", "config.token=" + rustCreds["token"], "--set-string", "credentials.token=" + rustCreds["secret"]},
			"config.token (the Rust operator chart's name, deprecated) and credentials.token are both set, to different values: keep credentials.token only (--set config.token=)"),
		Entry("config.consumerSecret and credentials.consumerSecret differ",
			append(rustCredArgs(), "--set-string", "credentials.consumerSecret=other"),
			"config.consumerSecret (the Rust operator chart's name, deprecated) and credentials.consumerSecret are both set"),
		Entry("config.* with credentials.existingSecret",
			append(rustCredArgs(), "--set", "credentials.existingSecret=mine"),
			"config.token (the Rust operator chart's credentials, deprecated) is set together with credentials.existingSecret: the chart would create a credentials Secret from config.* and not read mine"),
		Entry("podDisruptionBudget and pdb disagree",
			[]string{"--set", "podDisruptionBudget.enabled=true", "--set", "podDisruptionBudget.minAvailable=0", "--set", "pdb.enabled=true"},
			"podDisruptionBudget.minAvailable (the Rust operator chart's name, deprecated) is 0 and pdb.minAvailable is 1: keep pdb.* only"),
	)

	It("accept the same value under both names", func() {
		objs := kube.Decode([]byte(mustTemplate("--set-string", "config.token=same", "--set-string", "credentials.token=same", "--set", "credentials.create=true",
			"--set", "podDisruptionBudget.enabled=true", "--set", "podDisruptionBudget.minAvailable=1", "--set", "pdb.enabled=true")))
		Expect(credentialsSecretOf(objs, credentialsSecret)).To(Equal(map[string][]byte{"CLEVER_OPERATOR_API_TOKEN": []byte("same")}))
		Expect(find(objs, "PodDisruptionBudget")).To(HaveLen(1))
	})

	It("start every hand-written template with the values initialisation (generated ones get it from hack/gen-chart.sh)", func() {
		files, err := filepath.Glob(filepath.Join(chartDir, "templates", "*"))
		Expect(err).NotTo(HaveOccurred())
		more, err := filepath.Glob(filepath.Join(chartDir, "templates", "*", "*"))
		Expect(err).NotTo(HaveOccurred())
		n := 0
		for _, f := range append(files, more...) {
			if st, err := os.Stat(f); err != nil || st.IsDir() || strings.HasPrefix(filepath.Base(f), "_") {
				continue
			}
			raw, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			s := string(raw)
			init := strings.Index(s, `{{- include "clever-operator.init" . }}`)
			Expect(init).To(BeNumerically(">=", 0), "%s does not run clever-operator.init", f)
			if v := strings.Index(s, ".Values"); v >= 0 {
				Expect(init).To(BeNumerically("<", v), "%s reads .Values before clever-operator.init", f)
			}
			n++
		}
		Expect(n).To(BeNumerically(">", 20))
	})
})

// The real thing: the Rust chart installed as a Helm release, then `helm upgrade` to
// dist/chart, each time on a kube-apiserver of its own (the Rust chart's CRDs and ClusterRole
// are cluster-wide, owned by that release, and this chart's CRDs are kept by `helm uninstall`;
// deleting CRDs just updated can leave them stuck: "could not list instances: storage is
// (re)initializing").
var _ = Describe("helm upgrade from the Rust operator's chart", func() {
	var (
		rk8s client.Client
		rkc  string
	)

	BeforeEach(func() {
		renv, err := kube.NewEnvironment()
		Expect(err).NotTo(HaveOccurred())
		_, rk8s = kube.StartEnvironment(renv, client.Options{Scheme: chartScheme()})
		rkc = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		_, err = kube.WriteAdminKubeconfig(renv, "helm", rkc)
		Expect(err).NotTo(HaveOccurred())
	})

	// crdUIDs returns the UIDs of the api.clever-cloud.com CRDs.
	crdUIDs := func() map[string]string {
		GinkgoHelper()
		list := &apiextensionsv1.CustomResourceDefinitionList{}
		Expect(rk8s.List(ctx, list)).To(Succeed())
		out := map[string]string{}
		for _, c := range list.Items {
			if c.Spec.Group == "api.clever-cloud.com" {
				out[c.Name] = string(c.UID)
			}
		}
		return out
	}

	DescribeTable("keeps the credentials of config.*, the CRDs and the custom resources",
		func(rel, ns string, upgradeFlags []string, deploymentName string) {
			Expect(rk8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

			// Revision 1: the Rust chart, credentials given as its README says (values).
			out, err := runHelm(append([]string{"install", rel, rustChart(), "--kubeconfig", rkc, "--namespace", ns}, rustCredArgs()...)...)
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(rk8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "clever-operator-configuration"}, &corev1.ConfigMap{})).To(Succeed())
			before := crdUIDs()
			Expect(before).To(HaveLen(8), "the Rust chart's 8 CRDs")
			// A resource of one of its kinds, as the Rust operator's users have them.
			redis := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal([]byte(fmt.Sprintf(`{apiVersion: api.clever-cloud.com/v1, kind: Redis, metadata: {name: cache, namespace: %s},
spec: {organisation: orga_00000000-0000-0000-0000-000000000000, options: {version: 724, encryption: false}, instance: {region: par, plan: s_mono}}}`, ns)), &redis.Object)).To(Succeed())
			Eventually(func() error { return rk8s.Create(ctx, redis.DeepCopy()) }).WithTimeout(20 * time.Second).Should(Succeed())
			Expect(rk8s.Get(ctx, client.ObjectKeyFromObject(redis), redis)).To(Succeed())

			// Revision 2: this chart.
			args := append([]string{"upgrade", rel, chartDir, "--kubeconfig", rkc, "--namespace", ns}, upgradeFlags...)
			out, err = runHelm(args...)
			Expect(err).NotTo(HaveOccurred(), out)

			// The credentials, in this chart's Secret, under this operator's variables.
			secret := &corev1.Secret{}
			secretName := deploymentName + "-credentials"
			Expect(rk8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: secretName}, secret)).To(Succeed())
			Expect(secret.Data).To(Equal(rustCredEnv()))
			d := &appsv1.Deployment{}
			Expect(rk8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: deploymentName}, d)).To(Succeed())
			Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1))
			c := d.Spec.Template.Spec.Containers[0]
			Expect(c.Name).To(Equal("manager"))
			Expect(c.Image).To(Equal("ghcr.io/clever-operator/clever-operator:v0.1.0"))
			Expect(c.EnvFrom).To(Equal([]corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: secretName}}}}))
			Expect(c.Resources.Limits.Memory().String()).To(Equal("384Mi"))
			Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("app.kubernetes.io/name", "clever-operator"))
			for _, l := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app"} {
				if v, ok := d.Spec.Selector.MatchLabels[l]; ok {
					Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(l, v), "the pods match the selector")
				}
			}

			// NOTES: the deprecation, the image, the resources, and the Helm-history warning.
			Expect(out).To(ContainSubstring("DEPRECATED: config.token, config.secret, config.consumerKey, config.consumerSecret (the Rust operator chart's value names) were read as"))
			Expect(out).To(ContainSubstring("credentials.token, credentials.secret, credentials.consumerKey, credentials.consumerSecret, with credentials.create=true"))
			Expect(out).To(ContainSubstring("WARNING: credentials.create=true puts the credentials in this release's values"))
			for _, v := range rustCreds {
				Expect(out).NotTo(ContainSubstring(v), "NOTES show a credential")
			}
			if slices.Contains(upgradeFlags, "--reuse-values") {
				Expect(out).To(ContainSubstring("NOTE: image.repository=clevercloud/clever-operator (tag ca53fedf01d1f813df6f061ef511b6e576084531) is the Rust operator's image"))
				Expect(out).To(ContainSubstring("NOTE: resources were the Rust operator chart's defaults (64M of memory, 100m of CPU)"))
			} else {
				Expect(out).NotTo(ContainSubstring("Rust operator's image"), "only user-supplied values come over")
			}
			Expect(out).NotTo(ContainSubstring("WARNING: resources.limits.memory"))

			// Its CRDs updated in place (same UIDs), the resource still there, six more kinds.
			after := crdUIDs()
			for name, uid := range before {
				Expect(after).To(HaveKeyWithValue(name, uid), "CRD %s replaced", name)
			}
			Expect(after).To(HaveLen(nKinds()))
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(schema.GroupVersionKind{Group: "api.clever-cloud.com", Version: "v1", Kind: "Redis"})
			Expect(rk8s.Get(ctx, client.ObjectKeyFromObject(redis), got)).To(Succeed())
			Expect(got.GetUID()).To(Equal(redis.GetUID()))
			// The Rust chart's own objects are gone: its ConfigMap (the credentials in clear),
			// its ClusterRole.
			err = rk8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "clever-operator-configuration"}, &corev1.ConfigMap{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Rust chart's ConfigMap: %v", err)
			err = rk8s.Get(ctx, client.ObjectKey{Name: "system:clever-operator"}, &rbacv1.ClusterRole{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Rust chart's ClusterRole: %v", err)

			// Another upgrade with --reuse-values (now this chart's values) keeps them too.
			out, err = runHelm("upgrade", rel, chartDir, "--kubeconfig", rkc, "--namespace", ns, "--reuse-values", "--set", "logging.level=debug")
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(rk8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: secretName}, secret)).To(Succeed())
			Expect(secret.Data).To(Equal(rustCredEnv()))

			// docs/migrating-from-rust-operator.md step 6: the credentials moved to a Secret of
			// the user's, config.* emptied.
			Expect(rk8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "clever-operator-api", Namespace: ns},
				Data: rustCredEnv()})).To(Succeed())
			out, err = runHelm("upgrade", rel, chartDir, "--kubeconfig", rkc, "--namespace", ns, "--reuse-values",
				"--set", "config.token=", "--set", "config.secret=", "--set", "config.consumerKey=", "--set", "config.consumerSecret=",
				"--set", "credentials.existingSecret=clever-operator-api")
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(out).NotTo(ContainSubstring("DEPRECATED"))
			Expect(out).NotTo(ContainSubstring("WARNING: credentials.create=true"))
			Expect(rk8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: deploymentName}, d)).To(Succeed())
			Expect(d.Spec.Template.Spec.Containers[0].EnvFrom).To(Equal([]corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "clever-operator-api"}}}}))
			err = rk8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: secretName}, &corev1.Secret{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the chart's credentials Secret: %v", err)

			out, err = runHelm("uninstall", rel, "--kubeconfig", rkc, "--namespace", ns)
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(crdUIDs()).To(Equal(after), "the CRDs are kept by helm uninstall")
		},
		// The Rust chart's README installs the release "clever-operator": its Deployment
		// clever-operator (selector app=clever-operator, immutable) becomes this chart's.
		Entry("--reuse-values, release clever-operator (the Rust README's)", "clever-operator", "rust-reuse", []string{"--reuse-values"}, "clever-operator"),
		Entry("--reset-then-reuse-values", "clever-operator", "rust-reset-reuse", []string{"--reset-then-reuse-values"}, "clever-operator"),
		Entry("no values flag (Helm reuses the values the user gave), another release name", "co", "rust-plain", nil, "co-clever-operator"),
	)
})
