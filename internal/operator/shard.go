package operator

import (
	"fmt"
	"sort"
	"strings"

	"github.com/operator-framework/helm-operator-plugins/pkg/watches"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultLeaderElectionID is the Lease the operator's replicas elect their leader on
// (--leader-election-id). Instances that split the resources between them (--watch-selector)
// each need their own.
const DefaultLeaderElectionID = "clever-operator.api.clever-cloud.com"

// WatchSelector is --watch-selector parsed: a label selector on the add-on custom resources,
// so that several operator instances can split them (docs/operator.md, Sharding).
type WatchSelector struct {
	// Labels is the selector as the cache and the engine apply it.
	Labels labels.Selector
	// Meta is the same selector as helm-operator-plugins takes it (reconciler.WithSelector).
	Meta *metav1.LabelSelector
}

// ParseWatchSelector parses a label selector in kubectl's syntax ("shard=a",
// "team in (a,b),!legacy"); "" selects everything (nil, no error).
func ParseWatchSelector(s string) (*WatchSelector, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	sel, err := labels.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("--watch-selector %q: %w", s, err)
	}
	if sel.Empty() {
		return nil, nil
	}
	reqs, _ := sel.Requirements()
	meta := &metav1.LabelSelector{}
	for _, r := range reqs {
		op, ok := metaOperators[r.Operator()]
		if !ok {
			return nil, fmt.Errorf("--watch-selector %q: operator %s is not supported (use =, ==, !=, in, notin, exists or !)", s, r.Operator())
		}
		meta.MatchExpressions = append(meta.MatchExpressions, metav1.LabelSelectorRequirement{Key: r.Key(), Operator: op, Values: r.ValuesUnsorted()})
	}
	return &WatchSelector{Labels: sel, Meta: meta}, nil
}

// metaOperators maps the operators of labels.Parse to those of a metav1.LabelSelector (no
// Gt/Lt there).
var metaOperators = map[selection.Operator]metav1.LabelSelectorOperator{
	selection.Equals: metav1.LabelSelectorOpIn, selection.DoubleEquals: metav1.LabelSelectorOpIn, selection.In: metav1.LabelSelectorOpIn,
	selection.NotEquals: metav1.LabelSelectorOpNotIn, selection.NotIn: metav1.LabelSelectorOpNotIn,
	selection.Exists: metav1.LabelSelectorOpExists, selection.DoesNotExist: metav1.LabelSelectorOpDoesNotExist,
}

// String is the selector in kubectl's syntax ("" for nil).
func (w *WatchSelector) String() string {
	if w == nil {
		return ""
	}
	return w.Labels.String()
}

// RestrictCache makes the manager's cache hold only the resources of the watched kinds that
// sel selects: the other instances' resources are never listed, watched or read from the
// cache by this one (the engine, the Helm side, the credentials wake-ups and the resource
// metrics all read through it). A nil sel changes nothing. The kinds' CRDs must be installed
// when the manager is created (the cache asks the API server whether they are namespaced).
func RestrictCache(opts *ctrl.Options, sel *WatchSelector, ws []watches.Watch) {
	if sel == nil {
		return
	}
	if opts.Cache.ByObject == nil {
		opts.Cache.ByObject = map[client.Object]cache.ByObject{}
	}
	for _, w := range ws {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(w.GroupVersionKind)
		opts.Cache.ByObject[u] = cache.ByObject{Label: sel.Labels}
	}
}

// withSelector returns the watches with sel added to each entry's own selector (both must
// match), so that the Helm reconciler (reconciler.WithSelector) and the engine filter on it.
func withSelector(ws []watches.Watch, sel *WatchSelector) []watches.Watch {
	if sel == nil {
		return ws
	}
	out := make([]watches.Watch, len(ws))
	for i, w := range ws {
		w.Selector = andSelectors(w.Selector, sel.Meta)
		out[i] = w
	}
	return out
}

// andSelectors is the selector matching what both a and b match. Equality requirements are
// turned into In expressions, so the same key in both keeps both constraints.
func andSelectors(a, b *metav1.LabelSelector) *metav1.LabelSelector {
	out := &metav1.LabelSelector{}
	for _, s := range []*metav1.LabelSelector{a, b} {
		if s == nil {
			continue
		}
		for k, v := range s.MatchLabels {
			out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
		}
		out.MatchExpressions = append(out.MatchExpressions, s.MatchExpressions...)
	}
	// Deterministic order (MatchLabels is a map): sort by key, keeping the order of a key's
	// requirements.
	sort.SliceStable(out.MatchExpressions, func(i, j int) bool { return out.MatchExpressions[i].Key < out.MatchExpressions[j].Key })
	return out
}
