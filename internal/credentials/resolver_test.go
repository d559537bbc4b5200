package credentials

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/clever-operator/clever-operator/api/v1alpha1"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/status"
)

const (
	opToken, opSecret = "op-token-51c0d2", "op-secret-77ab90"
	nsToken, nsSecret = "ns-token-0e4f1a", "ns-secret-b3c2d1"
)

func credSecret(ns, name, doc string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"config": []byte(doc)}}
}

func clusterCreds(name string, sel v1alpha1.NamespaceSelection, orgs ...v1alpha1.OrganisationID) *v1alpha1.ClusterCleverCredentials {
	return &v1alpha1.ClusterCleverCredentials{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.ClusterCleverCredentialsSpec{Namespaces: sel, Organisations: orgs}}
}

func resourceIn(ns string, ref map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "api.clever-cloud.com/v1", "kind": "Redis",
		"metadata": map[string]any{"namespace": ns, "name": "r"}, "spec": map[string]any{"organisation": "orga_x"}}}
	if ref != nil {
		u.Object["spec"].(map[string]any)["credentialsRef"] = ref
	}
	return u
}

var all = v1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{}}

func TestResolver(t *testing.T) {
	nsIdentity := credSecret("team-a", "clever-operator", "[api]\ntoken = \""+nsToken+"\"\nsecret = \""+nsSecret+"\"\n")
	nsNoIdentity := credSecret("team-a", "clever-operator", "[api]\nconsumer-key = \"ck-ns\"\nconsumer-secret = \"cs-ns-123456\"\n")
	teamA := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"team": "a"}}}
	teamB := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Labels: map[string]string{"team": "b"}}}
	nsCreds := &v1alpha1.CleverCredentials{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "ci"}, Spec: v1alpha1.CleverCredentialsSpec{
		SecretRef: v1alpha1.CredentialsSecretRef{Name: "ci-clever"}, Organisations: []v1alpha1.OrganisationID{"orga_y"},
		Binding: v1alpha1.BindingPolicy{AddonIDs: []v1alpha1.AddonID{"addon_1"}}}}
	ciSecret := credSecret("team-a", "ci-clever", "[api]\ntoken = \""+nsToken+"\"\nsecret = \""+nsSecret+"\"\n")
	ciNoIdentity := credSecret("team-a", "ci-clever", "[api]\nendpoint = \"https://api.clever-cloud.com\"\n")
	labelled := clusterCreds("team-a", v1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}}, "orga_x")
	withSecret := clusterCreds("shared", v1alpha1.NamespaceSelection{Names: []string{"team-a"}})
	withSecret.Spec.SecretRef = &v1alpha1.ClusterCredentialsSecretRef{CredentialsSecretRef: v1alpha1.CredentialsSecretRef{Name: "shared-clever"}}
	sharedSecret := credSecret("operator", "shared-clever", "[api]\nbearer-token = \"shared-bearer-7d6c\"\n")

	cases := []struct {
		name    string
		objs    []client.Object
		ref     map[string]any
		ns      string
		reason  string // refusal expected
		source  string
		orgs    []string
		bindAny bool
		bindIDs []string
		ownKey  bool // not the operator's credential set
	}{
		{name: "no default object: the operator's credentials, everything allowed", source: "the operator's credentials (no ClusterCleverCredentials default)", bindAny: true},
		{name: "default object allowing every namespace", objs: []client.Object{clusterCreds("default", all)}, source: "ClusterCleverCredentials default"},
		{name: "default restricted to an organisation", objs: []client.Object{clusterCreds("default", all, "orga_x")}, source: "ClusterCleverCredentials default", orgs: []string{"orga_x"}},
		{name: "default not allowing the namespace", objs: []client.Object{clusterCreds("default", v1alpha1.NamespaceSelection{Names: []string{"team-b"}})}, reason: status.ReasonCredentialsNotAllowed},
		{name: "default with no namespace selection allows none", objs: []client.Object{clusterCreds("default", v1alpha1.NamespaceSelection{})}, reason: status.ReasonCredentialsNotAllowed},
		{name: "override Secret with its own identity: any organisation, any binding, even under a restricted default",
			objs: []client.Object{nsIdentity, clusterCreds("default", v1alpha1.NamespaceSelection{Names: []string{"team-b"}}, "orga_x")}, source: "Secret team-a/clever-operator", bindAny: true, ownKey: true},
		{name: "override Secret without identity: the default's policy", objs: []client.Object{nsNoIdentity, clusterCreds("default", all, "orga_x")},
			source: "Secret team-a/clever-operator over ClusterCleverCredentials default", orgs: []string{"orga_x"}, ownKey: true},
		{name: "override Secret without identity, default not allowing the namespace", objs: []client.Object{nsNoIdentity, clusterCreds("default", v1alpha1.NamespaceSelection{Names: []string{"team-b"}})},
			reason: status.ReasonCredentialsNotAllowed},
		{name: "override Secret unreadable", objs: []client.Object{credSecret("team-a", "clever-operator", "[api\n")}, reason: status.ReasonInvalidCredentials},
		{name: "credentialsRef to a missing CleverCredentials", ref: map[string]any{"name": "nope"}, reason: status.ReasonCredentialsNotFound},
		{name: "credentialsRef to a CleverCredentials", objs: []client.Object{nsCreds, ciSecret, nsNoIdentity}, ref: map[string]any{"name": "ci"},
			source: "CleverCredentials team-a/ci", orgs: []string{"orga_y"}, bindIDs: []string{"addon_1"}, ownKey: true},
		{name: "credentialsRef to a CleverCredentials of another namespace is not found", ns: "team-b", objs: []client.Object{nsCreds, ciSecret}, ref: map[string]any{"kind": "CleverCredentials", "name": "ci"},
			reason: status.ReasonCredentialsNotFound},
		{name: "CleverCredentials whose Secret names no identity never borrows the operator's", objs: []client.Object{nsCreds, ciNoIdentity}, ref: map[string]any{"name": "ci"}, reason: status.ReasonInvalidCredentials},
		{name: "CleverCredentials whose Secret is missing", objs: []client.Object{nsCreds}, ref: map[string]any{"name": "ci"}, reason: status.ReasonInvalidCredentials},
		{name: "credentialsRef to a missing ClusterCleverCredentials", ref: map[string]any{"kind": "ClusterCleverCredentials", "name": "nope"}, reason: status.ReasonCredentialsNotFound},
		{name: "ClusterCleverCredentials selecting the namespace by label", objs: []client.Object{labelled}, ref: map[string]any{"kind": "ClusterCleverCredentials", "name": "team-a"},
			source: "ClusterCleverCredentials team-a", orgs: []string{"orga_x"}},
		{name: "ClusterCleverCredentials not selecting the namespace", ns: "team-b", objs: []client.Object{labelled}, ref: map[string]any{"kind": "ClusterCleverCredentials", "name": "team-a"},
			reason: status.ReasonCredentialsNotAllowed},
		{name: "ClusterCleverCredentials with a Secret in the operator's namespace", objs: []client.Object{withSecret, sharedSecret}, ref: map[string]any{"kind": "ClusterCleverCredentials", "name": "shared"},
			source: "ClusterCleverCredentials shared", ownKey: true},
	}
	global := config.APIConfig{Endpoint: "https://api.example.test", Token: opToken, Secret: opSecret}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = corev1.AddToScheme(scheme)
			scheme.AddKnownTypes(v1alpha1.GroupVersion, &v1alpha1.CleverCredentials{}, &v1alpha1.CleverCredentialsList{},
				&v1alpha1.ClusterCleverCredentials{}, &v1alpha1.ClusterCleverCredentialsList{})
			metav1.AddToGroupVersion(scheme, v1alpha1.GroupVersion)
			cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append([]client.Object{teamA, teamB}, c.objs...)...).Build()
			r := &Resolver{Reader: cl, Overrides: cl, SecretReader: cl, Global: global, DefaultName: "default", OperatorNamespace: "operator",
				NewClient: func(cfg config.APIConfig) (*clevercloud.Client, error) {
					creds := clevercloud.Credentials{BearerToken: cfg.Bearer()}
					if cfg.Mode() != config.ModeBearer {
						key, secret, _ := cfg.Consumer()
						creds = clevercloud.Credentials{ConsumerKey: key, ConsumerSecret: secret, Token: cfg.Token, Secret: cfg.Secret}
					}
					return clevercloud.New(clevercloud.Config{Endpoint: cfg.RequestEndpoint(), Credentials: creds})
				}}
			ns := c.ns
			if ns == "" {
				ns = "team-a"
			}
			g, err := r.Resolve(context.Background(), resourceIn(ns, c.ref))
			if c.reason != "" {
				ref, ok := AsRefused(err)
				if !ok {
					t.Fatalf("want a refusal %s, got grant %+v, error %v", c.reason, g, err)
				}
				if ref.Reason != c.reason {
					t.Errorf("reason = %s (%s), want %s", ref.Reason, ref.Message, c.reason)
				}
				for _, v := range []string{opToken, opSecret, nsToken, nsSecret, "cs-ns-123456", "shared-bearer-7d6c"} {
					if strings.Contains(ref.Message, v) {
						t.Errorf("message %q contains a secret value", ref.Message)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if g.Source != c.source {
				t.Errorf("source = %q, want %q", g.Source, c.source)
			}
			if strings.Join(g.Organisations, ",") != strings.Join(c.orgs, ",") {
				t.Errorf("organisations = %v, want %v", g.Organisations, c.orgs)
			}
			if g.BindAny != c.bindAny || strings.Join(g.BindIDs, ",") != strings.Join(c.bindIDs, ",") {
				t.Errorf("binding = %v %v, want %v %v", g.BindAny, g.BindIDs, c.bindAny, c.bindIDs)
			}
			if own := g.Key != global.Fingerprint(); own != c.ownKey {
				t.Errorf("own credential set = %v, want %v", own, c.ownKey)
			}
			// One client per credential set.
			g2, err := r.Resolve(context.Background(), resourceIn(ns, c.ref))
			if err != nil || g2.API != g.API || g2.Key != g.Key {
				t.Errorf("a second resolution did not share the client (%v)", err)
			}
		})
	}
}

