package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

// ---- shared checks ----

// checkOneAddonEach verifies that the fake holds exactly one add-on per resource in namespace
// ns (by the deterministic name kubernetes::<Kind>::<uid>) and nothing else.
func (ch *chaos) checkOneAddonEach(ctx context.Context, ns string, want int) error {
	items, err := kube.ListAll(ctx, ch.h.Client, ns)
	if err != nil {
		return err
	}
	if len(items) != want {
		return fmt.Errorf("%d resources in %s, want %d", len(items), ns, want)
	}
	names := map[string]int{}
	total := 0
	for _, l := range ch.h.Fake().AllAddons() {
		for _, a := range l {
			names[a.AddonName()]++
			total++
		}
	}
	var dups, missing []string
	for i := range items {
		k, ok := kinds.KindFor(items[i].GroupVersionKind())
		if !ok {
			return fmt.Errorf("unknown kind %s", items[i].GetKind())
		}
		n := k.AddonName(string(items[i].GetUID()))
		switch names[n] {
		case 1:
		case 0:
			missing = append(missing, kube.Key(&items[i]))
		default:
			dups = append(dups, fmt.Sprintf("%s (%d add-ons)", kube.Key(&items[i]), names[n]))
		}
	}
	switch {
	case len(dups) > 0:
		return fmt.Errorf("duplicate add-ons: %s", strings.Join(first(dups, 5), ", "))
	case len(missing) > 0:
		return fmt.Errorf("no add-on for %d resources, e.g. %s", len(missing), strings.Join(first(missing, 3), ", "))
	case total != want:
		return fmt.Errorf("%d add-ons at the fake for %d resources", total, want)
	}
	return nil
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func countAddons(f *fakeapi.Server) int {
	n := 0
	for _, l := range f.AllAddons() {
		n += len(l)
	}
	return n
}

// collectSecrets gathers the values the scan looks for: the fake's credentials and every env
// value of every add-on the fake holds now (call it while the add-ons exist).
func (ch *chaos) collectSecrets(s *kube.Secrets) int {
	s.AddCredentials(ch.h.Creds...)
	return s.AddAddonEnvs(ch.h.Fake())
}

// scan fails if any credential value appears in the logs, in any Event or in any status.
func (ch *chaos) scan(ctx context.Context, s *kube.Secrets, logs ...string) error {
	found, err := s.ScanFiles(logs...)
	if err != nil {
		return err
	}
	more, err := s.ScanCluster(ctx, ch.h.Client)
	if err != nil {
		return err
	}
	found = append(found, more...)
	if len(found) > 0 {
		var l []string
		for _, f := range first(findingStrings(found), 5) {
			l = append(l, f)
		}
		return fmt.Errorf("credential leak: %d finding(s): %s", len(found), strings.Join(l, "; "))
	}
	return nil
}

func findingStrings(f []kube.Finding) []string {
	out := make([]string, len(f))
	for i, x := range f {
		out[i] = x.String()
	}
	return out
}

// ---- R1: SIGKILLs while provisioning and deleting ----

func (ch *chaos) r1(ctx context.Context) (string, error) {
	const ns = "r1"
	if err := ch.h.EnsureNamespace(ctx, ns); err != nil {
		return "", err
	}
	fake := ch.h.ReplaceFake(fakeapi.Options{ProvisioningDelay: ch.c.provisioningDelay, Faults: fakeapi.Faults{Latency: ch.c.latency}})
	op := ch.h.NewOperator(kube.OperatorOptions{Name: "r1", Args: []string{"--watch-namespace=" + ns}})
	defer func() { _ = op.Stop(10 * time.Second) }()
	if err := op.Start(); err != nil {
		return "", err
	}
	objs, err := kube.Resources(ns, "r1", ch.c.r1Resources)
	if err != nil {
		return "", err
	}
	createKills := (ch.c.r1Kills + 1) / 2
	deleteKills := ch.c.r1Kills - createKills

	// Kill while the resources are being applied and provisioned.
	applyErr := make(chan error, 1)
	go func() { applyErr <- kube.CreateAll(ctx, ch.h.Client, objs, 4) }()
	kills := 0
	killDuring := func(n int, phase string, lo, hi time.Duration) error {
		for range n {
			time.Sleep(ch.jitter(lo, hi))
			exist, ready, _ := kube.CountReady(ctx, ch.h.Client, ns, nil)
			if err := op.Kill(); err != nil {
				return err
			}
			kills++
			fmt.Printf("    SIGKILL %d (%s; %d resources, %d Ready, %d add-ons at the fake)\n", kills, phase, exist, ready, countAddons(fake))
			time.Sleep(ch.jitter(0, 500*time.Millisecond))
			if err := op.Start(); err != nil {
				return err
			}
		}
		return nil
	}
	if err := killDuring(createKills, "provisioning", 500*time.Millisecond, 3*time.Second); err != nil {
		return "", err
	}
	if err := <-applyErr; err != nil {
		return "", err
	}
	t0 := time.Now()
	if err := kube.WaitReady(ctx, ch.h.Client, ns, objs, 500*time.Millisecond, ch.c.timeout, kube.Exited(op)); err != nil {
		return "", fmt.Errorf("after %d kills while provisioning: %w", kills, err)
	}
	fmt.Printf("    all %d Ready %.1fs after the last create\n", len(objs), time.Since(t0).Seconds())
	if err := ch.checkOneAddonEach(ctx, ns, len(objs)); err != nil {
		return "", err
	}
	secrets := kube.NewSecrets()
	nvals := ch.collectSecrets(secrets)

	// Kill while they are being deleted.
	delErr := make(chan error, 1)
	go func() { delErr <- kube.DeleteAll(ctx, ch.h.Client, objs, 4) }()
	if err := killDuring(deleteKills, "deleting", 200*time.Millisecond, 1500*time.Millisecond); err != nil {
		return "", err
	}
	if err := <-delErr; err != nil {
		return "", err
	}
	if err := kube.WaitGone(ctx, ch.h.Client, ns, objs, 500*time.Millisecond, ch.c.timeout, kube.Exited(op)); err != nil {
		return "", fmt.Errorf("after %d kills while deleting (resources stuck): %w", deleteKills, err)
	}
	if n := countAddons(fake); n != 0 {
		return "", fmt.Errorf("%d add-ons left at the fake after every resource was deleted", n)
	}
	if err := ch.scan(ctx, secrets, op.LogPath); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d resources, %d SIGKILLs (%d provisioning, %d deleting): 1 add-on each, all Ready, 0 left after delete; %d values scanned, no leak",
		len(objs), kills, createKills, deleteKills, nvals), nil
}

