package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/test/kube"
)

// P6 is the operator at the scale of a company-wide install: -p6-n resources (round-robin
// over the kinds) in a watched namespace that also holds -p6-secrets unrelated Secrets and
// -p6-configmaps unrelated ConfigMaps; -p6-repeats pairs of runs (one by default) on one fresh
// operator process, each pair -p6-base resources (the reference for linear growth) then
// -p6-n, back to back.
type P6 struct {
	UnrelatedSecrets    int `json:"unrelatedSecrets"`
	UnrelatedConfigMaps int `json:"unrelatedConfigMaps"`
	// Runs in the order measured: pair i is Runs[2i] (N=-p6-base) and Runs[2i+1] (N=-p6-n).
	Runs  []P6Run  `json:"runs"`
	Pairs []P6Pair `json:"pairs"`
	// Growth is the median of the pairs' growths. Each pair's two runs are measured back to
	// back, so a machine that is slower for a while slows both; still one pair lies up to a
	// quarter from the median of three (p6PairSpread): one pair (the default) decides the
	// goal unless it lies that close to it (Undecided).
	Growth float64 `json:"growth"`
	// MedianPair is the index in Pairs of the pair whose growth is the median (the lower one
	// of an even count); its runs give the writes, the request table and the chart's point.
	MedianPair int `json:"medianPair"`
	// FloorGrowth is the median of the pairs' floor growths (a plain client writing what the
	// operator writes, measured after each run): how much of Growth is the control plane's own.
	FloorGrowth float64 `json:"floorGrowth,omitempty"`
	// Footprint covers the fresh process over all runs.
	Footprint Footprint `json:"footprint"`
}

// P6Pair is one reference run and one large run, measured back to back.
type P6Pair struct {
	// Growth is the time per resource of the large run over that of the reference run.
	Growth float64 `json:"growth"`
	// FloorGrowth is the same ratio for the floors measured after each of the two runs.
	FloorGrowth float64 `json:"floorGrowth,omitempty"`
}

// summarize sets Pairs from Runs, and Growth, MedianPair and FloorGrowth from the pairs'
// medians.
func (p *P6) summarize() {
	p.Pairs, p.Growth, p.MedianPair, p.FloorGrowth = nil, 0, 0, 0
	for i := 0; i+1 < len(p.Runs); i += 2 {
		p.Pairs = append(p.Pairs, newPair(p.Runs[i], p.Runs[i+1]))
	}
	if len(p.Pairs) == 0 {
		return
	}
	p.MedianPair = medianIndex(len(p.Pairs), func(i int) float64 { return p.Pairs[i].Growth })
	p.Growth = p.Pairs[p.MedianPair].Growth
	p.FloorGrowth = p.Pairs[medianIndex(len(p.Pairs), func(i int) float64 { return p.Pairs[i].FloorGrowth })].FloorGrowth
}

// newPair compares a reference run with the large run measured after it.
func newPair(ref, big P6Run) P6Pair {
	var pr P6Pair
	if ref.PerResourceMillis > 0 {
		pr.Growth = big.PerResourceMillis / ref.PerResourceMillis
	}
	if ref.FloorSeconds > 0 && big.FloorSeconds > 0 && ref.N > 0 && big.N > 0 {
		pr.FloorGrowth = (big.FloorSeconds / float64(big.N)) / (ref.FloorSeconds / float64(ref.N))
	}
	return pr
}

// median returns the median pair's two runs.
func (p *P6) median() (ref, big P6Run, ok bool) {
	if len(p.Pairs) == 0 || 2*p.MedianPair+1 >= len(p.Runs) {
		return P6Run{}, P6Run{}, false
	}
	return p.Runs[2*p.MedianPair], p.Runs[2*p.MedianPair+1], true
}

