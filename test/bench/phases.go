package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/operator-framework/helm-operator-plugins/pkg/watches"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/hybrid"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
	"github.com/clever-operator/clever-operator/test/kube/proc"
)

func pollInterval(n int) time.Duration {
	if n >= 500 {
		return time.Second
	}
	return 250 * time.Millisecond
}

// warmup creates one resource and waits for it to be Ready, then deletes it: the operator's
// caches are synced and its plan cache is filled before anything is timed. Once per
// operator process and fake: a process warmed up stays so.
func (b *bench) warmup(ctx context.Context, prefix string) error {
	key := warmKey{b.op.Starts(), b.h.Fake()}
	if b.warm == key {
		return nil
	}
	if err := b.warmupOnce(ctx, prefix); err != nil {
		return err
	}
	b.warm = key
	return nil
}

// warmKey is an operator process (by its start count) and the fake it was warmed up on.
type warmKey struct {
	start int
	fake  *fakeapi.Server
}

func (b *bench) warmupOnce(ctx context.Context, prefix string) error {
	objs, err := kube.Resources(nsOperator, prefix, 1)
	if err != nil {
		return err
	}
	if err := kube.CreateAll(ctx, b.h.Client, objs, 1); err != nil {
		return err
	}
	if err := kube.WaitReady(ctx, b.h.Client, nsOperator, objs, 100*time.Millisecond, 2*time.Minute, kube.Exited(b.op)); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if err := kube.DeleteAll(ctx, b.h.Client, objs, 1); err != nil {
		return err
	}
	return kube.WaitGone(ctx, b.h.Client, nsOperator, objs, 100*time.Millisecond, 2*time.Minute, kube.Exited(b.op))
}

// p4: apply one resource, time until its credentials Secret is filled; the fake answers
// instantly (no latency, no provisioning delay).
func (b *bench) p4(ctx context.Context) error {
	step(fmt.Sprintf("P4: single-resource latency, %d runs, fake answering instantly", b.c.p4Runs))
	saved := b.h.Fake()
	b.h.ReplaceFake(fakeapi.Options{})
	defer b.h.SetFake(saved)
	if err := b.warmup(ctx, "p4warm"); err != nil {
		return err
	}
	objs, err := kube.Resources(nsOperator, "p4", b.c.p4Runs)
	if err != nil {
		return err
	}
	var samples []float64
	for _, u := range objs {
		t0 := time.Now()
		if err := b.h.Client.Create(ctx, u.DeepCopy()); err != nil {
			return err
		}
		for {
			sec := &corev1.Secret{}
			err := b.h.Client.Get(ctx, types.NamespacedName{Namespace: nsOperator, Name: u.GetName() + "-secrets"}, sec)
			// Azimutt publishes no variable: its Secret is complete as soon as it exists.
			if err == nil && (len(sec.Data) > 0 || u.GetKind() == "Azimutt") {
				break
			}
			if time.Since(t0) > 2*time.Minute {
				return fmt.Errorf("%s: no credentials Secret after 2m", kube.Key(u))
			}
			if err := kube.Exited(b.op)(); err != nil {
				return err
			}
			time.Sleep(10 * time.Millisecond)
		}
		samples = append(samples, time.Since(t0).Seconds())
		if err := kube.DeleteAll(ctx, b.h.Client, []*unstructured.Unstructured{u}, 1); err != nil {
			return err
		}
		if err := kube.WaitGone(ctx, b.h.Client, nsOperator, []*unstructured.Unstructured{u}, 50*time.Millisecond, 2*time.Minute, kube.Exited(b.op)); err != nil {
			return err
		}
	}
	sorted := append([]float64(nil), samples...)
	sort.Float64s(sorted)
	b.res.P4 = &P4{Runs: len(samples), P50: percentile(sorted, 50), P95: percentile(sorted, 95), Min: sorted[0], Max: sorted[len(sorted)-1], Samples: samples}
	fmt.Printf("    p50 %.3fs  p95 %.3fs  (min %.3fs, max %.3fs)\n", b.res.P4.P50, b.res.P4.P95, b.res.P4.Min, b.res.P4.Max)
	return nil
}