// ---- R2: API faults ----

// readyWatch follows the Ready condition of every resource in a namespace through watches
// (no transition is missed) and records, for resources that were already Ready, every switch
// of Ready to False that is not a deletion.
type readyWatch struct {
	mu    sync.Mutex
	ready map[string]bool
	flaps map[string]int // reason -> count
	ex    []string
}

func watchReady(ctx context.Context, c client.WithWatch, ns string) (*readyWatch, error) {
	rw := &readyWatch{ready: map[string]bool{}, flaps: map[string]int{}}
	kinds, err := kube.Kinds()
	if err != nil {
		return nil, err
	}
	for _, gvk := range kinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		w, err := c.Watch(ctx, l, client.InNamespace(ns))
		if err != nil {
			return nil, err
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if ev.Type != watch.Added && ev.Type != watch.Modified {
					continue
				}
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				rw.observe(u)
			}
		}()
	}
	return rw, nil
}

func (rw *readyWatch) observe(u *unstructured.Unstructured) {
	st, reason, msg := kube.ConditionFields(u, "Ready")
	key := kube.Key(u)
	rw.mu.Lock()
	defer rw.mu.Unlock()
	switch {
	case st == "True":
		rw.ready[key] = true
	case rw.ready[key] && u.GetDeletionTimestamp() == nil:
		rw.ready[key] = false
		if throttling(reason, msg) {
			reason = "throttling (" + reason + ")"
		}
		rw.flaps[reason]++
		if len(rw.ex) < 3 {
			rw.ex = append(rw.ex, key+": "+reason+": "+msg)
		}
	}
}

func throttling(reason, msg string) bool {
	m := strings.ToLower(msg)
	return reason == "Throttled" || strings.Contains(m, "throttl") || strings.Contains(m, "429") || strings.Contains(m, "circuit open")
}