// P6Run is one size.
type P6Run struct {
	N                 int     `json:"n"`
	ReadySeconds      float64 `json:"readySeconds"`
	PerResourceMillis float64 `json:"perResourceMillis"`
	DeleteSeconds     float64 `json:"deleteSeconds"`
	FloorSeconds      float64 `json:"floorSeconds,omitempty"`
	LoadAvg           float64 `json:"loadAvg"`
	FloorLoadAvg      float64 `json:"floorLoadAvg,omitempty"`
	// Writes: what kube-apiserver carried out from applying the resources to all Ready, by
	// "verb resource[/subresource]", from its own request counters (every client; the bench's
	// own N creates of the resources are taken out), and the bytes of those request bodies.
	Writes            int                `json:"writes"`
	WritesPerResource float64            `json:"writesPerResource"`
	WritesByResource  map[string]float64 `json:"writesPerResourceByResource"`
	BytesPerResource  float64            `json:"bytesWrittenPerResource"`
	BytesByResource   map[string]float64 `json:"bytesWrittenPerResourceByResource"`
	// Stored: the objects the operator keeps per resource once all are Ready, by role, with
	// their size as the API serves them (JSON); Helm release Secrets with their revisions.
	StoredPerResource      map[string]float64 `json:"storedPerResource"`
	StoredBytesPerResource map[string]float64 `json:"storedBytesPerResource"`
	HelmReleaseSecrets     int                `json:"helmReleaseSecrets"`
	HelmMaxRevision        int                `json:"helmMaxRevision"`
	// StorageObjects: apiserver_storage_objects (what etcd holds) by resource, at all Ready.
	StorageObjects map[string]float64 `json:"storageObjects"`
	// Requests: every request kube-apiserver answered from applying to all Ready (reads
	// included, every client), per resource by "verb resource[/subresource]", and the seconds
	// it spent on them (apiserver_request_duration_seconds), so where its time goes shows.
	RequestsByResource map[string]float64 `json:"requestsPerResourceByResource"`
	SecondsByResource  map[string]float64 `json:"apiserverSecondsByResource"`
}

// p6 measures P6; with chart, its median pair's runs are also the chart's points at -p6-n and,
// when -sizes has it, at -p6-base.
func (b *bench) p6(ctx context.Context, chart bool) error {
	c := b.h.Client
	r := &P6{UnrelatedSecrets: b.c.p6Secrets, UnrelatedConfigMaps: b.c.p6ConfigMaps}
	// Both untimed: the operator deletes P3/P5's resources while the bench creates the
	// unrelated objects.
	g, gctx := errgroup.WithContext(ctx)
	if len(b.leftover) > 0 {
		// P3/P5's resources would otherwise sit in the operator's cache and in the object
		// counts below (its unrelated Secrets are P6's first ones: same names).
		step(fmt.Sprintf("P6: deleting the %d resources P3/P5 left, waiting for all gone", len(b.leftover)))
		left := b.leftover
		g.Go(func() error {
			if err := kube.DeleteAll(gctx, c, left, b.c.applyWorkers); err != nil {
				return err
			}
			return kube.WaitGone(gctx, c, nsOperator, left, pollInterval(len(left)), b.c.timeout, kube.Exited(b.op))
		})
	}
	step(fmt.Sprintf("P6: %d unrelated Secrets (1 KiB) and %d unrelated ConfigMaps in namespace %s", b.c.p6Secrets, b.c.p6ConfigMaps, nsOperator))
	payload := make([]byte, 1024)
	_, _ = rand.Read(payload)
	g.Go(func() error {
		if err := createUnrelated(gctx, c, b.c.p6Secrets, setupWorkers, func(i int) client.Object {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%d", i), Namespace: nsOperator,
				Labels: map[string]string{"app": "unrelated"}}, Data: map[string][]byte{"blob": payload}}
		}); err != nil {
			return err
		}
		return createUnrelated(gctx, c, b.c.p6ConfigMaps, setupWorkers, func(i int) client.Object {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-cm-%d", i), Namespace: nsOperator,
				Labels: map[string]string{"app": "unrelated"}}, Data: map[string]string{"blob": string(payload[:512])}}
		})
	})
	t := time.Now()
	if err := g.Wait(); err != nil {
		return err
	}
	b.leftover = nil
	fmt.Printf("    (set up in %.1fs)\n", time.Since(t).Seconds())
	step("P6: fresh operator process")
	if err := b.restartOperator(productionLogLevel); err != nil {
		return err
	}
	s := sampleMemory(b.op, 250*time.Millisecond)
	if err := b.warmup(ctx, "p6warm"); err != nil {
		_, _ = s.Stop()
		return err
	}
	for i := range b.c.p6Repeats {
		for _, n := range []int{b.c.p6Base, b.c.p6N} {
			// Each pair has its own names: nothing of an earlier pair is reused.
			prefix := fmt.Sprintf("s%d", n)
			if i > 0 {
				prefix = fmt.Sprintf("s%dr%d", n, i+1)
			}
			step(fmt.Sprintf("P6: pair %d of %d, N=%d", i+1, b.c.p6Repeats, n))
			// P6 is the bench's last part: after its last floor the control plane is torn
			// down, not cleaned up.
			last := i == b.c.p6Repeats-1 && n == b.c.p6N
			run, err := b.p6Run(ctx, n, prefix, !last)
			if err != nil {
				_, _ = s.Stop()
				return fmt.Errorf("pair %d, N=%d: %w", i+1, n, err)
			}
			r.Runs = append(r.Runs, run)
		}
		ref, big := r.Runs[len(r.Runs)-2], r.Runs[len(r.Runs)-1]
		fmt.Printf("    P6 pair %d: %.1f ms per resource at %d, %.1f at %d: growth %.2f\n", i+1, ref.PerResourceMillis, ref.N, big.PerResourceMillis, big.N, newPair(ref, big).Growth)
	}
	fp, err := s.Stop()
	if err != nil {
		return err
	}
	r.Footprint = fp
	r.summarize()
	if ref, big, ok := r.median(); ok {
		note := fmt.Sprintf("P6: %d unrelated Secrets, %d ConfigMaps", b.c.p6Secrets, b.c.p6ConfigMaps)
		for _, run := range []P6Run{ref, big} {
			if run.N == big.N || (chart && slices.Contains(b.c.sizes, run.N)) {
				b.res.Chart = append(b.res.Chart, ChartPoint{N: run.N, OperatorSeconds: run.ReadySeconds, FloorSeconds: run.FloorSeconds, DeleteSeconds: run.DeleteSeconds,
					LoadAvgOperator: run.LoadAvg, LoadAvgFloor: run.FloorLoadAvg, Note: note})
			}
		}
	}
	b.res.P6 = r
	fmt.Printf("    P6: time per resource at %d / at %d, %s: %.2f (the floor's: %.2f); operator peak RSS %.1f MiB (anonymous peak %.1f MiB)\n",
		b.c.p6N, b.c.p6Base, pairsText(len(r.Pairs)), r.Growth, r.FloorGrowth, fp.PeakRSSMiB, fp.PeakAnonMiB)
	if r.Undecided() {
		fmt.Printf("    P6: %.2f is within one pair's spread of the goal (%.1f): confirm with -only P6 -p6-repeats 3\n", r.Growth, p6Goal)
	}
	return nil
}

