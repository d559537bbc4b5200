package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Results is what bench/results.json holds.
type Results struct {
	Started   time.Time      `json:"started"`
	Finished  time.Time      `json:"finished"`
	Machine   Machine        `json:"machine"`
	Config    map[string]any `json:"config"`
	P1        *P1            `json:"p1,omitempty"`
	P2        *P2            `json:"p2,omitempty"`
	P3        *P3            `json:"p3,omitempty"`
	P4        *P4            `json:"p4,omitempty"`
	P5        *P5            `json:"p5,omitempty"`
	P5Small   *P5Small       `json:"p5Small,omitempty"`
	P6        *P6            `json:"p6,omitempty"`
	P7        *P7            `json:"p7,omitempty"`
	A1        *A1            `json:"a1,omitempty"`
	Chart     []ChartPoint   `json:"chart,omitempty"`
	ChartFile string         `json:"chartFile,omitempty"`
	Goals     []Goal         `json:"goals"`
	// Seconds is the whole run, from the start of the control plane (and the operator's
	// build) to the last figure; PartSeconds what each part took of it ("setup": the control
	// plane, the build, the first operator start). See partOrder.
	Seconds     float64            `json:"seconds"`
	PartSeconds map[string]float64 `json:"partSeconds"`
}

// partOrder is the order the parts run and are printed in: "P1" is P1's runs at -n (P2's
// in the first), "chart" the chart's sizes no other part measures, "P5" the 1,000 resources
// P3 also uses (a P3 alone runs it as "P3"), "P6" includes deleting them.
var partOrder = []string{"setup", "A1", "P4", "P5S", "P7", "P1", "chart", "P5", "P3", "P6"}

// benchGoal is the whole run's duration goal (issue #46), for a run of every part.
const benchGoal = 30 * time.Minute

// Machine describes where the figures were measured.
type Machine struct {
	Cores      int    `json:"cores"`
	MemoryMiB  int64  `json:"memoryMiB"`
	CPU        string `json:"cpu"`
	Kernel     string `json:"kernel"`
	OS         string `json:"os"`
	GoVersion  string `json:"goVersion"`
	Kubernetes string `json:"kubernetes"`
}

// P1 is the median of its runs (by ratio to the floor) at N; JobRatio is the median of the
// runs' ratios to the job floor.
type P1 struct {
	N               int     `json:"n"`
	OperatorSeconds float64 `json:"operatorSeconds"`
	FloorSeconds    float64 `json:"floorSeconds"`
	JobFloorSeconds float64 `json:"jobFloorSeconds"`
	Ratio           float64 `json:"ratio"`
	JobRatio        float64 `json:"jobRatio"`
	ApplySeconds    float64 `json:"applySeconds"`
	DeleteSeconds   float64 `json:"deleteSeconds"`
	// Spread is the runs' largest ratio over their smallest, less 1 (0 for one run).
	Spread float64 `json:"spread"`
	Runs   []P1Run `json:"runs"`
}

type P1Run struct {
	OperatorSeconds float64 `json:"operatorSeconds"`
	FloorSeconds    float64 `json:"floorSeconds"`
	JobFloorSeconds float64 `json:"jobFloorSeconds"`
	Ratio           float64 `json:"ratio"`
	JobRatio        float64 `json:"jobRatio"`
	ApplySeconds    float64 `json:"applySeconds"`
	DeleteSeconds   float64 `json:"deleteSeconds"`
	LoadAvg         float64 `json:"loadAvg"`
	// CPU seconds by process (kube-apiserver, etcd, operator, bench) from the first apply to
	// all Ready, and over the floor's writes.
	OperatorCPU map[string]float64 `json:"operatorCPUSeconds,omitempty"`
	FloorCPU    map[string]float64 `json:"floorCPUSeconds,omitempty"`
}

// summarize sets the figures from the median run (by ratio) and the median job ratio.
func (p *P1) summarize() {
	if len(p.Runs) == 0 {
		return
	}
	m := p.Runs[medianIndex(len(p.Runs), func(i int) float64 { return p.Runs[i].Ratio })]
	p.OperatorSeconds, p.FloorSeconds, p.Ratio, p.ApplySeconds, p.DeleteSeconds = m.OperatorSeconds, m.FloorSeconds, m.Ratio, m.ApplySeconds, m.DeleteSeconds
	j := p.Runs[medianIndex(len(p.Runs), func(i int) float64 { return p.Runs[i].JobRatio })]
	p.JobRatio, p.JobFloorSeconds = j.JobRatio, j.JobFloorSeconds
	lo, hi := p.Runs[0].Ratio, p.Runs[0].Ratio
	for _, r := range p.Runs[1:] {
		lo, hi = min(lo, r.Ratio), max(hi, r.Ratio)
	}
	p.Spread = 0
	if lo > 0 {
		p.Spread = hi/lo - 1
	}
}

