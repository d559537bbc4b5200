// Command bench measures the operator on a local control plane (kube-apiserver + etcd) against
// the fake Clever Cloud API, with the operator as its own process (bin/manager):
//
//	P1  time from applying N resources to all Ready, and the floor: a plain client writing the
//	    same Kubernetes objects on the same control plane; ratio operator/floor
//	P2  Clever Cloud API calls per resource over create → Ready → delete, by route; calls
//	    caused by no-op events (a label touched on every Ready resource)
//	P3  idle cost with many Ready resources: API calls per resource per resync period and
//	    operator CPU (from /proc/<pid>/stat), measured with a short period and scaled
//	P4  single-resource latency, apply → Secret filled, fake answering instantly (p50/p95)
//	P5  operator peak RSS (VmHWM) with many resources and unrelated Secrets in the cluster
//	P7  realistic API (latency, provisioning delay): calls per resource by route over
//	    create → Ready → delete, time to all Ready, the requeue pattern (env reads per add-on)
//	A1  Kubernetes writes per resource (status, the resource, Secrets, Helm release Secrets,
//	    events...) from kube-apiserver's audit log: to Ready, after each of four spec changes
//	    (spec.secret labels, annotations, templates; spec.deletionPolicy), idle, delete
//	chart  time-to-Ready vs N, operator and floor (PNG)
//
// Usage: make bench [BENCH_ARGS="-only P4 -n 100"]; make bench BENCH_ARGS="-only A1";
// docs/performance.md. The operator is built into -workdir (bin/ may be shared).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

