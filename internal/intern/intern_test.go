package intern

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
)

// The transform must fit where the caches take it.
var _ toolscache.TransformFunc = NewPool(0).Transform

// resource decodes the sample resource (a PostgreSql as kube-apiserver returned it) as the
// cache does, with its own name, uid and add-on.
func resource(t testing.TB, i int) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile("testdata/postgresql.json")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer(
		`"name": "postgresql"`, fmt.Sprintf(`"name": "pg-%d"`, i),
		"c80d065d-69f8-4054-bd73-ac13af11cb7a", fmt.Sprintf("c80d065d-69f8-4054-bd73-%012d", i),
		"a0894d06-dc66-4fec-9259-74f8ab7857e3", fmt.Sprintf("a0894d06-dc66-4fec-9259-%012d", i),
		`"383"`, fmt.Sprintf(`"%d"`, 1000+i),
	).Replace(string(raw))
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(s)); err != nil {
		t.Fatal(err)
	}
	return u
}

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// keyOf returns m's own copy of the key k.
func keyOf[V any](m map[string]V, k string) string {
	for mk := range m {
		if mk == k {
			return mk
		}
	}
	return ""
}

func TestUnstructuredSharesRepeatedStringsAndKeepsContent(t *testing.T) {
	p := NewPool(0)
	a, b := resource(t, 1), resource(t, 2)
	wantA, wantB := resource(t, 1), resource(t, 2)
	if same(keyOf(a.Object, "metadata"), keyOf(b.Object, "metadata")) {
		t.Fatal("decoded objects share a key before the transform: the test proves nothing")
	}
	for _, u := range []*unstructured.Unstructured{a, b} {
		if _, err := p.Transform(u); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(a.Object, wantA.Object) || !reflect.DeepEqual(b.Object, wantB.Object) {
		t.Fatal("the transform changed an object's content")
	}
	if !same(keyOf(a.Object, "metadata"), keyOf(b.Object, "metadata")) {
		t.Error("top-level keys are not shared")
	}
	ca, _, _ := unstructured.NestedSlice(a.Object, "status", "conditions")
	cb, _, _ := unstructured.NestedSlice(b.Object, "status", "conditions")
	ra, rb := ca[0].(map[string]any), cb[0].(map[string]any)
	if !same(keyOf(ra, "lastTransitionTime"), keyOf(rb, "lastTransitionTime")) {
		t.Error("keys of nested objects in lists are not shared")
	}
	if !same(ra["reason"].(string), rb["reason"].(string)) || !same(a.GetNamespace(), b.GetNamespace()) {
		t.Error("short values repeated across objects are not shared")
	}
	// Values unique to an object stay out of the pool, and so do long values.
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, v := range []string{a.GetName(), string(a.GetUID()), a.GetResourceVersion(), ra["message"].(string)} {
		if _, ok := p.m[v]; ok {
			t.Errorf("%q is in the pool", v)
		}
	}
	if _, ok := p.m["Provisioned"]; !ok {
		t.Error(`"Provisioned" is not in the pool`)
	}
}

func secret(i int) *corev1.Secret {
	// Built from fresh bytes each time, as a decoder would.
	s := func(v string) string { return string([]byte(v)) }
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("pg-%d-secrets", i), Namespace: s("team-a"),
			Labels:          map[string]string{s("api.clever-cloud.com/managed-by"): s("clever-operator"), s("app.kubernetes.io/instance"): fmt.Sprintf("pg-%d", i)},
			Annotations:     map[string]string{s("meta.helm.sh/release-namespace"): s("team-a")},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: s("api.clever-cloud.com/v1"), Kind: s("PostgreSql"), Name: fmt.Sprintf("pg-%d", i)}},
			Finalizers:      []string{s("example.com/f")},
		},
		Type: corev1.SecretType(s("Opaque")),
		Data: map[string][]byte{s("POSTGRESQL_ADDON_PASSWORD"): []byte(fmt.Sprintf("pw-%d", i))},
	}
}

