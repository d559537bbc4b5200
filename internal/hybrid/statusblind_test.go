package hybrid

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/queue"
)

// cr is a resource as the cache holds it after a write: resourceVersion rv.
func cr(rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
		"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": rv, "generation": int64(1),
			"finalizers":    []any{"api.clever-cloud.com/postgresql", "uninstall-helm-release"},
			"managedFields": []any{map[string]any{"manager": "a"}}},
		"spec":   map[string]any{"instance": map[string]any{"plan": "dev"}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False"}}},
	}}
	return u
}

// TestStatusOnly: an update that changes the status (and the bookkeeping of every write) is
// status-only; one that changes anything the Helm side renders or acts on is not, nor is a
// resync (same resourceVersion) or an object it cannot read.
func TestStatusOnly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(u *unstructured.Unstructured)
		want   bool
	}{
		{"a condition changed", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, []any{map[string]any{"type": "Ready", "status": "True"}}, "status", "conditions")
		}, true},
		{"status.addon added, managedFields changed", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "addon_1", "status", "addon")
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"manager": "b"}}, "metadata", "managedFields")
		}, true},
		{"status removed", func(u *unstructured.Unstructured) { delete(u.Object, "status") }, true},
		{"the spec", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "xs", "spec", "instance", "plan")
		}, false},
		{"the generation", func(u *unstructured.Unstructured) { u.SetGeneration(2) }, false},
		{"an annotation (pause)", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{kinds.AnnotationPaused: "true"})
		}, false},
		{"the addon-claim annotation added, with status", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{kinds.AnnotationAddonClaim: "v1.claim"})
			_ = unstructured.SetNestedField(u.Object, "addon_1", "status", "addon")
		}, true},
		{"the addon-claim annotation and another one", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{kinds.AnnotationAddonClaim: "v1.claim", kinds.AnnotationPaused: "true"})
		}, false},
		{"a label (selector)", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"shard": "a"}) }, false},
		{"a finalizer removed", func(u *unstructured.Unstructured) { u.SetFinalizers([]string{"uninstall-helm-release"}) }, false},
		{"deletion", func(u *unstructured.Unstructured) {
			now := metav1.Now()
			u.SetDeletionTimestamp(&now)
		}, false},
		{"a new top-level field", func(u *unstructured.Unstructured) { u.Object["data"] = "x" }, false},
		{"a top-level field removed", func(u *unstructured.Unstructured) { delete(u.Object, "spec") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := cr("2")
			tc.change(n)
			if got := statusOnly(cr("1"), n); got != tc.want {
				t.Fatalf("statusOnly %v, want %v", got, tc.want)
			}
		})
	}
	if statusOnly(cr("1"), cr("1")) {
		t.Fatal("a resync (same resourceVersion) is status-only")
	}
	o, n := cr("1"), cr("2")
	o.SetAnnotations(map[string]string{kinds.AnnotationPaused: "true", kinds.AnnotationAddonClaim: "v1.old"})
	n.SetAnnotations(map[string]string{kinds.AnnotationPaused: "true", kinds.AnnotationAddonClaim: "v1.new"})
	if !statusOnly(o, n) {
		t.Fatal("a new claim beside an unchanged annotation: want ignored")
	}
	if _, ok := o.GetAnnotations()[kinds.AnnotationAddonClaim]; !ok {
		t.Fatal("the comparison changed the cached object")
	}
	if statusOnly(&corev1.Secret{}, &corev1.Secret{}) {
		t.Fatal("a typed object is status-only")
	}
}

