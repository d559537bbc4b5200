package operator_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// Issue #13 §1: a namespace configured the way Clever Cloud documents it. Each spec points
// its namespace, through the override Secret, at a fake of its own in real-API mode (the API
// host refuses bearer tokens, the bridge host accepts only them).

// overrideSecret creates namespace ns's override Secret with data.
func overrideSecret(ns string, data map[string]string) *corev1.Secret {
	GinkgoHelper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "clever-operator", Namespace: ns}, StringData: data}
	Expect(k8s.Create(context.Background(), s)).To(Succeed())
	return s
}

// secretEvents returns "Type Reason Message" of the events about a Secret.
func secretEvents(ns, name string) []string {
	var list corev1.EventList
	Expect(k8s.List(context.Background(), &list)).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Namespace == ns && e.InvolvedObject.Name == name && e.InvolvedObject.Kind == "Secret" {
			out = append(out, e.Type+" "+e.Reason+" "+e.Message)
		}
	}
	return out
}

var _ = Describe("credentials as Clever Cloud documents them", func() {
	ctx := context.Background()

	It("sends a namespace's bearer token to the bridge, never to the API host, with the endpoint written …/v2", func() {
		const token = "ns-bearer-token-6d1f0a"
		f, api, bridge := fakeapi.NewTestServers(fakeapi.Options{BearerTokens: []string{token}, Seed: 13})
		DeferCleanup(api.Close)
		DeferCleanup(bridge.Close)
		ns := suite.NewNamespace()
		// Another endpoint than the operator's: a complete set of the namespace's own (here a
		// bearer token), and its bridge.
		overrideSecret(ns, map[string]string{"config": fmt.Sprintf("[api]\nendpoint = %q\nbridge-endpoint = %q\nbearer-token = %q\ntoken-expiration = %q\n",
			api.URL+"/v2", bridge.URL+"/", token, time.Now().Add(48*time.Hour).UTC().Format(time.RFC3339))})

		rd := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, rd)).To(Succeed())
		Eventually(suite.ReadyOf(rd), 30*time.Second).Should(Equal("True/Provisioned"), "the API host would answer 401 to a bearer token")
		Expect(f.Addons(suite.OrgOf(ns))).To(HaveLen(1))
		Expect(suite.Secret(ns, "redis-secrets")).NotTo(BeNil())

		// The token expires within the warning window: a Warning event on the override Secret.
		Eventually(func() []string { return secretEvents(ns, "clever-operator") }, 20*time.Second).Should(
			ContainElement(HavePrefix("Warning CredentialsExpiring The Clever Cloud credentials of this Secret expire at")))
		Expect(logs.String()).NotTo(ContainSubstring(token))
		for _, e := range secretEvents(ns, "clever-operator") {
			Expect(e).NotTo(ContainSubstring(token))
		}

		Expect(k8s.Delete(ctx, rd)).To(Succeed())
		Eventually(func() bool { return suite.Get(rd) == nil }, 30*time.Second).Should(BeTrue())
		Expect(f.Addons(suite.OrgOf(ns))).To(BeEmpty())
	})

	It("takes a namespace's credentials from clever-tools' login file: token + secret signed with clever-tools' consumer, API host from the active profile", func() {
		const token, tokenSecret = "ct-login-token-91be", "ct-login-secret-47c2"
		// A Credential without consumer pair: the fake accepts it signed with clever-tools' pair only.
		f, api, bridge := fakeapi.NewTestServers(fakeapi.Options{Credentials: []fakeapi.Credential{{Token: token, Secret: tokenSecret}}, Seed: 14})
		DeferCleanup(api.Close)
		DeferCleanup(bridge.Close)
		ns := suite.NewNamespace()
		overrideSecret(ns, map[string]string{"clever-tools.json": `{"version": 1, "profiles": [
			{"alias": "work", "token": "` + token + `", "secret": "` + tokenSecret + `", "overrides": {"API_HOST": "` + api.URL + `/v2"}},
			{"alias": "default", "token": "not-this-one", "secret": "nor-this-one"}]}`})

		rd := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, rd)).To(Succeed())
		Eventually(suite.ReadyOf(rd), 30*time.Second).Should(Equal("True/Provisioned"))
		Expect(f.Addons(suite.OrgOf(ns))).To(HaveLen(1))
		for route := range f.CountsFor(suite.OrgOf(ns)) {
			Expect(route).NotTo(HavePrefix("GET /v2/v2"), "the /v2 of the API host was not doubled")
		}
		Expect(strings.Contains(logs.String(), tokenSecret)).To(BeFalse())

		Expect(k8s.Delete(ctx, rd)).To(Succeed())
		Eventually(func() bool { return suite.Get(rd) == nil }, 30*time.Second).Should(BeTrue())
		Expect(f.Addons(suite.OrgOf(ns))).To(BeEmpty())
	})
})
