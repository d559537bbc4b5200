// Package admission installs the credentials ValidatingAdmissionPolicy from the operator
// itself, for installs that cannot ship it as a manifest: OLM bundles accept only a fixed list
// of object kinds, and ValidatingAdmissionPolicy is not one of them. With
// --install-admission-policy (which the bundle's CSV passes), the operator creates or updates
// the policy and its binding at start-up, then checks them again periodically.
//
// policy.yaml and binding.yaml are the same as config/credentials-policy (test/credentialspolicy
// checks it); the objects are named with Prefix.
package admission

import (
	"context"
	_ "embed"
	"fmt"
	"reflect"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/yaml"
)

// Prefix is put before the names of policy.yaml and binding.yaml, as config/default's
// namePrefix does: the objects are clever-operator-credentials.
const Prefix = "clever-operator-"

// PolicyName is the name of the policy and of its binding.
const PolicyName = Prefix + "credentials"

// FieldOwner marks the operator's writes.
const FieldOwner = "clever-operator"

// DefaultRecheckPeriod is how often the runnable checks the objects again (someone may have
// deleted or edited them).
const DefaultRecheckPeriod = 10 * time.Minute

//go:embed policy.yaml
var policyYAML []byte

//go:embed binding.yaml
var bindingYAML []byte

// Objects returns the credentials policy and its binding, named PolicyName.
func Objects() (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding, error) {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if err := yaml.UnmarshalStrict(policyYAML, p); err != nil {
		return nil, nil, fmt.Errorf("policy.yaml: %w", err)
	}
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := yaml.UnmarshalStrict(bindingYAML, b); err != nil {
		return nil, nil, fmt.Errorf("binding.yaml: %w", err)
	}
	p.Name = PolicyName
	b.Name = PolicyName
	b.Spec.PolicyName = PolicyName
	return p, b, nil
}

// EnsureCredentialsPolicy creates the policy and its binding, or brings their spec and labels
// back to what the operator ships (an update that changes nothing is not written by the API
// server). It needs get and update on both objects (resourceNames
// clever-operator-credentials) and create on both kinds: the RBAC of
// config/manifests/admission-policy-rbac.yaml. c should not be a cached client (no list or
// watch rights are needed nor granted).
func EnsureCredentialsPolicy(ctx context.Context, c client.Client) error {
	p, b, err := Objects()
	if err != nil {
		return err
	}
	curP := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if err := ensure(ctx, c, p, curP, func() { curP.Spec = p.Spec }); err != nil {
		return err
	}
	curB := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	return ensure(ctx, c, b, curB, func() { curB.Spec = b.Spec })
}

// ensure gets cur (named as want); creates want when absent; else copies the wanted spec
// (setSpec) and labels into cur and updates it.
func ensure(ctx context.Context, c client.Client, want, cur client.Object, setSpec func()) error {
	kind := reflect.TypeOf(want).Elem().Name()
	err := c.Get(ctx, client.ObjectKeyFromObject(want), cur)
	if apierrors.IsNotFound(err) {
		if err := c.Create(ctx, want, client.FieldOwner(FieldOwner)); err != nil {
			return fmt.Errorf("creating %s %s: %w", kind, want.GetName(), err)
		}
		log.FromContext(ctx).Info("created the credentials admission policy object", "kind", kind, "name", want.GetName())
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", kind, want.GetName(), err)
	}
	rv := cur.GetResourceVersion()
	setSpec()
	labels := cur.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range want.GetLabels() {
		labels[k] = v
	}
	cur.SetLabels(labels)
	if err := c.Update(ctx, cur, client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("updating %s %s: %w", kind, want.GetName(), err)
	}
	if cur.GetResourceVersion() != rv {
		log.FromContext(ctx).Info("restored the credentials admission policy object", "kind", kind, "name", want.GetName())
	}
	return nil
}

// Runnable ensures the policy when the manager starts (retrying with backoff until it works),
// then every recheck period. Errors are logged, never fatal: the controller enforces the same
// rules without the policy.
type Runnable struct {
	Client        client.Client
	RecheckPeriod time.Duration
}

var _ manager.LeaderElectionRunnable = &Runnable{}

// NeedLeaderElection: one replica is enough.
func (r *Runnable) NeedLeaderElection() bool { return true }

// Start runs until ctx ends.
func (r *Runnable) Start(ctx context.Context) error {
	l := log.FromContext(ctx).WithName("admission-policy")
	ctx = log.IntoContext(ctx, l)
	period := r.RecheckPeriod
	if period <= 0 {
		period = DefaultRecheckPeriod
	}
	wait := time.Second
	for {
		next := period
		if err := EnsureCredentialsPolicy(ctx, r.Client); err != nil {
			l.Error(err, "cannot install the credentials ValidatingAdmissionPolicy (the controller still enforces the credentials rules)")
			next = wait
			if wait < period {
				wait *= 2
			}
		} else {
			wait = time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

// AddToManager adds the Runnable to mgr, with an uncached client of its own (the objects are
// read by name: no list or watch rights needed). main.go calls it when
// --install-admission-policy is set.
func AddToManager(mgr manager.Manager) error {
	c, err := NewClient(mgr.GetConfig())
	if err != nil {
		return err
	}
	return mgr.Add(&Runnable{Client: c})
}

// NewClient returns an uncached client that knows the admissionregistration kinds.
func NewClient(cfg *rest.Config) (client.Client, error) {
	s := runtime.NewScheme()
	if err := admissionregistrationv1.AddToScheme(s); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: s})
}
