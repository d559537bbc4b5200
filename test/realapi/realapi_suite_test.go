// Package realapi_test runs the operator binary configured exactly as Clever Cloud's
// documentation tells a user to configure a client: the API base with its version suffix
// (https://api.clever-cloud.com/v2) and a token and secret from `clever login` under the names
// clever-tools reads (CLEVER_TOKEN, CLEVER_SECRET), no consumer pair. It talks over real HTTP to
// the fake Clever Cloud API in its default mode, which models the API of today: it accepts
// OAuth1 signed with clever-tools' published consumer pair, serves the operator add-ons
// (Keycloak, Metabase, Matomo, Otoroshi) at v4 only with an empty v2 environment, answers
// DELETE with 200 and a JSON body, and 404s any path it does not serve. This is issue #13's
// "done when": every kind becomes Ready with a complete Secret, deleting all leaves no add-on,
// and an API where every route answers 404 never releases a resource whose add-on exists.
package realapi_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestRealAPI(t *testing.T) {
	kube.RunSuite(t, "Operator configured as Clever Cloud documents it, against the fake's real-API mode", 90*time.Second, 200*time.Millisecond)
}

// The user's credentials from `clever login`: a token and its secret, nothing else. Long
// enough for the leak scan.
const (
	userToken  = "realapi-user-token-8c1f2e6a9b0d4c37"
	userSecret = "realapi-user-secret-5e9a0b7c2d4f6183"
)

var (
	h   *kube.Harness
	op  *kube.Operator
	k8s client.Client
	tmp string
	// suite is this suite's world for the shared helpers (test/kube).
	suite *kube.Suite
)

// docEnv is the configuration of Clever Cloud's documentation: the versioned base URL (the
// fake standing in for https://api.clever-cloud.com) and CLEVER_TOKEN / CLEVER_SECRET.
func docEnv() []string {
	return []string{
		"CLEVER_OPERATOR_API_ENDPOINT=" + h.Endpoint + "/v2",
		"CLEVER_TOKEN=" + userToken,
		"CLEVER_SECRET=" + userSecret,
	}
}

var _ = BeforeSuite(func() {
	ctx := context.Background()
	var err error
	tmp, err = os.MkdirTemp("", "clever-operator-realapi-")
	Expect(err).NotTo(HaveOccurred())
	h, err = kube.StartHarness(ctx, kube.HarnessOptions{
		WorkDir: tmp,
		Fake: fakeapi.Options{
			// No consumer pair: requests must be signed with clever-tools' published one.
			Credentials:       []fakeapi.Credential{{Token: userToken, Secret: userSecret}},
			ProvisioningDelay: 300 * time.Millisecond,
			Seed:              13,
		},
		Log: func(s string) { GinkgoWriter.Println(s) },
	})
	Expect(err).NotTo(HaveOccurred())
	k8s = h.Client
	suite = &kube.Suite{Name: "test/realapi", Client: k8s, Fake: h.Fake(), NamespacePrefix: "realapi"}
	bin := filepath.Join(tmp, "manager")
	Expect(kube.BuildOperatorTo(ctx, bin)).To(Succeed())
	op = h.NewOperator(kube.OperatorOptions{Binary: bin, Env: docEnv(), Args: []string{"--resync-period=1h"}})
	Expect(op.Start()).To(Succeed())
})

var _ = AfterSuite(func() {
	if op != nil {
		_ = op.Stop(20 * time.Second)
		if CurrentSpecReport().Failed() || os.Getenv("KEEP_LOGS") != "" {
			GinkgoWriter.Println("operator log: " + op.LogPath)
		}
	}
	if h != nil {
		if op != nil {
			assertNoLeak()
		}
		h.Stop()
	}
	if tmp != "" && !CurrentSpecReport().Failed() {
		_ = os.RemoveAll(tmp)
	}
})

// samples lists every sample of config/samples: one resource of each of the 15 kinds (the 14
// typed kinds and the generic Addon, an FS Bucket).
func samples() []string {
	entries, err := os.ReadDir(filepath.Join("config", "samples"))
	Expect(err).NotTo(HaveOccurred())
	var files []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "api_") && strings.HasSuffix(e.Name(), ".yaml") && !strings.HasSuffix(e.Name(), "credentials.yaml") && !strings.HasSuffix(e.Name(), "networkgroup.yaml") && !strings.HasSuffix(e.Name(), "cellarbucket.yaml") {
			files = append(files, e.Name())
		}
	}
	Expect(files).To(HaveLen(15))
	return files
}

// operatorKinds serve their data at v4 only (GET /v4/addon-providers/addon-<name>/addons/<realId>).
var operatorKinds = map[string]bool{"Keycloak": true, "Metabase": true, "Matomo": true, "Otoroshi": true}