// medianIndex is the index, among n items, of the one whose value is the median (the lower
// middle one for an even n; n > 0).
func medianIndex(n int, value func(i int) float64) int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return value(idx[a]) < value(idx[b]) })
	return idx[(n-1)/2]
}

type P2 struct {
	N                  int                `json:"n"`
	Create             map[string]int     `json:"createToReady"`
	Delete             map[string]int     `json:"delete"`
	Total              int                `json:"total"`
	PerResource        float64            `json:"perResource"`
	PerResourceByRoute map[string]float64 `json:"perResourceByRoute"`
	Noop               map[string]int     `json:"noop"`
	NoopCalls          int                `json:"noopCalls"`
	NoopTouched        int                `json:"noopTouched"`
	NoopWindowSeconds  float64            `json:"noopWindowSeconds"`
}

type P3 struct {
	N                         int            `json:"n"`
	ResyncSeconds             float64        `json:"resyncSeconds"`
	WindowSeconds             float64        `json:"windowSeconds"`
	Calls                     int            `json:"calls"`
	ByRoute                   map[string]int `json:"byRoute"`
	CallsPerResourcePerPeriod float64        `json:"callsPerResourcePerPeriod"`
	CPUPercentMeasured        float64        `json:"cpuPercentMeasured"`
	BaselineWindowSeconds     float64        `json:"baselineWindowSeconds"`
	// QuietWaitSeconds is how long the operator took, after the post-apply quiet, to use
	// under 0.5 % of a core over 10 s (the baseline is measured after it).
	QuietWaitSeconds          float64 `json:"quietWaitSeconds"`
	BaselineCPUPercent        float64 `json:"baselineCpuPercent"`
	BaselineCalls             int     `json:"baselineCalls"`
	CPUPercentAtDefaultPeriod float64 `json:"cpuPercentAtDefaultPeriod"`
	// The Helm side's window: its reconcilePeriod short, the engine at its default.
	HelmCPUPercentMeasured float64 `json:"helmCpuPercentMeasured"`
	HelmCalls              int     `json:"helmCalls"`
	HelmDefaultSeconds     float64 `json:"helmDefaultPeriodSeconds"`
}

type P4 struct {
	Runs    int       `json:"runs"`
	P50     float64   `json:"p50Seconds"`
	P95     float64   `json:"p95Seconds"`
	Min     float64   `json:"minSeconds"`
	Max     float64   `json:"maxSeconds"`
	Samples []float64 `json:"samplesSeconds"`
}

type P5 struct {
	Resources             int     `json:"resources"`
	UnrelatedSecrets      int     `json:"unrelatedSecrets"`
	PeakRSSMiB            float64 `json:"peakRssMiB"`
	RSSMiB                float64 `json:"rssMiB"`
	PeakRSSShortPeriodMiB float64 `json:"peakRssShortPeriodMiB,omitempty"`
	PeakAnonMiB           float64 `json:"peakAnonMiB"`
}

// A1 is the Kubernetes writes of the operator, counted from kube-apiserver's audit log.
type A1 struct {
	N            int     `json:"n"`
	Runs         int     `json:"runs"`
	QuietSeconds float64 `json:"quietSeconds"`
	// AddonLines is `wc -l` of internal/addon's non-test Go files.
	AddonLines int        `json:"addonLines"`
	AddonFiles int        `json:"addonFiles"`
	ToReady    AuditPhase `json:"toReady"`
	// The spec changes (specCases), in the order they are made: SpecChange is
	// spec.secret.labels (the JSON name it had as the only one), then
	// spec.secret.annotations, spec.secret.templates (a key added to the Secret) and
	// spec.deletionPolicy (nothing the Secret shows).
	SpecChange            AuditPhase `json:"specChange"`
	SpecChangeAnnotations AuditPhase `json:"specChangeAnnotations"`
	SpecChangeTemplates   AuditPhase `json:"specChangeTemplates"`
	SpecChangeNoSecret    AuditPhase `json:"specChangeNoSecret"`
	Idle                  AuditPhase `json:"idle"`
	Delete                AuditPhase `json:"delete"`
}

