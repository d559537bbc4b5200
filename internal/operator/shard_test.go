package operator

import (
	"testing"

	"github.com/operator-framework/helm-operator-plugins/pkg/watches"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseWatchSelector(t *testing.T) {
	cases := []struct {
		in        string
		nilResult bool
		wantErr   bool
		match     []labels.Set
		noMatch   []labels.Set
	}{
		{in: "", nilResult: true},
		{in: "  ", nilResult: true},
		{in: "shard=a", match: []labels.Set{{"shard": "a"}, {"shard": "a", "x": "y"}}, noMatch: []labels.Set{{"shard": "b"}, {}}},
		{in: "team in (pay,web),!legacy", match: []labels.Set{{"team": "pay"}, {"team": "web"}}, noMatch: []labels.Set{{"team": "pay", "legacy": ""}, {"team": "ops"}}},
		{in: "shard!=b", match: []labels.Set{{"shard": "a"}, {}}, noMatch: []labels.Set{{"shard": "b"}}},
		{in: "shard in a", wantErr: true},
		{in: "=a", wantErr: true},
		{in: "tier gt 2", wantErr: true}, // labels.Parse takes it, helm-operator-plugins' selector cannot
		{in: "shard==a,env", match: []labels.Set{{"shard": "a", "env": "x"}}, noMatch: []labels.Set{{"shard": "a"}}},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			sel, err := ParseWatchSelector(c.in)
			if c.wantErr {
				if err == nil {
					t.Fatalf("no error for %q", c.in)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.nilResult {
				if sel != nil || sel.String() != "" {
					t.Fatalf("%q: selector %v, want none", c.in, sel)
				}
				return
			}
			meta, err := metav1.LabelSelectorAsSelector(sel.Meta)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range c.match {
				if !sel.Labels.Matches(l) || !meta.Matches(l) {
					t.Errorf("%q does not match %v (labels %v, helm %v)", c.in, l, sel.Labels.Matches(l), meta.Matches(l))
				}
			}
			for _, l := range c.noMatch {
				if sel.Labels.Matches(l) || meta.Matches(l) {
					t.Errorf("%q matches %v", c.in, l)
				}
			}
		})
	}
}

func TestWithSelectorKeepsTheWatchesOwn(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "api.clever-cloud.com", Version: "v1", Kind: "Redis"}
	ws := []watches.Watch{
		{GroupVersionKind: gvk, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"shard": "a", "tier": "prod"}}},
		{GroupVersionKind: gvk},
	}
	sel, err := ParseWatchSelector("shard=b")
	if err != nil {
		t.Fatal(err)
	}
	out := withSelector(ws, sel)
	if ws[0].Selector.MatchExpressions != nil || len(ws[0].Selector.MatchLabels) != 2 {
		t.Fatal("the input watches were modified")
	}
	both, err := metav1.LabelSelectorAsSelector(out[0].Selector)
	if err != nil {
		t.Fatal(err)
	}
	// shard=a (the watch) and shard=b (the flag) together select nothing: both constraints kept.
	for _, l := range []labels.Set{{"shard": "a", "tier": "prod"}, {"shard": "b", "tier": "prod"}, {"shard": "b"}} {
		if both.Matches(l) {
			t.Errorf("%v matches %v", out[0].Selector, l)
		}
	}
	only, err := metav1.LabelSelectorAsSelector(out[1].Selector)
	if err != nil {
		t.Fatal(err)
	}
	if !only.Matches(labels.Set{"shard": "b"}) || only.Matches(labels.Set{"shard": "a"}) {
		t.Errorf("flag selector on a watch without one: %v", out[1].Selector)
	}
	if got := withSelector(ws, nil); got[1].Selector != nil {
		t.Error("no --watch-selector must leave the watches alone")
	}
}

func TestRestrictCache(t *testing.T) {
	s, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	gvks := []schema.GroupVersionKind{{Group: "api.clever-cloud.com", Version: "v1", Kind: "Redis"}, {Group: "api.clever-cloud.com", Version: "v1", Kind: "PostgreSql"}}
	ws := []watches.Watch{{GroupVersionKind: gvks[0]}, {GroupVersionKind: gvks[1]}}
	o := ManagerOptions(s, nil, nil)
	if o.LeaderElectionID != DefaultLeaderElectionID || DefaultLeaderElectionID != "clever-operator.api.clever-cloud.com" {
		t.Fatalf("lease %q: the default must stay the one earlier releases used", o.LeaderElectionID)
	}
	before := len(o.Cache.ByObject)
	RestrictCache(&o, nil, ws)
	if len(o.Cache.ByObject) != before {
		t.Fatal("no selector must not restrict the cache")
	}
	sel, _ := ParseWatchSelector("shard=a")
	RestrictCache(&o, sel, ws)
	if len(o.Cache.ByObject) != before+2 {
		t.Fatalf("ByObject = %d entries, want %d", len(o.Cache.ByObject), before+2)
	}
	seen := map[schema.GroupVersionKind]bool{}
	for obj, by := range o.Cache.ByObject {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		seen[u.GroupVersionKind()] = true
		if by.Label == nil || !by.Label.Matches(labels.Set{"shard": "a"}) || by.Label.Matches(labels.Set{"shard": "b"}) {
			t.Errorf("%s: cache selector %v", u.GroupVersionKind().Kind, by.Label)
		}
	}
	for _, g := range gvks {
		if !seen[g] {
			t.Errorf("%s not restricted", g.Kind)
		}
	}
}
