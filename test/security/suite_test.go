// Package security_test plays a tenant trying to break out of its namespace (issue #15, "Done
// when"): in a cluster with two tenant namespaces, team-a and team-b (fresh ones per spec), and
// one admin-scoped ClusterCleverCredentials, `default` (the operator's own credentials),
// restricted to team-a and one organisation, team-b tries every path to create an add-on, or
// to bind, read, migrate or delete team-a's: each attempt must end in a refusal condition
// (internal/status reasons) and the fake Clever Cloud API's call log must prove that nothing
// was created, migrated, deleted or read there. Team-a keeps working, restore path included.
//
// The real operator runs in-process (the same wiring as main: test/kube.StartManager) on a
// real kube-apiserver + etcd (envtest), against the fake Clever Cloud API (pkg/fakeapi) over
// HTTP with OAuth1 signature checks. Run by `make test`; on its own:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/envtest/1.35.4 go test ./test/security -count=1
package security_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

func TestSecurity(t *testing.T) {
	kube.RunSuite(t, "Security suite: a tenant trying to break out (envtest + operator + fake Clever Cloud API)", 30*time.Second, 100*time.Millisecond)
}

// The operator's credentials (long enough for the leak check).
var creds = fakeapi.Credential{ConsumerKey: "ck-security", ConsumerSecret: "cs-security-7a21c4e0", Token: "tk-security-3e9f58b1", Secret: "ts-security-d04c7a62"}

// tenantCreds is a Clever Cloud identity of team-b's own (which, at this fake, reaches every
// organisation).
var tenantCreds = fakeapi.Credential{ConsumerKey: "ck-tenant-b", ConsumerSecret: "cs-tenant-b-52e8a1f3", Token: "tk-tenant-b-0c6d93a7", Secret: "ts-tenant-b-e17b4c08"}

var (
	restCfg *rest.Config
	k8s     client.Client
	fake    *fakeapi.Server
	mgr     *kube.Manager
	suite   *kube.Suite
)

var _ = BeforeSuite(func() {
	suite = kube.StartSuite(kube.SuiteOptions{Name: "test/security", NamespacePrefix: "sec", Fake: fakeapi.Options{
		Credentials:       []fakeapi.Credential{creds, tenantCreds},
		ProvisioningDelay: 300 * time.Millisecond,
		MigrationDuration: 2 * time.Second,
		Seed:              15,
	}})
	restCfg, k8s, fake = suite.Config, suite.Client, suite.Fake
	// The admin restricts the operator's own credentials before the operator starts (it
	// would otherwise create `default` allowing everything): no namespace yet, each spec
	// allows its own team-a.
	setDefault(nil, nil)
	mgr = suite.StartManager(kube.ManagerOptions{
		API:          suite.APIConfig(creds),
		ResyncPeriod: time.Hour, Workers: 4,
		// An endpoint that never answers (fairness_test.go) is given up on after 8 s per
		// attempt instead of 30: the same sequence (held workers, deadline, open circuit), sooner.
		APITimeout: 8 * time.Second,
		// A Cellar's S3 calls go to the spec's local S3 server (references_test.go).
		CellarEndpoint: cellarEndpoint,
	})
})

var _ = AfterSuite(func() {
	if suite != nil {
		// No credential of the operator's in any log line.
		// (suite.SecretValues wants more add-ons than this suite creates.)
		values := append(kube.AddonSecretValues(fake), kube.CredentialValues(creds, tenantCreds)...)
		Expect(values).NotTo(BeEmpty())
		suite.ExpectNoLeak(suite.Logs.String(), values)
	}
	mgr.Stop()
})

// world is one spec's cluster: team-a (allowed by `default`, in organisation orgA only) and
// team-b (allowed by nothing), each with the organisation it would like to use.
type world struct {
	teamA, teamB string
	orgA, orgB   string
}