// specPhase is the phase of the spec change named name (a specCases name).
func (a *A1) specPhase(name string) *AuditPhase {
	switch name {
	case "spec.secret.labels":
		return &a.SpecChange
	case "spec.secret.annotations":
		return &a.SpecChangeAnnotations
	case "spec.secret.templates":
		return &a.SpecChangeTemplates
	case "spec.deletionPolicy":
		return &a.SpecChangeNoSecret
	}
	panic("A1: no phase for the spec change " + name)
}

// AuditPhase is the writes of one step (requests the API server carried out), by kind of
// object (status, resource, Secret, Helm release, event, ConfigMap, other) and by
// "verb resource[/subresource]"; the refused requests (409 conflicts...) apart.
type AuditPhase struct {
	WindowSeconds        float64            `json:"windowSeconds"`
	Writes               int                `json:"writes"`
	PerResource          float64            `json:"perResource"`
	ByKind               map[string]int     `json:"byKind"`
	PerResourceByKind    map[string]float64 `json:"perResourceByKind"`
	ByResource           map[string]int     `json:"byResource"`
	StatusMaxPerResource int                `json:"statusMaxPerResource"`
	Failed               int                `json:"failed"`
	FailedPerResource    float64            `json:"failedPerResource"`
	FailedByResource     map[string]int     `json:"failedByResource"`
	// StatusOverTwo names the resources ("<plural> <namespace>/<name>") with more than 2
	// status writes in the step, with their count.
	StatusOverTwo map[string]int `json:"statusOverTwo,omitempty"`
}

type ChartPoint struct {
	N int `json:"n"`
	// LoadAvg is the 1-minute load average when the operator and the floor finished: the
	// machine may be shared, and both share its cores with kube-apiserver and etcd.
	LoadAvgOperator float64 `json:"loadAvgOperator"`
	LoadAvgFloor    float64 `json:"loadAvgFloor"`
	OperatorSeconds float64 `json:"operatorSeconds"`
	FloorSeconds    float64 `json:"floorSeconds"`
	DeleteSeconds   float64 `json:"deleteSeconds"`
	JobFloorSeconds float64 `json:"jobFloorSeconds,omitempty"`
	// Note says how the point differs from the others (P6's point: unrelated objects).
	Note string `json:"note,omitempty"`
}

type Goal struct {
	Part   string `json:"part"`
	Metric string `json:"metric"`
	Goal   string `json:"goal"`
	Value  string `json:"value"`
	Met    bool   `json:"met"`
}

func configJSON(c config) map[string]any {
	return map[string]any{
		"n": c.n, "sizes": c.sizes, "idleN": c.idleN, "unrelatedSecrets": c.unrelated, "p4Runs": c.p4Runs,
		"fakeLatency": c.latency.String(), "fakeJitter": c.jitter.String(), "provisioningDelay": c.delay.String(),
		"apiRateLimit": c.apiRate, "workers": c.workers, "floorWorkers": c.floorWorkers, "applyWorkers": c.applyWorkers,
		"p6N": c.p6N, "p6Base": c.p6Base, "p6Secrets": c.p6Secrets, "p6ConfigMaps": c.p6ConfigMaps, "p1Runs": c.p1Runs, "p6Repeats": c.p6Repeats,
		"smallN": c.smallN, "smallIdle": c.smallIdle.String(),
		"auditN": c.auditN, "auditRuns": c.auditRuns, "auditQuiet": c.auditQuiet.String(), "auditIdle": c.auditIdle.String(),
		"p7N": c.p7N, "p7Latency": c.p7Latency.String(), "p7Jitter": c.p7Jitter.String(), "p7ProvisioningDelay": c.p7Delay.String(),
		"resync": c.resync.String(), "idleWindow": c.idleWindow.String(), "baseWindow": c.baseWindow.String(),
	}
}

