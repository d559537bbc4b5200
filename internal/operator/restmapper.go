package operator

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// newRESTMapper is the manager's RESTMapper: controller-runtime's dynamic one (discovery on
// first use of a group), with its RESTMapping answers remembered.
//
// With --watch-namespace the cache is one per namespace, and every read from it (each Get
// and List of either side, of every pass) first asks the mapper whether the object's kind is
// namespaced. The dynamic mapper answers from a chain of per-group mappers that builds a
// not-found error for each group it passes: an eighth of the operator's allocations while
// provisioning. A mapping is remembered for the life of the process once found: the dynamic
// mapper itself only looks again when asked for what it does not know. Misses and errors are
// not remembered (a kind whose CRD appears later is found then); a version removed from the
// cluster while the operator runs keeps its old mapping, and its requests fail as the API
// server answers them.
func newRESTMapper(cfg *rest.Config, hc *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, err
	}
	return &memoMapper{RESTMapper: m}, nil
}

type memoMapper struct {
	meta.RESTMapper
	mappings sync.Map // mappingKey -> *meta.RESTMapping
}

type mappingKey struct {
	gk       schema.GroupKind
	versions string
}

// RESTMapping answers from memory a group, kind and versions it answered before, with a copy
// of the mapping (as the dynamic mapper gives a new one each time).
func (m *memoMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	k := mappingKey{gk: gk, versions: strings.Join(versions, ",")}
	if v, ok := m.mappings.Load(k); ok {
		c := *v.(*meta.RESTMapping)
		return &c, nil
	}
	r, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err == nil && r != nil {
		c := *r
		m.mappings.Store(k, &c)
	}
	return r, err
}
