package plugin_test

import (
	"context"
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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/test/kube"
)

const (
	routeCreate  = "POST /v2/organisations/{ownerId}/addons"
	routeMigrate = "POST /v2/organisations/{ownerId}/addons/{addonId}/migrations"
)

// preexisting creates, at the fake and outside the operator, one add-on of kind k in org,
// shaped as the kind's sample asks (plan, region, version, options), named name.
func preexisting(org string, k *kinds.Kind, name string) *clevercloud.Addon {
	GinkgoHelper()
	sample := kube.Sample(fmt.Sprintf("api_%s_%s.yaml", k.GVK.Version, k.Lower()), "x", org)
	region, err := k.Region(sample)
	Expect(err).NotTo(HaveOccurred())
	plan := k.FixedPlan
	if k.PlanFromSpec() {
		plan = fake.PlanID(k.ProviderID, k.SpecPlan(sample))
		Expect(plan).NotTo(BeEmpty(), "plan %s of %s", k.SpecPlan(sample), k.ProviderID)
	}
	opts, err := k.Options(sample)
	Expect(err).NotTo(HaveOccurred())
	api, err := clevercloud.NewFromConfig(apiConfig(), clevercloud.ClientOptions{RateLimit: -1})
	Expect(err).NotTo(HaveOccurred())
	a, err := api.CreateAddon(context.Background(), org, clevercloud.CreateOpts{Name: name, Region: region, ProviderID: k.ProviderID, Plan: plan, Options: opts})
	Expect(err).NotTo(HaveOccurred(), "creating a %s add-on at the fake", k.GVK.Kind)
	return a
}

// apply applies every document of a manifest as kubectl apply --server-side does.
func apply(manifest string) []*unstructured.Unstructured {
	GinkgoHelper()
	objs := kube.Decode([]byte(manifest))
	for _, o := range objs {
		Expect(k8s.Patch(context.Background(), o, client.Apply, client.FieldOwner("kubectl"), client.ForceOwnership)).To(Succeed(), "applying %s %s", o.GetKind(), o.GetName())
	}
	return objs
}

func resources(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if _, ok := kinds.KindFor(o.GroupVersionKind()); ok {
			out = append(out, o)
		}
	}
	return out
}

