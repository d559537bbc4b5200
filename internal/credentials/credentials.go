// Package credentials runs the credentials objects (CleverCredentials, ClusterCleverCredentials):
// it checks each one at Clever Cloud (GET /v2/self, GET /v2/organisations) and reports who it
// is and what it reaches in its status, creates the default ClusterCleverCredentials at
// start-up, and wakes the add-on resources that use credentials whose spec or readiness
// changed (and those of a namespace whose override Secret changed), so a revoked or fixed
// credential takes effect at once.
//
// It also holds what a resource's credentials allow (resolver.go, grant.go): the Resolver
// turns a resource's spec.credentialsRef, its namespace's override Secret or the default
// ClusterCleverCredentials into a Grant (the Clever Cloud client, organisations, bindings)
// or a refusal, and API (api.go) is the client interface every controller drives.
package credentials

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/clever-operator/clever-operator/api/v1alpha1"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/patch"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/internal/status"
)

// DefaultCheckPeriod is how often a credentials object is checked again.
const DefaultCheckPeriod = 10 * time.Minute

// NotReadyCheckPeriod is how often credentials that are not Ready are checked again.
const NotReadyCheckPeriod = time.Minute

// Checker is what a check calls (*clevercloud.Client implements it).
type Checker interface {
	Self(ctx context.Context) (*clevercloud.Self, error)
	Organisations(ctx context.Context) ([]clevercloud.Organisation, error)
}

// Reconciler checks the credentials objects of one kind.
type Reconciler struct {
	// Cluster selects ClusterCleverCredentials; else CleverCredentials.
	Cluster  bool
	Client   client.Client
	Resolver *Resolver
	// NewChecker returns the client of a configuration (default: the resolver's shared one,
	// the engine's).
	NewChecker func(config.APIConfig) (Checker, error)
	Enqueuer   *Enqueuer
	Recorder   record.EventRecorder
	// Period between checks (default DefaultCheckPeriod), jittered by up to a tenth.
	Period time.Duration
	Log    logr.Logger
	Now    func() time.Time
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) kind() string {
	if r.Cluster {
		return KindClusterCleverCredentials
	}
	return KindCleverCredentials
}

func (r *Reconciler) newObject() client.Object {
	if r.Cluster {
		return &v1alpha1.ClusterCleverCredentials{}
	}
	return &v1alpha1.CleverCredentials{}
}