var _ = Describe("configured as Clever Cloud documents it (endpoint …/v2, CLEVER_TOKEN + CLEVER_SECRET)", func() {
	ctx := context.Background()

	It("makes all 15 kinds Ready with complete Secrets, and deleting them all leaves no add-on", func() {
		ns := suite.NewNamespace()
		var crs []*unstructured.Unstructured
		for _, f := range samples() {
			cr := suite.Sample(f, ns)
			Expect(k8s.Create(ctx, cr)).To(Succeed(), f)
			crs = append(crs, cr)
		}
		for _, cr := range crs {
			Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"), cr.GetKind())
		}
		for _, cr := range crs {
			cur := suite.Get(cr)
			id := kube.StatusString(cur, "addon")
			Expect(id).NotTo(BeEmpty(), cr.GetKind())
			name := cr.GetName() + "-secrets"
			var sec *corev1.Secret
			Eventually(func() *corev1.Secret { sec = suite.Secret(ns, name); return sec }).ShouldNot(BeNil(), cr.GetKind())
			data := kube.SecretData(sec)
			switch {
			case operatorKinds[cr.GetKind()]:
				// The v2 environment of these add-ons is empty today: everything comes from v4.
				Expect(h.Fake().Env(id)).To(BeEmpty(), "the fake models today's API for %s", cr.GetKind())
				realID := ""
				for _, a := range h.Fake().Addons(suite.OrgOf(ns)) {
					if a.ID == id {
						realID = a.RealID
					}
				}
				Expect(realID).NotTo(BeEmpty())
				want := kube.V4Values(h.Fake(), realID)
				Expect(want).NotTo(BeEmpty())
				Expect(kube.Values(data)).To(ContainElements(want), "%s publishes its v4 URL and initial credentials", cr.GetKind())
			case cr.GetKind() == "ConfigProvider":
				vars, _, _ := unstructured.NestedStringMap(cur.Object, "spec", "variables")
				Expect(data).To(Equal(vars))
			default:
				env := map[string]string{}
				for _, v := range h.Fake().Env(id) {
					env[v.Name] = v.Value
				}
				if cr.GetKind() != "Azimutt" { // Azimutt announces no variable
					Expect(env).NotTo(BeEmpty(), cr.GetKind())
				}
				Expect(data).To(Equal(env), "%s publishes its whole environment", cr.GetKind())
			}
		}
		Expect(h.Fake().Addons(suite.OrgOf(ns))).To(HaveLen(15), "one add-on per resource, no duplicate")

		for _, cr := range crs {
			Expect(k8s.Delete(ctx, suite.Get(cr))).To(Succeed())
		}
		for _, cr := range crs {
			Eventually(func() *unstructured.Unstructured { return suite.Get(cr) }).Should(BeNil(), cr.GetKind())
		}
		Expect(h.Fake().Addons(suite.OrgOf(ns))).To(BeEmpty(), "deleting every resource deleted every add-on")
	})

	It("never releases a resource whose add-on exists while every route answers 404, and finishes once the API answers", func() {
		ns := suite.NewNamespace()
		var crs []*unstructured.Unstructured
		for _, f := range []string{"api_v1_redis.yaml", "api_v1_postgresql.yaml", "api_v1_keycloak.yaml"} {
			cr := suite.Sample(f, ns)
			Expect(k8s.Create(ctx, cr)).To(Succeed())
			crs = append(crs, cr)
		}
		for _, cr := range crs {
			Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"), cr.GetKind())
		}
		Expect(h.Fake().Addons(suite.OrgOf(ns))).To(HaveLen(3))

		// A wrong base path, a proxy, or an incident: every route answers 404 with an error body.
		h.Intercept(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"id":4004,"message":"Not Found","type":"error"}`))
		})
		DeferCleanup(func() { h.Intercept(nil) })
		for _, cr := range crs {
			Expect(k8s.Delete(ctx, suite.Get(cr))).To(Succeed())
		}
		for _, cr := range crs {
			Eventually(func() []string { return suite.Warnings(ns, cr.GetName()) }, 30*time.Second).ShouldNot(BeEmpty(), cr.GetKind())
		}
		Consistently(func() int {
			n := 0
			for _, cr := range crs {
				if cur := suite.Get(cr); cur != nil && cur.GetDeletionTimestamp() != nil {
					n++
				}
			}
			return n
		}, 10*time.Second, time.Second).Should(Equal(3), "every resource keeps its finalizer while its add-on may exist")
		Expect(h.Fake().Addons(suite.OrgOf(ns))).To(HaveLen(3), "no add-on was deleted (the fake was not reached)")
		for _, cr := range crs {
			Expect(suite.ReadyOf(cr)()).To(HavePrefix("False/"), "%s says why it is not gone", cr.GetKind())
		}

		// The API answers again: the deletions finish and delete the add-ons.
		h.Intercept(nil)
		for _, cr := range crs {
			Eventually(func() *unstructured.Unstructured { return suite.Get(cr) }).Should(BeNil(), cr.GetKind())
		}
		Expect(h.Fake().Addons(suite.OrgOf(ns))).To(BeEmpty())
	})

	It("proves the configuration with --check: who the token is and its organisations; a wrong base fails in one line", func() {
		bin := filepath.Join(tmp, "manager")
		run := func(env []string) (string, error) {
			cmd := exec.Command(bin, "--check", "--kubeconfig="+h.Kubeconfig)
			cmd.Dir = h.Root
			cmd.Env = append(kube.WithoutClever(os.Environ()), env...)
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		out, err := run(docEnv())
		Expect(err).NotTo(HaveOccurred(), out)
		self := h.Fake().Self()
		Expect(out).To(ContainSubstring(self.ID))
		Expect(out).NotTo(ContainSubstring(userToken))
		Expect(out).NotTo(ContainSubstring(userSecret))

		wrong := append([]string{"CLEVER_OPERATOR_API_ENDPOINT=" + h.Endpoint + "/not-the-api"}, docEnv()[1:]...)
		out, err = run(wrong)
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("not-the-api"))
		Expect(out).NotTo(ContainSubstring(userSecret))
	})
})

// assertNoLeak scans the operator's log and the cluster for the user's token and secret and
// for every add-on credential the fake handed out.
func assertNoLeak() {
	s := kube.NewSecrets()
	s.Add("user token", userToken)
	s.Add("user secret", userSecret)
	findings, err := s.ScanFiles(op.LogPath)
	Expect(err).NotTo(HaveOccurred())
	Expect(findings).To(BeEmpty())
}