type config struct {
	assets, only, out, chartOut, workdir string
	n, idleN, unrelated, p4Runs, auditN  int
	auditRuns                            int
	auditQuiet, auditIdle                time.Duration
	sizes                                []int
	latency, jitter, delay               time.Duration
	apiRate                              float64
	workers, floorWorkers, applyWorkers  int
	resync, idleWindow, baseWindow       time.Duration
	timeout                              time.Duration
	noBuild                              bool
	p7N                                  int
	p7Latency, p7Jitter, p7Delay         time.Duration
	p7APIServerProfile                   string
	operatorExtra                        string
	smallN                               int
	p6N, p6Base, p6Secrets, p6ConfigMaps int
	p1Runs, p6Repeats                    int
	smallIdle                            time.Duration
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench: FAIL: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	var c config
	var sizes string
	flag.StringVar(&c.assets, "assets", os.Getenv("KUBEBUILDER_ASSETS"), "directory with kube-apiserver and etcd (default bin/envtest/<version>)")
	flag.StringVar(&c.only, "only", strings.Join(allParts, ","), "comma-separated subset of A1,P1,P2,P3,P4,P5,P5S (P5 small),P6,P7,chart")
	flag.IntVar(&c.p7N, "p7-n", 500, "P7: number of resources (realistic API)")
	flag.DurationVar(&c.p7Latency, "p7-latency", 150*time.Millisecond, "P7: fake API latency")
	flag.DurationVar(&c.p7Jitter, "p7-jitter", 50*time.Millisecond, "P7: fake API random extra latency")
	flag.StringVar(&c.p7APIServerProfile, "p7-apiserver-profile", "", "P7: write a CPU profile of kube-apiserver over the first 15 s of the creates to this file")
	flag.DurationVar(&c.p7Delay, "p7-provisioning-delay", 60*time.Second, "P7: fake API provisioning delay (goal: all Ready within it + 5 s)")
	flag.IntVar(&c.p6N, "p6-n", 5000, "P6: number of resources")
	flag.IntVar(&c.p6Base, "p6-base", 1000, "P6: the smaller run time per resource is compared with")
	flag.IntVar(&c.p6Secrets, "p6-secrets", 20000, "P6: unrelated Secrets in the watched namespace")
	flag.IntVar(&c.p6ConfigMaps, "p6-configmaps", 2000, "P6: unrelated ConfigMaps in the watched namespace")
	flag.IntVar(&c.p6Repeats, "p6-repeats", 1, "P6: pairs of runs (N=-p6-base then N=-p6-n, back to back, on one operator process); the growth is the median of the pairs' (3 to confirm a growth near its goal)")
	flag.IntVar(&c.p1Runs, "p1-runs", 3, "P1: runs at N=-n; the figure is the median ratio")
	flag.IntVar(&c.smallN, "small-n", 20, "P5 small: number of resources of the small install")
	flag.DurationVar(&c.smallIdle, "small-idle", 45*time.Second, "P5 small: idle time after all Ready")
	flag.IntVar(&c.auditN, "audit-n", 15, "A1: number of resources (spread over the 14 kinds)")
	flag.IntVar(&c.auditRuns, "audit-runs", 1, "A1: runs (each with new resources); figures are per resource over all runs")
	flag.DurationVar(&c.auditQuiet, "audit-quiet", 10*time.Second, "A1: a step ends when the operator has written nothing for this long")
	flag.DurationVar(&c.auditIdle, "audit-idle", 30*time.Second, "A1: idle window (all Ready, nothing changed)")
	flag.IntVar(&c.n, "n", 500, "P1/P2: number of resources (spread over the 14 kinds)")
	flag.StringVar(&sizes, "sizes", "100,250,500,1000", "chart: the values of N to plot (P6 adds -p6-n; a size another part measures, P1 at -n, P6 at -p6-base, is its run)")
	flag.IntVar(&c.idleN, "idle-n", 1000, "P3/P5: number of Ready resources")
	flag.IntVar(&c.unrelated, "unrelated-secrets", 5000, "P5: unrelated Secrets created in the watched namespace")
	flag.IntVar(&c.p4Runs, "p4-runs", 20, "P4: number of single-resource runs")
	flag.DurationVar(&c.latency, "latency", 0, "fake API latency added to every request (P1-P3, P5)")
	flag.DurationVar(&c.jitter, "jitter", 0, "fake API random extra latency")
	flag.DurationVar(&c.delay, "provisioning-delay", 0, "fake API: time before a new add-on's credentials appear (P1-P3, P5)")
	flag.Float64Var(&c.apiRate, "api-rate-limit", 200, "operator --api-rate-limit (requests/s to Clever Cloud per credential set)")
	flag.IntVar(&c.workers, "workers", 0, "operator --max-concurrent-reconciles (0: the operator's default)")
	flag.IntVar(&c.floorWorkers, "floor-workers", 56, "floor: concurrent writers (the operator has 4 workers x 14 kinds per side)")
	flag.IntVar(&c.applyWorkers, "apply-workers", 16, "concurrent creates when applying resources")
	flag.DurationVar(&c.resync, "resync", 30*time.Second, "P3: short --resync-period (and Helm reconcile period) the idle cost is measured with (30s: the shortest a resource's annotation may ask for)")
	flag.DurationVar(&c.idleWindow, "idle-window", 0, "P3: measurement window (default 3 x -resync: one whole cycle of the refresh reads, add-on, backups, env)")
	flag.DurationVar(&c.baseWindow, "base-window", 30*time.Second, "P3: window with nothing due (default periods) for the baseline CPU")
	flag.DurationVar(&c.timeout, "timeout", 20*time.Minute, "per-phase timeout")
	flag.StringVar(&c.out, "out", filepath.Join("bench", "results.json"), "JSON results file")
	flag.StringVar(&c.chartOut, "chart-out", filepath.Join("bench", "time-to-ready.png"), "PNG chart file")
	flag.StringVar(&c.workdir, "workdir", ".bench", "kubeconfig and operator logs")
	flag.BoolVar(&c.noBuild, "no-build", false, "use bin/manager as it is (default: go build it into -workdir first)")
	flag.StringVar(&c.operatorExtra, "operator-args", "", "extra operator flags, space-separated (e.g. --pprof-bind-address=127.0.0.1:6060 to profile it)")
	flag.Parse()
	for _, s := range strings.Split(sizes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			return fmt.Errorf("-sizes: %q is not a positive integer", s)
		}
		c.sizes = append(c.sizes, v)
	}
	if c.p6Repeats < 1 || c.p1Runs < 1 {
		return fmt.Errorf("-p6-repeats and -p1-runs must be at least 1 (got %d and %d)", c.p6Repeats, c.p1Runs)
	}
	if c.idleWindow == 0 {
		c.idleWindow = 3 * c.resync
	}
	sel := map[string]bool{}
	for _, s := range strings.Split(c.only, ",") {
		s = strings.TrimSpace(s)
		switch strings.ToUpper(s) {
		case "A1", "P1", "P2", "P3", "P4", "P5", "P5S", "P6", "P7":
			sel[strings.ToUpper(s)] = true
		case "CHART":
			sel["chart"] = true
		case "":
		default:
			return fmt.Errorf("-only: unknown part %q (A1, P1..P7, P5S, chart)", s)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := &bench{c: c, res: &Results{Started: time.Now().UTC(), Config: configJSON(c), PartSeconds: map[string]float64{}}}
	b.res.Machine = machineFacts()
	h, err := kube.StartHarness(ctx, kube.HarnessOptions{
		Assets: c.assets, WorkDir: c.workdir, Build: !c.noBuild, Log: step, AuditLog: sel["A1"],
		Fake: fakeapi.Options{ProvisioningDelay: c.delay, Faults: fakeapi.Faults{Latency: c.latency, Jitter: c.jitter}},
	})
	if err != nil {
		return err
	}
	defer h.Stop()
	b.h = h
	for _, ns := range []string{nsOperator, nsFloor} {
		if err := h.EnsureNamespace(ctx, ns); err != nil {
			return err
		}
	}
	b.op = h.NewOperator(kube.OperatorOptions{Name: "operator", Args: b.operatorArgs()})
	defer func() { _ = b.op.Stop(10 * time.Second) }()
	if err := b.op.Start(); err != nil {
		return err
	}
	b.timed("setup", b.res.Started)

	if sel["A1"] {
		if err := b.part("A1", func() error { return b.a1(ctx) }); err != nil {
			return fmt.Errorf("A1: %w", err)
		}
	}

	if sel["P4"] {
		if err := b.part("P4", func() error { return b.p4(ctx) }); err != nil {
			return fmt.Errorf("P4: %w", err)
		}
	}
	if sel["P5S"] {
		if err := b.part("P5S", func() error { return b.p5small(ctx) }); err != nil {
			return fmt.Errorf("P5 small: %w", err)
		}
	}
	if sel["P7"] {
		if err := b.part("P7", func() error { return b.p7(ctx) }); err != nil {
			return fmt.Errorf("P7: %w", err)
		}
	}
	if sel["P1"] || sel["P2"] || sel["chart"] {
		ns := []int{}
		if sel["chart"] {
			ns = chartSizes(c, sel)
		}
		if (sel["P1"] || sel["P2"]) && !slices.Contains(ns, c.n) {
			ns = append(ns, c.n)
		}
		slices.Sort(ns)
		for _, n := range ns {
			name := "chart"
			if n == c.n && (sel["P1"] || sel["P2"]) {
				name = "P1"
			}
			if err := b.part(name, func() error { return b.scale(ctx, n, n == c.n && sel["P2"]) }); err != nil {
				return fmt.Errorf("N=%d: %w", n, err)
			}
		}
		if sel["P1"] {
			for i := 1; i < c.p1Runs; i++ {
				step(fmt.Sprintf("P1: run %d of %d at N=%d", i+1, c.p1Runs, c.n))
				if err := b.part("P1", func() error { return b.scale(ctx, c.n, false) }); err != nil {
					return fmt.Errorf("P1 run %d: %w", i+1, err)
				}
			}
			b.res.P1.summarize()
			fmt.Printf("    P1: median %.2f, spread %.0f %%\n", b.res.P1.Ratio, 100*b.res.P1.Spread)
		}
	}
	if sel["P3"] || sel["P5"] {
		if err := b.idle(ctx, sel["P3"], sel["P5"]); err != nil {
			return fmt.Errorf("P3/P5: %w", err)
		}
	}
	if sel["P6"] {
		if err := b.part("P6", func() error { return b.p6(ctx, sel["chart"]) }); err != nil {
			return fmt.Errorf("P6: %w", err)
		}
	}
	slices.SortFunc(b.res.Chart, func(x, y ChartPoint) int { return x.N - y.N })
	if sel["chart"] && len(b.res.Chart) > 1 {
		if err := plotChart(c.chartOut, b.res.Chart, b.res.Machine); err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		b.res.ChartFile = c.chartOut
	}
	b.res.Finished = time.Now().UTC()
	b.res.Seconds = b.res.Finished.Sub(b.res.Started).Seconds()
	b.res.Goals = b.goals(sel)
	printSummary(b.res)
	if err := os.MkdirAll(filepath.Dir(c.out), 0o755); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(b.res, "", "  ")
	if err := os.WriteFile(c.out, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Println("results: " + c.out)
	if b.res.ChartFile != "" {
		fmt.Println("chart:   " + b.res.ChartFile)
	}
	return nil
}

const (
	nsOperator = "bench"
	nsFloor    = "floor"
)

type bench struct {
	c   config
	h   *kube.Harness
	op  *kube.Operator
	res *Results
	// leftover are resources an earlier part left Ready in nsOperator (P3/P5's), deleted
	// before P6 so that P6 counts only its own.
	leftover []*unstructured.Unstructured
	// warm is the last process warmed up (warmup).
	warm warmKey
}

func (b *bench) operatorArgs(extra ...string) []string {
	args := []string{"--watch-namespace=" + nsOperator, "--api-rate-limit=" + strconv.FormatFloat(b.c.apiRate, 'f', -1, 64)}
	if b.c.workers > 0 {
		args = append(args, "--max-concurrent-reconciles="+strconv.Itoa(b.c.workers))
	}
	args = append(args, strings.Fields(b.c.operatorExtra)...)
	return append(args, extra...)
}

func step(s string) { fmt.Println("==> " + s) }

// allParts are the parts -only selects from; a run of all of them is a full run.
var allParts = []string{"A1", "P1", "P2", "P3", "P4", "P5", "P5S", "P6", "P7", "chart"}

// part runs one part and adds its duration to PartSeconds[name].
func (b *bench) part(name string, f func() error) error {
	t := time.Now()
	err := f()
	b.timed(name, t)
	return err
}

// timed adds the time since t to PartSeconds[name] and prints it.
func (b *bench) timed(name string, t time.Time) {
	d := time.Since(t).Seconds()
	b.res.PartSeconds[name] += d
	fmt.Printf("    [%s: %s, %s so far]\n", name, minSec(d), minSec(time.Since(b.res.Started).Seconds()))
}

// chartSizes are the chart's sizes this run measures on their own: those P6 measures (-p6-base
// and -p6-n, when P6 runs) are taken from it.
func chartSizes(c config, sel map[string]bool) []int {
	var ns []int
	for _, n := range c.sizes {
		if sel["P6"] && (n == c.p6Base || n == c.p6N) {
			continue
		}
		ns = append(ns, n)
	}
	return ns
}

func machineFacts() Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				f := strings.Fields(l)
				if len(f) >= 2 {
					kb, _ := strconv.ParseInt(f[1], 10, 64)
					m.MemoryMiB = kb / 1024
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				if _, v, ok := strings.Cut(l, ":"); ok {
					m.CPU = strings.TrimSpace(v)
					break
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.Kubernetes = "kube-apiserver " + filepath.Base(kube.DefaultAssets) + " + etcd (envtest, local)"
	return m
}
