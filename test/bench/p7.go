package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
	"github.com/clever-operator/clever-operator/test/kube/proc"
)

// P7 is the realistic profile (issue #17): a fake with network latency and a provisioning
// delay (a new add-on's env is empty until it passes, as Clever Cloud publishes the variables
// once the add-on is up), N resources created, all Ready, deleted.
type P7 struct {
	N                     int     `json:"n"`
	LatencySeconds        float64 `json:"latencySeconds"`
	JitterSeconds         float64 `json:"jitterSeconds"`
	ProvisioningDelaySecs float64 `json:"provisioningDelaySeconds"`
	ApplySeconds          float64 `json:"applySeconds"`
	ReadySeconds          float64 `json:"readySeconds"`
	DeleteSeconds         float64 `json:"deleteSeconds"`
	// Calls over create → Ready → delete, by route and per resource.
	Create             map[string]int     `json:"createToReady"`
	Delete             map[string]int     `json:"delete"`
	PerResource        float64            `json:"perResource"`
	PerResourceByRoute map[string]float64 `json:"perResourceByRoute"`
	// Requests per second reaching the fake while waiting (all credentials: one organisation).
	PeakPerSecond int     `json:"peakRequestsPerSecond"`
	MeanPerSecond float64 `json:"meanRequestsPerSecond"`
	// The requeue pattern as the API sees it: env reads per add-on (histogram: reads → add-ons),
	// the gaps between two reads of one add-on, and the age (since its creation) of the read
	// that found it provisioned.
	EnvReads   map[int]int        `json:"envReadsPerAddon"`
	GapBuckets []Bucket           `json:"envReadGaps"`
	ReadyAge   map[string]float64 `json:"readyAgeSeconds"` // min, p50, p95, max
	// LastProvisionedRead is when (since the first create) the last add-on was seen
	// provisioned: what remains of ReadySeconds is the Kubernetes side (publish, Helm).
	LastProvisionedRead float64 `json:"lastProvisionedReadSeconds"`
	// LastCreate is when (since the first create) the last add-on was created at the fake.
	LastCreate     float64 `json:"lastCreateSeconds"`
	AddonGetsTotal int     `json:"addonGets"`
	// Where the machine's cores went from the first create to the last add-on created (the
	// span that, with the provisioning delay, makes ReadySeconds): CPU seconds by process
	// ("bench" is this process: its creates, its watch and the fake) and the share of the
	// machine's cores busy (100: all of them, the whole span).
	CreatesCPU  map[string]float64 `json:"createsCPUSeconds,omitempty"`
	CreatesBusy float64            `json:"createsMachineBusyPercent,omitempty"`
}

// p7Margin is how long after the provisioning delay all resources may take to be Ready (the
// goal: all Ready within the delay and this).
const p7Margin = 5 * time.Second

// Bucket is one bar of a histogram.
type Bucket struct {
	Label string `json:"label"`
	Count int    `json:"count"`
}

// envRecorder records, for each add-on, when it was created (the POST's answer) and when its
// env was read; it sits in front of the fake (kube.Intercept).
type envRecorder struct {
	mu      sync.Mutex
	created map[string]time.Time
	reads   map[string][]time.Time
	gets    int
}

var (
	envPath   = regexp.MustCompile(`^/v2/(?:organisations/[^/]+|self)/addons/([^/]+)/env$`)
	addonPath = regexp.MustCompile(`^/v2/(?:organisations/[^/]+|self)/addons/[^/]+$`)
	idInBody  = regexp.MustCompile(`"id"\s*:\s*"(addon_[^"]+)"`)
)

type captureWriter struct {
	http.ResponseWriter
	status int
	body   []byte
}

func (c *captureWriter) WriteHeader(s int) { c.status = s; c.ResponseWriter.WriteHeader(s) }
func (c *captureWriter) Write(b []byte) (int, error) {
	if len(c.body) < 4096 {
		c.body = append(c.body, b...)
	}
	return c.ResponseWriter.Write(b)
}