// newWorld creates fresh team-a-<n> and team-b-<n> namespaces and restricts `default` to
// team-a and orgA.
func newWorld() world {
	GinkgoHelper()
	n := suite.Next()
	w := world{teamA: fmt.Sprintf("team-a-%d", n), teamB: fmt.Sprintf("team-b-%d", n)}
	w.orgA, w.orgB = kube.Org("security:"+w.teamA), kube.Org("security:"+w.teamB)
	suite.CreateNamespace(w.teamA)
	suite.CreateNamespace(w.teamB)
	setDefault([]string{w.teamA}, []string{w.orgA})
	return w
}

// setDefault creates or updates the ClusterCleverCredentials `default` (the operator's own
// credentials: no secretRef) allowing the namespaces and organisations given.
func setDefault(namespaces, orgs []string) {
	GinkgoHelper()
	spec := map[string]any{"namespaces": map[string]any{"names": anyList(namespaces)}}
	if len(orgs) > 0 {
		spec["organisations"] = anyList(orgs)
	}
	Eventually(func() error {
		cur := clusterCredentials("default")
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(cur), cur)
		if apierrors.IsNotFound(err) {
			cur.Object["spec"] = spec
			return k8s.Create(context.Background(), cur)
		}
		if err != nil {
			return err
		}
		cur.Object["spec"] = spec
		return k8s.Update(context.Background(), cur)
	}).Should(Succeed())
}

// clusterCredentials is an empty ClusterCleverCredentials named name.
func clusterCredentials(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("api.clever-cloud.com/v1alpha1")
	u.SetKind("ClusterCleverCredentials")
	u.SetName(name)
	return u
}

// grantTeamB is an admin giving team-b credentials of its own: the operator's identity,
// allowed in team-b only, in organisation org, with the binding policy given (nil: none). It
// is deleted with the spec.
func grantTeamB(w world, org string, binding map[string]any) string {
	GinkgoHelper()
	name := "for-" + w.teamB
	cc := clusterCredentials(name)
	spec := map[string]any{
		"namespaces":    map[string]any{"names": []any{w.teamB}},
		"organisations": []any{org},
	}
	if binding != nil {
		spec["binding"] = binding
	}
	cc.Object["spec"] = spec
	Expect(k8s.Create(context.Background(), cc)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(context.Background(), cc) })
	return name
}

func anyList(s []string) []any {
	out := make([]any, 0, len(s))
	for _, v := range s {
		out = append(out, v)
	}
	return out
}

// sample is config/samples/<file> as name in namespace ns and organisation org.
func sample(file, ns, name, org string) *unstructured.Unstructured {
	GinkgoHelper()
	u := kube.Sample(file, ns, org)
	u.SetName(name)
	return u
}

// withRef sets spec.credentialsRef.
func withRef(u *unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	GinkgoHelper()
	Expect(unstructured.SetNestedMap(u.Object, map[string]any{"kind": kind, "name": name}, "spec", "credentialsRef")).To(Succeed())
	return u
}

