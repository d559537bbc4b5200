package credentials

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/api/v1alpha1"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// OverrideSecretNames are the per-namespace credentials Secrets, in lookup order: the Rust
// operator's v0.6 name, then the name of its renamed v0.8 (clever-kubernetes-operator).
var OverrideSecretNames = []string{"clever-operator", "clever-kubernetes-operator"}

// OverrideSecretKey is the key holding the configuration document.
const OverrideSecretKey = "config"

// Kinds of credentials objects (spec.credentialsRef.kind).
const (
	KindCleverCredentials        = "CleverCredentials"
	KindClusterCleverCredentials = "ClusterCleverCredentials"
)

// DefaultCredentialsName is the ClusterCleverCredentials resources use when they name none and
// their namespace has no override Secret (--default-credentials).
const DefaultCredentialsName = "default"

// CredentialsRef is a resource's spec.credentialsRef (Kind defaulted).
type CredentialsRef struct{ Kind, Name string }

// CredentialsRefOf reads spec.credentialsRef; ok is false when it is not set.
func CredentialsRefOf(u *unstructured.Unstructured) (CredentialsRef, bool) {
	name := kinds.SpecCredentialsRefName.String(u)
	if name == "" {
		return CredentialsRef{}, false
	}
	kind := kinds.SpecCredentialsRefKind.String(u)
	if kind == "" {
		kind = KindCleverCredentials
	}
	return CredentialsRef{Kind: kind, Name: name}, true
}

// Resolver resolves the credentials of a resource (docs/operator.md, "Credentials objects"):
//
//  1. spec.credentialsRef: that CleverCredentials (of the resource's namespace) or
//     ClusterCleverCredentials (which must allow the namespace);
//  2. else the namespace's override Secret: with an identity of its own (token, bearer-token,
//     or a clever-tools.json token) it is a CleverCredentials allowing any organisation and
//     any binding; without (consumer pair, endpoint, expiry only) it completes the operator's
//     identity, under the default ClusterCleverCredentials' policy;
//  3. else the default ClusterCleverCredentials (DefaultName); absent: the operator's own
//     credentials, allowing everything (the behaviour before credentials objects).
//
// Trust model: whoever can write Secrets (or CleverCredentials) in a namespace can point that
// namespace's resources at other Clever Cloud credentials, never another namespace's, and
// never at the operator's identity beyond what the default object allows.
type Resolver struct {
	// Reader reads credentials objects and Namespaces (metadata); the operator gives it the
	// manager's cache.
	Reader client.Reader
	// Overrides reads the override Secrets. The operator gives it a cache of just those
	// Secrets (they are not labelled, so the manager's Secret cache does not hold them).
	Overrides client.Reader
	// SecretReader reads the Secrets credentials objects reference (live: they are not cached).
	SecretReader client.Reader
	// Global is the operator's own configuration (flags, environment, files).
	Global config.APIConfig
	// DefaultName is the default ClusterCleverCredentials; "" means none (allow all).
	DefaultName string
	// OperatorNamespace is where a ClusterCleverCredentials' Secret is when it names no
	// namespace.
	OperatorNamespace string
	// NewClient builds a client (the engine shares one per credential set and scope, whose
	// circuit it keys: ClientFor).
	NewClient func(config.APIConfig) (*clevercloud.Client, error)
	// SecretTTL bounds how long a referenced Secret read is reused (default 10 s); Forget
	// drops it at once.
	SecretTTL time.Duration
	Now       func() time.Time

	mu      sync.Mutex
	clients map[string]*clevercloud.Client
	secrets map[types.NamespacedName]secretEntry
}

type secretEntry struct {
	at   time.Time
	data map[string][]byte
	err  error
}

