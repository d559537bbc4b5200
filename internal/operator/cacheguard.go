package operator

import (
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/secrets"
)

// CacheGuard bounds what a tenant can make the operator's cache hold. The cache selects
// Secrets and ConfigMaps by the operator's managed-by label, which any namespace editor can
// put on objects of its own: without the guard, a few hundred labelled 1 MB Secrets would
// fill the operator's memory, for every tenant. With it, a labelled object costs its
// metadata only, bounded too, unless it is a Secret the operator signed (source Secrets and
// CellarBucket Secrets, whose data the operator reads back: secrets.Verified):
//
//   - a Secret whose signature verifies is cached whole;
//   - any other labelled Secret, and every labelled ConfigMap (nothing reads a ConfigMap's
//     data from the cache), is cached without its data;
//   - metadata over maxCachedMeta bytes keeps only the operator's and Helm's labels and
//     annotations (short ones), and the first few owner references and finalizers.
//
// The key is the operator's claim key, set by Setup before the cache starts; until then
// nothing verifies.
type CacheGuard struct{ key atomic.Pointer[[]byte] }

// NewCacheGuard returns a guard with no key yet.
func NewCacheGuard() *CacheGuard { return &CacheGuard{} }

// SetKey sets the key signatures are verified with.
func (g *CacheGuard) SetKey(key []byte) {
	k := append([]byte(nil), key...)
	g.key.Store(&k)
}

func (g *CacheGuard) keyBytes() []byte {
	if k := g.key.Load(); k != nil {
		return *k
	}
	return nil
}

// maxCachedMeta bounds the labels, annotations, owner references and finalizers of a cached
// object the operator did not sign (the object itself is bounded by kube-apiserver at about
// 1.5 MB, annotations alone at 256 KiB).
const maxCachedMeta = 16 << 10

// maxKeptValue is the longest label or annotation value kept on an oversized object.
const maxKeptValue = 1 << 10

// Transform is the cache transform for Secrets and ConfigMaps.
func (g *CacheGuard) Transform(o any) (any, error) {
	switch x := o.(type) {
	case *corev1.Secret:
		if x.Labels[kinds.LabelManagedBy] != kinds.ManagedByValue || secrets.Verified(g.keyBytes(), x) {
			return o, nil
		}
		x.Data, x.StringData = nil, nil
		slimMeta(&x.ObjectMeta)
	case *corev1.ConfigMap:
		if x.Labels[kinds.LabelManagedBy] != kinds.ManagedByValue {
			return o, nil
		}
		x.Data, x.BinaryData = nil, nil
		slimMeta(&x.ObjectMeta)
	}
	return o, nil
}

// slimMeta cuts oversized metadata down to what the operator reads.
func slimMeta(m *metav1.ObjectMeta) {
	if metaSize(m) <= maxCachedMeta {
		return
	}
	m.Labels, m.Annotations = ours(m.Labels), ours(m.Annotations)
	if len(m.OwnerReferences) > 4 {
		m.OwnerReferences = m.OwnerReferences[:4]
	}
	if len(m.Finalizers) > 4 {
		m.Finalizers = m.Finalizers[:4]
	}
}

func metaSize(m *metav1.ObjectMeta) int {
	n := 0
	for k, v := range m.Labels {
		n += len(k) + len(v)
	}
	for k, v := range m.Annotations {
		n += len(k) + len(v)
	}
	for _, r := range m.OwnerReferences {
		n += len(r.APIVersion) + len(r.Kind) + len(r.Name) + len(r.UID)
	}
	for _, f := range m.Finalizers {
		n += len(f)
	}
	return n
}

// ours keeps the entries of the operator's and Helm's prefixes with short values.
func ours(in map[string]string) map[string]string {
	var out map[string]string
	for k, v := range in {
		if len(v) > maxKeptValue || !(strings.HasPrefix(k, kinds.Group+"/") || strings.HasPrefix(k, "meta.helm.sh/")) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}
