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
// else), for a few resources of every kind: from apply to Ready (and quiet), after a spec
// change that only adds a label to each published Secret (spec.secret.labels), while idle,
// and for the deletion. Writes are sorted by the kind of object written.

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
			statusPer[e.ObjectRef.Namespace+"/"+e.ObjectRef.Name]++
		}
	}
	for _, v := range statusPer {
		p.StatusMaxPerResource = max(p.StatusMaxPerResource, v)
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

// The steps of an A1 run, in order.
const (
	stepReady = iota
	stepSpec
	stepIdle
	stepDelete
	steps
)

// a1Steps is what one A1 run logged in each step, and how long each step took.
type a1Steps struct {
	events [steps][]kube.AuditEvent
	window [steps]time.Duration
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
	var all a1Steps
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
	r.SpecChange = summarize(all.events[stepSpec], total, all.window[stepSpec])
	r.Idle = summarize(all.events[stepIdle], total, all.window[stepIdle])
	r.Delete = summarize(all.events[stepDelete], total, all.window[stepDelete])
	b.res.A1 = r
	fmt.Printf("    A1: %.1f writes per resource to Ready (status %.1f), spec change: %.1f status writes per resource (max %d), idle: %d writes; internal/addon %d lines\n",
		r.ToReady.PerResource, r.ToReady.PerResourceByKind[wStatus], r.SpecChange.PerResourceByKind[wStatus], r.SpecChange.StatusMaxPerResource, r.Idle.Writes, r.AddonLines)
	return nil
}

// a1Run applies auditN resources named after prefix and counts the writes logged from offset
// on in each step; it returns the offset after the last step.
func (b *bench) a1Run(ctx context.Context, prefix string, off int64) (a1Steps, int64, error) {
	var r a1Steps
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

	step(fmt.Sprintf("A1: spec change on every resource (spec.secret.labels gets %s), until every Secret has it and %s without a write", auditLbl, quiet))
	t0 = time.Now()
	patch := []byte(`{"spec":{"secret":{"labels":{"` + auditLbl + `":"yes"}}}}`)
	if err := kube.ForEach(ctx, objs, b.c.applyWorkers, func(ctx context.Context, u *unstructured.Unstructured) error {
		return b.h.Client.Patch(ctx, u.DeepCopy(), client.RawPatch(types.MergePatchType, patch))
	}); err != nil {
		return r, off, err
	}
	for _, u := range objs {
		for {
			sec := &corev1.Secret{}
			err := b.h.Client.Get(ctx, types.NamespacedName{Namespace: nsOperator, Name: u.GetName() + "-secrets"}, sec)
			if err == nil && sec.Labels[auditLbl] == "yes" {
				break
			}
			if time.Since(t0) > b.c.timeout {
				return r, off, fmt.Errorf("%s: its Secret has no %s label after %s", kube.Key(u), auditLbl, b.c.timeout)
			}
			if err := kube.Exited(b.op)(); err != nil {
				return r, off, err
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if r.events[stepSpec], off, err = b.waitQuiet(ctx, off, quiet, timeout); err != nil {
		return r, off, err
	}
	r.window[stepSpec] = time.Since(t0)

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
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprint(w, "PHASE\tTOTAL")
	for _, k := range writeKinds {
		fmt.Fprintf(w, "\t%s", strings.ToUpper(k))
	}
	fmt.Fprintln(w, "\tSTATUS MAX\tREFUSED (409...)")
	for _, ph := range []struct {
		name string
		p    AuditPhase
	}{{"to Ready", r.ToReady}, {"spec change", r.SpecChange}, {"idle", r.Idle}, {"delete", r.Delete}} {
		fmt.Fprintf(w, "%s\t%.2f", ph.name, ph.p.PerResource)
		for _, k := range writeKinds {
			fmt.Fprintf(w, "\t%.2f", ph.p.PerResourceByKind[k])
		}
		fmt.Fprintf(w, "\t%d\t%.2f\n", ph.p.StatusMaxPerResource, ph.p.FailedPerResource)
	}
	_ = w.Flush()
	for _, ph := range []struct {
		name string
		p    AuditPhase
	}{{"to Ready", r.ToReady}, {"spec change", r.SpecChange}, {"delete", r.Delete}} {
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
	}
}
