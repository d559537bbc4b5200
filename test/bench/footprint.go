package main

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/clever-operator/clever-operator/test/kube"
	"github.com/clever-operator/clever-operator/test/kube/proc"
)

// memSampler reads the operator's memory every interval while a phase runs: the kernel keeps
// the peak resident set (VmHWM) but not the peak of its anonymous part, which is what a
// container memory limit must hold (file-backed pages of the executable are clean and the
// kernel drops them under a limit rather than kill the process).
type memSampler struct {
	op       *kube.Operator
	stop     chan struct{}
	done     sync.WaitGroup
	mu       sync.Mutex
	peakAnon int64
	peakFile int64
	samples  int
}

func sampleMemory(op *kube.Operator, every time.Duration) *memSampler {
	s := &memSampler{op: op, stop: make(chan struct{})}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.read()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *memSampler) read() {
	m, err := s.op.MemoryDetail()
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peakAnon = max(s.peakAnon, m.Anon)
	s.peakFile = max(s.peakFile, m.File)
	s.samples++
}

// Stop ends the sampling and returns the process's memory now, with the sampled peaks.
func (s *memSampler) Stop() (Footprint, error) {
	close(s.stop)
	s.done.Wait()
	s.read()
	m, err := s.op.MemoryDetail()
	if err != nil {
		return Footprint{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return Footprint{PeakRSSMiB: mib(m.Peak), RSSMiB: mib(m.RSS), AnonMiB: mib(m.Anon), FileMiB: mib(m.File),
		PeakAnonMiB: mib(s.peakAnon), PeakFileMiB: mib(s.peakFile), Samples: s.samples}, nil
}

// Footprint is an operator process's memory over a phase.
type Footprint struct {
	// PeakRSSMiB is VmHWM: the peak resident set, anonymous and file-backed together.
	PeakRSSMiB float64 `json:"peakRssMiB"`
	// RSSMiB, AnonMiB, FileMiB: at the end of the phase.
	RSSMiB  float64 `json:"rssMiB"`
	AnonMiB float64 `json:"anonMiB"`
	FileMiB float64 `json:"fileMiB"`
	// PeakAnonMiB, PeakFileMiB: the highest of the samples (every 250 ms).
	PeakAnonMiB float64 `json:"peakAnonMiB"`
	PeakFileMiB float64 `json:"peakFileMiB"`
	Samples     int     `json:"samples"`
	// The small install's runs: the operator's major page faults (pages waited for from its
	// executable's file) from its start to all Ready and while idle, and its CPU while idle.
	MajorFaultsToReady int64   `json:"majorFaultsToReady,omitempty"`
	IdleMajorFaults    int64   `json:"idleMajorFaults,omitempty"`
	IdleCPUSeconds     float64 `json:"idleCpuSeconds,omitempty"`
}

// P5Small: a small install. A fresh operator process provisions -small-n resources (every kind
// at least once at the default 20), then sits idle for -small-idle; its footprint over all of
// it. The goal is the memory limit of the Rust operator's chart (64M: 64,000,000 bytes), which
// an upgrade may keep: the same run is done again with the process in a memory cgroup with
// that limit (where the kernel supports one here), as a pod with that limit runs it.
type P5Small struct {
	Resources   int     `json:"resources"`
	IdleSeconds float64 `json:"idleSeconds"`
	Footprint
	ReadySeconds float64 `json:"readySeconds"`
	// Executable is the operator binary the runs ran, whose pages the file-backed part of
	// their footprint (PeakFileMiB) is.
	Executable *Executable `json:"executable,omitempty"`
	// Limited is the run in a memory cgroup of LimitBytes; LimitedError says why there is none.
	LimitBytes   int64       `json:"limitBytes"`
	Limited      *LimitedRun `json:"limited,omitempty"`
	LimitedError string      `json:"limitedError,omitempty"`
}

// Executable is an operator binary: its file's size and the sizes of the sections of it that
// are mapped from the file and read while it runs (machine code, read-only data, Go's tables of
// functions, lines and stack maps).
type Executable struct {
	Bytes      int64   `json:"bytes"`
	MiB        float64 `json:"mib"`
	TextMiB    float64 `json:"textMiB"`
	RodataMiB  float64 `json:"rodataMiB"`
	PclntabMiB float64 `json:"pclntabMiB"`
}

func executableFacts(path string) (*Executable, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	size := func(name string) float64 {
		if s := f.Section(name); s != nil {
			return mib(int64(s.Size))
		}
		return 0
	}
	return &Executable{Bytes: st.Size(), MiB: mib(st.Size()), TextMiB: size(".text"), RodataMiB: size(".rodata"), PclntabMiB: size(".gopclntab")}, nil
}

// LimitedRun is the small install run in a memory cgroup.
type LimitedRun struct {
	// Survived: all Ready and the process still running after the idle time, never killed.
	Survived     bool    `json:"survived"`
	ReadySeconds float64 `json:"readySeconds"`
	Error        string  `json:"error,omitempty"`
	Footprint
	Cgroup proc.CgroupStats `json:"cgroup"`
}

// rustChartLimit is the Rust operator chart's memory request and limit, "64M".
const rustChartLimit = 64_000_000

func (b *bench) p5small(ctx context.Context) error {
	step(fmt.Sprintf("P5 small: fresh operator process, %d resources, then idle %s", b.c.smallN, b.c.smallIdle))
	fp, ready, err := b.smallRun(ctx, "small", 5*time.Minute)
	if err != nil {
		return err
	}
	r := &P5Small{Resources: b.c.smallN, IdleSeconds: b.c.smallIdle.Seconds(), Footprint: fp, ReadySeconds: ready.Seconds(), LimitBytes: rustChartLimit}
	b.res.P5Small = r
	if r.Executable, err = executableFacts(b.h.Binary); err != nil {
		return err
	}
	e := r.Executable
	fmt.Printf("    P5 small: the binary %d bytes (%.1f MiB: .text %.1f, .rodata %.1f, .gopclntab %.1f MiB), %.1f MiB of it resident at the peak\n",
		e.Bytes, e.MiB, e.TextMiB, e.RodataMiB, e.PclntabMiB, fp.PeakFileMiB)
	fmt.Printf("    P5 small: peak RSS %.1f MiB (anonymous peak %.1f MiB, executable pages peak %.1f MiB); now %.1f MiB (%.1f anonymous); major faults %d to Ready, %d idle (CPU %.2fs idle)\n",
		fp.PeakRSSMiB, fp.PeakAnonMiB, fp.PeakFileMiB, fp.RSSMiB, fp.AnonMiB, fp.MajorFaultsToReady, fp.IdleMajorFaults, fp.IdleCPUSeconds)

	step(fmt.Sprintf("P5 small: again in a memory cgroup limited to %d bytes (the Rust chart's 64M)", int64(rustChartLimit)))
	cg, err := proc.NewMemoryCgroup(fmt.Sprintf("clever-operator-bench-%d", os.Getpid()), rustChartLimit)
	if err != nil {
		r.LimitedError = err.Error()
		fmt.Printf("    no memory cgroup: %v\n", err)
		return b.restartOperator()
	}
	b.op.SetCgroup(cg)
	defer func() {
		b.op.SetCgroup(nil)
		_ = b.restartOperator()
		_ = cg.Remove()
	}()
	lr := &LimitedRun{}
	fp, ready, err = b.smallRun(ctx, "smallcg", limitedReadyTimeout)
	st, serr := cg.Stats()
	if serr != nil {
		return serr
	}
	lr.Footprint, lr.ReadySeconds, lr.Cgroup = fp, ready.Seconds(), st
	lr.Survived = err == nil && b.op.Running() && st.OOMKills == 0
	if err != nil {
		lr.Error = err.Error()
	}
	r.Limited = lr
	fmt.Printf("    limited: survived %v, Ready in %.1fs; cgroup peak %.1f MiB (anonymous now %.1f, page cache %.1f), limit hits %d, OOM kills %d, major faults %d\n",
		lr.Survived, lr.ReadySeconds, st.PeakMiB, st.RSSMiB, st.CacheMiB, st.LimitHits, st.OOMKills, st.MajorFaults)
	fmt.Printf("    limited: the operator's major faults %d to Ready, %d while idle %s (CPU %.2fs while idle)\n",
		fp.MajorFaultsToReady, fp.IdleMajorFaults, b.c.smallIdle, fp.IdleCPUSeconds)
	if ctx.Err() != nil {
		return ctx.Err() // the bench is stopping
	}
	// Anything else (killed, or not all Ready in time: a process thrashing on its executable
	// pages under the limit is not killed but hardly moves) is the result, recorded above.
	return nil
}

func (b *bench) restartOperator(extra ...string) error {
	if err := b.op.Stop(10 * time.Second); err != nil && b.op.Running() {
		return err
	}
	b.op.SetArgs(b.operatorArgs(extra...)...)
	return b.op.Start()
}

// productionLogLevel: the footprint is measured at the operator's default verbosity (info),
// not at the harness's (everything the operator can log, for the leak scans): at full
// verbosity every log line also walks the executable's tables for its caller, which keeps
// more of its pages resident.
const productionLogLevel = "--zap-log-level=info"

// limitedReadyTimeout bounds the wait for the small install under the 64M limit: unlimited,
// the 20 resources are Ready within seconds.
const limitedReadyTimeout = 2 * time.Minute

// smallRun: a fresh operator process provisions b.c.smallN resources (all Ready within
// readyTimeout), idles, then the resources are deleted (not measured; by an operator out of
// any memory cgroup if the run failed).
func (b *bench) smallRun(ctx context.Context, prefix string, readyTimeout time.Duration) (Footprint, time.Duration, error) {
	if err := b.restartOperator(productionLogLevel); err != nil {
		return Footprint{}, 0, err
	}
	s := sampleMemory(b.op, 250*time.Millisecond)
	objs, err := kube.Resources(nsOperator, prefix, b.c.smallN)
	if err != nil {
		return Footprint{}, 0, err
	}
	t0 := time.Now()
	var ready time.Duration
	err = kube.CreateAll(ctx, b.h.Client, objs, b.c.applyWorkers)
	if err == nil {
		err = kube.WaitReady(ctx, b.h.Client, nsOperator, objs, 250*time.Millisecond, readyTimeout, kube.Exited(b.op))
		ready = time.Since(t0)
	}
	var faultsReady, faultsIdle int64
	var cpuIdle time.Duration
	if err == nil {
		faultsReady, _ = b.op.MajorFaults()
		cpu0, _ := b.op.CPUTime()
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-b.op.Done():
			err = kube.Exited(b.op)()
		case <-time.After(b.c.smallIdle):
		}
		if err == nil {
			f, ferr := b.op.MajorFaults()
			cpu1, cerr := b.op.CPUTime()
			if ferr == nil && cerr == nil {
				faultsIdle, cpuIdle = f-faultsReady, cpu1-cpu0
			}
		}
	}
	fp, ferr := s.Stop()
	if err == nil {
		err = ferr
	}
	fp.MajorFaultsToReady, fp.IdleMajorFaults, fp.IdleCPUSeconds = faultsReady, faultsIdle, cpuIdle.Seconds()
	// Clean up with a running operator (the finalizers need one), out of the cgroup if the
	// run under the limit failed.
	if !b.op.Running() || (err != nil && ctx.Err() == nil) {
		b.op.SetCgroup(nil)
		if rerr := b.restartOperator(); rerr != nil {
			return fp, ready, rerr
		}
	}
	if derr := kube.DeleteAll(ctx, b.h.Client, objs, b.c.applyWorkers); derr != nil {
		return fp, ready, derr
	}
	if derr := kube.WaitGone(ctx, b.h.Client, nsOperator, objs, 250*time.Millisecond, b.c.timeout, kube.Exited(b.op)); derr != nil {
		return fp, ready, derr
	}
	return fp, ready, err
}
