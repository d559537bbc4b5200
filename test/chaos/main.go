// Command chaos checks the operator's reliability on a local control plane against the fake
// Clever Cloud API, with the operator as its own process (built into -workdir):
//
//	R1      SIGKILL the operator at random moments while resources are provisioned, then while
//	        they are deleted, restarting it each time: one add-on per resource, all Ready, then
//	        nothing left at the fake and no resource stuck
//	R2      API faults (5xx on every route, 429 bursts with Retry-After, latency spikes, a full
//	        outage): all Ready in the end, the request rate stays within the operator's budget,
//	        Ready never flips to False on throttling
//	leader  two operators with leader election: only the leader calls the API; killing it hands
//	        over with no duplicate add-on
//
// After each scenario, the operator logs, every Event and every resource status are scanned for
// credential values (the fake's OAuth secrets and every add-on env value, raw and base64).
//
// Usage: make chaos [CHAOS_ARGS=-reduced]; docs/performance.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/clever-operator/clever-operator/test/kube"
)

type config struct {
	assets, only, workdir      string
	reduced, noBuild           bool
	r1Resources, r1Kills       int
	r2Resources                int
	r2Outage                   time.Duration
	r2Rate                     float64
	r2Resync                   time.Duration
	leaderResources            int
	timeout                    time.Duration
	seed                       uint64
	provisioningDelay, latency time.Duration
}

type result struct {
	name, details string
	took          time.Duration
	err           error
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos: FAIL: "+oneLine(err.Error()))
		os.Exit(1)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func run() error {
	var c config
	flag.StringVar(&c.assets, "assets", os.Getenv("KUBEBUILDER_ASSETS"), "directory with kube-apiserver and etcd (default bin/envtest/<version>)")
	flag.StringVar(&c.only, "only", "R1,R2,leader", "comma-separated subset of R1,R2,leader")
	flag.BoolVar(&c.reduced, "reduced", false, "CI sizes: R1 40 resources/6 kills, R2 28 resources/20s outage, leader 14 resources (under ~6 minutes on 2 cores)")
	flag.IntVar(&c.r1Resources, "r1-resources", 200, "R1: resources")
	flag.IntVar(&c.r1Kills, "r1-kills", 20, "R1: SIGKILLs of the operator (half while provisioning, half while deleting)")
	flag.IntVar(&c.r2Resources, "r2-resources", 100, "R2: resources")
	flag.DurationVar(&c.r2Outage, "r2-outage", 60*time.Second, "R2: length of the full outage")
	flag.Float64Var(&c.r2Rate, "r2-api-rate-limit", 5, "R2: operator --api-rate-limit (requests/s; the client's burst is 20)")
	flag.DurationVar(&c.r2Resync, "r2-resync", 15*time.Second, "R2: operator --resync-period, so Ready resources call the API during the faults")
	flag.IntVar(&c.leaderResources, "leader-resources", 56, "leader: resources (half before, half during the hand-over)")
	flag.DurationVar(&c.provisioningDelay, "provisioning-delay", time.Second, "fake API provisioning delay")
	flag.DurationVar(&c.latency, "latency", 20*time.Millisecond, "fake API base latency")
	flag.DurationVar(&c.timeout, "timeout", 6*time.Minute, "per wait (all Ready, all gone)")
	flag.Uint64Var(&c.seed, "seed", 0, "random seed for kill moments and fault draws (0: from the clock)")
	flag.StringVar(&c.workdir, "workdir", ".chaos", "kubeconfig and operator logs")
	flag.BoolVar(&c.noBuild, "no-build", false, "use bin/manager as it is (default: go build it into -workdir first)")
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.reduced {
		def := func(name string, apply func()) {
			if !set[name] {
				apply()
			}
		}
		def("r1-resources", func() { c.r1Resources = 40 })
		def("r1-kills", func() { c.r1Kills = 6 })
		def("r2-resources", func() { c.r2Resources = 28 })
		def("r2-outage", func() { c.r2Outage = 20 * time.Second })
		def("leader-resources", func() { c.leaderResources = 14 })
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	sel := map[string]bool{}
	for _, s := range strings.Split(c.only, ",") {
		switch s = strings.TrimSpace(s); strings.ToLower(s) {
		case "r1", "r2", "leader":
			sel[strings.ToLower(s)] = true
		case "":
		default:
			return fmt.Errorf("-only: unknown scenario %q (R1, R2, leader)", s)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	h, err := kube.StartHarness(ctx, kube.HarnessOptions{Assets: c.assets, WorkDir: c.workdir, Build: !c.noBuild, CredentialSets: 2, Log: step})
	if err != nil {
		return err
	}
	defer h.Stop()
	ch := &chaos{c: c, h: h, rng: rand.New(rand.NewPCG(c.seed, 7))}
	fmt.Printf("seed %d\n", c.seed)

	var results []result
	runOne := func(name string, f func(context.Context) (string, error)) {
		step("scenario " + name)
		t0 := time.Now()
		details, err := f(ctx)
		results = append(results, result{name: name, details: details, took: time.Since(t0), err: err})
		if err != nil {
			fmt.Printf("    %s: FAILED: %v\n", name, err)
		}
	}
	if sel["r1"] {
		runOne("R1 SIGKILLs", ch.r1)
	}
	if sel["r2"] {
		runOne("R2 API faults", ch.r2)
	}
	if sel["leader"] {
		runOne("leader election", ch.leader)
	}

	fmt.Println()
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SCENARIO\tRESULT\tTIME\tDETAILS")
	var failed []string
	for _, r := range results {
		res := "ok"
		if r.err != nil {
			res = "FAIL"
			failed = append(failed, r.name+": "+r.err.Error())
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.name, res, r.took.Round(time.Second), r.details)
	}
	_ = w.Flush()
	fmt.Printf("total %s (seed %d; logs in %s)\n", time.Since(start).Round(time.Second), c.seed, h.WorkDir)
	if len(failed) > 0 {
		return fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return nil
}

type chaos struct {
	c   config
	h   *kube.Harness
	rng *rand.Rand
}

func step(s string) { fmt.Println("==> " + s) }

// jitter returns a random duration in [lo, hi).
func (ch *chaos) jitter(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(ch.rng.Int64N(int64(hi-lo)))
}