var _ = Describe("kubectl clever import", Ordered, func() {
	ctx := context.Background()
	var (
		ns, org  string
		made     = map[string]string{} // add-on id → kind
		imported []*unstructured.Unstructured
		calls    *kube.APICounter
		out      string
	)

	BeforeAll(func() {
		ns = suite.NewNamespace()
		org = suite.OrgOf(ns)
		for i := range kinds.Kinds {
			k := &kinds.Kinds[i]
			if k.Generic {
				continue // import maps a provider to its typed kind; it does not write Addon resources
			}
			a := preexisting(org, k, "Imported "+k.GVK.Kind)
			made[a.ID] = k.GVK.Kind
		}
		// Two add-ons with the same name, and one a clever-operator once created.
		redis, _ := kinds.KindFor(kinds.Kinds[1].GVK)
		a := preexisting(org, redis, "Imported Redis")
		made[a.ID] = "Redis"
		a = preexisting(org, redis, "kubernetes::Redis::5e1f0c2a-0000-4000-8000-00000000abcd")
		made[a.ID] = "Redis"
		time.Sleep(300 * time.Millisecond) // past the fake's provisioning delay
		calls = suite.CountCalls(ns)
	})

	It("writes one resource per add-on, bound by spec.addonId with its real plan, region and version, Orphan, and a grant naming exactly those add-ons", func() {
		var stderr string
		var err error
		out, stderr, err = run("", "import", "--org", org, "-n", ns, "--grant", "imported", "--grant-secret", "imported-clever")
		Expect(err).NotTo(HaveOccurred(), stderr)
		GinkgoWriter.Println(out)
		Expect(stderr).To(ContainSubstring(fmt.Sprintf("%d add-ons of %s imported", len(made), org)))
		objs := kube.Decode([]byte(out))
		Expect(objs).To(HaveLen(len(made) + 1))
		grant := objs[0]
		Expect(grant.GetKind()).To(Equal("CleverCredentials"))
		ids, _, _ := unstructured.NestedStringSlice(grant.Object, "spec", "binding", "addonIds")
		Expect(ids).To(ConsistOf(keys(made)))
		Expect(out).NotTo(ContainSubstring(creds.Token))
		Expect(out).NotTo(ContainSubstring("PASSWORD"))

		imported = resources(objs)
		Expect(imported).To(HaveLen(len(made)))
		seen := map[string]bool{}
		for _, o := range imported {
			id, _, _ := unstructured.NestedString(o.Object, "spec", "addonId")
			Expect(made).To(HaveKeyWithValue(id, o.GetKind()))
			Expect(seen).NotTo(HaveKey(o.GetName()), "names are unique")
			seen[o.GetName()] = true
			Expect(o.GetNamespace()).To(Equal(ns))
			Expect(nested(o, "spec", "deletionPolicy")).To(Equal("Orphan"))
			Expect(nested(o, "spec", "organisation")).To(Equal(org))
			Expect(nested(o, "spec", "credentialsRef", "name")).To(Equal("imported"))
		}
		Expect(seen).To(HaveKey("imported-redis"))
		Expect(seen).To(HaveKey("imported-redis-2"))
		Expect(seen).To(HaveKey("imported-postgresql"))
		Expect(out).To(ContainSubstring("WARNING: this add-on was created by clever-operator for a Redis with uid 5e1f0c2a-0000-4000-8000-00000000abcd"))
		for _, kind := range []string{"PostgreSql", "MySql", "MongoDb", "Redis", "ElasticSearch"} {
			o := byKind(imported, kind)
			sample := kube.Sample(fmt.Sprintf("api_v1_%s.yaml", strings.ToLower(kind)), ns, org)
			Expect(o.Object["spec"].(map[string]any)["options"].(map[string]any)["version"]).To(BeEquivalentTo(sample.Object["spec"].(map[string]any)["options"].(map[string]any)["version"]), "%s version code", kind)
			Expect(nested(o, "spec", "instance", "plan")).To(Equal(nested(sample, "spec", "instance", "plan")), "%s plan", kind)
		}
	})

	It("applied with its grant, makes every resource Ready with no add-on created or migrated", func() {
		// The namespace's own credentials the grant names (here, the same identity).
		doc := kube.OverrideConfig(fakeSrv.URL, creds)
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "imported-clever", Namespace: ns}, StringData: map[string]string{"config": doc}})).To(Succeed())
		apply(out)
		for _, o := range imported {
			Eventually(suite.ReadyOf(o), 90*time.Second).Should(Equal("True/Provisioned"), "%s %s", o.GetKind(), o.GetName())
			cur := suite.Get(o)
			Expect(kube.StatusString(cur, "addon")).To(Equal(nested(o, "spec", "addonId")))
			Expect(nested(cur, "spec", "deletionPolicy")).To(Equal("Orphan"))
		}
		Expect(calls.Route(routeCreate)).To(BeZero(), "no add-on created")
		Expect(calls.Route(routeMigrate)).To(BeZero(), "no migration started")
		Expect(calls.Matching("PUT")).To(BeZero(), "nothing changed at Clever Cloud")
		Expect(calls.Matching("DELETE")).To(BeZero())
		Consistently(func() int { return calls.Route(routeCreate) + calls.Route(routeMigrate) }, 3*time.Second).Should(BeZero())
	})

	It("status shows one row per resource: Ready, reason, add-on and plan", func() {
		stdout, stderr, err := run("", "status", "-n", ns)
		Expect(err).NotTo(HaveOccurred(), stderr)
		GinkgoWriter.Println(stdout)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		Expect(lines[0]).To(MatchRegexp(`^KIND\s+NAME\s+READY\s+REASON\s+ADDON\s+PLAN\s+LAST BACKUP\s+CREDENTIALS AGE$`))
		Expect(lines).To(HaveLen(len(imported) + 1))
		for _, o := range imported {
			plan := nested(o, "spec", "instance", "plan")
			if plan == "" {
				plan = kube.StatusString(suite.Get(o), "plan")
			}
			row := fmt.Sprintf(`(?m)^%s\s+%s\s+True\s+Provisioned\s+%s\s+%s\s+-\s+\d+[sm]$`, o.GetKind(), regexp.QuoteMeta(o.GetName()), nested(o, "spec", "addonId"), regexp.QuoteMeta(plan))
			Expect(stdout).To(MatchRegexp(row))
		}
		// -A adds the namespace column; another namespace's resources are not in -n's table.
		all, _, err := run("", "status", "-A")
		Expect(err).NotTo(HaveOccurred())
		Expect(all).To(MatchRegexp(`(?m)^KIND\s+NAMESPACE\s+NAME`))
		Expect(all).To(ContainSubstring(ns))
	})

	It("status says why a resource is not Ready", func() {
		other := suite.NewNamespace()
		var pg *unstructured.Unstructured
		for _, o := range imported {
			if o.GetKind() == "PostgreSql" {
				pg = kube.Manifest(o, other)
			}
		}
		unstructured.RemoveNestedField(pg.Object, "spec", "credentialsRef")
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(suite.ReadyOf(pg)).Should(Equal("False/BindingNotAllowed"))
		stdout, _, err := run("", "status", "-n", other)
		Expect(err).NotTo(HaveOccurred())
		Expect(stdout).To(MatchRegexp(`(?m)^PostgreSql\s+imported-postgresql\s+False\s+BindingNotAllowed\s+-\s+`))
		Expect(k8s.Delete(ctx, pg)).To(Succeed())
	})

	It("trace shows a resource's conditions, events and its Clever Cloud calls, not another's", func() {
		kc := byKind(imported, "Keycloak")
		pg := byKind(imported, "PostgreSql")
		stdout, stderr, err := run(logs.String(), "trace", kc.GetName(), "-n", ns, "--logs", "-")
		Expect(err).NotTo(HaveOccurred(), stderr)
		GinkgoWriter.Println(stdout)
		Expect(stdout).To(ContainSubstring("Keycloak " + ns + "/" + kc.GetName()))
		Expect(stdout).To(MatchRegexp(`(?m)^\s+Ready\s+True\s+Provisioned\s`))
		Expect(stdout).To(MatchRegexp(`(?m)^\s+\S+\s+Normal\s+AddonAdopted\s`))
		Expect(stdout).To(MatchRegexp(`(?m)^\s+\S+\s+GET\s+/v2/organisations/\{ownerId\}/addons/\{addonId\}\s+200\s+\d+ms\s+1$`))
		Expect(stdout).To(MatchRegexp(`(?m)^\s+\S+\s+GET\s+/v4/addon-providers/\{provider\}/addons/\{realId\}\s+200\s`), "the operator add-on's own route")

		stdout, stderr, err = run(logs.String(), "trace", pg.GetName(), "--kind", "PostgreSql", "-n", ns, "--logs", "-")
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(stdout).To(MatchRegexp(`(?m)^\s+\S+\s+GET\s+/v2/organisations/\{ownerId\}/addons/\{addonId\}/env\s+200\s`))
		Expect(stdout).NotTo(ContainSubstring("/v4/addon-providers/{provider}/addons/{realId}"), "Keycloak's calls are not PostgreSql's")
		Expect(stdout).NotTo(ContainSubstring(nested(pg, "spec", "addonId")+"/"), "route templates only")

		_, _, err = run("", "trace", "nothing-here", "-n", ns, "--logs", "-")
		Expect(err).To(MatchError(ContainSubstring("no clever-operator resource nothing-here in namespace " + ns)))
	})

	It("deleting the imported resources deletes no add-on", func() {
		for _, o := range imported {
			Expect(k8s.Delete(ctx, o)).To(Succeed())
		}
		for _, o := range imported {
			Eventually(suite.GetOf(o)).Should(BeNil())
		}
		for id := range made {
			Expect(kube.AddonExists(fake, id)).To(BeTrue(), id)
		}
		Expect(calls.Matching("DELETE")).To(BeZero())
	})
})

