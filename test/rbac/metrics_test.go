package rbac

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clever-operator/clever-operator/internal/operator"
	"github.com/clever-operator/clever-operator/test/kube"
)

// Issue #15 §3: /metrics is served over HTTPS to authenticated and authorized clients only.
// The manager runs in-process as main wires it (operator.MetricsServerOptions with the
// defaults of --metrics-secure), with the identity and RBAC of config/default's ServiceAccount,
// against a real API server doing the TokenReviews and SubjectAccessReviews.
var _ = Describe("the metrics endpoint", Ordered, func() {
	// The operator's objects go to a namespace and names of this spec's own, so the namespaced
	// install specs of the suite (config/namespaced, whatever the order) never see the
	// cluster-wide bindings of config/default.
	const opNS, opSA = "metrics-spec-system", "clever-operator-controller-manager"
	const suffix = "-metrics-spec"
	const promNS = "monitoring"
	var url string
	ctx := context.Background()

	BeforeAll(func() {
		// The operator's RBAC exactly as `make deploy` ships it (config/default), minus what
		// another spec of this suite may already have created.
		objs := decode(tool("kustomize", "build", "config/default"))
		for _, o := range objs {
			if o.GetNamespace() == "clever-operator-system" {
				o.SetNamespace(opNS)
			}
			switch o.GetKind() {
			case "ClusterRole", "ClusterRoleBinding":
				o.SetName(o.GetName() + suffix)
			}
			switch o.GetKind() {
			case "ClusterRoleBinding", "RoleBinding":
				if k, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind"); k == "ClusterRole" {
					n, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
					Expect(unstructured.SetNestedField(o.Object, n+suffix, "roleRef", "name")).To(Succeed())
				}
				subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
				for _, sub := range subjects {
					if m := sub.(map[string]any); m["namespace"] == "clever-operator-system" {
						m["namespace"] = opNS
					}
				}
				Expect(unstructured.SetNestedSlice(o.Object, subjects, "subjects")).To(Succeed())
			}
			switch o.GetKind() {
			case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
				if ns := o.GetNamespace(); ns != "" {
					ensureNamespace(ns)
				}
				err := k8s.Create(ctx, o.DeepCopy())
				if err != nil && !apierrorsIsAlreadyExists(err) {
					Expect(err).NotTo(HaveOccurred(), "%s %s", o.GetKind(), o.GetName())
				}
			}
		}

		// The manager authenticates as the operator's ServiceAccount.
		cfg := rest.CopyConfig(restCfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + opNS + ":" + opSA,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + opNS, "system:authenticated"}}
		addr := kube.FreeAddr()
		url = "https://" + addr + "/metrics"
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{
			Metrics:                operator.MetricsServerOptions(operator.MetricsConfig{BindAddress: addr, Secure: true}),
			HealthProbeBindAddress: "0",
		})
		Expect(err).NotTo(HaveOccurred())
		mctx, cancel := context.WithCancel(ctx)
		DeferCleanup(cancel)
		go func() {
			defer GinkgoRecover()
			Expect(mgr.Start(mctx)).To(Succeed())
		}()

		ensureNamespace(promNS)
		for _, sa := range []string{"prometheus", "stranger"} {
			Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: promNS}})).To(Succeed())
		}
		// Only "prometheus" gets the shipped reader role.
		Expect(k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "prometheus-clever-operator-metrics"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "clever-operator-metrics-reader" + suffix},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: promNS}},
		})).To(Succeed())
	})

	token := func(sa string) string {
		GinkgoHelper()
		tr, err := clients.CoreV1().ServiceAccounts(promNS).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrInt64(600)}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		return tr.Status.Token
	}

	// scrape GETs /metrics over HTTPS (the certificate is self-signed) with an optional bearer
	// token, and returns the status code and body.
	scrape := func(bearer string) (int, string) {
		GinkgoHelper()
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed test certificate
		req, err := http.NewRequest(http.MethodGet, url, nil)
		Expect(err).NotTo(HaveOccurred())
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	It("refuses an unauthenticated scrape (401)", func() {
		Eventually(func() int { code, _ := scrape(""); return code }).Should(Equal(http.StatusUnauthorized))
	})

	It("refuses a ServiceAccount token without the metrics-reader role (403)", func() {
		tok := token("stranger")
		Eventually(func() int { code, _ := scrape(tok); return code }).Should(Equal(http.StatusForbidden))
	})

	It("refuses a token the API server does not know", func() {
		// controller-runtime's filter answers 500 when the TokenReview reports an error (as
		// for a malformed token), 401 when it merely does not authenticate: never the metrics.
		Eventually(func() int { code, _ := scrape("not-a-token"); return code }).Should(Or(Equal(http.StatusUnauthorized), Equal(http.StatusInternalServerError)))
		code, body := scrape("not-a-token")
		Expect(code).NotTo(Equal(http.StatusOK))
		Expect(body).NotTo(ContainSubstring("# TYPE "))
	})

	It("serves the metrics to a ServiceAccount bound to clever-operator-metrics-reader (200)", func() {
		tok := token("prometheus")
		var body string
		Eventually(func() int { code, b := scrape(tok); body = b; return code }).Should(Equal(http.StatusOK))
		Expect(body).To(ContainSubstring("# TYPE "))
		Expect(body).To(ContainSubstring("rest_client_requests_total"), "controller-runtime's registry, as the operator serves it")
	})

	It("does not serve plain HTTP on the secure port", func() {
		c := &http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get("http" + url[len("https"):])
		if err == nil {
			defer resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), "a TLS server answers plain HTTP with 400")
		}
	})

	It("is off with --metrics-bind-address=0", func() {
		o := operator.MetricsServerOptions(operator.MetricsConfig{BindAddress: "0", Secure: true})
		Expect(o.BindAddress).To(Equal("0"))
		Expect(fmt.Sprint(o.SecureServing)).To(Equal("true"))
	})
})

func ptrInt64(v int64) *int64 { return &v }