// TestStatusBlindCacheFiltersOnlyItsKind: the Helm side's handler on its own kind's informer
// (added as controller-runtime's source.Kind adds it) misses status-only updates and gets
// every other event; a handler on another informer (its owned Secrets) gets them all.
func TestStatusBlindCacheFiltersOnlyItsKind(t *testing.T) {
	kind := &kinds.Kinds[0]
	inner := &recordingCache{informers: map[string]*recordingInformer{}}
	c := &statusBlindCache{Cache: inner, gvk: kind.GVK}

	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(kind.GVK)
	own := &countingHandler{}
	i, err := c.GetInformer(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := i.AddEventHandlerWithOptions(own, toolscache.HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	other := &countingHandler{}
	j, err := c.GetInformer(context.Background(), secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.AddEventHandler(other); err != nil {
		t.Fatal(err)
	}

	statusWrite := cr("2")
	_ = unstructured.SetNestedField(statusWrite.Object, "addon_1", "status", "addon")
	specWrite := cr("3")
	_ = unstructured.SetNestedField(specWrite.Object, "xs", "spec", "instance", "plan")
	for _, h := range inner.handlers() {
		h.OnAdd(cr("1"), false)
		h.OnUpdate(cr("1"), statusWrite)
		h.OnUpdate(statusWrite, specWrite)
		h.OnUpdate(specWrite, specWrite) // resync
		h.OnDelete(specWrite)
	}
	if own.adds != 1 || own.updates != 2 || own.deletes != 1 {
		t.Fatalf("the Helm side's handler saw %d adds, %d updates, %d deletes; want 1, 2 (spec, resync), 1", own.adds, own.updates, own.deletes)
	}
	if other.adds != 1 || other.updates != 3 || other.deletes != 1 {
		t.Fatalf("another informer's handler saw %d adds, %d updates, %d deletes; want 1, 3, 1", other.adds, other.updates, other.deletes)
	}
}

// TestHelmSideMissesCreationsOfRenderedSecrets: through the Helm side's cache, the Secret
// informer's handler misses the creation of a Secret Helm rendered (its release-name
// annotation), not its updates or deletion, nor the creation of another Secret (the source
// Secret).
func TestHelmSideMissesCreationsOfRenderedSecrets(t *testing.T) {
	inner := &recordingCache{informers: map[string]*recordingInformer{}}
	c := &statusBlindCache{Cache: inner, gvk: kinds.Kinds[0].GVK}
	secret := &corev1.Secret{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	h := &countingHandler{}
	i, err := c.GetInformer(context.Background(), secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := i.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	rendered := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-secrets", Namespace: "ns", ResourceVersion: "1",
		Annotations: map[string]string{helmReleaseNameAnnotation: "postgresql-db", helmReleaseNamespaceAnnotation: "ns"}}}
	edited := rendered.DeepCopy()
	edited.ResourceVersion = "2"
	source := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-postgresql-source", Namespace: "ns", ResourceVersion: "3"}}
	for _, hh := range inner.handlers() {
		hh.OnAdd(rendered, false)
		hh.OnAdd(rendered, true)
		hh.OnUpdate(rendered, edited)
		hh.OnDelete(edited)
		hh.OnAdd(source, false)
	}
	if h.adds != 1 || h.updates != 1 || h.deletes != 1 {
		t.Fatalf("saw %d adds, %d updates, %d deletes; want 1 (the source Secret), 1, 1", h.adds, h.updates, h.deletes)
	}
}

type recordingCache struct {
	cache.Cache
	informers map[string]*recordingInformer
}

func (c *recordingCache) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	k := obj.GetObjectKind().GroupVersionKind().String()
	if c.informers[k] == nil {
		c.informers[k] = &recordingInformer{}
	}
	return c.informers[k], nil
}

func (c *recordingCache) handlers() []toolscache.ResourceEventHandler {
	var hs []toolscache.ResourceEventHandler
	for _, i := range c.informers {
		hs = append(hs, i.handlers...)
	}
	return hs
}

type recordingInformer struct {
	cache.Informer
	handlers []toolscache.ResourceEventHandler
}

func (i *recordingInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	i.handlers = append(i.handlers, h)
	return nil, nil
}

func (i *recordingInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, _ toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandler(h)
}

type countingHandler struct{ adds, updates, deletes int }

func (h *countingHandler) OnAdd(any, bool)   { h.adds++ }
func (h *countingHandler) OnUpdate(any, any) { h.updates++ }
func (h *countingHandler) OnDelete(any)      { h.deletes++ }

// addingManager records what is added to it; the rest of the manager is not used.
type addingManager struct {
	ctrl.Manager
	added []manager.Runnable
}

func (m *addingManager) GetCache() cache.Cache { return nil }
func (m *addingManager) GetControllerOptions() config.Controller {
	return config.Controller{SkipNameValidation: ptr.To(true)}
}
func (m *addingManager) Add(r manager.Runnable) error { m.added = append(m.added, r); return nil }

type nopReconciler struct{}

func (nopReconciler) Reconcile(context.Context, ctrl.Request) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

// The controller helm-operator-plugins builds (controller.New, with no NewQueue) gets the
// operator's queue through the Helm side's manager; any other runnable is added unchanged.
func TestHelmControllerGetsTheOperatorsQueue(t *testing.T) {
	inner := &addingManager{}
	mgr := statusBlind(inner, kinds.Kinds[0].GVK)
	if _, err := controller.New("helm-queue-test", mgr, controller.Options{Reconciler: nopReconciler{}}); err != nil {
		t.Fatal(err)
	}
	other := manager.RunnableFunc(func(context.Context) error { return nil })
	if err := mgr.Add(other); err != nil {
		t.Fatal(err)
	}
	if len(inner.added) != 2 {
		t.Fatalf("%d runnables added, want 2", len(inner.added))
	}
	f := reflect.ValueOf(inner.added[0]).Elem().FieldByName("NewQueue")
	if !f.IsValid() || f.IsNil() {
		t.Fatalf("controller-runtime's controller has no NewQueue field set (%v)", f)
	}
	if got, want := f.Pointer(), reflect.ValueOf(queue.New[ctrl.Request]).Pointer(); got != want {
		t.Fatal("the Helm side's controller kept controller-runtime's default queue")
	}
	if setNewQueue(other) || setNewQueue(nil) || setNewQueue(&struct{ NewQueue int }{}) {
		t.Fatal("setNewQueue changed a runnable that has no controller queue")
	}
}