// cpuSpan starts counting the CPU time of kube-apiserver, etcd, the operator and this process
// (the bench: its creates, its polls and the fake); the function it returns gives the seconds
// each used since. Unlike a wall time, these hardly move with the machine's other load.
func (b *bench) cpuSpan() func() map[string]float64 {
	pids := proc.ChildPIDs("kube-apiserver", "etcd")
	pids["operator"], pids["bench"] = b.op.PID(), os.Getpid()
	s := sampleCPU(pids, time.Hour)
	from := time.Now()
	return func() map[string]float64 {
		to := time.Now()
		s.take()
		s.stop()
		out, _ := s.over(from, to)
		return out
	}
}

// perResource prints CPU seconds as milliseconds per resource, the costliest process first.
func perResource(secs map[string]float64, n int) string {
	names := slices.Sorted(maps.Keys(secs))
	sort.SliceStable(names, func(i, j int) bool { return secs[names[i]] > secs[names[j]] })
	var parts []string
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f ms", name, 1000*secs[name]/float64(n)))
	}
	return strings.Join(parts, ", ")
}

func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	// Nearest rank.
	r := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[min(max(r, 0), len(sorted)-1)]
}

// scale: N resources to Ready with the operator, the no-op check (P2), deletion, then the
// floor for the same N.
func (b *bench) scale(ctx context.Context, n int, withP2 bool) error {
	if err := b.warmup(ctx, fmt.Sprintf("w%d", n)); err != nil {
		return err
	}
	fake := b.h.Fake()
	objs, err := kube.Resources(nsOperator, fmt.Sprintf("n%d", n), n)
	if err != nil {
		return err
	}
	step(fmt.Sprintf("N=%d: applying %d resources, waiting for all Ready (operator)", n, n))
	fake.ResetCounts()
	opCPU := b.cpuSpan()
	t0 := time.Now()
	if err := kube.CreateAll(ctx, b.h.Client, objs, b.c.applyWorkers); err != nil {
		return err
	}
	applied := time.Since(t0)
	if err := kube.WaitReady(ctx, b.h.Client, nsOperator, objs, pollInterval(n), b.c.timeout, kube.Exited(b.op)); err != nil {
		return err
	}
	opDur := time.Since(t0)
	opSecs := opCPU()
	loadOp := loadAvg()
	createCounts := fake.Counts()
	fmt.Printf("    operator: all %d Ready in %.1fs (applied in %.1fs); CPU per resource: %s\n", n, opDur.Seconds(), applied.Seconds(), perResource(opSecs, n))

	var noop map[string]int
	var noopWindow time.Duration
	if withP2 {
		noopWindow = 15 * time.Second
		step(fmt.Sprintf("N=%d: no-op events: a label on every Ready resource, counting API calls for %s", n, noopWindow))
		fake.ResetCounts()
		err := kube.ForEach(ctx, objs, b.c.applyWorkers, func(ctx context.Context, u *unstructured.Unstructured) error {
			return b.h.Client.Patch(ctx, u.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"bench.example.com/touched":"yes"}}}`)))
		})
		if err != nil {
			return err
		}
		time.Sleep(noopWindow)
		noop = fake.Counts()
	}

	step(fmt.Sprintf("N=%d: deleting, waiting for all gone", n))
	fake.ResetCounts()
	td := time.Now()
	if err := kube.DeleteAll(ctx, b.h.Client, objs, b.c.applyWorkers); err != nil {
		return err
	}
	if err := kube.WaitGone(ctx, b.h.Client, nsOperator, objs, pollInterval(n), b.c.timeout, kube.Exited(b.op)); err != nil {
		return err
	}
	delDur := time.Since(td)
	deleteCounts := fake.Counts()
	fmt.Printf("    operator: all %d deleted in %.1fs\n", n, delDur.Seconds())

	step(fmt.Sprintf("N=%d: floor (plain client, %d writers, same objects)", n, b.c.floorWorkers))
	fobjs, err := kube.Resources(nsFloor, fmt.Sprintf("f%d", n), n)
	if err != nil {
		return err
	}
	floorCPU := b.cpuSpan()
	tf := time.Now()
	if err := kube.ForEach(ctx, fobjs, b.c.floorWorkers, func(ctx context.Context, u *unstructured.Unstructured) error {
		return floorOne(ctx, b.h.Client, u)
	}); err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	floorDur := time.Since(tf)
	floorSecs := floorCPU()
	loadFloor := loadAvg()
	fmt.Printf("    floor: %.1fs; ratio operator/floor %.2f; CPU per resource: %s\n", floorDur.Seconds(), opDur.Seconds()/floorDur.Seconds(), perResource(floorSecs, n))
	if err := floorCleanup(ctx, b.h.Client, nsFloor, fobjs, true); err != nil {
		return fmt.Errorf("floor cleanup: %w", err)
	}

	step(fmt.Sprintf("N=%d: job floor (plain client, %d writers: the resource, one status write, the credentials Secret)", n, b.c.floorWorkers))
	jobjs, err := kube.Resources(nsFloor, fmt.Sprintf("j%d", n), n)
	if err != nil {
		return err
	}
	tj := time.Now()
	if err := kube.ForEach(ctx, jobjs, b.c.floorWorkers, func(ctx context.Context, u *unstructured.Unstructured) error {
		return jobFloorOne(ctx, b.h.Client, u)
	}); err != nil {
		return fmt.Errorf("job floor: %w", err)
	}
	jobDur := time.Since(tj)
	fmt.Printf("    job floor: %.1fs; ratio operator/job floor %.2f\n", jobDur.Seconds(), opDur.Seconds()/jobDur.Seconds())
	if err := floorCleanup(ctx, b.h.Client, nsFloor, jobjs, false); err != nil {
		return fmt.Errorf("job floor cleanup: %w", err)
	}

	if !slices.ContainsFunc(b.res.Chart, func(p ChartPoint) bool { return p.N == n }) {
		b.res.Chart = append(b.res.Chart, ChartPoint{N: n, OperatorSeconds: opDur.Seconds(), FloorSeconds: floorDur.Seconds(), DeleteSeconds: delDur.Seconds(),
			JobFloorSeconds: jobDur.Seconds(), LoadAvgOperator: loadOp, LoadAvgFloor: loadFloor})
	}
	if n == b.c.n {
		if b.res.P1 == nil {
			b.res.P1 = &P1{N: n}
		}
		b.res.P1.Runs = append(b.res.P1.Runs, P1Run{OperatorSeconds: opDur.Seconds(), FloorSeconds: floorDur.Seconds(), JobFloorSeconds: jobDur.Seconds(),
			Ratio: opDur.Seconds() / floorDur.Seconds(), JobRatio: opDur.Seconds() / jobDur.Seconds(),
			ApplySeconds: applied.Seconds(), DeleteSeconds: delDur.Seconds(), LoadAvg: loadOp, OperatorCPU: opSecs, FloorCPU: floorSecs})
		b.res.P1.summarize()
	}
	if withP2 {
		p := &P2{N: n, Create: createCounts, Delete: deleteCounts, Noop: noop, NoopTouched: n, NoopWindowSeconds: noopWindow.Seconds(), PerResourceByRoute: map[string]float64{}}
		for r, v := range createCounts {
			p.Total += v
			p.PerResourceByRoute[r] += float64(v) / float64(n)
		}
		for r, v := range deleteCounts {
			p.Total += v
			p.PerResourceByRoute[r] += float64(v) / float64(n)
		}
		for _, v := range noop {
			p.NoopCalls += v
		}
		p.PerResource = float64(p.Total) / float64(n)
		b.res.P2 = p
		fmt.Printf("    P2: %.2f API calls per resource (create→Ready→delete); %d calls after touching %d Ready resources\n", p.PerResource, p.NoopCalls, n)
	}
	return nil
}

// idle: P5 (peak RSS with idle-n resources and unrelated Secrets) and P3 (idle API calls
// and CPU).
func (b *bench) idle(ctx context.Context, p3, p5 bool) error {
	c := b.h.Client
	// The part before P3's own waits and windows is P5's (P3's setup when P5 is not run).
	from, setup := time.Now(), "P5"
	if !p5 {
		setup = "P3"
	}
	if p5 && b.c.unrelated > 0 {
		step(fmt.Sprintf("P5: creating %d unrelated Secrets in namespace %s", b.c.unrelated, nsOperator))
		payload := make([]byte, 1024)
		_, _ = rand.Read(payload)
		idx := make([]*unstructured.Unstructured, b.c.unrelated)
		for i := range idx {
			u := &unstructured.Unstructured{}
			u.SetName(fmt.Sprintf("unrelated-%d", i))
			idx[i] = u
		}
		if err := kube.ForEach(ctx, idx, setupWorkers, func(ctx context.Context, u *unstructured.Unstructured) error {
			return c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: nsOperator,
				Labels: map[string]string{"app": "unrelated"}}, Data: map[string][]byte{"blob": payload}})
		}); err != nil {
			return err
		}
	}
	step("P3/P5: fresh operator process")
	if err := b.op.Stop(10 * time.Second); err != nil {
		return err
	}
	b.op.SetArgs(b.operatorArgs(productionLogLevel)...) // the footprint at the default verbosity
	if err := b.op.Start(); err != nil {
		return err
	}
	sampler := sampleMemory(b.op, 250*time.Millisecond)
	if err := b.warmup(ctx, "idlewarm"); err != nil {
		_, _ = sampler.Stop()
		return err
	}
	objs, err := kube.Resources(nsOperator, "idle", b.c.idleN)
	if err != nil {
		return err
	}
	step(fmt.Sprintf("P3/P5: applying %d resources, waiting for all Ready", b.c.idleN))
	t0 := time.Now()
	if err := kube.CreateAll(ctx, c, objs, b.c.applyWorkers); err != nil {
		return err
	}
	if err := kube.WaitReady(ctx, c, nsOperator, objs, pollInterval(b.c.idleN), b.c.timeout, kube.Exited(b.op)); err != nil {
		return err
	}
	fmt.Printf("    all %d Ready in %.1fs\n", b.c.idleN, time.Since(t0).Seconds())
	b.leftover = objs
	_, peak1, err := b.op.Memory()
	if err != nil {
		return err
	}
	rss1 := int64(0)
	p3r := &P3{N: b.c.idleN, ResyncSeconds: b.c.resync.Seconds(), WindowSeconds: b.c.idleWindow.Seconds(), BaselineWindowSeconds: b.c.baseWindow.Seconds()}
	// "All Ready" is not "idle": the Helm reconcilers still work off the status events of the
	// last resources (and the memory peak may still come). Wait until the operator uses under
	// 2 % of a core over 5 s (at most 3 minutes) before the P3 baseline and the P5 reading.
	step("P3/P5: waiting for the operator to go quiet")
	if err := b.waitCPUUnder(5*time.Second, 2, 3*time.Minute); err != nil {
		return err
	}
	b.timed(setup, from)
	if p3 {
		from := time.Now()
		defer func() { b.timed("P3", from) }()
		// The baseline is the operator with nothing due, not the tail of the apply: after a
		// burst, Go's background scavenger returns the freed memory to the OS at up to 1 % of
		// a core (and the collector runs a few more cycles) for a minute or two. Wait until it
		// uses under 0.5 % of a core over 10 s (at most 3 minutes more).
		step("P3: waiting for the tail of the apply (scavenger, collector) to end")
		quietFrom := time.Now()
		if err := b.waitCPUUnder(10*time.Second, 0.5, 3*time.Minute); err != nil {
			return err
		}
		p3r.QuietWaitSeconds = time.Since(quietFrom).Seconds()
		fmt.Printf("    quiet after %.0fs\n", p3r.QuietWaitSeconds)
		step(fmt.Sprintf("P3: baseline window %s, default periods (nothing due)", b.c.baseWindow))
		cpu, calls, err := b.window(b.c.baseWindow)
		if err != nil {
			return err
		}
		p3r.BaselineCPUPercent = 100 * cpu.Seconds() / b.c.baseWindow.Seconds()
		p3r.BaselineCalls = calls
		fmt.Printf("    baseline: CPU %.2f%% of one core, %d API calls\n", p3r.BaselineCPUPercent, calls)
	}
	rss1, peak, err := b.op.Memory()
	if err != nil {
		return err
	}
	peak1 = max(peak1, peak)
	fp, err := sampler.Stop()
	if err != nil {
		return err
	}
	if p5 {
		b.res.P5 = &P5{Resources: b.c.idleN, UnrelatedSecrets: b.c.unrelated, PeakRSSMiB: mib(peak1), RSSMiB: mib(rss1), PeakAnonMiB: fp.PeakAnonMiB}
		fmt.Printf("    P5: peak RSS %.1f MiB (current %.1f MiB; anonymous peak %.1f MiB)\n", mib(peak1), mib(rss1), fp.PeakAnonMiB)
	}
	if !p3 {
		return nil
	}

	// Two windows, each side at the short period alone, so each is scaled by its own default:
	// the engine's refresh (--resync-period, default 10m) and the Helm side's reconcile
	// (watches.yaml reconcilePeriod, default 30m).
	helmDefault, err := watchesPeriod("watches.yaml")
	if err != nil {
		return err
	}
	wf, err := shortWatches(b.h.WorkDir, b.c.resync)
	if err != nil {
		return err
	}
	// settle is how many periods a restarted operator runs before its window: the engine's
	// three, so that each resource has had its first backups read (its second refresh, at up
	// to 2.2 periods with the jitter: a one-time status write of its first status.backups)
	// and the Helm side has reconciled every resource once after the restart (a real dry-run
	// each: about 12 s at 1,000 on a busy 2-core machine) before the window, which then
	// measures the steady state; the Helm side's one (its first pass, then one reconcile of
	// every resource a period).
	measure := func(what string, settle int, args ...string) (cpuPct float64, calls int, err error) {
		step(fmt.Sprintf("P3: operator restarted with %s", what))
		if err := b.op.Stop(10 * time.Second); err != nil {
			return 0, 0, err
		}
		b.op.SetArgs(b.operatorArgs(args...)...)
		if err := b.op.Start(); err != nil {
			return 0, 0, err
		}
		step(fmt.Sprintf("P3: letting the restart settle for %d period(s) of %s, then measuring %s", settle, b.c.resync, b.c.idleWindow))
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(time.Duration(settle) * b.c.resync):
		}
		b.h.Fake().ResetCounts()
		cpu, calls, err := b.window(b.c.idleWindow)
		if err != nil {
			return 0, 0, err
		}
		if _, peak, err := b.op.Memory(); err == nil && b.res.P5 != nil {
			b.res.P5.PeakRSSShortPeriodMiB = max(b.res.P5.PeakRSSShortPeriodMiB, mib(peak))
		}
		return 100 * cpu.Seconds() / b.c.idleWindow.Seconds(), calls, nil
	}
	engCPU, calls, err := measure(fmt.Sprintf("--resync-period=%s (Helm at its default %s)", b.c.resync, helmDefault), 3, "--resync-period="+b.c.resync.String())
	if err != nil {
		return err
	}
	p3r.ByRoute = b.h.Fake().Counts()
	p3r.Calls = calls
	periods := b.c.idleWindow.Seconds() / b.c.resync.Seconds()
	p3r.CallsPerResourcePerPeriod = float64(calls) / float64(b.c.idleN) / periods
	helmCPU, helmCalls, err := measure(fmt.Sprintf("Helm reconcilePeriod %s (engine at its default %s)", b.c.resync, queue.DefaultResyncPeriod), 1, "--watches-file="+wf)
	if err != nil {
		return err
	}
	p3r.CPUPercentMeasured = engCPU
	p3r.HelmCPUPercentMeasured = helmCPU
	p3r.HelmCalls = helmCalls
	p3r.HelmDefaultSeconds = helmDefault.Seconds()
	p3r.CPUPercentAtDefaultPeriod = p3r.BaselineCPUPercent +
		max(0, engCPU-p3r.BaselineCPUPercent)*b.c.resync.Seconds()/queue.DefaultResyncPeriod.Seconds() +
		max(0, helmCPU-p3r.BaselineCPUPercent)*b.c.resync.Seconds()/helmDefault.Seconds()
	b.res.P3 = p3r
	fmt.Printf("    P3: %.2f API calls per resource per period; CPU at a %s period: engine %.2f%%, Helm %.2f%% (%d API calls) → %.2f%% of one core at the defaults (%s, %s)\n",
		p3r.CallsPerResourcePerPeriod, b.c.resync, engCPU, helmCPU, helmCalls, p3r.CPUPercentAtDefaultPeriod, queue.DefaultResyncPeriod, helmDefault)
	return nil
}

// watchesPeriod returns the Helm reconcile period of the watches file's entries (an entry
// without one has the Helm side's default); the shortest when they differ, so the scaled
// CPU is never understated.
func watchesPeriod(path string) (time.Duration, error) {
	ws, err := watches.Load(path)
	if err != nil {
		return 0, err
	}
	d := time.Duration(0)
	for _, w := range ws {
		p := hybrid.ReconcilePeriod(w, hybrid.Options{})
		if d == 0 || p < d {
			d = p
		}
	}
	return d, nil
}

// waitCPUUnder waits until the operator uses under percent of a core over a window of d, for
// at most timeout (then it goes on: the figures that follow say what the operator used).
func (b *bench) waitCPUUnder(d time.Duration, percent float64, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		cpu, _, err := b.window(d)
		if err != nil {
			return err
		}
		if cpu.Seconds() < percent/100*d.Seconds() {
			return nil
		}
	}
	return nil
}

// window measures the operator's CPU time and the API calls reaching the fake over d.
func (b *bench) window(d time.Duration) (time.Duration, int, error) {
	since := time.Now()
	c0, err := b.op.CPUTime()
	if err != nil {
		return 0, 0, err
	}
	select {
	case <-time.After(d):
	case <-b.op.Done():
		return 0, 0, kube.Exited(b.op)()
	}
	c1, err := b.op.CPUTime()
	if err != nil {
		return 0, 0, err
	}
	return c1 - c0, b.h.Requests.Total(since), nil
}

var periodRE = regexp.MustCompile(`(?m)^(\s*reconcilePeriod:\s*).*$`)

// shortWatches writes a copy of watches.yaml whose Helm reconcile period is d.
func shortWatches(dir string, d time.Duration) (string, error) {
	b, err := os.ReadFile("watches.yaml")
	if err != nil {
		return "", err
	}
	out := periodRE.ReplaceAll(b, []byte("${1}"+d.String()))
	p := filepath.Join(dir, "watches-short.yaml")
	return p, os.WriteFile(p, out, 0o644)
}

// loadAvg returns the 1-minute load average (0 if unknown).
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var v float64
	_, _ = fmt.Sscan(string(b), &v)
	return v
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
