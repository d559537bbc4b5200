// Package intern makes the objects the operator caches share the storage of the strings they
// repeat. Decoding gives every object its own copy of every string: the keys of an unstructured
// resource ("apiVersion", "metadata", "lastTransitionTime", ...), its namespace, its label and
// annotation keys, its conditions' types, statuses and reasons, a Secret's data keys. At 5,000
// resources those copies are a good part of the caches (docs/performance.md, P6). A cache
// transform (Pool.Transform) replaces each by one shared copy before the object is stored.
//
// The objects keep their content: only where the bytes of equal strings live changes, so
// reading, copying or updating a cached object works as before (Go strings are immutable).
package intern

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// MaxValueLen is the longest string value a Pool shares. Map keys are always shared; longer
// values (messages, claims, manifests) are seldom repeated across objects.
const MaxValueLen = 64

// DefaultSize is the number of strings a Pool holds before it starts over.
const DefaultSize = 16384

// perObject are the keys of values unique to one object: not worth a place in the pool.
var perObject = map[string]bool{"uid": true, "resourceVersion": true, "name": true, "generateName": true}

// Pool holds one copy of each string it has seen (at most size). When full it starts over:
// strings already shared stay shared in the objects holding them, and the values unique to
// one object that filled it (names, hashes, timestamps) are dropped from it. Safe for
// concurrent use.
type Pool struct {
	mu sync.Mutex
	// m maps a string to its shared copy, boxed: an unstructured object holds its string
	// values as interfaces, and equal ones can share the box as well as the bytes.
	m    map[string]any
	size int
}

// NewPool returns a pool of at most size strings (DefaultSize if size <= 0).
func NewPool(size int) *Pool {
	if size <= 0 {
		size = DefaultSize
	}
	return &Pool{m: make(map[string]any, 1024), size: size}
}

// Len returns the number of strings the pool holds.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

// boxed returns the pool's copy of s, boxed, adding s (boxed as v when v is not nil) when
// it has none. The caller holds mu.
func (p *Pool) boxed(s string, v any) any {
	if c, ok := p.m[s]; ok {
		return c
	}
	if len(p.m) >= p.size {
		clear(p.m)
	}
	if v == nil {
		v = s
	}
	p.m[s] = v
	return v
}

// str returns the pool's copy of s.
func (p *Pool) str(s string) string {
	if s == "" {
		return s
	}
	return p.boxed(s, nil).(string)
}

// value is str for a value: only short ones.
func (p *Pool) value(s string) string {
	if len(s) > MaxValueLen {
		return s
	}
	return p.str(s)
}

// Transform is a cache transform (cache.TransformFunc): it shares the repeated strings of an
// unstructured object (all of it), of a Secret or ConfigMap (metadata, type, data keys) and of
// any other object's metadata, then returns the object, changed in place.
func (p *Pool) Transform(o any) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch t := o.(type) {
	case *unstructured.Unstructured:
		t.Object = p.jsonMap(t.Object)
	case *corev1.Secret:
		p.meta(&t.ObjectMeta)
		t.Type = corev1.SecretType(p.str(string(t.Type)))
		t.Data = mapKeys(p, t.Data)
	case *corev1.ConfigMap:
		p.meta(&t.ObjectMeta)
		t.BinaryData = mapKeys(p, t.BinaryData)
		t.Data = p.stringMap(t.Data)
	case metav1.ObjectMetaAccessor: // PartialObjectMetadata and every typed object
		if om, ok := t.GetObjectMeta().(*metav1.ObjectMeta); ok {
			p.meta(om)
		}
	}
	return o, nil
}

// meta shares the repeated strings of typed metadata.
func (p *Pool) meta(m *metav1.ObjectMeta) {
	m.Namespace = p.str(m.Namespace)
	m.Labels = p.stringMap(m.Labels)
	m.Annotations = p.stringMap(m.Annotations)
	for i := range m.Finalizers {
		m.Finalizers[i] = p.value(m.Finalizers[i])
	}
	for i := range m.OwnerReferences {
		r := &m.OwnerReferences[i]
		r.APIVersion, r.Kind = p.str(r.APIVersion), p.str(r.Kind)
	}
}

func (p *Pool) stringMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[p.str(k)] = p.value(v)
	}
	return out
}

// mapKeys shares the keys of a map, not its values.
func mapKeys[V any](p *Pool, in map[string]V) map[string]V {
	if in == nil {
		return nil
	}
	out := make(map[string]V, len(in))
	for k, v := range in {
		out[p.str(k)] = v
	}
	return out
}

// jsonMap shares the keys of a JSON object and its short string values, recursively (the maps
// are rebuilt, at their size: a decoder's maps grow by doubling).
func (p *Pool) jsonMap(in map[string]any) map[string]any {
	if in == nil {
		return nil
	}
	out := make(map[string]any, len(in))
	for k, v := range in {
		if _, ok := v.(string); ok && perObject[k] {
			out[p.str(k)] = v
			continue
		}
		out[p.str(k)] = p.json(v)
	}
	return out
}

func (p *Pool) json(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return p.jsonMap(t)
	case []any:
		for i := range t {
			t[i] = p.json(t[i])
		}
		return t
	case string:
		if t == "" || len(t) > MaxValueLen {
			return v
		}
		return p.boxed(t, v)
	}
	return v
}