func refused(reason, format string, args ...any) error {
	return &RefusedError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Resolve implements Credentials.
func (r *Resolver) Resolve(ctx context.Context, obj *unstructured.Unstructured) (*Grant, error) {
	ns := obj.GetNamespace()
	if ref, ok := CredentialsRefOf(obj); ok {
		switch ref.Kind {
		case KindCleverCredentials:
			return r.namespaced(ctx, ns, ref.Name)
		case KindClusterCleverCredentials:
			g, _, err := r.cluster(ctx, ns, ref.Name)
			if err == nil && g == nil {
				return nil, refused(status.ReasonCredentialsNotFound, "spec.credentialsRef names ClusterCleverCredentials %s, which does not exist", ref.Name)
			}
			return g, err
		default:
			return nil, refused(status.ReasonCredentialsNotFound, "spec.credentialsRef.kind %q is neither %s nor %s", ref.Kind, KindCleverCredentials, KindClusterCleverCredentials)
		}
	}
	over, secName, found, err := r.override(ctx, ns)
	if err != nil {
		return nil, err
	}
	if found && HasIdentity(over) {
		// The namespace's own identity: a CleverCredentials allowing anything (and filled
		// from the operator's configuration exactly as a CleverCredentials' Secret is).
		cfg, err := config.ApplyOverride(r.Global, over)
		if err != nil {
			return nil, refused(status.ReasonInvalidCredentials, "Secret %s/%s: %v", ns, secName, err)
		}
		return r.grant(cfg, namespaceScope(ns), fmt.Sprintf("Secret %s/%s", ns, secName), nil, true, nil)
	}
	g, base, err := r.cluster(ctx, ns, r.DefaultName)
	if err != nil {
		return nil, err
	}
	if g == nil {
		// No default object: the operator's credentials, allowing everything.
		base = r.Global
		sc := scope{key: "the operator's credentials in namespace " + ns, namespace: ns}
		if g, err = r.grant(base, sc, "the operator's credentials (no ClusterCleverCredentials "+r.defaultLabel()+")", nil, true, nil); err != nil {
			return nil, err
		}
	}
	if !found {
		return g, nil
	}
	// An override without identity completes the operator's (the default's) identity, under
	// the default's policy.
	cfg, err := config.ApplyOverride(base, over)
	if err != nil {
		return nil, refused(status.ReasonInvalidCredentials, "Secret %s/%s: %v", ns, secName, err)
	}
	return r.grant(cfg, namespaceScope(ns), fmt.Sprintf("Secret %s/%s over %s", ns, secName, g.Source), g.Organisations, g.BindAny, g.BindIDs)
}

func (r *Resolver) defaultLabel() string {
	if r.DefaultName == "" {
		return "default configured"
	}
	return r.DefaultName
}

// HasIdentity says whether a parsed credentials Secret names a Clever Cloud identity of its
// own (an OAuth1 or API token), rather than only completing the operator's.
func HasIdentity(c config.APIConfig) bool {
	return strings.TrimSpace(c.Token) != "" || strings.TrimSpace(c.BearerToken) != ""
}

// override reads the namespace's override Secret, if any.
func (r *Resolver) override(ctx context.Context, ns string) (config.APIConfig, string, bool, error) {
	if r.Overrides == nil {
		return config.APIConfig{}, "", false, nil
	}
	for _, name := range OverrideSecretNames {
		sec := &corev1.Secret{}
		err := r.Overrides.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, sec)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return config.APIConfig{}, "", false, fmt.Errorf("reading Secret %s/%s: %w", ns, name, err)
		}
		// The "config" document and/or clever-tools' login file ("clever-tools.json").
		over, err := config.ParseOverrideSecret(sec.Data, OverrideSecretKey)
		if err != nil {
			return config.APIConfig{}, "", false, refused(status.ReasonInvalidCredentials, "Secret %s/%s %v", ns, name, err)
		}
		return over, name, true, nil
	}
	return config.APIConfig{}, "", false, nil
}

// namespaced resolves a CleverCredentials of the resource's namespace.
func (r *Resolver) namespaced(ctx context.Context, ns, name string) (*Grant, error) {
	cc := &v1alpha1.CleverCredentials{}
	if err := r.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cc); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, refused(status.ReasonCredentialsNotFound, "spec.credentialsRef names CleverCredentials %s/%s, which does not exist", ns, name)
		}
		return nil, fmt.Errorf("reading CleverCredentials %s/%s: %w", ns, name, err)
	}
	cfg, source, err := r.NamespacedConfig(ctx, cc)
	if err != nil {
		return nil, err
	}
	return r.grant(cfg, namespaceScope(ns), source, toStrings(cc.Spec.Organisations), cc.Spec.Binding.Any, toStrings(cc.Spec.Binding.AddonIDs))
}