func TestConnectRefusesOrganisationBeforeAnyCall(t *testing.T) {
	g := &Grant{Source: "ClusterCleverCredentials default", Organisations: []string{"orga_x"}}
	if g.AllowsOrganisation("orga_y") || !g.AllowsOrganisation("orga_x") {
		t.Fatal("AllowsOrganisation")
	}
	if !(&Grant{}).AllowsOrganisation("orga_any") {
		t.Fatal("an empty list allows any organisation")
	}
}

// The resolver keys the circuit by where credentials come from, not by their token: a
// namespace's new token in its override Secret meets the circuit its old one opened.
func TestResolverCircuitSurvivesANewToken(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	r := &Resolver{NewClient: func(cfg config.APIConfig) (*clevercloud.Client, error) {
		return clevercloud.New(clevercloud.Config{Endpoint: cfg.RequestEndpoint(), Credentials: clevercloud.Credentials{BearerToken: cfg.Bearer()},
			MaxRetries: -1, RateLimit: -1, CircuitThreshold: 2, CircuitCooldown: time.Minute})
	}}
	ns := fmt.Sprintf("fair-%d", time.Now().UnixNano())
	ctx := context.Background()
	g1, err := r.grant(config.APIConfig{Endpoint: srv.URL, BearerToken: "first-token"}, namespaceScope(ns), "Secret "+ns+"/clever-operator", nil, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g1.Tenant != "namespace "+ns {
		t.Fatalf("Tenant %q", g1.Tenant)
	}
	for range 2 {
		_, _ = g1.API.GetAddon(ctx, "orga_x", "addon_x")
	}
	g2, err := r.grant(config.APIConfig{Endpoint: srv.URL, BearerToken: "second-token"}, namespaceScope(ns), "Secret "+ns+"/clever-operator", nil, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g2.Key == g1.Key {
		t.Fatal("another token is another credential set")
	}
	if _, err := g2.API.GetAddon(ctx, "orga_x", "addon_x"); !clevercloud.IsThrottled(err) {
		t.Fatalf("new token: %v; want the namespace's open circuit", err)
	}
	if n := hits.Load(); n != 2 {
		t.Fatalf("endpoint hits %d, want 2", n)
	}
	// Another namespace has its own circuit; an admin's credentials at the operator's
	// endpoint are not a tenant.
	g3, _ := r.grant(config.APIConfig{Endpoint: srv.URL, BearerToken: "second-token"}, namespaceScope(ns+"-other"), "Secret x", nil, true, nil)
	if _, err := g3.API.GetAddon(ctx, "orga_x", "addon_x"); clevercloud.IsThrottled(err) {
		t.Fatal("another namespace shares the circuit")
	}
	r.Global = config.APIConfig{Endpoint: srv.URL}
	g4, _ := r.grant(config.APIConfig{Endpoint: srv.URL, BearerToken: "op"}, scope{key: "ClusterCleverCredentials default in namespace " + ns, namespace: ns}, "ClusterCleverCredentials default", nil, true, nil)
	if g4.Tenant != "" {
		t.Fatalf("the operator's endpoint with an admin's credentials: Tenant %q, want none", g4.Tenant)
	}
	g5, _ := r.grant(config.APIConfig{Endpoint: "https://elsewhere.example", BearerToken: "op"}, scope{key: "ClusterCleverCredentials other in namespace " + ns, namespace: ns}, "ClusterCleverCredentials other", nil, true, nil)
	if g5.Tenant != "ClusterCleverCredentials other in namespace "+ns {
		t.Fatalf("an admin's credentials at another endpoint: Tenant %q", g5.Tenant)
	}
}
