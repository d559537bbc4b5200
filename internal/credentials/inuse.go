package credentials

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clever-operator/clever-operator/api/v1alpha1"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/queue"
)

// InUseFinalizer keeps a namespace's own credentials while its namespace is being deleted and
// resources that use them still hold an add-on: the namespace controller deletes everything of
// a namespace in one sweep, the credentials' Secret included, and without it the resources
// could no longer delete their add-ons (they would stay at Clever Cloud, and the namespace
// Terminating). It is set on what a resource with a finalizer of the operator's uses: the
// namespace's override Secret, a CleverCredentials it names and that object's Secret (Secrets
// also carry InUseLabel, which the operator watches). Deleting one of them outside a
// namespace's deletion takes effect at once (the finalizer goes); in a namespace being deleted
// it goes once no resource that uses it is left.
const InUseFinalizer = kinds.Group + "/credentials-in-use"

// InUseLabel marks the Secrets that carry InUseFinalizer (the operator watches their metadata
// by it). A label set by anyone else only makes the operator look at that Secret: the
// finalizer is kept only on a Secret its resources use.
const InUseLabel = kinds.Group + "/credentials-in-use"

// InUse puts InUseFinalizer on the credentials a namespace's resources use and takes it off
// when they no longer need them. One pass per namespace.
type InUse struct {
	// Client reads resources, CleverCredentials and namespaces from the manager's cache and
	// patches metadata.
	Client client.Client
	// APIReader reads Secrets' metadata and a namespace live.
	APIReader client.Reader
	// Kinds are the kinds whose resources hold a finalizer of the operator's.
	Kinds []schema.GroupVersionKind
	// Armed lists the Secrets carrying InUseLabel (metadata; a cache of just those).
	Armed client.Reader
	Log   logr.Logger

	wake chan event.TypedGenericEvent[*metav1.PartialObjectMetadata]
}

// Wake asks for a pass over namespace (its override Secret changed). It never blocks.
func (r *InUse) Wake(namespace string) {
	if r == nil || r.wake == nil || namespace == "" {
		return
	}
	select {
	case r.wake <- event.TypedGenericEvent[*metav1.PartialObjectMetadata]{Object: namespaceKey(namespace)}:
	default:
	}
}

func namespaceKey(ns string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	m.SetName(ns)
	return m
}

// ArmedSource watches the Secrets carrying InUseLabel in c (a cache of their metadata only).
func ArmedSource(c cache.Cache) source.Source {
	sec := &metav1.PartialObjectMetadata{}
	sec.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return source.Kind(c, sec, handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, o *metav1.PartialObjectMetadata) []reconcile.Request {
		return byNamespace(ctx, o)
	}))
}

// byNamespace maps an object to a pass over its namespace.
func byNamespace(_ context.Context, o client.Object) []reconcile.Request {
	if o.GetNamespace() == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
}

// SetupWithManager registers the controller (requests name namespaces). armedSource is the
// watch of the Secrets carrying InUseLabel.
func (r *InUse) SetupWithManager(mgr ctrl.Manager, armedSource source.Source) error {
	r.wake = make(chan event.TypedGenericEvent[*metav1.PartialObjectMetadata], 256)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("credentials-in-use").
		WatchesMetadata(namespaceKey(""), &handler.EnqueueRequestForObject{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return false },
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
			UpdateFunc: func(e event.UpdateEvent) bool {
				return e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil
			},
		})).
		Watches(&v1alpha1.CleverCredentials{}, handler.EnqueueRequestsFromMapFunc(byNamespace)).
		WatchesRawSource(source.Channel(r.wake, &handler.TypedEnqueueRequestForObject[*metav1.PartialObjectMetadata]{})).
		WithOptions(controller.Options{NewQueue: queue.New[reconcile.Request]})
	if armedSource != nil {
		b = b.WatchesRawSource(armedSource)
	}
	for _, gvk := range r.Kinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		b = b.Watches(u, handler.EnqueueRequestsFromMapFunc(byNamespace), builder.WithPredicates(usageChanged))
	}
	return b.Complete(r)
}

// usageChanged lets through what changes which credentials a resource needs: its creation and
// deletion, and a change of its finalizers, deletion timestamp or spec.credentialsRef.
var usageChanged = predicate.Funcs{
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		if !slices.Equal(o.GetFinalizers(), n.GetFinalizers()) || (o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil) {
			return true
		}
		ou, ok1 := o.(*unstructured.Unstructured)
		nu, ok2 := n.(*unstructured.Unstructured)
		if !ok1 || !ok2 {
			return true
		}
		or, _, _ := unstructured.NestedFieldNoCopy(ou.Object, "spec", "credentialsRef")
		nr, _, _ := unstructured.NestedFieldNoCopy(nu.Object, "spec", "credentialsRef")
		return !reflect.DeepEqual(or, nr)
	},
}