func (b *bench) goals(sel map[string]bool) []Goal {
	var g []Goal
	r := b.res
	if r.P1 != nil && sel["P1"] {
		ratios := []string{}
		for _, x := range r.P1.Runs {
			ratios = append(ratios, fmt.Sprintf("%.2f", x.Ratio))
		}
		g = append(g, Goal{"P1", fmt.Sprintf("time to all Ready, N=%d, median of %d runs (%s): operator %.1fs / floor %.1fs", r.P1.N, len(r.P1.Runs), strings.Join(ratios, ", "), r.P1.OperatorSeconds, r.P1.FloorSeconds),
			"ratio ≤ 1.5", fmt.Sprintf("%.2f", r.P1.Ratio), r.P1.Ratio <= 1.505})
		if len(r.P1.Runs) > 1 {
			g = append(g, Goal{"P1", fmt.Sprintf("spread of the %d runs' ratios (largest / smallest − 1)", len(r.P1.Runs)),
				"≤ 20 %", fmt.Sprintf("%.0f %%", 100*r.P1.Spread), r.P1.Spread <= 0.205})
		}
		g = append(g, Goal{"P1", fmt.Sprintf("ratio to the job floor (the resource, one status write, the credentials Secret: %.1fs), median", r.P1.JobFloorSeconds),
			"reported", fmt.Sprintf("%.2f", r.P1.JobRatio), true})
	}
	if r.P2 != nil {
		g = append(g, Goal{"P2", fmt.Sprintf("API calls per resource, create → Ready → delete (N=%d)", r.P2.N), "≤ 4.00",
			fmt.Sprintf("%.2f", r.P2.PerResource), r.P2.PerResource <= 4.005})
		g = append(g, Goal{"P2", fmt.Sprintf("API calls caused by a label on %d Ready resources", r.P2.NoopTouched), "0",
			fmt.Sprint(r.P2.NoopCalls), r.P2.NoopCalls == 0})
	}
	if r.P3 != nil {
		g = append(g, Goal{"P3", fmt.Sprintf("idle API calls per resource per resync period (%d Ready)", r.P3.N), "≤ 1",
			fmt.Sprintf("%.2f", r.P3.CallsPerResourcePerPeriod), r.P3.CallsPerResourcePerPeriod <= 1.0})
		g = append(g, Goal{"P3", fmt.Sprintf("idle operator CPU at the default periods (at %gs: engine %.1f%%, Helm %.1f%%; baseline %.2f%%)", r.P3.ResyncSeconds, r.P3.CPUPercentMeasured, r.P3.HelmCPUPercentMeasured, r.P3.BaselineCPUPercent),
			"≤ 1% of a core", fmt.Sprintf("%.2f%%", r.P3.CPUPercentAtDefaultPeriod), r.P3.CPUPercentAtDefaultPeriod <= 1})
	}
	if r.P4 != nil {
		g = append(g, Goal{"P4", fmt.Sprintf("apply → Secret filled, %d runs (p95 %.2fs)", r.P4.Runs, r.P4.P95), "p50 ≤ 1s",
			fmt.Sprintf("%.2fs", r.P4.P50), r.P4.P50 <= 1})
	}
	if r.P5 != nil {
		g = append(g, Goal{"P5", fmt.Sprintf("operator peak RSS, %d resources + %d unrelated Secrets (anonymous peak %.1f MiB)", r.P5.Resources, r.P5.UnrelatedSecrets, r.P5.PeakAnonMiB), "≤ 128 MiB",
			fmt.Sprintf("%.1f MiB", r.P5.PeakRSSMiB), r.P5.PeakRSSMiB <= 128})
	}
	if p := r.P6; p != nil {
		if ref, big, ok := p.median(); ok {
			growths := []string{}
			for _, x := range p.Pairs {
				growths = append(growths, fmt.Sprintf("%.2f", x.Growth))
			}
			which := ""
			if len(p.Pairs) > 1 {
				which = "; the median pair"
			}
			metric := fmt.Sprintf("time per resource at N=%d over N=%d, %s measured back to back (%s)%s: %.1f ms (all Ready in %.0fs) over %.1f ms; %d unrelated Secrets + %d ConfigMaps; the floor's own ratio %.2f", big.N, ref.N, pairsText(len(p.Pairs)), strings.Join(growths, ", "), which, big.PerResourceMillis, big.ReadySeconds, ref.PerResourceMillis, p.UnrelatedSecrets, p.UnrelatedConfigMaps, p.FloorGrowth)
			if p.Undecided() {
				metric += "; within one pair's spread of the goal: confirm with -only P6 -p6-repeats 3"
			}
			g = append(g, Goal{"P6", metric, fmt.Sprintf("≤ %.1f", p6Goal), fmt.Sprintf("%.2f", p.Growth), p.Growth <= p6Goal})
			g = append(g, Goal{"P6", fmt.Sprintf("operator peak RSS over all %d runs (anonymous peak %.1f MiB)", len(p.Runs), p.Footprint.PeakAnonMiB),
				"≤ 256 MiB", fmt.Sprintf("%.1f MiB", p.Footprint.PeakRSSMiB), p.Footprint.PeakRSSMiB <= 256})
			g = append(g, Goal{"P6", fmt.Sprintf("kube-apiserver writes per resource to Ready at N=%d, the median pair (%.1f KiB of bodies; Helm release Secrets %d, highest revision %d)", big.N, big.BytesPerResource/1024, big.HelmReleaseSecrets, big.HelmMaxRevision),
				"reported", fmt.Sprintf("%.2f", big.WritesPerResource), true})
		}
	}
	if p := r.P5Small; p != nil {
		exe := ""
		if e := p.Executable; e != nil {
			exe = fmt.Sprintf(" of a %.1f MiB binary", e.MiB)
		}
		g = append(g, Goal{"P5", fmt.Sprintf("operator peak RSS, small install (%d resources, idle %gs; anonymous peak %.1f MiB, executable pages %.1f MiB%s)", p.Resources, p.IdleSeconds, p.PeakAnonMiB, p.PeakFileMiB, exe),
			"≤ 64 MiB", fmt.Sprintf("%.1f MiB", p.PeakRSSMiB), p.PeakRSSMiB <= 64})
		if l := p.Limited; l != nil {
			g = append(g, Goal{"P5", fmt.Sprintf("small install in a memory cgroup of 64M (the Rust chart's limit): cgroup peak %.1f MiB, %d limit hits, %d major faults, Ready in %.1fs; idle %gs: %d major faults, %.2fs CPU", l.Cgroup.PeakMiB, l.Cgroup.LimitHits, l.Cgroup.MajorFaults, l.ReadySeconds, p.IdleSeconds, l.IdleMajorFaults, l.IdleCPUSeconds),
				"not killed, all Ready", limitedValue(l), l.Survived})
		} else {
			g = append(g, Goal{"P5", "small install in a memory cgroup of 64M: " + p.LimitedError, "not killed, all Ready", "not measured", false})
		}
	}
	if p := r.P7; p != nil {
		g = append(g, Goal{"P7", fmt.Sprintf("API calls per resource, create → Ready → delete, realistic API (N=%d; peak %d requests/s)", p.N, p.PeakPerSecond), "≤ 4",
			fmt.Sprintf("%.2f", p.PerResource), p.PerResource <= 4.005})
		limit := p.ProvisioningDelaySecs + p7Margin.Seconds()
		g = append(g, Goal{"P7", fmt.Sprintf("time to all Ready, realistic API (N=%d, provisioning delay %gs)", p.N, p.ProvisioningDelaySecs), fmt.Sprintf("≤ %gs", limit),
			fmt.Sprintf("%.1fs", p.ReadySeconds), p.ReadySeconds <= limit})
	}
	if a := r.A1; a != nil {
		g = append(g, Goal{"A1", fmt.Sprintf("Kubernetes writes per resource to Ready (N=%d×%d; status %.1f, resource %.1f, Secrets %.1f, Helm release %.1f, events %.1f; + %.1f refused)", a.N, a.Runs,
			a.ToReady.PerResourceByKind[wStatus], a.ToReady.PerResourceByKind[wResource], a.ToReady.PerResourceByKind[wSecret], a.ToReady.PerResourceByKind[wHelm], a.ToReady.PerResourceByKind[wEvent], a.ToReady.FailedPerResource),
			"≤ 6", fmt.Sprintf("%.2f", a.ToReady.PerResource), a.ToReady.PerResource <= 6.005})
		for _, c := range specCases {
			p := a.specPhase(c.name)
			g = append(g, Goal{"A1", fmt.Sprintf("status writes per spec-changed resource, max (%s; average %.2f; all writes %.2f; + %.2f refused)", c.name, p.PerResourceByKind[wStatus], p.PerResource, p.FailedPerResource),
				"≤ 2", fmt.Sprint(p.StatusMaxPerResource), p.StatusMaxPerResource <= 2})
		}
		g = append(g, Goal{"A1", fmt.Sprintf("Kubernetes writes while idle (%d Ready, %.0fs)", a.N, a.Idle.WindowSeconds), "0",
			fmt.Sprint(a.Idle.Writes), a.Idle.Writes == 0})
	}
	g = append(g, durationGoal(r.Seconds, r.PartSeconds, full(sel)))
	return g
}

