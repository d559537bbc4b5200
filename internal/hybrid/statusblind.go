package hybrid

import (
	"context"
	"maps"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/queue"
)

// statusBlind returns mgr as the Helm reconciler of kind gvk sees it: a manager whose cache
// does not pass it the updates of its own resources that change only their status (or the
// engine's addon-claim annotation), and which gives its controller the operator's work queue
// (Add).
//
// helm-operator-plugins v0.9.1 watches its resources with no predicate but the selector, and
// offers no option to add one: every status write, the engine's and Helm's own, woke the Helm
// side for a reconcile that reads the release and changes nothing. What the Helm side renders
// comes from the spec, the metadata (pause, selector labels, finalizers, deletion) and the
// source Secret, whose writes wake it through the owned-Secret watch and sourceWatch; a
// status holds nothing it reads, nor does the addon-claim annotation, which only the engine
// reads (the claim patch the engine writes after creating each add-on woke one such reconcile
// per new resource). Creations, deletions, the informer's periodic resyncs (same
// resourceVersion) and every other update still pass; the engine's watch of the same informer
// is not affected (only handlers added through this cache are filtered).
func statusBlind(mgr ctrl.Manager, gvk schema.GroupVersionKind) ctrl.Manager {
	return &statusBlindManager{Manager: mgr, cache: &statusBlindCache{Cache: mgr.GetCache(), gvk: gvk}}
}

type statusBlindManager struct {
	ctrl.Manager
	cache cache.Cache
}

func (m *statusBlindManager) GetCache() cache.Cache { return m.cache }

// Add gives the controller the Helm reconciler adds the operator's work queue (internal/queue:
// its metrics ticker at 10 s, not 500 ms), as the engine's controllers get it through
// controller.Options.NewQueue. helm-operator-plugins v0.9.1 builds its controller with
// controller-runtime's default queue and takes no option for it; the controller keeps its
// queue constructor in an exported field, NewQueue, called when the manager starts it, so it
// is set here, before. A runnable without that field (or of another type) is added as is.
func (m *statusBlindManager) Add(r manager.Runnable) error {
	setNewQueue(r)
	return m.Manager.Add(r)
}

// setNewQueue sets r's NewQueue field to queue.New; false when r has no such field.
func setNewQueue(r any) bool {
	v := reflect.ValueOf(r)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	f := v.Elem().FieldByName("NewQueue")
	nq := reflect.ValueOf(queue.New[ctrl.Request])
	if !f.IsValid() || !f.CanSet() || f.Type() != nq.Type() {
		return false
	}
	f.Set(nq)
	return true
}

type statusBlindCache struct {
	cache.Cache
	gvk schema.GroupVersionKind
}

// GetInformer filters the informer of the resources of c.gvk, and that of Secrets (the owned
// Secrets' watch, renderedCreationsBlindHandler); any other is returned as is.
func (c *statusBlindCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	i, err := c.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return i, err
	}
	if _, ok := obj.(*corev1.Secret); ok {
		return handlerFilter{i, func(h toolscache.ResourceEventHandler) toolscache.ResourceEventHandler {
			return renderedCreationsBlindHandler{h}
		}}, nil
	}
	if obj.GetObjectKind().GroupVersionKind() != c.gvk {
		return i, nil
	}
	return handlerFilter{i, func(h toolscache.ResourceEventHandler) toolscache.ResourceEventHandler { return statusBlindHandler{h} }}, nil
}

// handlerFilter is an informer whose every event handler added is first wrapped by wrap
// (renderedCreationsBlindHandler, statusBlindHandler).
type handlerFilter struct {
	cache.Informer
	wrap func(toolscache.ResourceEventHandler) toolscache.ResourceEventHandler
}

func (i handlerFilter) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandler(i.wrap(h))
}

func (i handlerFilter) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, d time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandlerWithResyncPeriod(i.wrap(h), d)
}

func (i handlerFilter) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandlerWithOptions(i.wrap(h), o)
}

// renderedCreationsBlindHandler is the Secret informer's handler as the Helm side's watch of
// its owned Secrets sees it: without the creations of the Secrets Helm renders (those carrying Helm's
// release-name annotation). Each install (and upgrade, and repair of a deleted one) creates
// them, and each creation woke one more reconcile that read the release, found the dry-run
// and the objects unchanged, and did nothing: once per new resource. A rendered Secret is
// created by Helm's own writes, which leave nothing to do (the reconcile that wrote it is
// still running when its creation is seen, or has recorded it as repaired), after its
// deletion, whose event woke a reconcile already, or in the informer's first list, when every
// resource is reconciled anyway. Updates and deletions (edits, a label removed, a Secret
// taken away) still wake the Helm side, as do creations of every other Secret it owns (the
// source Secret).
type renderedCreationsBlindHandler struct {
	toolscache.ResourceEventHandler
}

func (h renderedCreationsBlindHandler) OnAdd(obj any, isInInitialList bool) {
	if s, ok := obj.(*corev1.Secret); ok && s.Annotations[helmReleaseNameAnnotation] != "" {
		return
	}
	h.ResourceEventHandler.OnAdd(obj, isInInitialList)
}

type statusBlindHandler struct {
	toolscache.ResourceEventHandler
}

func (h statusBlindHandler) OnUpdate(oldObj, newObj any) {
	if statusOnly(oldObj, newObj) {
		return
	}
	h.ResourceEventHandler.OnUpdate(oldObj, newObj)
}

// statusOnly says whether an update of a resource changed its status, its addon-claim
// annotation, and nothing else but the bookkeeping of every write (resourceVersion,
// managedFields). Anything it cannot compare, and a resync (same resourceVersion), is not
// status-only.
func statusOnly(oldObj, newObj any) bool {
	o, ok := oldObj.(*unstructured.Unstructured)
	n, ok2 := newObj.(*unstructured.Unstructured)
	if !ok || !ok2 || o.GetResourceVersion() == n.GetResourceVersion() {
		return false
	}
	return equality.Semantic.DeepEqual(withoutStatus(o), withoutStatus(n))
}

// withoutStatus is u's content but its status, resourceVersion, managedFields and
// addon-claim annotation (shallow copies: nothing is changed). Annotations left empty are
// dropped, so a claim added to a resource without annotations compares equal too.
func withoutStatus(u *unstructured.Unstructured) map[string]any {
	out := maps.Clone(u.Object)
	delete(out, "status")
	if md, ok := out["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		delete(md, "resourceVersion")
		delete(md, "managedFields")
		if a, ok := md["annotations"].(map[string]any); ok {
			if _, claimed := a[kinds.AnnotationAddonClaim]; claimed {
				a = maps.Clone(a)
				delete(a, kinds.AnnotationAddonClaim)
			}
			if len(a) == 0 {
				delete(md, "annotations")
			} else {
				md["annotations"] = a
			}
		}
		out["metadata"] = md
	}
	return out
}