func (rw *readyWatch) snapshot() (map[string]int, []string) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	out := map[string]int{}
	for k, v := range rw.flaps {
		out[k] = v
	}
	return out, append([]string(nil), rw.ex...)
}

func (ch *chaos) r2(ctx context.Context) (string, error) {
	const ns = "r2"
	if err := ch.h.EnsureNamespace(ctx, ns); err != nil {
		return "", err
	}
	base := fakeapi.Faults{Latency: ch.c.latency, ErrorRate: map[string]float64{"*": 0.3}}
	fake := ch.h.ReplaceFake(fakeapi.Options{ProvisioningDelay: ch.c.provisioningDelay, Seed: int64(ch.c.seed%1e9) + 1, Faults: base})
	op := ch.h.NewOperator(kube.OperatorOptions{Name: "r2", Args: []string{
		"--watch-namespace=" + ns, fmt.Sprintf("--api-rate-limit=%g", ch.c.r2Rate), "--resync-period=" + ch.c.r2Resync.String(),
	}})
	defer func() { _ = op.Stop(10 * time.Second) }()
	wc, err := client.NewWithWatch(ch.h.RestConfig, client.Options{})
	if err != nil {
		return "", err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rw, err := watchReady(wctx, wc, ns)
	if err != nil {
		return "", err
	}
	since := time.Now()
	if err := op.Start(); err != nil {
		return "", err
	}
	objs, err := kube.Resources(ns, "r2", ch.c.r2Resources)
	if err != nil {
		return "", err
	}
	if err := kube.CreateAll(ctx, ch.h.Client, objs, 4); err != nil {
		return "", err
	}
	tl := newTimeline()
	// Provisioning under 30 % 5xx on every route, with a 429 burst while it runs.
	sleepCtx(ctx, 5*time.Second)
	burst := base
	burst.RateLimitBurst, burst.RateLimitWindow, burst.RetryAfter = 2, time.Second, 2*time.Second
	fake.SetFaults(burst)
	tl.add("429 burst (2 req/s, Retry-After 2s) during provisioning")
	sleepCtx(ctx, 8*time.Second)
	fake.SetFaults(base)
	tl.add("back to 30% 5xx")
	if err := kube.WaitReady(ctx, ch.h.Client, ns, objs, 500*time.Millisecond, ch.c.timeout, kube.Exited(op)); err != nil {
		return "", fmt.Errorf("under 30%% 5xx: %w", err)
	}
	tl.add(fmt.Sprintf("all %d Ready", len(objs)))

	// With every resource Ready (and refreshing every r2-resync): latency spike, 429 burst,
	// full outage, 429 burst again.
	spike := base
	spike.Latency, spike.Jitter = 1500*time.Millisecond, time.Second
	fake.SetFaults(spike)
	tl.add("latency spike 1.5s + up to 1s")
	sleepCtx(ctx, 10*time.Second)
	fake.SetFaults(burst)
	tl.add("429 burst")
	sleepCtx(ctx, 10*time.Second)
	out := base
	out.OutageUntil = time.Now().Add(ch.c.r2Outage)
	fake.SetFaults(out)
	tl.add(fmt.Sprintf("full outage %s", ch.c.r2Outage))
	sleepCtx(ctx, ch.c.r2Outage)
	fake.SetFaults(burst)
	tl.add("outage over; 429 burst")
	sleepCtx(ctx, 5*time.Second)
	fake.SetFaults(base)
	tl.add("back to 30% 5xx; waiting one resync period")
	sleepCtx(ctx, ch.c.r2Resync+5*time.Second)
	if err := kube.WaitReady(ctx, ch.h.Client, ns, objs, 500*time.Millisecond, ch.c.timeout, kube.Exited(op)); err != nil {
		return "", fmt.Errorf("after the faults: %w", err)
	}
	tl.add("all Ready")
	if err := ch.checkOneAddonEach(ctx, ns, len(objs)); err != nil {
		return "", err
	}
	for _, l := range tl.lines {
		fmt.Println("    " + l)
	}

	// Budget: a token bucket of r2Rate/s with the client's burst of 20.
	const clientBurst = 20
	budget := int(ch.c.r2Rate) + clientBurst
	maxWin, at := ch.h.Requests.MaxInWindow(time.Second, since)
	max10, _ := ch.h.Requests.MaxInWindow(10*time.Second, since)
	total := ch.h.Requests.Total(since)
	fmt.Printf("    API requests: %d total; max %d in any 1s window (at +%.0fs), max %d in any 10s window; budget %g/s, burst %d\n",
		total, maxWin, at.Sub(since).Seconds(), max10, ch.c.r2Rate, clientBurst)
	flaps, ex := rw.snapshot()

	secrets := kube.NewSecrets()
	nvals := ch.collectSecrets(secrets)
	if err := kube.DeleteAll(ctx, ch.h.Client, objs, 4); err != nil {
		return "", err
	}
	fake.SetFaults(fakeapi.Faults{})
	if err := kube.WaitGone(ctx, ch.h.Client, ns, objs, 500*time.Millisecond, ch.c.timeout, kube.Exited(op)); err != nil {
		return "", fmt.Errorf("deleting: %w", err)
	}
	if n := countAddons(fake); n != 0 {
		return "", fmt.Errorf("%d add-ons left at the fake after every resource was deleted", n)
	}
	if err := ch.scan(ctx, secrets, op.LogPath); err != nil {
		return "", err
	}

	var errs []string
	if maxWin > budget {
		errs = append(errs, fmt.Sprintf("%d requests within one second, budget %d (%g/s + burst %d)", maxWin, budget, ch.c.r2Rate, clientBurst))
	}
	if lim := int(ch.c.r2Rate*10) + clientBurst; max10 > lim {
		errs = append(errs, fmt.Sprintf("%d requests within 10 s, budget %d", max10, lim))
	}
	thr, other := 0, 0
	var reasons []string
	for r, n := range flaps {
		if strings.HasPrefix(r, "throttling") {
			thr += n
		} else {
			other += n
		}
		reasons = append(reasons, fmt.Sprintf("%s×%d", r, n))
	}
	sort.Strings(reasons)
	if thr > 0 {
		errs = append(errs, fmt.Sprintf("Ready flipped to False on throttling %d times (%s)", thr, strings.Join(ex, "; ")))
	}
	details := fmt.Sprintf("%d resources, all Ready; %d requests, max %d/1s and %d/10s (budget %g/s + burst %d); Ready→False of Ready resources: %d on throttling",
		len(objs), total, maxWin, max10, ch.c.r2Rate, clientBurst, thr)
	if other > 0 {
		details += fmt.Sprintf(", %d other (%s)", other, strings.Join(reasons, ", "))
		fmt.Printf("    Ready→False of Ready resources (not throttling): %s; e.g. %s\n", strings.Join(reasons, ", "), strings.Join(ex, " | "))
	}
	details += fmt.Sprintf("; %d values scanned, no leak", nvals)
	if len(errs) > 0 {
		return details, errors.New(strings.Join(errs, "; "))
	}
	return details, nil
}

type timeline struct {
	t0    time.Time
	lines []string
}

func newTimeline() *timeline { return &timeline{t0: time.Now()} }

func (t *timeline) add(s string) {
	t.lines = append(t.lines, fmt.Sprintf("+%5.1fs %s", time.Since(t.t0).Seconds(), s))
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// ---- leader election ----

const leaseName = "clever-operator.api.clever-cloud.com"

func (ch *chaos) leaseHolder(ctx context.Context, ns string) string {
	l := &coordinationv1.Lease{}
	if err := ch.h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, l); err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func (ch *chaos) waitLease(ctx context.Context, ns string, not string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if h := ch.leaseHolder(ctx, ns); h != "" && h != not {
			return h, nil
		}
		sleepCtx(ctx, 250*time.Millisecond)
	}
	return "", fmt.Errorf("no new lease holder within %s", timeout)
}

// reconcileLines counts the lines of a log showing a reconcile.
func reconcileLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	return strings.Count(string(b), `"msg":"Reconciling"`)
}