// full says whether sel holds every part: the duration goal is a full run's.
func full(sel map[string]bool) bool {
	for _, p := range allParts {
		if !sel[p] {
			return false
		}
	}
	return true
}

// durationGoal is the whole run's duration, against benchGoal when every part ran (reported
// otherwise), with its longest part.
func durationGoal(seconds float64, parts map[string]float64, full bool) Goal {
	longest := ""
	for _, k := range partOrder {
		if v, ok := parts[k]; ok && (longest == "" || v > parts[longest]) {
			longest = k
		}
	}
	metric := "duration of the whole run"
	if longest != "" {
		metric += fmt.Sprintf(" (longest part %s: %.1f min)", longest, parts[longest]/60)
	}
	g := Goal{"bench", metric, fmt.Sprintf("≤ %.0f min", benchGoal.Minutes()), fmt.Sprintf("%.1f min", seconds/60), seconds <= benchGoal.Seconds()}
	if !full {
		g.Metric, g.Goal, g.Met = "duration of this partial run"+strings.TrimPrefix(metric, "duration of the whole run"), "reported (the goal is a full run's)", true
	}
	return g
}

func printSummary(r *Results) {
	fmt.Printf("\nMachine: %d cores, %d MiB, %s, %s, %s\n", r.Machine.Cores, r.Machine.MemoryMiB, r.Machine.CPU, r.Machine.GoVersion, r.Machine.Kubernetes)
	if len(r.Chart) > 0 {
		fmt.Println("\nTime to all Ready:")
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "N\tOPERATOR\tFLOOR\tRATIO\tJOB FLOOR\tRATIO\tDELETE (operator)\tLOAD AVG (op/floor)\tNOTE")
		for _, p := range r.Chart {
			job, jr := "-", "-"
			if p.JobFloorSeconds > 0 {
				job, jr = fmt.Sprintf("%.1fs", p.JobFloorSeconds), fmt.Sprintf("%.2f", p.OperatorSeconds/p.JobFloorSeconds)
			}
			fmt.Fprintf(w, "%d\t%.1fs\t%.1fs\t%.2f\t%s\t%s\t%.1fs\t%.1f/%.1f\t%s\n", p.N, p.OperatorSeconds, p.FloorSeconds, p.OperatorSeconds/p.FloorSeconds, job, jr, p.DeleteSeconds, p.LoadAvgOperator, p.LoadAvgFloor, p.Note)
		}
		_ = w.Flush()
	}
	if r.P2 != nil {
		fmt.Printf("\nAPI calls per resource by route (N=%d):\n", r.P2.N)
		routes := make([]string, 0, len(r.P2.PerResourceByRoute))
		for k := range r.P2.PerResourceByRoute {
			routes = append(routes, k)
		}
		sort.Strings(routes)
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		for _, k := range routes {
			fmt.Fprintf(w, "  %s\t%.3f\n", k, r.P2.PerResourceByRoute[k])
		}
		_ = w.Flush()
	}
	if r.P6 != nil {
		printP6(r.P6)
	}
	if r.P7 != nil {
		printP7(r.P7)
	}
	if r.A1 != nil {
		printA1(r.A1)
	}
	printParts(r)
	fmt.Println()
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PART\tMETRIC\tGOAL\tVALUE\tRESULT")
	for _, g := range r.Goals {
		res := "met"
		if !g.Met {
			res = "NOT MET"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", g.Part, g.Metric, g.Goal, g.Value, res)
	}
	_ = w.Flush()
}

// printParts prints how long each part took, and the whole run.
func printParts(r *Results) {
	fmt.Println("\nDuration by part:")
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	for _, k := range partOrder {
		if v, ok := r.PartSeconds[k]; ok {
			fmt.Fprintf(w, "  %s\t%s\n", k, minSec(v))
		}
	}
	fmt.Fprintf(w, "  whole run\t%s\n", minSec(r.Seconds))
	_ = w.Flush()
}

// minSec writes seconds as "12m05s".
func minSec(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// limitedValue says how the small install fared under the limit.
func limitedValue(l *LimitedRun) string {
	if l.Survived {
		return fmt.Sprintf("%d OOM kills", l.Cgroup.OOMKills)
	}
	if l.Cgroup.OOMKills > 0 {
		return fmt.Sprintf("killed (%d OOM kills)", l.Cgroup.OOMKills)
	}
	return fmt.Sprintf("not all Ready (%d OOM kills): %s", l.Cgroup.OOMKills, l.Error)
}
