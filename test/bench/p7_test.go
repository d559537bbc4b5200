package main

import (
	"testing"
	"time"
)

func TestRequeuePattern(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	reads := map[string][]time.Time{
		"addon_a": {at(0.2), at(2.2), at(60.5)},
		"addon_b": {at(1.2), at(62)},
	}
	created := map[string]time.Time{"addon_a": at(0), "addon_b": at(1)}
	hist := map[int]int{}
	gaps, age := requeuePattern(reads, created, hist)
	if hist[3] != 1 || hist[2] != 1 || len(hist) != 2 {
		t.Fatalf("reads per add-on %v", hist)
	}
	want := map[string]int{"1s–2s": 0, "2s–5s": 1, "40s–1m0s": 1, "≥ 1m0s": 1}
	for _, b := range gaps {
		if w, ok := want[b.Label]; ok && b.Count != w {
			t.Errorf("bucket %s: %d, want %d", b.Label, b.Count, w)
		}
	}
	if age["min"] != 60.5 || age["max"] != 61 {
		t.Fatalf("ready ages %v", age)
	}
}