// p6Goal is the goal for P6's growth (time per resource at -p6-n over that at -p6-base).
const p6Goal = 1.2

// p6PairSpread is how far one pair's growth has been seen from the median of the pairs of its
// run: the last two full runs of three pairs gave 0.86, 0.89, 1.00 and 0.90, 0.96, 1.20.
const p6PairSpread = 0.25

// Undecided says whether the growth is from fewer than three pairs and within one pair's
// spread of the goal, either side: the median of three could then be on the other side.
func (p *P6) Undecided() bool {
	return len(p.Pairs) > 0 && len(p.Pairs) < 3 && p.Growth > p6Goal/(1+p6PairSpread) && p.Growth < p6Goal*(1+p6PairSpread)
}

// pairsText says how the growth was taken from n pairs.
func pairsText(n int) string {
	if n == 1 {
		return "one pair"
	}
	return fmt.Sprintf("median of %d pairs", n)
}

func createUnrelated(ctx context.Context, c client.Client, n, workers int, mk func(int) client.Object) error {
	idx := make([]*unstructured.Unstructured, n)
	for i := range idx {
		u := &unstructured.Unstructured{}
		u.SetName(fmt.Sprint(i))
		idx[i] = u
	}
	for j := range idx {
		idx[j].SetGeneration(int64(j)) // the index, carried to the worker
	}
	return kube.ForEach(ctx, idx, workers, func(ctx context.Context, u *unstructured.Unstructured) error {
		err := c.Create(ctx, mk(int(u.GetGeneration())))
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}

// p6Run measures one run of n resources and its floor; the floor's objects are deleted after
// it when cleanup.
func (b *bench) p6Run(ctx context.Context, n int, prefix string, cleanup bool) (P6Run, error) {
	run := P6Run{N: n}
	objs, err := kube.Resources(nsOperator, prefix, n)
	if err != nil {
		return run, err
	}
	before, err := b.apiserverMetrics(ctx)
	if err != nil {
		return run, err
	}
	// Ready and gone are read from watches, not by listing every resource each second: at
	// 5,000 resources those LISTs took a sixth of kube-apiserver's CPU (kube.Watch).
	w, err := kube.NewWatch(ctx, b.h.RestConfig, nsOperator, time.Minute)
	if err != nil {
		return run, err
	}
	defer w.Stop()
	step(fmt.Sprintf("P6: N=%d: applying, waiting for all Ready", n))
	t0 := time.Now()
	if err := kube.CreateAll(ctx, b.h.Client, objs, b.c.applyWorkers); err != nil {
		return run, err
	}
	if err := kube.WaitReady(ctx, w, nsOperator, objs, pollInterval(n), b.c.timeout, kube.Exited(b.op)); err != nil {
		return run, err
	}
	d := time.Since(t0)
	run.ReadySeconds, run.PerResourceMillis, run.LoadAvg = d.Seconds(), 1000*d.Seconds()/float64(n), loadAvg()
	after, err := b.apiserverMetrics(ctx)
	if err != nil {
		return run, err
	}
	// The bench's own creates of the resources are not the operator's.
	own := map[string]int{}
	for _, u := range objs {
		m, err := b.h.Client.RESTMapper().RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
		if err != nil {
			return run, err
		}
		own["POST "+m.Resource.Resource]++
	}
	run.WritesByResource, run.BytesByResource = map[string]float64{}, map[string]float64{}
	for k, v := range diffSeries(before.writes, after.writes) {
		v -= float64(own[k])
		if v <= 0 {
			continue
		}
		run.Writes += int(v)
		run.WritesByResource[k] = v / float64(n)
	}
	run.WritesPerResource = float64(run.Writes) / float64(n)
	var bytes float64
	for k, v := range diffSeries(before.bytes, after.bytes) {
		run.BytesByResource[k] = v / float64(n)
		bytes += v
	}
	run.BytesPerResource = bytes / float64(n)
	run.RequestsByResource, run.SecondsByResource = map[string]float64{}, diffSeries(before.seconds, after.seconds)
	for k, v := range diffSeries(before.requests, after.requests) {
		run.RequestsByResource[k] = (v - float64(own[k])) / float64(n)
	}
	run.StorageObjects = after.objects
	if err := b.storedObjects(ctx, &run); err != nil {
		return run, err
	}
	fmt.Printf("    all %d Ready in %.1fs (%.1f ms per resource); %.1f writes and %.1f KiB of request bodies per resource; %.1f Helm release Secrets per resource, highest revision %d\n",
		n, run.ReadySeconds, run.PerResourceMillis, run.WritesPerResource, run.BytesPerResource/1024, float64(run.HelmReleaseSecrets)/float64(n), run.HelmMaxRevision)

	step(fmt.Sprintf("P6: N=%d: deleting, waiting for all gone", n))
	td := time.Now()
	if err := kube.DeleteAll(ctx, b.h.Client, objs, b.c.applyWorkers); err != nil {
		return run, err
	}
	if err := kube.WaitGone(ctx, w, nsOperator, objs, pollInterval(n), b.c.timeout, kube.Exited(b.op)); err != nil {
		return run, err
	}
	run.DeleteSeconds = time.Since(td).Seconds()
	fmt.Printf("    all %d deleted in %.1fs\n", n, run.DeleteSeconds)
	step(fmt.Sprintf("P6: N=%d: floor (plain client, %d writers, same objects)", n, b.c.floorWorkers))
	fobjs, err := kube.Resources(nsFloor, "f"+prefix, n)
	if err != nil {
		return run, err
	}
	tf := time.Now()
	if err := kube.ForEach(ctx, fobjs, b.c.floorWorkers, func(ctx context.Context, u *unstructured.Unstructured) error {
		return floorOne(ctx, b.h.Client, u)
	}); err != nil {
		return run, fmt.Errorf("floor: %w", err)
	}
	run.FloorSeconds, run.FloorLoadAvg = time.Since(tf).Seconds(), loadAvg()
	fmt.Printf("    floor: %.1fs; ratio operator/floor %.2f\n", run.FloorSeconds, run.ReadySeconds/run.FloorSeconds)
	if !cleanup {
		return run, nil
	}
	if err := floorCleanup(ctx, b.h.Client, nsFloor, fobjs, true); err != nil {
		return run, fmt.Errorf("floor cleanup: %w", err)
	}
	return run, nil
}

// storedObjects counts what the operator keeps in the namespace per resource, by role.
func (b *bench) storedObjects(ctx context.Context, run *P6Run) error {
	run.StoredPerResource, run.StoredBytesPerResource = map[string]float64{}, map[string]float64{}
	cs, err := kubernetes.NewForConfig(b.h.RestConfig)
	if err != nil {
		return err
	}
	// Two lists by label, not one of every Secret of the namespace: its 20,000 unrelated
	// ones are not counted and need not be read.
	for _, sel := range []string{"owner=helm", kinds.LabelManagedBy + "=" + kinds.ManagedByValue} {
		cont := ""
		for {
			l, err := cs.CoreV1().Secrets(nsOperator).List(ctx, metav1.ListOptions{LabelSelector: sel, Limit: 500, Continue: cont})
			if err != nil {
				return err
			}
			for i := range l.Items {
				countStored(run, &l.Items[i], sel == "owner=helm")
			}
			if cont = l.Continue; cont == "" {
				break
			}
		}
	}
	for k := range run.StoredPerResource {
		run.StoredPerResource[k] /= float64(run.N)
		run.StoredBytesPerResource[k] /= float64(run.N)
	}
	return nil
}

// countStored counts one Secret of the namespace in run by role, as listed by the selector
// owner=helm (helmList) or by the operator's managed-by label: a Helm release Secret once,
// under the first.
func countStored(run *P6Run, s *corev1.Secret, helmList bool) {
	role := ""
	switch {
	case s.Labels["owner"] == "helm":
		if !helmList {
			return
		}
		role = "Secret (Helm release)"
		run.HelmReleaseSecrets++
		var v int
		_, _ = fmt.Sscan(s.Labels["version"], &v)
		run.HelmMaxRevision = max(run.HelmMaxRevision, v)
	case s.Labels[kinds.LabelManagedBy] == kinds.ManagedByValue:
		role = "Secret (" + s.Labels[kinds.LabelRole] + ")"
	default:
		return
	}
	run.StoredPerResource[role]++
	run.StoredBytesPerResource[role] += float64(s.Size())
}

type apiMetrics struct {
	writes, bytes     map[string]float64
	objects           map[string]float64
	requests, seconds map[string]float64
}

// apiserverMetrics scrapes kube-apiserver's own /metrics: writes by verb and resource
// (apiserver_request_total), the bytes of their bodies (apiserver_request_body_size_bytes) and
// the objects in storage (apiserver_storage_objects).
func (b *bench) apiserverMetrics(ctx context.Context) (apiMetrics, error) {
	cs, err := kubernetes.NewForConfig(b.h.RestConfig)
	if err != nil {
		return apiMetrics{}, err
	}
	rc, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").Stream(ctx)
	if err != nil {
		return apiMetrics{}, err
	}
	defer rc.Close()
	fams, err := parseMetrics(rc)
	if err != nil {
		return apiMetrics{}, err
	}
	return metricsFrom(fams), nil
}

// metricsFrom picks P6's figures from kube-apiserver's metric families.
func metricsFrom(fams map[string]*dto.MetricFamily) apiMetrics {
	m := apiMetrics{writes: map[string]float64{}, bytes: map[string]float64{}, objects: map[string]float64{},
		requests: map[string]float64{}, seconds: map[string]float64{}}
	label := func(mm *dto.Metric, name string) string {
		for _, l := range mm.GetLabel() {
			if l.GetName() == name {
				return l.GetValue()
			}
		}
		return ""
	}
	if f := fams["apiserver_request_total"]; f != nil {
		for _, mm := range f.GetMetric() {
			verb := label(mm, "verb")
			res := label(mm, "resource")
			if sub := label(mm, "subresource"); sub != "" {
				res += "/" + sub
			}
			if verb != "WATCH" && res != "" {
				m.requests[verb+" "+res] += mm.GetCounter().GetValue()
			}
			if verb != "POST" && verb != "PUT" && verb != "PATCH" && verb != "DELETE" && verb != "APPLY" {
				continue
			}
			code := label(mm, "code")
			if !strings.HasPrefix(code, "2") {
				continue
			}
			m.writes[verb+" "+res] += mm.GetCounter().GetValue()
		}
	}
	if f := fams["apiserver_request_duration_seconds"]; f != nil {
		for _, mm := range f.GetMetric() {
			verb, res := label(mm, "verb"), label(mm, "resource")
			if verb == "WATCH" || res == "" {
				continue
			}
			if sub := label(mm, "subresource"); sub != "" {
				res += "/" + sub
			}
			m.seconds[verb+" "+res] += mm.GetHistogram().GetSampleSum()
		}
	}
	if f := fams["apiserver_request_body_size_bytes"]; f != nil {
		for _, mm := range f.GetMetric() {
			verb := map[string]string{"create": "POST", "update": "PUT", "patch": "PATCH", "delete": "DELETE", "delete_collection": "DELETE"}[label(mm, "verb")]
			if verb == "" {
				continue
			}
			// The body metric has no subresource label: a status write counts under the resource.
			m.bytes[verb+" "+label(mm, "resource")] += mm.GetHistogram().GetSampleSum()
		}
	}
	if f := fams["apiserver_storage_objects"]; f != nil {
		for _, mm := range f.GetMetric() {
			m.objects[label(mm, "resource")] = mm.GetGauge().GetValue()
		}
	}
	return m
}

func parseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}

func diffSeries(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func printP6(p *P6) {
	ref, big, ok := p.median()
	if !ok {
		return
	}
	fmt.Printf("\nP6: %s, N=%d then N=%d back to back (time per resource; all Ready; the floor):\n", pairsText(len(p.Pairs)), ref.N, big.N)
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	for i, pr := range p.Pairs {
		a, b := p.Runs[2*i], p.Runs[2*i+1]
		mark := ""
		if i == p.MedianPair && len(p.Pairs) > 1 {
			mark = "median"
		}
		fmt.Fprintf(w, "  pair %d\t%.1f ms; %.1fs; floor %.1fs\t%.1f ms; %.1fs; floor %.1fs\tgrowth %.2f (floor %.2f)\t%s\n", i+1,
			a.PerResourceMillis, a.ReadySeconds, a.FloorSeconds, b.PerResourceMillis, b.ReadySeconds, b.FloorSeconds, pr.Growth, pr.FloorGrowth, mark)
	}
	_ = w.Flush()
	which := "the pair"
	if len(p.Pairs) > 1 {
		which = "the median pair"
	}
	for _, r := range []P6Run{ref, big} {
		fmt.Printf("\nP6, N=%d (%s): kube-apiserver writes per resource to Ready, by verb and resource (every client but the bench's creates):\n", r.N, which)
		w = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		for _, k := range sortedKeys(r.WritesByResource) {
			fmt.Fprintf(w, "  %s\t%.2f\t%.1f KiB\n", k, r.WritesByResource[k], r.BytesByResource[k]/1024)
		}
		_ = w.Flush()
		fmt.Printf("P6, N=%d: kube-apiserver requests per resource to Ready (reads included) and its seconds on them, the 12 costliest:\n", r.N)
		w = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		keys := sortedKeys(r.SecondsByResource)
		sort.SliceStable(keys, func(i, j int) bool { return r.SecondsByResource[keys[i]] > r.SecondsByResource[keys[j]] })
		for i, k := range keys {
			if i == 12 {
				break
			}
			fmt.Fprintf(w, "  %s\t%.2f\t%.1f s\n", k, r.RequestsByResource[k], r.SecondsByResource[k])
		}
		_ = w.Flush()
		fmt.Printf("P6, N=%d: objects kept per resource once Ready:\n", r.N)
		w = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		for _, k := range sortedKeys(r.StoredPerResource) {
			fmt.Fprintf(w, "  %s\t%.2f\t%.1f KiB\n", k, r.StoredPerResource[k], r.StoredBytesPerResource[k]/1024)
		}
		_ = w.Flush()
	}
}