func TestSecretSharesMetadataAndDataKeysNotData(t *testing.T) {
	p := NewPool(0)
	a, b := secret(1), secret(2)
	want := secret(1)
	for _, s := range []*corev1.Secret{a, b} {
		if _, err := p.Transform(s); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("the transform changed the Secret: %+v", a)
	}
	checks := map[string][2]string{
		"namespace":        {a.Namespace, b.Namespace},
		"label key":        {keyOf(a.Labels, "api.clever-cloud.com/managed-by"), keyOf(b.Labels, "api.clever-cloud.com/managed-by")},
		"label value":      {a.Labels["api.clever-cloud.com/managed-by"], b.Labels["api.clever-cloud.com/managed-by"]},
		"annotation value": {a.Annotations["meta.helm.sh/release-namespace"], b.Annotations["meta.helm.sh/release-namespace"]},
		"owner kind":       {a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
		"finalizer":        {a.Finalizers[0], b.Finalizers[0]},
		"type":             {string(a.Type), string(b.Type)},
		"data key":         {keyOf(a.Data, "POSTGRESQL_ADDON_PASSWORD"), keyOf(b.Data, "POSTGRESQL_ADDON_PASSWORD")},
	}
	for what, c := range checks {
		if !same(c[0], c[1]) {
			t.Errorf("%s not shared", what)
		}
	}
	// The data stays the Secret's own: never in the pool.
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.m {
		if strings.HasPrefix(k, "pw-") {
			t.Errorf("a data value is in the pool")
		}
	}
}

func TestPoolStartsOverWhenFull(t *testing.T) {
	p := NewPool(3)
	p.mu.Lock()
	first := p.str(string([]byte("alpha")))
	p.str("b")
	p.str("c")
	if len(p.m) != 3 {
		t.Fatalf("pool holds %d strings, want 3", len(p.m))
	}
	p.str("d") // full: starts over
	if len(p.m) != 1 {
		t.Fatalf("after starting over the pool holds %d strings, want 1", len(p.m))
	}
	again := p.str(string([]byte("alpha")))
	p.mu.Unlock()
	if first != again || same(first, again) {
		t.Error("after starting over, a string seen before gets a new copy (the old one stays with its holders)")
	}
}

func TestPoolConcurrentUse(t *testing.T) {
	p := NewPool(50)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if _, err := p.Transform(secret(g*1000 + i)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n := p.Len(); n == 0 || n > 50 {
		t.Fatalf("pool holds %d strings, want 1..50", n)
	}
}

// BenchmarkCachedResource reports the heap a cached resource keeps, decoded as the cache
// decodes it, without and with the transform.
func BenchmarkCachedResource(b *testing.B) {
	for _, mode := range []string{"decoded", "interned"} {
		b.Run(mode, func(b *testing.B) {
			const n = 2000
			p := NewPool(0)
			var perObject float64
			for range b.N {
				objs := make([]*unstructured.Unstructured, n)
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for i := range objs {
					objs[i] = resource(b, i)
					if mode == "interned" {
						_, _ = p.Transform(objs[i])
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perObject = float64(after.HeapAlloc-before.HeapAlloc) / n
				runtime.KeepAlive(objs)
			}
			b.ReportMetric(perObject, "heap-B/object")
		})
	}
}

func TestConfigMapSharesKeysAndShortValues(t *testing.T) {
	p := NewPool(0)
	mk := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: string([]byte("team-a"))},
			Data: map[string]string{string([]byte("REGION")): string([]byte("par"))}}
	}
	a, b := mk(), mk()
	for _, c := range []*corev1.ConfigMap{a, b} {
		if _, err := p.Transform(c); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(a, mk()) {
		t.Fatalf("the transform changed the ConfigMap: %+v", a)
	}
	if !same(a.Namespace, b.Namespace) || !same(keyOf(a.Data, "REGION"), keyOf(b.Data, "REGION")) || !same(a.Data["REGION"], b.Data["REGION"]) {
		t.Error("the ConfigMap's namespace, data key or short value is not shared")
	}
}