func (ch *chaos) leader(ctx context.Context) (string, error) {
	const ns = "leader"
	if err := ch.h.EnsureNamespace(ctx, ns); err != nil {
		return "", err
	}
	fake := ch.h.ReplaceFake(fakeapi.Options{ProvisioningDelay: ch.c.provisioningDelay, Faults: fakeapi.Faults{Latency: ch.c.latency}})
	args := []string{"--watch-namespace=" + ns, "--leader-elect", "--leader-election-namespace=" + ns}
	a := ch.h.NewOperator(kube.OperatorOptions{Name: "leader-a", Cred: 0, Args: args})
	b := ch.h.NewOperator(kube.OperatorOptions{Name: "leader-b", Cred: 1, Args: args})
	defer func() { _ = a.Stop(10 * time.Second); _ = b.Stop(10 * time.Second) }()
	since := time.Now()
	if err := a.Start(); err != nil {
		return "", err
	}
	holderA, err := ch.waitLease(ctx, ns, "", time.Minute)
	if err != nil {
		return "", err
	}
	if err := b.Start(); err != nil {
		return "", err
	}
	sleepCtx(ctx, 3*time.Second)
	all, err := kube.Resources(ns, "le", ch.c.leaderResources)
	if err != nil {
		return "", err
	}
	half := len(all) / 2
	batch1, batch2 := all[:half], all[half:]
	if err := kube.CreateAll(ctx, ch.h.Client, batch1, 4); err != nil {
		return "", err
	}
	if err := kube.WaitReady(ctx, ch.h.Client, ns, batch1, 500*time.Millisecond, ch.c.timeout, kube.Exited(a, b)); err != nil {
		return "", err
	}
	by := ch.h.Requests.ByClient(since)
	if by[1] != 0 || by[0] == 0 {
		return "", fmt.Errorf("before the hand-over the fake saw %d requests from the leader and %d from the standby", by[0], by[1])
	}
	if n := reconcileLines(b.LogPath); n != 0 {
		return "", fmt.Errorf("the standby logged %d reconciles while the other operator held the lease", n)
	}
	if h := ch.leaseHolder(ctx, ns); h != holderA {
		return "", fmt.Errorf("lease holder changed without a kill")
	}
	leaderCalls := by[0]

	// Kill the leader while the second batch is being provisioned.
	if err := kube.CreateAll(ctx, ch.h.Client, batch2, 4); err != nil {
		return "", err
	}
	sleepCtx(ctx, ch.jitter(50*time.Millisecond, 500*time.Millisecond))
	addonsAtKill := countAddons(fake)
	killedAt := time.Now()
	if err := a.Kill(); err != nil {
		return "", err
	}
	fmt.Printf("    SIGKILL of the leader with %d of %d add-ons created\n", addonsAtKill, len(all))
	holderB, err := ch.waitLease(ctx, ns, holderA, 2*time.Minute)
	if err != nil {
		return "", err
	}
	handover := time.Since(killedAt)
	if err := kube.WaitReady(ctx, ch.h.Client, ns, all, 500*time.Millisecond, ch.c.timeout, kube.Exited(b)); err != nil {
		return "", fmt.Errorf("after the hand-over: %w", err)
	}
	if err := ch.checkOneAddonEach(ctx, ns, len(all)); err != nil {
		return "", fmt.Errorf("after the hand-over: %w", err)
	}
	after := ch.h.Requests.ByClient(killedAt.Add(time.Second)) // requests already on the wire may land just after the kill
	if after[1] == 0 || after[0] != 0 {
		return "", fmt.Errorf("after the hand-over the fake saw %d requests from the new leader and %d from the killed one", after[1], after[0])
	}
	_ = holderB
	secrets := kube.NewSecrets()
	nvals := ch.collectSecrets(secrets)
	if err := kube.DeleteAll(ctx, ch.h.Client, all, 4); err != nil {
		return "", err
	}
	if err := kube.WaitGone(ctx, ch.h.Client, ns, all, 500*time.Millisecond, ch.c.timeout, kube.Exited(b)); err != nil {
		return "", err
	}
	if n := countAddons(fake); n != 0 {
		return "", fmt.Errorf("%d add-ons left at the fake after every resource was deleted", n)
	}
	if err := ch.scan(ctx, secrets, a.LogPath, b.LogPath); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d resources; standby: 0 API calls and 0 reconciles while the leader made %d; hand-over %.1fs after SIGKILL (lease); 1 add-on each, 0 left; %d values scanned, no leak",
		len(all), leaderCalls, handover.Seconds(), nvals), nil
}
