package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/test/kube"
)

// A1 counts the Kubernetes writes the operator makes, from kube-apiserver's own audit log
// (kube.Options.AuditLog: metadata of every write request of the operator's user, nothing
// else), for a few resources of every kind: from apply to Ready (and quiet), after each of
// the spec changes of specCases (one after the other, each its own step), while idle, and
// for the deletion. Writes are sorted by the kind of object written.

// Kinds of object written, in the order they are printed.
const (
	wStatus   = "status"       // the resource's status subresource
	wResource = "resource"     // the resource itself (finalizers, annotations, spec)
	wSecret   = "Secret"       // published Secrets and their sources
	wHelm     = "Helm release" // the Helm release's Secrets (sh.helm.release.v1.*)
	wEvent    = "event"        // core and events.k8s.io Events
	wConfig   = "ConfigMap"    // published ConfigMaps
	wOther    = "other"        // anything else (named in ByResource)
	auditLbl  = "bench.example.com/audit"
	auditKey  = "BENCH_AUDIT" // the key spec.secret.templates adds
	auditPref = "a"
)

var writeKinds = []string{wStatus, wResource, wSecret, wHelm, wEvent, wConfig, wOther}

// writeKind sorts one audit event.
func writeKind(e kube.AuditEvent) string {
	r := e.ObjectRef
	switch {
	case r.APIGroup == "api.clever-cloud.com" && r.Subresource == "status":
		return wStatus
	case r.APIGroup == "api.clever-cloud.com":
		return wResource
	case r.APIGroup == "" && r.Resource == "secrets" && strings.HasPrefix(r.Name, "sh.helm.release.v1."):
		return wHelm
	case r.APIGroup == "" && r.Resource == "secrets":
		return wSecret
	case r.Resource == "events":
		return wEvent
	case r.APIGroup == "" && r.Resource == "configmaps":
		return wConfig
	}
	return wOther
}

// auditPhase is what one step wrote.
type auditPhase struct {
	summary AuditPhase
	events  []kube.AuditEvent
}

func summarize(events []kube.AuditEvent, n int, window time.Duration) AuditPhase {
	p := AuditPhase{ByKind: map[string]int{}, PerResourceByKind: map[string]float64{}, ByResource: map[string]int{},
		FailedByResource: map[string]int{}, WindowSeconds: window.Seconds()}
	statusPer := map[string]int{}
	for _, e := range events {
		k := writeKind(e)
		res := e.ObjectRef.Resource
		if e.ObjectRef.APIGroup == "api.clever-cloud.com" {
			res = "<add-on>" // the 14 kinds together
		}
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		// A refused request (a 409 conflict, mostly) writes nothing to etcd and wakes no
		// watcher: it is counted apart.
		if e.ResponseStatus.Code >= 300 {
			p.Failed++
			p.FailedByResource[fmt.Sprintf("%s %s %d", strings.ToLower(e.Verb), res, e.ResponseStatus.Code)]++
			continue
		}
		p.Writes++
		p.ByKind[k]++
		p.ByResource[strings.ToLower(e.Verb)+" "+res]++
		if k == wStatus {
			statusPer[e.ObjectRef.Resource+" "+e.ObjectRef.Namespace+"/"+e.ObjectRef.Name]++
		}
	}
	for r, v := range statusPer {
		p.StatusMaxPerResource = max(p.StatusMaxPerResource, v)
		if v > 2 {
			if p.StatusOverTwo == nil {
				p.StatusOverTwo = map[string]int{}
			}
			p.StatusOverTwo[r] = v
		}
	}
	if n > 0 {
		p.PerResource = float64(p.Writes) / float64(n)
		p.FailedPerResource = float64(p.Failed) / float64(n)
		for k, v := range p.ByKind {
			p.PerResourceByKind[k] = float64(v) / float64(n)
		}
	}
	return p
}