// NamespacedConfig is the configuration a CleverCredentials stands for (its Secret, parsed as
// an override Secret, which must name an identity of its own), and its source for messages.
// A problem with the Secret is a *RefusedError.
func (r *Resolver) NamespacedConfig(ctx context.Context, cc *v1alpha1.CleverCredentials) (config.APIConfig, string, error) {
	source := fmt.Sprintf("CleverCredentials %s/%s", cc.Namespace, cc.Name)
	over, err := r.secretConfig(ctx, types.NamespacedName{Namespace: cc.Namespace, Name: cc.Spec.SecretRef.Name}, cc.Spec.SecretRef.Key, source)
	if err != nil {
		return config.APIConfig{}, source, err
	}
	if !HasIdentity(over) {
		// Never the operator's identity for a namespace's own object.
		return config.APIConfig{}, source, refused(status.ReasonInvalidCredentials, "%s: Secret %s/%s names no identity of its own (token or bearer-token)", source, cc.Namespace, cc.Spec.SecretRef.Name)
	}
	// Filled as an override Secret is (a token + secret without a consumer pair signs with
	// the operator's pair, or clever-tools' published one).
	cfg, err := config.ApplyOverride(r.Global, over)
	if err != nil {
		return config.APIConfig{}, source, refused(status.ReasonInvalidCredentials, "%s: Secret %s/%s: %v", source, cc.Namespace, cc.Spec.SecretRef.Name, err)
	}
	return cfg, source, validate(cfg, source)
}

func validate(cfg config.APIConfig, source string) error {
	if err := cfg.Validate(); err != nil {
		return refused(status.ReasonInvalidCredentials, "%s: %v", source, err)
	}
	return nil
}

// cluster resolves a ClusterCleverCredentials for a resource of namespace ns. A nil grant
// with a nil error: the object does not exist. base is the configuration it stands for.
func (r *Resolver) cluster(ctx context.Context, ns, name string) (*Grant, config.APIConfig, error) {
	if name == "" {
		return nil, config.APIConfig{}, nil
	}
	ccc := &v1alpha1.ClusterCleverCredentials{}
	if err := r.Reader.Get(ctx, types.NamespacedName{Name: name}, ccc); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, config.APIConfig{}, nil
		}
		return nil, config.APIConfig{}, fmt.Errorf("reading ClusterCleverCredentials %s: %w", name, err)
	}
	source := "ClusterCleverCredentials " + name
	allowed, err := r.allowsNamespace(ctx, ccc.Spec.Namespaces, ns)
	if err != nil {
		return nil, config.APIConfig{}, err
	}
	if !allowed {
		return nil, config.APIConfig{}, refused(status.ReasonCredentialsNotAllowed, "%s does not allow namespace %s (spec.namespaces)", source, ns)
	}
	cfg, err := r.ClusterConfig(ctx, ccc)
	if err != nil {
		return nil, config.APIConfig{}, err
	}
	sc := scope{key: source + " in namespace " + ns, namespace: ns}
	g, err := r.grant(cfg, sc, source, toStrings(ccc.Spec.Organisations), ccc.Spec.Binding.Any, toStrings(ccc.Spec.Binding.AddonIDs))
	return g, cfg, err
}

// ClusterConfig is the configuration a ClusterCleverCredentials stands for: its Secret over
// the operator's configuration, or the operator's own without one. A problem with the
// Secret is a *RefusedError.
func (r *Resolver) ClusterConfig(ctx context.Context, ccc *v1alpha1.ClusterCleverCredentials) (config.APIConfig, error) {
	source := "ClusterCleverCredentials " + ccc.Name
	cfg := r.Global
	if ref := ccc.Spec.SecretRef; ref != nil {
		key := r.SecretOf(ccc)
		if key.Namespace == "" {
			return config.APIConfig{}, refused(status.ReasonInvalidCredentials, "%s: spec.secretRef.namespace is required (the operator's namespace is not known)", source)
		}
		over, err := r.secretConfig(ctx, key, ref.Key, source)
		if err != nil {
			return config.APIConfig{}, err
		}
		if cfg, err = config.ApplyOverride(r.Global, over); err != nil {
			return config.APIConfig{}, refused(status.ReasonInvalidCredentials, "%s: Secret %s/%s: %v", source, key.Namespace, key.Name, err)
		}
	}
	return cfg, validate(cfg, source)
}