func (e *envRecorder) handler(h *kube.Harness) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		switch {
		case r.Method == http.MethodGet && envPath.MatchString(r.URL.Path):
			id := envPath.FindStringSubmatch(r.URL.Path)[1]
			e.mu.Lock()
			e.reads[id] = append(e.reads[id], now)
			e.mu.Unlock()
		case r.Method == http.MethodGet && addonPath.MatchString(r.URL.Path):
			e.mu.Lock()
			e.gets++
			e.mu.Unlock()
		case r.Method == http.MethodPost && lastSegment(r.URL.Path) == "addons":
			cw := &captureWriter{ResponseWriter: w, status: http.StatusOK}
			h.Fake().ServeHTTP(cw, r)
			if m := idInBody.FindSubmatch(cw.body); m != nil && cw.status < 300 {
				e.mu.Lock()
				e.created[string(m[1])] = now
				e.mu.Unlock()
			}
			return
		}
		h.Fake().ServeHTTP(w, r)
	}
}

func lastSegment(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// p7 runs the realistic profile on a fresh fake with its own latency and provisioning delay.
func (b *bench) p7(ctx context.Context) error {
	c := b.c
	n := c.p7N
	if err := b.warmup(ctx, "p7warm"); err != nil { // on the current fake: no provisioning delay to wait
		return err
	}
	step(fmt.Sprintf("P7: realistic API (latency %s + up to %s, provisioning delay %s): applying %d resources, waiting for all Ready", c.p7Latency, c.p7Jitter, c.p7Delay, n))
	saved := b.h.Fake()
	fake := b.h.ReplaceFake(fakeapi.Options{ProvisioningDelay: c.p7Delay, Faults: fakeapi.Faults{Latency: c.p7Latency, Jitter: c.p7Jitter}})
	rec := &envRecorder{created: map[string]time.Time{}, reads: map[string][]time.Time{}}
	b.h.Intercept(rec.handler(b.h))
	defer func() {
		b.h.Intercept(nil)
		b.h.SetFake(saved)
	}()
	objs, err := kube.Resources(nsOperator, "p7", n)
	if err != nil {
		return err
	}
	// Ready and gone are read from watches (kube.Watch), as in P6: listing the 500 resources
	// four times a second would load the control plane whose throughput the creates depend on.
	w, err := kube.NewWatch(ctx, b.h.RestConfig, nsOperator, time.Minute)
	if err != nil {
		return err
	}
	defer w.Stop()
	pids := proc.ChildPIDs("kube-apiserver", "etcd")
	pids["operator"], pids["bench"] = b.op.PID(), os.Getpid()
	cpu := sampleCPU(pids, 250*time.Millisecond)
	defer cpu.stop()
	t0 := time.Now()
	if c.p7APIServerProfile != "" {
		go b.profileAPIServer(ctx, c.p7APIServerProfile, 15*time.Second)
	}
	if err := kube.CreateAll(ctx, b.h.Client, objs, c.applyWorkers); err != nil {
		return err
	}
	applied := time.Since(t0)
	if err := kube.WaitReady(ctx, w, nsOperator, objs, 250*time.Millisecond, c.timeout, kube.Exited(b.op)); err != nil {
		return err
	}
	ready := time.Since(t0)
	cpu.stop() // its window ends at the last create, before all Ready
	perSec := b.h.Requests.PerSecond(t0)
	createCounts := fake.Counts()
	fmt.Printf("    all %d Ready in %.1fs (applied in %.1fs)\n", n, ready.Seconds(), applied.Seconds())
	rec.mu.Lock()
	reads := map[string][]time.Time{}
	for id, ts := range rec.reads {
		reads[id] = slices.Clone(ts)
	}
	created := maps.Clone(rec.created)
	gets := rec.gets
	rec.mu.Unlock()

	step(fmt.Sprintf("P7: deleting %d resources", n))
	fake.ResetCounts()
	td := time.Now()
	if err := kube.DeleteAll(ctx, b.h.Client, objs, c.applyWorkers); err != nil {
		return err
	}
	if err := kube.WaitGone(ctx, w, nsOperator, objs, 250*time.Millisecond, c.timeout, kube.Exited(b.op)); err != nil {
		return err
	}
	p := &P7{N: n, LatencySeconds: c.p7Latency.Seconds(), JitterSeconds: c.p7Jitter.Seconds(), ProvisioningDelaySecs: c.p7Delay.Seconds(),
		ApplySeconds: applied.Seconds(), ReadySeconds: ready.Seconds(), DeleteSeconds: time.Since(td).Seconds(),
		Create: createCounts, Delete: fake.Counts(), PerResourceByRoute: map[string]float64{}, EnvReads: map[int]int{}, ReadyAge: map[string]float64{}, AddonGetsTotal: gets}
	total := 0
	for _, m := range []map[string]int{p.Create, p.Delete} {
		for r, v := range m {
			total += v
			p.PerResourceByRoute[r] += float64(v) / float64(n)
		}
	}
	p.PerResource = float64(total) / float64(n)
	sum := 0
	for _, v := range perSec {
		sum += v
		p.PeakPerSecond = max(p.PeakPerSecond, v)
	}
	if len(perSec) > 0 {
		p.MeanPerSecond = float64(sum) / float64(len(perSec))
	}
	p.GapBuckets, p.ReadyAge = requeuePattern(reads, created, p.EnvReads)
	for _, c := range created {
		p.LastCreate = max(p.LastCreate, c.Sub(t0).Seconds())
	}
	for _, ts := range reads {
		if len(ts) > 0 {
			p.LastProvisionedRead = max(p.LastProvisionedRead, ts[len(ts)-1].Sub(t0).Seconds())
		}
	}
	p.CreatesCPU, p.CreatesBusy = cpu.over(t0, t0.Add(time.Duration(p.LastCreate*float64(time.Second))))
	b.res.P7 = p
	fmt.Printf("    P7: %.2f API calls per resource; all Ready %.1fs after the first create (provisioning delay %s); peak %d requests/s, mean %.1f\n",
		p.PerResource, p.ReadySeconds, c.p7Delay, p.PeakPerSecond, p.MeanPerSecond)
	return nil
}

var gapEdges = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute}

