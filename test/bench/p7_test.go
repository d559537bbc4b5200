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

func TestCPUSamplerOver(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	sample := func(s float64, op, api time.Duration, busy, total time.Duration) cpuSample {
		return cpuSample{at: at(s), procs: map[string]time.Duration{"operator": op, "kube-apiserver": api}, busy: busy, total: total}
	}
	s := &cpuSampler{samples: []cpuSample{
		sample(-0.1, 1*time.Second, 10*time.Second, 5*time.Second, 100*time.Second),
		sample(0.2, 2*time.Second, 11*time.Second, 6*time.Second, 100600*time.Millisecond),
		sample(4.1, 3*time.Second, 15*time.Second, 12*time.Second, 108200*time.Millisecond),
		sample(8.2, 9*time.Second, 20*time.Second, 20*time.Second, 116400*time.Millisecond),
	}}
	// From the sample before 0 to the first at or after 4: operator 2 s, kube-apiserver 5 s,
	// machine 7 of 8.2 core-seconds busy.
	cpu, busy := s.over(at(0), at(4))
	if cpu["operator"] != 2 || cpu["kube-apiserver"] != 5 || len(cpu) != 2 {
		t.Fatalf("cpu %v", cpu)
	}
	if want := 100 * 7 / 8.2; busy < want-0.01 || busy > want+0.01 {
		t.Fatalf("busy %.2f, want %.2f", busy, want)
	}
	// A window the samples do not cover has no figure.
	if cpu, _ := s.over(at(0), at(9)); cpu != nil {
		t.Fatalf("uncovered window: %v", cpu)
	}
	if cpu, _ := s.over(at(-1), at(1)); cpu != nil {
		t.Fatalf("window starting before the first sample: %v", cpu)
	}
}