// SecretOf is the Secret a credentials object references (Namespace empty: none).
func (r *Resolver) SecretOf(obj client.Object) types.NamespacedName {
	switch o := obj.(type) {
	case *v1alpha1.CleverCredentials:
		return types.NamespacedName{Namespace: o.Namespace, Name: o.Spec.SecretRef.Name}
	case *v1alpha1.ClusterCleverCredentials:
		if ref := o.Spec.SecretRef; ref != nil {
			ns := ref.Namespace
			if ns == "" {
				ns = r.OperatorNamespace
			}
			return types.NamespacedName{Namespace: ns, Name: ref.Name}
		}
	}
	return types.NamespacedName{}
}

// allowsNamespace says whether a NamespaceSelection selects ns: by name, or by its labels
// (read from the cache only when a non-empty selector needs them).
func (r *Resolver) allowsNamespace(ctx context.Context, sel v1alpha1.NamespaceSelection, ns string) (bool, error) {
	for _, n := range sel.Names {
		if n == ns {
			return true, nil
		}
	}
	if sel.Selector == nil {
		return false, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel.Selector)
	if err != nil {
		return false, refused(status.ReasonInvalidCredentials, "spec.namespaces.selector: %v", err)
	}
	if s.Empty() {
		return true, nil
	}
	nsObj := &metav1.PartialObjectMetadata{}
	nsObj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := r.Reader.Get(ctx, types.NamespacedName{Name: ns}, nsObj); err != nil {
		return false, fmt.Errorf("reading namespace %s: %w", ns, err)
	}
	return s.Matches(labels.Set(nsObj.GetLabels())), nil
}

// secretConfig reads and parses a referenced credentials Secret (as an override Secret).
func (r *Resolver) secretConfig(ctx context.Context, key types.NamespacedName, dataKey, source string) (config.APIConfig, error) {
	data, err := r.secretData(ctx, key)
	if apierrors.IsNotFound(err) {
		return config.APIConfig{}, refused(status.ReasonInvalidCredentials, "%s: Secret %s/%s does not exist", source, key.Namespace, key.Name)
	}
	if err != nil {
		return config.APIConfig{}, fmt.Errorf("%s: reading Secret %s/%s: %w", source, key.Namespace, key.Name, err)
	}
	if dataKey == "" {
		dataKey = OverrideSecretKey
	}
	cfg, err := config.ParseOverrideSecret(data, dataKey)
	if err != nil {
		return config.APIConfig{}, refused(status.ReasonInvalidCredentials, "%s: Secret %s/%s %v", source, key.Namespace, key.Name, err)
	}
	return cfg, nil
}

func (r *Resolver) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// secretData reads a Secret's data, reusing a read younger than SecretTTL.
func (r *Resolver) secretData(ctx context.Context, key types.NamespacedName) (map[string][]byte, error) {
	ttl := r.SecretTTL
	if ttl == 0 {
		ttl = 10 * time.Second
	}
	r.mu.Lock()
	e, ok := r.secrets[key]
	r.mu.Unlock()
	if ok && r.now().Sub(e.at) < ttl {
		return e.data, e.err
	}
	sec := &corev1.Secret{}
	err := r.SecretReader.Get(ctx, key, sec)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err // not cached
	}
	r.mu.Lock()
	if r.secrets == nil {
		r.secrets = map[types.NamespacedName]secretEntry{}
	}
	r.secrets[key] = secretEntry{at: r.now(), data: sec.Data, err: err}
	r.mu.Unlock()
	return sec.Data, err
}

