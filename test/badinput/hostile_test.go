package badinput_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Hostile spec.secret.templates, through the whole operator: a tenant's template that tries
// the cluster (lookup of another namespace's Secret), the operator's environment (env,
// expandenv: the operator's own credentials may be there), the chart's own templates
// (include, template), recursion, or huge outputs and loops is refused with
// Ready=False/SecretTemplateInvalid, quickly (the operator stays responsive: the canary becomes
// Ready), and no byte of the other namespace's Secret or of the environment reaches any
// Secret, log, event or status.

const (
	// hostileEnv is set in the operator's process (this test process) for the env cases.
	hostileEnv      = "CLEVER_OPERATOR_BADINPUT_ENV_SECRET"
	hostileEnvValue = "bi-operator-env-value-71d0c9e3"
	// victimValue is in a Secret of another namespace.
	victimValue = "bi-victim-secret-value-4b8e2a1f"
)

var _ = Describe("hostile spec.secret.templates", func() {
	BeforeEach(func() {
		Expect(os.Setenv(hostileEnv, hostileEnvValue)).To(Succeed())
		DeferCleanup(func() { _ = os.Unsetenv(hostileEnv) })
	})

	victim := func() string {
		ns := fmt.Sprintf("bad-victim-%d", seq.Add(1))
		suite.CreateNamespace(ns)
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns}, StringData: map[string]string{"password": victimValue}}
		Expect(k8s.Create(context.Background(), s)).To(Succeed())
		return ns
	}

	templateCase := func(tmpl func(victimNS string) string, message string) engineCase {
		return engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				u := c.sample("api_v1_redis.yaml")
				return set(u, map[string]any{"EVIL": tmpl(victim()), "OK": "{{ .REDIS_HOST }}"}, "spec", "secret", "templates")
			},
			ready: "False/SecretTemplateInvalid", stalled: true, message: message,
			secrets: []string{victimValue, hostileEnvValue},
			cleanup: func(c *caseCtx, obj *unstructured.Unstructured) {
				// Nothing of the victim or the environment in any Secret of the tenant's
				// namespace, and no credentials Secret published from the template.
				list := &corev1.SecretList{}
				Expect(k8s.List(context.Background(), list, client.InNamespace(c.ns))).To(Succeed())
				for _, s := range list.Items {
					Expect(s.Name).NotTo(Equal(obj.GetName()+"-secrets"), "no credentials Secret rendered")
					for k, v := range s.Data {
						Expect(string(v)).NotTo(ContainSubstring(victimValue), "Secret %s key %s", s.Name, k)
						Expect(string(v)).NotTo(ContainSubstring(hostileEnvValue), "Secret %s key %s", s.Name, k)
						Expect(strings.Contains(string(v), "EVIL")).To(BeFalse())
					}
				}
			},
		}
	}

	DescribeTable("refused with SecretTemplateInvalid, nothing leaked", runEngineCase,
		Entry("lookup of another namespace's Secret", templateCase(func(ns string) string {
			return fmt.Sprintf(`{{ (lookup "v1" "Secret" %q "creds").data.password | b64dec }}`, ns)
		}, `uses "lookup": templates have no access to the cluster`)),
		Entry("env (the operator's environment)", templateCase(func(string) string {
			return `{{ env "` + hostileEnv + `" }}`
		}, `uses "env": templates may not read the operator's environment`)),
		Entry("expandenv", templateCase(func(string) string {
			return `{{ expandenv "$` + hostileEnv + `" }}`
		}, `uses "expandenv"`)),
		Entry("include of the chart's templates", templateCase(func(string) string {
			return `{{ include "clever-addon.annotations" $ }}`
		}, `uses "include"`)),
		Entry("self recursion", templateCase(func(string) string {
			return `{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}`
		}, "define and block are not allowed")),
		Entry("huge output", templateCase(func(string) string {
			return `{{ repeat 100000000 "x" }}`
		}, "repeat would produce more than 1048576 bytes")),
		Entry("nested loops", templateCase(func(string) string {
			return `{{ range until 60000 }}{{ range until 60000 }}{{ end }}{{ end }}`
			// "takes too much work to render", or on a loaded machine the time bound on the
			// same loop: "takes more than 2s to render".
		}, "spec.secret.templates[EVIL] takes ")),
	)
})