func create(u *unstructured.Unstructured) *unstructured.Unstructured {
	GinkgoHelper()
	Expect(k8s.Create(context.Background(), u)).To(Succeed(), "%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
	return u
}

// ready creates u and waits until it is Ready with its add-on; returns the live object.
func ready(u *unstructured.Unstructured) *unstructured.Unstructured {
	GinkgoHelper()
	create(u)
	Eventually(suite.ReadyOf(u)).Should(Equal("True/Provisioned"), "%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
	return suite.Get(u)
}

// expectRefused waits until u is refused with reason: Ready=False/<reason>, a Warning event
// with that reason, no add-on in its status. Returns the Ready message.
func expectRefused(u *unstructured.Unstructured, reason string) string {
	GinkgoHelper()
	Eventually(suite.ReadyOf(u)).Should(Equal("False/"+reason), "%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
	Eventually(func() []string { return suite.Warnings(u.GetNamespace(), u.GetName()) }).Should(
		ContainElement(ContainSubstring(reason)), "a Warning event for %s/%s", u.GetNamespace(), u.GetName())
	cur := suite.Get(u)
	Expect(kube.StatusString(cur, "addon")).To(BeEmpty(), "a refused resource records no add-on")
	msg := kube.ConditionMessage(cur, "Ready")
	GinkgoWriter.Printf("%s %s/%s refused: %s: %s\n", u.GetKind(), u.GetNamespace(), u.GetName(), reason, msg)
	return msg
}

// calls counts the fake's requests about an organisation.
func calls(org string) *kube.APICounter { return kube.CountCalls(fake, org) }

// expectUntouched checks that, since c was made, the organisation saw no write (create,
// update, migration, delete) and no read of an add-on's credentials (env).
func expectUntouched(c *kube.APICounter, what string) {
	GinkgoHelper()
	expectNoWrites(c, what)
	Expect(c.Matching("/env")).To(BeZero(), "%s: no add-on credentials read", what)
}

// expectNoWrites checks that, since c was made, the organisation saw no write.
func expectNoWrites(c *kube.APICounter, what string) {
	GinkgoHelper()
	for _, m := range []string{"POST ", "PUT ", "PATCH ", "DELETE "} {
		Expect(c.Matching(m)).To(BeZero(), "%s: no %srequest at Clever Cloud", what, m)
	}
}

// expectNoCalls checks that the organisation saw no request at all since c was made.
func expectNoCalls(c *kube.APICounter, what string) {
	GinkgoHelper()
	Expect(c.Matching("")).To(BeZero(), "%s: no request about this organisation at Clever Cloud", what)
}

// deleteAll deletes the objects and waits until they are gone (a refused resource must be
// deletable without the operator touching Clever Cloud).
func deleteAll(objs ...*unstructured.Unstructured) {
	GinkgoHelper()
	for _, u := range objs {
		if cur := suite.Get(u); cur != nil {
			Expect(client.IgnoreNotFound(k8s.Delete(context.Background(), cur))).To(Succeed())
		}
	}
	for _, u := range objs {
		Eventually(suite.GetOf(u)).Should(BeNil(), "%s %s/%s is deleted", u.GetKind(), u.GetNamespace(), u.GetName())
	}
}

// secretValues returns the values (8 bytes or longer) of every Secret of namespace ns.
func secretValues(ns string) []string {
	GinkgoHelper()
	var list corev1.SecretList
	Expect(k8s.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, s := range list.Items {
		for _, v := range s.Data {
			if len(v) >= 8 {
				out = append(out, string(v))
			}
		}
	}
	return out
}

// expectNoneOf checks that no Secret of namespace ns holds any of the values (another
// namespace's add-on credentials).
func expectNoneOf(ns string, values []string) {
	GinkgoHelper()
	Expect(values).NotTo(BeEmpty())
	var list corev1.SecretList
	Expect(k8s.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	for _, s := range list.Items {
		for k, v := range s.Data {
			for _, secret := range values {
				Expect(string(v)).NotTo(ContainSubstring(secret), "Secret %s/%s key %s holds another namespace's credential", ns, s.Name, k)
			}
		}
	}
}

// recorder is an HTTP server that must never be called: it counts requests and answers 401.
type recorder struct {
	*httptest.Server
	n atomic.Int64
	// operators counts the requests carrying the operator's consumer key or token.
	operators atomic.Int64
}

func newRecorder() *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.n.Add(1)
		auth := req.Header.Get("Authorization")
		if strings.Contains(auth, creds.ConsumerKey) || strings.Contains(auth, creds.Token) {
			r.operators.Add(1)
		}
		GinkgoWriter.Printf("the attacker's endpoint got %s %s (Authorization: %t, with the operator's consumer key: %t, with the operator's token: %t)\n",
			req.Method, req.URL.Path, auth != "", strings.Contains(auth, creds.ConsumerKey), strings.Contains(auth, creds.Token))
		w.WriteHeader(http.StatusUnauthorized)
	}))
	DeferCleanup(r.Close)
	return r
}