var _ = Describe("kubectl-clever, the binary", func() {
	It("is its own command (make plugin's package): import with the operator's environment, one error line", func() {
		ns := suite.NewNamespace()
		org := suite.OrgOf(ns)
		k, _ := kinds.KindFor(kinds.Kinds[1].GVK) // Redis
		a := preexisting(org, k, "made-by-hand")
		time.Sleep(200 * time.Millisecond)
		dir := GinkgoT().TempDir()
		bin := filepath.Join(dir, "kubectl-clever")
		build := exec.Command("go", "build", "-o", bin, "./internal/plugin/kubectl-clever") // the suite runs from the repository root
		b, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(b))

		environ := []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
		for k, v := range apiEnv() {
			environ = append(environ, k+"="+v)
		}
		cmd := exec.Command(bin, "import", "made-by-hand", "--org", org, "--credentials-ref", "ClusterCleverCredentials/import")
		cmd.Env = environ
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		Expect(cmd.Run()).To(Succeed(), stderr.String())
		objs := kube.Decode([]byte(stdout.String()))
		Expect(objs).To(HaveLen(1))
		Expect(nested(objs[0], "spec", "addonId")).To(Equal(a.ID))
		Expect(nested(objs[0], "spec", "credentialsRef", "kind")).To(Equal("ClusterCleverCredentials"))

		cmd = exec.Command(bin, "import", "--deletion-policy", "Never")
		cmd.Env = environ
		stderr.Reset()
		cmd.Stderr = &stderr
		err = cmd.Run()
		Expect(err).To(HaveOccurred())
		Expect(cmd.ProcessState.ExitCode()).To(Equal(1))
		Expect(strings.TrimSpace(stderr.String())).To(Equal(`kubectl-clever: --deletion-policy must be Orphan or Delete, not "Never"`))

		cmd = exec.Command(bin, "import", "no-such-addon", "--org", org)
		cmd.Env = environ
		stderr.Reset()
		cmd.Stderr = &stderr
		Expect(cmd.Run()).NotTo(Succeed())
		Expect(stderr.String()).To(HaveSuffix(fmt.Sprintf("kubectl-clever: no add-on %q in %s\n", "no-such-addon", org)))
	})
})

func nested(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

func byKind(objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	GinkgoHelper()
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	Fail("no " + kind)
	return nil
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