// requeuePattern turns the env reads of each add-on into: reads per add-on (into hist), a
// histogram of the gaps between two reads of one add-on, and the age at its last read (the
// one that found it provisioned).
func requeuePattern(reads map[string][]time.Time, created map[string]time.Time, hist map[int]int) ([]Bucket, map[string]float64) {
	counts := make([]int, len(gapEdges)+1)
	var ages []float64
	for id, ts := range reads {
		hist[len(ts)]++
		for i := 1; i < len(ts); i++ {
			g := ts[i].Sub(ts[i-1])
			j := sort.Search(len(gapEdges), func(k int) bool { return g < gapEdges[k] })
			counts[j]++
		}
		if c, ok := created[id]; ok && len(ts) > 0 {
			ages = append(ages, ts[len(ts)-1].Sub(c).Seconds())
		}
	}
	var buckets []Bucket
	prev := time.Duration(0)
	for i, e := range gapEdges {
		buckets = append(buckets, Bucket{Label: fmt.Sprintf("%s–%s", prev, e), Count: counts[i]})
		prev = e
	}
	buckets = append(buckets, Bucket{Label: "≥ " + prev.String(), Count: counts[len(gapEdges)]})
	age := map[string]float64{}
	if len(ages) > 0 {
		sort.Float64s(ages)
		age["min"], age["p50"], age["p95"], age["max"] = ages[0], percentile(ages, 50), percentile(ages, 95), ages[len(ages)-1]
	}
	return buckets, age
}