// SetupWithManager registers the controller. Its status writes do not wake it (generation
// predicate); the periodic requeue rechecks.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Period == 0 {
		r.Period = DefaultCheckPeriod
	}
	name := "clevercredentials"
	if r.Cluster {
		name = "clusterclevercredentials"
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(r.newObject(), builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WithOptions(controller.Options{NewQueue: queue.New[reconcile.Request]}).
		Complete(r)
}

// Reconcile checks one credentials object and writes its status (one write).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted: the resources that used it are refused (or fall back) at once.
			r.Enqueuer.Users(ctx, r.kind(), req.Namespace, req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	h := patch.New(obj)
	st, before := statusOf(obj), statusOf(h.Base)
	wasReady := readyStatus(before)
	specChanged := before.ObservedGeneration != obj.GetGeneration()

	if key := r.Resolver.SecretOf(obj); key.Name != "" {
		r.Resolver.Forget(key) // a check reads the Secret live
	}
	var cfg config.APIConfig
	var err error
	if r.Cluster {
		cfg, err = r.Resolver.ClusterConfig(ctx, obj.(*v1alpha1.ClusterCleverCredentials))
	} else {
		cfg, _, err = r.Resolver.NamespacedConfig(ctx, obj.(*v1alpha1.CleverCredentials))
	}
	var res ctrl.Result
	var retry error
	now := metav1.NewTime(r.now())
	if err != nil {
		if ref, ok := AsRefused(err); ok {
			r.setNotReady(st, ref.Reason, ref.Message, obj.GetGeneration(), now)
			st.User, st.Organisations = nil, nil
		} else {
			r.setNotReady(st, status.ReasonCheckFailed, "reading the credentials' Secret failed: "+err.Error(), obj.GetGeneration(), now)
			retry = err
		}
	} else {
		res, retry = r.check(ctx, cfg, CircuitKey(obj), st, obj.GetGeneration(), now)
	}
	st.ObservedGeneration = obj.GetGeneration()
	st.LastCheckedAt = &now
	if res.RequeueAfter == 0 && retry == nil {
		res.RequeueAfter = queue.Jitter(r.Period)
		if readyStatus(st) != metav1.ConditionTrue {
			// Credentials that do not work are few and being fixed: their Secret (not
			// watched) is read again every minute, so a fix shows within a minute.
			res.RequeueAfter = queue.Jitter(min(r.Period, NotReadyCheckPeriod))
		}
	}
	if _, err := h.Commit(ctx, r.Client, patch.Options[client.Object]{Owned: true}); err != nil {
		return ctrl.Result{}, err
	}
	if c := meta.FindStatusCondition(st.Conditions, status.TypeReady); c != nil && c.Status != metav1.ConditionTrue {
		if old := meta.FindStatusCondition(before.Conditions, status.TypeReady); old == nil || old.Message != c.Message {
			r.Recorder.Event(obj, "Warning", c.Reason, c.Message)
		}
	}
	if specChanged || wasReady != readyStatus(st) {
		r.Enqueuer.Users(ctx, r.kind(), obj.GetNamespace(), obj.GetName())
	}
	if retry != nil {
		return ctrl.Result{}, retry
	}
	return res, nil
}

// check asks Clever Cloud who the credentials are and what they reach, within
// queue.DefaultPassTimeout (the endpoint is the credentials', which may never answer), with the
// circuit of where they come from (circuitKey: a namespace's shared with its resources').
func (r *Reconciler) check(ctx context.Context, cfg config.APIConfig, circuitKey string, st *v1alpha1.CleverCredentialsStatus, gen int64, now metav1.Time) (ctrl.Result, error) {
	var c Checker
	var err error
	if r.NewChecker != nil {
		c, err = r.NewChecker(cfg)
	} else {
		c, _, err = r.Resolver.ClientFor(cfg, circuitKey)
	}
	if err != nil {
		r.setNotReady(st, status.ReasonInvalidCredentials, "cannot build a Clever Cloud client: "+err.Error(), gen, now)
		return ctrl.Result{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, queue.DefaultPassTimeout)
	defer cancel()
	self, err := c.Self(ctx)
	if err == nil {
		var orgs []clevercloud.Organisation
		if orgs, err = c.Organisations(ctx); err == nil {
			st.User = &v1alpha1.CredentialsUser{ID: self.ID, Name: self.Name}
			st.Organisations = make([]v1alpha1.ReachableOrganisation, 0, len(orgs))
			for _, o := range orgs {
				st.Organisations = append(st.Organisations, v1alpha1.ReachableOrganisation{ID: o.ID, Name: o.Name})
			}
			sort.Slice(st.Organisations, func(i, j int) bool { return st.Organisations[i].ID < st.Organisations[j].ID })
			meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: status.TypeReady, Status: metav1.ConditionTrue, Reason: status.ReasonAuthenticated,
				Message: fmt.Sprintf("authenticated as %s; %d organisations reachable", self.ID, len(orgs)), ObservedGeneration: gen, LastTransitionTime: now})
			return ctrl.Result{}, nil
		}
	}
	var ae *clevercloud.APIError
	if errors.As(err, &ae) && (ae.StatusCode == 401 || ae.StatusCode == 403) {
		st.User, st.Organisations = nil, nil
		r.setNotReady(st, status.ReasonInvalidCredentials, fmt.Sprintf("Clever Cloud refused these credentials (HTTP %d): check the token, secret and consumer pair, and that the token is not expired or revoked", ae.StatusCode), gen, now)
		return ctrl.Result{}, nil
	}
	// Unavailable, throttled or a wrong endpoint: keep what was known, retry with backoff.
	r.setNotReady(st, status.ReasonCheckFailed, "asking Clever Cloud who these credentials are failed: "+err.Error(), gen, now)
	return ctrl.Result{RequeueAfter: time.Minute}, nil
}

func (r *Reconciler) setNotReady(st *v1alpha1.CleverCredentialsStatus, reason, msg string, gen int64, now metav1.Time) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: status.TypeReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg, ObservedGeneration: gen, LastTransitionTime: now})
}

func statusOf(obj client.Object) *v1alpha1.CleverCredentialsStatus {
	switch o := obj.(type) {
	case *v1alpha1.CleverCredentials:
		return &o.Status
	case *v1alpha1.ClusterCleverCredentials:
		return &o.Status
	}
	return nil
}

func readyStatus(st *v1alpha1.CleverCredentialsStatus) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(st.Conditions, status.TypeReady); c != nil {
		return c.Status
	}
	return metav1.ConditionUnknown
}

// EnsureDefault creates the default ClusterCleverCredentials when absent: the operator's own
// credentials (no secretRef), every namespace, any organisation (the behaviour before
// credentials objects). An admin restricts it to restrict the operator's identity.
func EnsureDefault(ctx context.Context, c client.Client, reader client.Reader, name string, log logr.Logger) error {
	if name == "" {
		return nil
	}
	cur := &v1alpha1.ClusterCleverCredentials{}
	err := reader.Get(ctx, types.NamespacedName{Name: name}, cur)
	switch {
	case err == nil:
		return nil
	case meta.IsNoMatchError(err):
		log.Info("the ClusterCleverCredentials CRD is not installed: no default credentials object (every namespace uses the operator's credentials)")
		return nil
	case !apierrors.IsNotFound(err):
		return err
	}
	def := &v1alpha1.ClusterCleverCredentials{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kinds.LabelManagedBy: kinds.ManagedByValue},
			Annotations: map[string]string{"api.clever-cloud.com/description": "the operator's own Clever Cloud credentials; restrict spec.namespaces and spec.organisations to restrict what namespaces may do with them"}},
		Spec: v1alpha1.ClusterCleverCredentialsSpec{Namespaces: v1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{}}},
	}
	if err := c.Create(ctx, def); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	log.Info("created the default ClusterCleverCredentials", "name", name)
	return nil
}