// Forget drops what the resolver remembers of a Secret (the credentials controller calls it
// when it sees the Secret change).
func (r *Resolver) Forget(key types.NamespacedName) {
	r.mu.Lock()
	delete(r.secrets, key)
	r.mu.Unlock()
}

// scope is where a grant's credentials come from, for what must not follow their value: the
// circuit breaker's key (a namespace minting new tokens keeps its open circuit) and the share
// of a kind's workers (fairness.go). Everything a namespace supplies (a CleverCredentials, an
// override Secret, with or without an identity) is one scope per namespace, whatever the
// object: a namespace gets no fresh circuit or share by creating another one. Credentials an
// admin chose are one scope per credentials object and namespace: `default`, used by many
// namespaces, is not one tenant.
type scope struct {
	key       string
	namespace string
	supplied  bool // the namespace supplied the credentials
}

func namespaceScope(ns string) scope {
	return scope{key: "namespace " + ns, namespace: ns, supplied: true}
}

// CircuitKey is the circuit key of a credentials object's own checks (the credentials
// controller's): a CleverCredentials shares its namespace's circuit (namespaceScope); a
// ClusterCleverCredentials has its own.
func CircuitKey(obj client.Object) string {
	if obj.GetNamespace() != "" {
		return namespaceScope(obj.GetNamespace()).key
	}
	return KindClusterCleverCredentials + " " + obj.GetName()
}

// grant validates a configuration and returns its Grant, with a shared client.
func (r *Resolver) grant(cfg config.APIConfig, sc scope, source string, orgs []string, bindAny bool, bindIDs []string) (*Grant, error) {
	if err := validate(cfg, source); err != nil {
		return nil, err
	}
	api, key, err := r.ClientFor(cfg, sc.key)
	if err != nil {
		return nil, refused(status.ReasonInvalidCredentials, "%s: %v", source, err)
	}
	g := &Grant{API: api, Key: key, Source: source, Organisations: orgs, BindAny: bindAny, BindIDs: bindIDs}
	if sc.supplied || !r.ownEndpoint(cfg) {
		// The namespace chose them, or their endpoint is not the operator's: an endpoint that
		// does not answer must not hold every worker (fairness.go).
		g.Tenant = sc.key
	}
	return g, nil
}

// ownEndpoint says whether cfg sends its requests to the operator's own API endpoint or
// bridge (Clever Cloud's, usually).
func (r *Resolver) ownEndpoint(cfg config.APIConfig) bool {
	e := cfg.RequestEndpoint()
	bridge := config.APIConfig{Endpoint: r.Global.Endpoint, BridgeEndpoint: r.Global.BridgeEndpoint, BearerToken: "bridge"}
	api := config.APIConfig{Endpoint: r.Global.Endpoint, Token: "api", Secret: "api"}
	return strings.EqualFold(e, api.RequestEndpoint()) || strings.EqualFold(e, bridge.RequestEndpoint())
}

// Client returns the shared client of a configuration, with the circuit of its credential
// set (ClientFor without a key).
func (r *Resolver) Client(cfg config.APIConfig) (*clevercloud.Client, string, error) {
	return r.ClientFor(cfg, "")
}

// ClientFor returns the shared client of a configuration and circuit key (one per credential
// set and key): the engine's and the credentials controller's checks use the same. The key
// returned identifies the credential set (for caches), whatever the circuit key.
func (r *Resolver) ClientFor(cfg config.APIConfig, circuitKey string) (*clevercloud.Client, string, error) {
	key := cfg.Fingerprint()
	ck := circuitKey + "\x00" + key
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clients[ck]; ok {
		return c, key, nil
	}
	c, err := r.NewClient(cfg)
	if err != nil {
		return nil, "", err
	}
	c.KeyCircuit(circuitKey)
	if r.clients == nil {
		r.clients = map[string]*clevercloud.Client{}
	}
	r.clients[ck] = c
	return c, key, nil
}

// toStrings converts organisation or add-on ids of the API types (nil for none).
func toStrings[T ~string](in []T) []string {
	if len(in) == 0 {
		return nil
	}
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = string(v)
	}
	return out
}