func printP7(p *P7) {
	fmt.Printf("\nP7, realistic API (N=%d, latency %gs + up to %gs, provisioning delay %gs): calls per resource by route, create → Ready → delete:\n",
		p.N, p.LatencySeconds, p.JitterSeconds, p.ProvisioningDelaySecs)
	routes := make([]string, 0, len(p.PerResourceByRoute))
	for k := range p.PerResourceByRoute {
		routes = append(routes, k)
	}
	sort.Strings(routes)
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	for _, k := range routes {
		fmt.Fprintf(w, "  %s\t%.3f\n", k, p.PerResourceByRoute[k])
	}
	_ = w.Flush()
	keys := make([]int, 0, len(p.EnvReads))
	for k := range p.EnvReads {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	fmt.Print("  env reads per add-on (reads: add-ons):")
	for _, k := range keys {
		fmt.Printf(" %d: %d", k, p.EnvReads[k])
	}
	fmt.Print("\n  gaps between two env reads of one add-on:")
	for _, b := range p.GapBuckets {
		if b.Count > 0 {
			fmt.Printf(" [%s] %d", b.Label, b.Count)
		}
	}
	fmt.Printf("\n  age of the add-on at the read that found it provisioned: min %.1fs, p50 %.1fs, p95 %.1fs, max %.1fs; the last such read %.1fs after the first apply (last add-on created at %.1fs, all Ready at %.1fs)\n",
		p.ReadyAge["min"], p.ReadyAge["p50"], p.ReadyAge["p95"], p.ReadyAge["max"], p.LastProvisionedRead, p.LastCreate, p.ReadySeconds)
	fmt.Printf("  requests/s while creating and waiting: peak %d, mean %.1f\n", p.PeakPerSecond, p.MeanPerSecond)
	if len(p.CreatesCPU) > 0 {
		names := slices.Sorted(maps.Keys(p.CreatesCPU))
		sort.SliceStable(names, func(i, j int) bool { return p.CreatesCPU[names[i]] > p.CreatesCPU[names[j]] })
		fmt.Printf("  CPU from the first create to the last add-on created (%.1fs; machine %.0f %% busy):", p.LastCreate, p.CreatesBusy)
		for _, n := range names {
			fmt.Printf(" %s %.1fs", n, p.CreatesCPU[n])
		}
		fmt.Println()
	}
}

// cpuSampler samples, every interval, the CPU time of some processes and of the machine.
type cpuSampler struct {
	pids    map[string]int
	mu      sync.Mutex
	samples []cpuSample
	done    chan struct{}
	once    sync.Once
}

type cpuSample struct {
	at          time.Time
	procs       map[string]time.Duration
	busy, total time.Duration
}

func sampleCPU(pids map[string]int, every time.Duration) *cpuSampler {
	s := &cpuSampler{pids: pids, done: make(chan struct{})}
	s.take()
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.take()
			}
		}
	}()
	return s
}

func (s *cpuSampler) take() {
	c := cpuSample{at: time.Now(), procs: map[string]time.Duration{}}
	for name, pid := range s.pids {
		if pid == 0 {
			continue
		}
		if d, err := proc.ProcessCPUTime(pid); err == nil {
			c.procs[name] = d
		}
	}
	c.busy, c.total, _ = proc.MachineCPU()
	s.mu.Lock()
	s.samples = append(s.samples, c)
	s.mu.Unlock()
}

func (s *cpuSampler) stop() { s.once.Do(func() { close(s.done) }) }

// over returns the CPU seconds each process used between the last sample at or before from
// and the first at or after to, and the share of the machine's cores busy then (nil, 0 when
// the samples do not cover it).
func (s *cpuSampler) over(from, to time.Time) (map[string]float64, float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, z := -1, -1
	for i, c := range s.samples {
		if !c.at.After(from) {
			a = i
		}
		if z < 0 && !c.at.Before(to) {
			z = i
		}
	}
	if a < 0 || z <= a {
		return nil, 0
	}
	first, last := s.samples[a], s.samples[z]
	out := map[string]float64{}
	for name, d := range last.procs {
		if d0, ok := first.procs[name]; ok {
			out[name] = (d - d0).Seconds()
		}
	}
	busy := 0.0
	if dt := last.total - first.total; dt > 0 {
		busy = 100 * float64(last.busy-first.busy) / float64(dt)
	}
	return out, busy
}

// profileAPIServer writes a CPU profile of kube-apiserver (its /debug/pprof, read as the
// harness's admin) over d to path: what the control plane spends P7's burst of creates on.
func (b *bench) profileAPIServer(ctx context.Context, path string, d time.Duration) {
	cfg := rest.CopyConfig(b.h.RestConfig)
	cfg.GroupVersion = &schema.GroupVersion{}
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err == nil {
		var body []byte
		body, err = rc.Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(int(d.Seconds()))).Timeout(d + time.Minute).DoRaw(ctx)
		if err == nil {
			err = os.WriteFile(path, body, 0o644)
		}
	}
	if err != nil {
		fmt.Printf("    P7: kube-apiserver profile not written: %v\n", err)
		return
	}
	fmt.Printf("    P7: kube-apiserver CPU profile of the first %s: %s (go tool pprof bin/envtest/<version>/kube-apiserver %s)\n", d, path, path)
}
