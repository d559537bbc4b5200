package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

func TestP1Summarize(t *testing.T) {
	p := &P1{Runs: []P1Run{
		{OperatorSeconds: 30, FloorSeconds: 10, Ratio: 3, JobFloorSeconds: 2, JobRatio: 15},
		{OperatorSeconds: 20, FloorSeconds: 10, Ratio: 2, JobFloorSeconds: 4, JobRatio: 5},
		{OperatorSeconds: 25, FloorSeconds: 10, Ratio: 2.5, JobFloorSeconds: 2.5, JobRatio: 10},
	}}
	p.summarize()
	if p.Ratio != 2.5 || p.OperatorSeconds != 25 {
		t.Fatalf("median ratio: got %.2f (operator %.1fs), want 2.50 (25s)", p.Ratio, p.OperatorSeconds)
	}
	if p.JobRatio != 10 || p.JobFloorSeconds != 2.5 {
		t.Fatalf("median job ratio: got %.2f (%.1fs), want 10 (2.5s)", p.JobRatio, p.JobFloorSeconds)
	}
}

func TestP6Summarize(t *testing.T) {
	run := func(n int, millis, floor float64) P6Run {
		return P6Run{N: n, PerResourceMillis: millis, ReadySeconds: millis * float64(n) / 1000, FloorSeconds: floor}
	}
	p := &P6{Runs: []P6Run{
		run(1000, 40, 20), run(5000, 60, 80), // growth 1.5, floor 0.8
		run(1000, 50, 25), run(5000, 55, 100), // growth 1.1, floor 0.8
		run(1000, 40, 20), run(5000, 48, 125), // growth 1.2, floor 1.25
	}}
	p.summarize()
	if len(p.Pairs) != 3 {
		t.Fatalf("pairs: %d, want 3", len(p.Pairs))
	}
	if p.MedianPair != 2 || p.Growth < 1.199 || p.Growth > 1.201 {
		t.Fatalf("median pair %d with growth %.3f, want pair 2 with 1.2", p.MedianPair, p.Growth)
	}
	if p.FloorGrowth < 0.799 || p.FloorGrowth > 0.801 {
		t.Fatalf("median floor growth %.3f, want 0.8", p.FloorGrowth)
	}
	ref, big, ok := p.median()
	if !ok || ref.PerResourceMillis != 40 || big.PerResourceMillis != 48 {
		t.Fatalf("median runs: %v %+v %+v", ok, ref, big)
	}
	// One pair, as -p6-repeats 1 gives: its own ratio; a run without its pair is left out.
	p = &P6{Runs: []P6Run{run(1000, 40, 20), run(5000, 60, 80), run(1000, 10, 5)}}
	p.summarize()
	if len(p.Pairs) != 1 || p.Growth != 1.5 || p.MedianPair != 0 {
		t.Fatalf("one pair: %+v", p)
	}
	// Two pairs: the lower one, as P1 takes with an even count.
	p = &P6{Runs: []P6Run{run(1000, 40, 20), run(5000, 60, 80), run(1000, 50, 25), run(5000, 55, 100)}}
	p.summarize()
	if p.MedianPair != 1 {
		t.Fatalf("two pairs: median pair %d, want 1 (growth 1.1)", p.MedianPair)
	}
	if _, _, ok := (&P6{}).median(); ok {
		t.Fatal("no runs: a median")
	}
}

// The kube-apiserver metrics P6 reads, in the text format the API server serves.
const apiserverMetricsSample = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="POST",version="v1"} 12
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="POST",version="v1"} 5
apiserver_request_total{code="200",component="apiserver",dry_run="",group="api.clever-cloud.com",resource="postgresqls",scope="resource",subresource="status",verb="PUT",version="v1"} 7
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="namespace",subresource="",verb="LIST",version="v1"} 99
# HELP apiserver_request_body_size_bytes [ALPHA] Apiserver request body size in bytes broken out by resource and verb.
# TYPE apiserver_request_body_size_bytes histogram
apiserver_request_body_size_bytes_bucket{group="",resource="secrets",verb="create",le="50000"} 12
apiserver_request_body_size_bytes_bucket{group="",resource="secrets",verb="create",le="+Inf"} 12
apiserver_request_body_size_bytes_sum{group="",resource="secrets",verb="create"} 24576
apiserver_request_body_size_bytes_count{group="",resource="secrets",verb="create"} 12
# HELP apiserver_storage_objects [STABLE] Number of stored objects at the time of last check split by kind.
# TYPE apiserver_storage_objects gauge
apiserver_storage_objects{resource="secrets"} 20123
`

func TestParseAPIServerMetrics(t *testing.T) {
	fams, err := parseMetrics(strings.NewReader(apiserverMetricsSample))
	if err != nil {
		t.Fatal(err)
	}
	m := metricsFrom(fams)
	if got := m.writes["POST secrets"]; got != 12 {
		t.Errorf("POST secrets: %v, want 12 (the 409s wrote nothing)", got)
	}
	if got := m.writes["PUT postgresqls/status"]; got != 7 {
		t.Errorf("PUT postgresqls/status: %v, want 7", got)
	}
	if _, ok := m.writes["LIST secrets"]; ok {
		t.Errorf("a LIST counted as a write")
	}
	if got := m.bytes["POST secrets"]; got != 24576 {
		t.Errorf("bytes of POST secrets: %v, want 24576", got)
	}
	if got := m.objects["secrets"]; got != 20123 {
		t.Errorf("stored secrets: %v, want 20123", got)
	}
	d := diffSeries(map[string]float64{"a": 1, "b": 5}, map[string]float64{"a": 4, "b": 5, "c": 2})
	if len(d) != 2 || d["a"] != 3 || d["c"] != 2 {
		t.Errorf("diffSeries: %v", d)
	}
}

func TestCountStored(t *testing.T) {
	run := &P6Run{StoredPerResource: map[string]float64{}, StoredBytesPerResource: map[string]float64{}}
	secret := func(labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Labels: labels}, Data: map[string][]byte{"k": []byte("v")}}
	}
	helm := secret(map[string]string{"owner": "helm", "version": "2"})
	creds := secret(map[string]string{kinds.LabelManagedBy: kinds.ManagedByValue, kinds.LabelRole: kinds.RoleCredentials})
	both := secret(map[string]string{"owner": "helm", "version": "1", kinds.LabelManagedBy: kinds.ManagedByValue})
	// The two lists: owner=helm, then the operator's label.
	countStored(run, helm, true)
	countStored(run, both, true)
	countStored(run, creds, false)
	countStored(run, both, false) // already counted as a Helm release
	countStored(run, secret(map[string]string{"app": "unrelated"}), false)
	if run.HelmReleaseSecrets != 2 || run.HelmMaxRevision != 2 {
		t.Fatalf("Helm release Secrets %d, highest revision %d; want 2 and 2", run.HelmReleaseSecrets, run.HelmMaxRevision)
	}
	if got := run.StoredPerResource; got["Secret (Helm release)"] != 2 || got["Secret ("+kinds.RoleCredentials+")"] != 1 || len(got) != 2 {
		t.Fatalf("by role: %v", got)
	}
	if run.StoredBytesPerResource["Secret (Helm release)"] <= 0 {
		t.Fatalf("bytes: %v", run.StoredBytesPerResource)
	}
}