// waitQuiet waits until the operator has written nothing for quiet (at most timeout) and
// returns the events logged from offset on and the offset after them.
func (b *bench) waitQuiet(ctx context.Context, offset int64, quiet, timeout time.Duration) ([]kube.AuditEvent, int64, error) {
	var all []kube.AuditEvent
	last := time.Now()
	deadline := time.Now().Add(timeout)
	for {
		ev, next, err := b.h.AuditEventsSince(offset)
		if err != nil {
			return nil, offset, err
		}
		offset = next
		if len(ev) > 0 {
			all = append(all, ev...)
			last = time.Now()
		}
		if time.Since(last) >= quiet {
			return all, offset, nil
		}
		if time.Now().After(deadline) {
			return all, offset, fmt.Errorf("the operator still writes after %s (%d writes)", timeout, len(all))
		}
		if err := kube.Exited(b.op)(); err != nil {
			return nil, offset, err
		}
		select {
		case <-ctx.Done():
			return nil, offset, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// specCase is one of A1's spec changes: a merge patch applied to every resource, and how a
// resource shows it is done (its published Secret, or its status for a change the Secret
// does not show).
type specCase struct {
	name  string // what is printed
	patch string
	done  func(u *unstructured.Unstructured, gen int64, sec *corev1.Secret) bool
}

// specCases are A1's spec changes, in the order they are made. spec.secret.labels comes
// first, as it did when it was the only one (its figures keep the JSON name specChange):
// the first change that re-renders the Secret is the one whose Helm upgrade also turns
// Deployed's reason from InstallSuccessful to UpgradeSuccessful. The last one changes
// nothing the Secret shows and nothing at Clever Cloud: spec.deletionPolicy set to Delete
// (the default, so the deletion step is unchanged), a field every kind has, which the engine
// handles with a full pass (reads only) and records in status.observedGeneration.
var specCases = []specCase{
	{"spec.secret.labels", `{"spec":{"secret":{"labels":{"` + auditLbl + `":"yes"}}}}`,
		func(_ *unstructured.Unstructured, _ int64, sec *corev1.Secret) bool {
			return sec != nil && sec.Labels[auditLbl] == "yes"
		}},
	{"spec.secret.annotations", `{"spec":{"secret":{"annotations":{"` + auditLbl + `":"yes"}}}}`,
		func(_ *unstructured.Unstructured, _ int64, sec *corev1.Secret) bool {
			return sec != nil && sec.Annotations[auditLbl] == "yes"
		}},
	{"spec.secret.templates", `{"spec":{"secret":{"templates":{"` + auditKey + `":"yes"}}}}`,
		func(_ *unstructured.Unstructured, _ int64, sec *corev1.Secret) bool {
			return sec != nil && string(sec.Data[auditKey]) == "yes"
		}},
	{"spec.deletionPolicy", `{"spec":{"deletionPolicy":"Delete"}}`,
		func(u *unstructured.Unstructured, gen int64, _ *corev1.Secret) bool {
			og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			return og >= gen && kube.IsReady(u)
		}},
}

// The steps of an A1 run, in order: to Ready, the spec changes (stepSpec+i for specCases[i]),
// idle, delete.
const stepReady = 0

var (
	stepSpec   = stepReady + 1
	stepIdle   = stepSpec + len(specCases)
	stepDelete = stepIdle + 1
	steps      = stepDelete + 1
)

// a1Steps is what one A1 run logged in each step, and how long each step took.
type a1Steps struct {
	events [][]kube.AuditEvent
	window []time.Duration
}

func newA1Steps() a1Steps {
	return a1Steps{events: make([][]kube.AuditEvent, steps), window: make([]time.Duration, steps)}
}

func (b *bench) a1(ctx context.Context) error {
	n, runs := b.c.auditN, max(b.c.auditRuns, 1)
	step(fmt.Sprintf("A1: Kubernetes writes from the apiserver's audit log, %d resources of every kind, %d run(s)", n, runs))
	if err := b.warmup(ctx, "awarm"); err != nil {
		return err
	}
	_, off, err := b.waitQuiet(ctx, 0, b.c.auditQuiet, 5*time.Minute)
	if err != nil {
		return fmt.Errorf("after the warm-up: %w", err)
	}
	r := &A1{N: n, Runs: runs, QuietSeconds: b.c.auditQuiet.Seconds()}
	if r.AddonLines, r.AddonFiles, err = goLines(filepath.Join("internal", "addon")); err != nil {
		return err
	}
	all := newA1Steps()
	for i := range runs {
		var one a1Steps
		if one, off, err = b.a1Run(ctx, fmt.Sprintf("%s%d", auditPref, i), off); err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		for s := range steps {
			all.events[s] = append(all.events[s], one.events[s]...)
			all.window[s] += one.window[s]
		}
	}
	total := n * runs
	r.ToReady = summarize(all.events[stepReady], total, all.window[stepReady])
	for i, c := range specCases {
		*r.specPhase(c.name) = summarize(all.events[stepSpec+i], total, all.window[stepSpec+i])
	}
	r.Idle = summarize(all.events[stepIdle], total, all.window[stepIdle])
	r.Delete = summarize(all.events[stepDelete], total, all.window[stepDelete])
	b.res.A1 = r
	fmt.Printf("    A1: %.1f writes per resource to Ready (status %.1f), idle: %d writes; internal/addon %d lines\n",
		r.ToReady.PerResource, r.ToReady.PerResourceByKind[wStatus], r.Idle.Writes, r.AddonLines)
	for _, c := range specCases {
		p := r.specPhase(c.name)
		fmt.Printf("    A1: spec change %s: %.2f status writes per resource (max %d; goal ≤ 2)\n", c.name, p.PerResourceByKind[wStatus], p.StatusMaxPerResource)
	}
	return nil
}

// a1Run applies auditN resources named after prefix and counts the writes logged from offset
// on in each step; it returns the offset after the last step.
func (b *bench) a1Run(ctx context.Context, prefix string, off int64) (a1Steps, int64, error) {
	r := newA1Steps()
	n, quiet, timeout := b.c.auditN, b.c.auditQuiet, 5*time.Minute
	objs, err := kube.Resources(nsOperator, prefix, n)
	if err != nil {
		return r, off, err
	}

	step(fmt.Sprintf("A1: applying %d resources, counting writes until all Ready and %s without a write", n, quiet))
	t0 := time.Now()
	if err := kube.CreateAll(ctx, b.h.Client, objs, b.c.applyWorkers); err != nil {
		return r, off, err
	}
	if err := kube.WaitReady(ctx, b.h.Client, nsOperator, objs, 100*time.Millisecond, b.c.timeout, kube.Exited(b.op)); err != nil {
		return r, off, err
	}
	if r.events[stepReady], off, err = b.waitQuiet(ctx, off, quiet, timeout); err != nil {
		return r, off, err
	}
	r.window[stepReady] = time.Since(t0)

	for i, c := range specCases {
		t0 = time.Now()
		if r.events[stepSpec+i], off, err = b.a1SpecChange(ctx, c, objs, off); err != nil {
			return r, off, fmt.Errorf("spec change %s: %w", c.name, err)
		}
		r.window[stepSpec+i] = time.Since(t0)
	}

	step(fmt.Sprintf("A1: idle for %s", b.c.auditIdle))
	select {
	case <-ctx.Done():
		return r, off, ctx.Err()
	case <-time.After(b.c.auditIdle):
	}
	if r.events[stepIdle], off, err = b.h.AuditEventsSince(off); err != nil {
		return r, off, err
	}
	r.window[stepIdle] = b.c.auditIdle

	step("A1: deleting, counting writes until all gone and quiet")
	t0 = time.Now()
	if err := kube.DeleteAll(ctx, b.h.Client, objs, b.c.applyWorkers); err != nil {
		return r, off, err
	}
	if err := kube.WaitGone(ctx, b.h.Client, nsOperator, objs, 100*time.Millisecond, b.c.timeout, kube.Exited(b.op)); err != nil {
		return r, off, err
	}
	if r.events[stepDelete], off, err = b.waitQuiet(ctx, off, quiet, timeout); err != nil {
		return r, off, err
	}
	r.window[stepDelete] = time.Since(t0)
	return r, off, nil
}

// a1SpecChange applies c to every resource, waits until each shows it, then until the
// operator has written nothing for -audit-quiet, and returns what was logged from off on.
func (b *bench) a1SpecChange(ctx context.Context, c specCase, objs []*unstructured.Unstructured, off int64) ([]kube.AuditEvent, int64, error) {
	quiet, timeout := b.c.auditQuiet, 5*time.Minute
	step(fmt.Sprintf("A1: spec change on every resource (%s), until every resource shows it and %s without a write", c.name, quiet))
	t0 := time.Now()
	// The generation each patch made: the engine has handled the change once its status
	// records it.
	gens, index := make([]int64, len(objs)), make(map[*unstructured.Unstructured]int, len(objs))
	for i, u := range objs {
		index[u] = i
	}
	if err := kube.ForEach(ctx, objs, b.c.applyWorkers, func(ctx context.Context, u *unstructured.Unstructured) error {
		cp := u.DeepCopy()
		if err := b.h.Client.Patch(ctx, cp, client.RawPatch(types.MergePatchType, []byte(c.patch))); err != nil {
			return err
		}
		gens[index[u]] = cp.GetGeneration()
		return nil
	}); err != nil {
		return nil, off, err
	}
	for i, u := range objs {
		for {
			cur := &unstructured.Unstructured{}
			cur.SetGroupVersionKind(u.GroupVersionKind())
			err := b.h.Client.Get(ctx, client.ObjectKeyFromObject(u), cur)
			sec := &corev1.Secret{}
			if err == nil {
				if err := b.h.Client.Get(ctx, types.NamespacedName{Namespace: nsOperator, Name: u.GetName() + "-secrets"}, sec); err != nil {
					sec = nil
				}
				if c.done(cur, gens[i], sec) {
					break
				}
			}
			if time.Since(t0) > b.c.timeout {
				return nil, off, fmt.Errorf("%s does not show %s after %s", kube.Key(u), c.name, b.c.timeout)
			}
			if err := kube.Exited(b.op)(); err != nil {
				return nil, off, err
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return b.waitQuiet(ctx, off, quiet, timeout)
}

// goLines counts the lines of the non-test Go files of dir (as wc -l).
func goLines(dir string) (lines, files int, err error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return 0, 0, err
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return 0, 0, err
		}
		s := bufio.NewScanner(f)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			lines++
		}
		f.Close()
		if err := s.Err(); err != nil {
			return 0, 0, err
		}
		files++
	}
	return lines, files, nil
}

func printA1(r *A1) {
	fmt.Printf("\nKubernetes writes per resource, from the apiserver's audit log (N=%d, %d run(s); internal/addon: %d lines in %d files):\n", r.N, r.Runs, r.AddonLines, r.AddonFiles)
	type phase struct {
		name string
		p    AuditPhase
	}
	all := []phase{{"to Ready", r.ToReady}}
	for _, c := range specCases {
		all = append(all, phase{"spec change " + c.name, *r.specPhase(c.name)})
	}
	all = append(all, phase{"idle", r.Idle}, phase{"delete", r.Delete})
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprint(w, "PHASE\tTOTAL")
	for _, k := range writeKinds {
		fmt.Fprintf(w, "\t%s", strings.ToUpper(k))
	}
	fmt.Fprintln(w, "\tSTATUS MAX\tREFUSED (409...)")
	for _, ph := range all {
		fmt.Fprintf(w, "%s\t%.2f", ph.name, ph.p.PerResource)
		for _, k := range writeKinds {
			fmt.Fprintf(w, "\t%.2f", ph.p.PerResourceByKind[k])
		}
		fmt.Fprintf(w, "\t%d\t%.2f\n", ph.p.StatusMaxPerResource, ph.p.FailedPerResource)
	}
	_ = w.Flush()
	for _, ph := range all {
		if ph.name == "idle" {
			continue
		}
		fmt.Printf("  %s, requests per resource (verb resource[/subresource]; refused ones with their code):\n", ph.name)
		w = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		for _, m := range []map[string]int{ph.p.ByResource, ph.p.FailedByResource} {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(w, "    %s\t%.2f\n", k, float64(m[k])/float64(r.N*max(r.Runs, 1)))
			}
		}
		_ = w.Flush()
		if len(ph.p.StatusOverTwo) > 0 {
			over := make([]string, 0, len(ph.p.StatusOverTwo))
			for k, v := range ph.p.StatusOverTwo {
				over = append(over, fmt.Sprintf("%s (%d)", k, v))
			}
			sort.Strings(over)
			fmt.Printf("    more than 2 status writes: %s\n", strings.Join(over, ", "))
		}
	}
}