// holdsAddon says whether obj carries a finalizer of the operator's (its deletion may still
// call Clever Cloud with its credentials).
func holdsAddon(obj client.Object) bool {
	return slices.ContainsFunc(obj.GetFinalizers(), func(f string) bool { return strings.HasPrefix(f, kinds.Group+"/") })
}

// Reconcile sets or removes InUseFinalizer on the credentials of one namespace.
func (r *InUse) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := req.Name
	nsMeta := namespaceKey(ns)
	if err := r.Client.Get(ctx, types.NamespacedName{Name: ns}, nsMeta); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	u, err := r.usage(ctx, ns)
	if err != nil {
		return ctrl.Result{}, err
	}
	term := terminating{cached: nsMeta.DeletionTimestamp != nil, live: func() (bool, error) {
		live := namespaceKey(ns)
		if err := r.APIReader.Get(ctx, types.NamespacedName{Name: ns}, live); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return live.DeletionTimestamp != nil, nil
	}}

	ccs := &v1alpha1.CleverCredentialsList{}
	if err := r.Client.List(ctx, ccs, client.InNamespace(ns)); err != nil {
		return ctrl.Result{}, err
	}
	wantSecret := map[string]bool{}
	for i := range ccs.Items {
		cc := &ccs.Items[i]
		want := u.credentials[cc.Name]
		if want && cc.Spec.SecretRef.Name != "" {
			wantSecret[cc.Spec.SecretRef.Name] = true
		}
		if err := r.mark(ctx, cc, want, &term, false); err != nil {
			return ctrl.Result{}, err
		}
	}
	if u.override {
		for _, name := range OverrideSecretNames {
			wantSecret[name] = true
		}
	}
	names := map[string]bool{}
	for name := range wantSecret {
		names[name] = true
	}
	armed := &metav1.PartialObjectMetadataList{}
	armed.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if r.Armed != nil {
		if err := r.Armed.List(ctx, armed, client.InNamespace(ns)); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, s := range armed.Items {
		names[s.Name] = true
	}
	for name := range names {
		sec := &metav1.PartialObjectMetadata{}
		sec.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, sec); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return ctrl.Result{}, err
		}
		if err := r.mark(ctx, sec, wantSecret[name], &term, true); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// usage is what a namespace's resources holding an add-on use: CleverCredentials by name, and
// the override Secret (the resources naming no credentials object).
type usage struct {
	credentials map[string]bool
	override    bool
}

func (r *InUse) usage(ctx context.Context, ns string) (usage, error) {
	u := usage{credentials: map[string]bool{}}
	for _, gvk := range r.Kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		// The cache's own objects, not copies: a pass runs on every resource created in the
		// namespace and lists all of them, and only reads their finalizers and
		// spec.credentialsRef. Nothing here may change them.
		if err := r.Client.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return u, fmt.Errorf("listing %s in %s: %w", gvk.Kind, ns, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if !holdsAddon(obj) {
				continue
			}
			ref, ok := CredentialsRefOf(obj)
			switch {
			case !ok:
				u.override = true
			case ref.Kind == KindCleverCredentials:
				u.credentials[ref.Name] = true
			}
		}
	}
	return u, nil
}

// terminating says whether the namespace is being deleted: from the cache, confirmed live
// when the cache says no (the namespace's update may not have reached the cache yet when an
// object of the sweep is seen).
type terminating struct {
	cached  bool
	live    func() (bool, error)
	checked bool
}

func (t *terminating) get() (bool, error) {
	if t.cached || t.checked {
		return t.cached, nil
	}
	v, err := t.live()
	if err != nil {
		return false, err
	}
	t.cached, t.checked = v, true
	return v, nil
}

// mark adds or removes InUseFinalizer (and, on a Secret, InUseLabel) on obj: present while
// want, and on an object being deleted only while its namespace is being deleted too (a new
// finalizer cannot be added to an object being deleted).
func (r *InUse) mark(ctx context.Context, obj client.Object, want bool, term *terminating, secret bool) error {
	has := controllerutil.ContainsFinalizer(obj, InUseFinalizer)
	keep := want
	if obj.GetDeletionTimestamp() != nil {
		keep = want && has
		if keep {
			t, err := term.get()
			if err != nil {
				return err
			}
			keep = t
		}
	}
	_, labelled := obj.GetLabels()[InUseLabel]
	if keep == has && (!keep || !secret || labelled) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	labels := obj.GetLabels()
	if keep {
		controllerutil.AddFinalizer(obj, InUseFinalizer)
		if secret {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[InUseLabel] = "true"
		}
	} else {
		controllerutil.RemoveFinalizer(obj, InUseFinalizer)
		delete(labels, InUseLabel)
	}
	obj.SetLabels(labels)
	if err := r.Client.Patch(ctx, obj, patch); err != nil {
		return client.IgnoreNotFound(err) // a conflict is retried
	}
	r.Log.V(1).Info("credentials in use", "object", client.ObjectKeyFromObject(obj), "secret", secret, "kept", keep)
	return nil
}
