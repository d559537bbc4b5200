package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestP1Spread(t *testing.T) {
	p := &P1{Runs: []P1Run{{Ratio: 1.59}, {Ratio: 1.80}, {Ratio: 2.39}}}
	p.summarize()
	if p.Spread < 0.503 || p.Spread > 0.504 {
		t.Fatalf("spread of 1.59, 1.80, 2.39: %.4f, want 2.39/1.59 − 1 = 0.503", p.Spread)
	}
	p = &P1{Runs: []P1Run{{Ratio: 1.4}}}
	p.summarize()
	if p.Spread != 0 {
		t.Fatalf("one run: spread %.2f, want 0", p.Spread)
	}
	// The goal lines: the median against 1.5, the spread against 20 % (not for one run).
	sel := map[string]bool{"P1": true}
	b := &bench{res: &Results{P1: &P1{Runs: []P1Run{{Ratio: 1.45}, {Ratio: 1.5}, {Ratio: 1.7}}}}}
	b.res.P1.summarize()
	g := b.goals(sel)
	if g[0].Value != "1.50" || !g[0].Met || g[1].Value != "17 %" || !g[1].Met {
		t.Fatalf("P1 goals: %+v", g[:2])
	}
	b.res.P1 = &P1{Runs: []P1Run{{Ratio: 1.2}, {Ratio: 1.5}, {Ratio: 1.51}}}
	b.res.P1.summarize()
	if g := b.goals(sel); !g[0].Met || g[1].Met {
		t.Fatalf("P1 goals with a 26 %% spread: %+v", g[:2])
	}
	b.res.P1 = &P1{Runs: []P1Run{{Ratio: 1.2}}}
	b.res.P1.summarize()
	if g := b.goals(sel); strings.Contains(g[1].Metric, "spread") {
		t.Fatalf("one run has no spread line: %+v", g)
	}
}

func TestDurationGoal(t *testing.T) {
	parts := map[string]float64{"setup": 60, "P1": 200, "P6": 900, "P3": 300}
	g := durationGoal(29.5*60, parts, true)
	if !g.Met || g.Value != "29.5 min" || g.Goal != "≤ 30 min" || !strings.Contains(g.Metric, "longest part P6: 15.0 min") {
		t.Fatalf("full run in 29.5 min: %+v", g)
	}
	if g := durationGoal(31*60, parts, true); g.Met {
		t.Fatalf("full run in 31 min: met")
	}
	// A partial run reports its duration against no goal.
	if g := durationGoal(50*60, parts, false); !g.Met || !strings.HasPrefix(g.Goal, "reported") || !strings.Contains(g.Metric, "partial") {
		t.Fatalf("partial run: %+v", g)
	}
	if benchGoal != 30*time.Minute {
		t.Fatalf("goal %s", benchGoal)
	}
	all := map[string]bool{}
	for _, p := range allParts {
		all[p] = true
	}
	if !full(all) {
		t.Fatal("every part: not a full run")
	}
	delete(all, "chart")
	if full(all) {
		t.Fatal("no chart: a full run")
	}
}

func TestP6Undecided(t *testing.T) {
	for _, c := range []struct {
		pairs  []float64
		growth float64
		want   bool
	}{
		{[]float64{0.89}, 0.89, false}, // a quarter below the goal and more: decided
		{[]float64{0.97}, 0.97, true},
		{[]float64{1.2}, 1.2, true},
		{[]float64{1.49}, 1.49, true},
		{[]float64{1.6}, 1.6, false},
		{[]float64{1.0, 1.1, 1.2}, 1.1, false}, // three pairs: the median decides
	} {
		p := &P6{Growth: c.growth}
		for _, g := range c.pairs {
			p.Pairs = append(p.Pairs, P6Pair{Growth: g})
		}
		if got := p.Undecided(); got != c.want {
			t.Errorf("pairs %v, growth %.2f: undecided %v, want %v", c.pairs, c.growth, got, c.want)
		}
	}
	if (&P6{}).Undecided() {
		t.Error("no pair: undecided")
	}
}

func TestChartSizes(t *testing.T) {
	c := config{sizes: []int{100, 250, 500, 1000, 2000}, p6Base: 1000, p6N: 5000}
	if got := chartSizes(c, map[string]bool{"chart": true, "P6": true}); !slices.Equal(got, []int{100, 250, 500, 2000}) {
		t.Fatalf("with P6: %v (1000 is P6's base run)", got)
	}
	if got := chartSizes(c, map[string]bool{"chart": true}); !slices.Equal(got, c.sizes) {
		t.Fatalf("without P6: %v", got)
	}
}
