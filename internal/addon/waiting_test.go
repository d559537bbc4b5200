package addon

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

func TestWaitSchedules(t *testing.T) {
	for _, c := range []struct {
		age, probe, fallback time.Duration
	}{
		{0, 2 * time.Second, 90 * time.Second},
		{6 * time.Second, 2 * time.Second, 90 * time.Second},
		{10 * time.Second, 2500 * time.Millisecond, 90 * time.Second},
		{50 * time.Second, 3 * time.Second, 90 * time.Second},
		{100 * time.Second, 3 * time.Second, 100 * time.Second},
		{5 * time.Minute, 30 * time.Second, 2 * time.Minute}, // too old to probe fast: pendingPoll
	} {
		if got := probeGap(c.age); got != c.probe {
			t.Errorf("probeGap(%s) = %s, want %s", c.age, got, c.probe)
		}
		if got := fallbackGap(c.age); got != c.fallback {
			t.Errorf("fallbackGap(%s) = %s, want %s", c.age, got, c.fallback)
		}
	}
	for _, c := range []struct {
		hi, polled, want time.Duration
		ok               bool
	}{
		{0, 10 * time.Second, 0, false}, // nothing learnt
		{62 * time.Second, 0, 62 * time.Second, true},
		{62 * time.Second, 60 * time.Second, 62 * time.Second, true},
		{62 * time.Second, 62 * time.Second, 0, false}, // read at hi already: slower than the rest
	} {
		g := &waitGroup{hi: c.hi}
		if got, ok := g.estimate(&waiter{polledAge: c.polled}); got != c.want || ok != c.ok {
			t.Errorf("estimate(hi %s, polled %s) = %s %v, want %s %v", c.hi, c.polled, got, ok, c.want, c.ok)
		}
	}
	s, ms := time.Second, time.Millisecond
	for _, c := range []struct {
		lo, hi, polled, want time.Duration
	}{
		{59 * s, 62 * s, 0, 60500 * ms},      // the middle of lo..hi
		{59 * s, 62 * s, 60500 * ms, 62 * s}, // read there already: hi
		{61900 * ms, 62 * s, 0, 62 * s},      // narrower than bisectMin
		{61500 * ms, 62 * s, 0, 61750 * ms},  // exactly bisectMin: halved
		{0, 62 * s, 0, 62 * s},               // no lo known
	} {
		// b, the oldest, is the bisector while it has not read past the middle; o, younger,
		// then reads at hi (when b has, o is the bisector).
		b := &waiter{uid: "b", polledAge: c.polled, created: time.Unix(0, 0)}
		o := &waiter{uid: "o", created: time.Unix(1, 0)}
		g := &waitGroup{lo: c.lo, hi: c.hi, members: map[types.UID]*waiter{"b": b, "o": o}}
		g.pickBisector(time.Unix(10, 0)) // both younger than the middle
		if got, ok := g.estimate(b); got != c.want || !ok {
			t.Errorf("estimate(lo %s, hi %s, polled %s) = %s %v, want %s", c.lo, c.hi, c.polled, got, ok, c.want)
		}
		wantO := c.hi
		if mid, ok := g.mid(); ok && c.polled >= mid {
			wantO = mid
		}
		if got, ok := g.estimate(o); got != wantO || !ok {
			t.Errorf("lo %s, hi %s, b polled %s: the other's estimate %s %v, want %s", c.lo, c.hi, c.polled, got, ok, wantO)
		}
	}
	if _, ok := (&waitGroup{lo: 59 * s, hi: 62 * s, bisects: maxBisects}).mid(); ok {
		t.Error("halved again after maxBisects reads at the middle")
	}
	// What the reads teach: a miss below hi raises lo, a hit below hi lowers it (and drops a
	// lo it passed: ages that disagree), the hit's own last miss is a lo.
	g := &waitGroup{}
	g.seenUnprovisioned(58 * s) // nothing seen provisioned yet: no interval
	if g.lo != 0 {
		t.Fatalf("lo %s before any hit", g.lo)
	}
	if !g.seenProvisioned(62*s, 59*s) || g.hi != 62*s || g.lo != 59*s {
		t.Fatalf("after the first hit: lo %s hi %s, want 59s 62s", g.lo, g.hi)
	}
	g.seenUnprovisioned(60 * s)
	g.seenUnprovisioned(63 * s) // a slower add-on, past hi: says nothing of the interval
	if g.lo != 60*s {
		t.Fatalf("lo %s, want 60s", g.lo)
	}
	if g.seenProvisioned(62*s, 0) {
		t.Fatal("a hit at hi moved it")
	}
	if !g.seenProvisioned(61*s, 0) || g.lo != 60*s || g.hi != 61*s {
		t.Fatalf("lo %s hi %s, want 60s 61s", g.lo, g.hi)
	}
	if !g.seenProvisioned(55*s, 0) || g.lo != 0 || g.hi != 55*s {
		t.Fatalf("a hit below lo: lo %s hi %s, want 0 55s", g.lo, g.hi)
	}
}

// boardReconciler is a Reconciler of the test kind whose board wakes into a channel of
// capacity c, with its clock at the time returned (tests replace Now to move it).
func boardReconciler(t *testing.T, c int) (*Reconciler, time.Time, chan event.TypedGenericEvent[*unstructured.Unstructured]) {
	t.Helper()
	k, _ := testResource(t, nil)
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	r := &Reconciler{Kind: k, Now: func() time.Time { return t0 }}
	wake := make(chan event.TypedGenericEvent[*unstructured.Unstructured], c)
	r.waits.wake = wake
	return r, t0, wake
}

// TestWaitBisectorAnsweredPastHi: a read sent at the middle whose miss is answered after hi
// (a latency over half of lo..hi) reads again at hi, at once, not a probe gap later as a
// waiter slower than the group would.
func TestWaitBisectorAnsweredPastHi(t *testing.T) {
	r, t0, _ := boardReconciler(t, 10)
	_, u := testResource(t, func(u *unstructured.Unstructured) { u.SetUID("b"); u.SetName("b") })
	s := r.newPass(context.Background(), u)
	s.key = "creds"
	r.waits.add(s, &clevercloud.Addon{ID: "addon_b", ConfigKeys: []string{"A"}}, t0, "azimutt")
	w := r.waits.byUID["b"]
	g := r.waits.groups[w.group]
	g.lo, g.hi = 59*time.Second, 60*time.Second
	g.pickBisector(t0.Add(time.Second))
	if g.bisector != w {
		t.Fatal("b is not the bisector")
	}
	sent, answered := t0.Add(59500*time.Millisecond), t0.Add(60100*time.Millisecond)
	if d := r.waits.dueIn(w, sent); d != 0 {
		t.Fatalf("the bisector is due in %s at the middle, want now", d)
	}
	if d := r.waits.notReady(w, sent, answered); d != 0 {
		t.Fatalf("after a miss sent at 59.5 s and answered at 60.1 s (hi 60 s) it waits %s, want 0 (it reads at hi)", d)
	}
}

// TestWaitBoardHalves runs the board as the engine does (each waiter comes back when it was
// told, or when woken; reads answered at once or after 175 ms) over add-ons of one kind
// created every 200 ms (or all at once) that are all provisioned at one age, and checks that
// each created more than a probe gap (3 s) after the probe, and a second for the halving, is
// answered at most bisectMin and two latencies after its provisioning (up to 3 s more,
// reading at hi alone; those created earlier are already past it when the probe's hit comes),
// for a few reads more than one per add-on besides the probe's.
func TestWaitBoardHalves(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct{ prov, every, lat time.Duration }{
		{60100 * ms, 200 * ms, 0},
		{61 * time.Second, 200 * ms, 0},
		{62900 * ms, 200 * ms, 0},
		{60100 * ms, 200 * ms, 175 * ms},
		{61 * time.Second, 200 * ms, 175 * ms},
		{62900 * ms, 200 * ms, 175 * ms},
		// Answers slower than half of lo..hi: a read sent at the middle is answered past hi.
		{60100 * ms, 200 * ms, 400 * ms},
		{61 * time.Second, 200 * ms, 400 * ms},
		{62900 * ms, 200 * ms, 400 * ms},
		// All created at once, none later to profit from the halving: it costs a few reads.
		{61 * time.Second, 10 * ms, 175 * ms},
	} {
		prov := c.prov
		r, t0, wake := boardReconciler(t, 1000)
		now := t0
		r.Now = func() time.Time { return now }
		const n = 40
		next := map[types.UID]time.Time{}
		created := map[types.UID]time.Time{}
		for i := range n {
			now = t0.Add(time.Duration(i) * c.every)
			uid := types.UID(string(rune('a'+i/26)) + string(rune('a'+i%26)))
			_, u := testResource(t, func(u *unstructured.Unstructured) { u.SetUID(uid); u.SetName(string(uid)) })
			s := r.newPass(context.Background(), u)
			s.key = "creds"
			created[uid] = now
			next[uid] = now.Add(r.waits.add(s, &clevercloud.Addon{ID: "addon_" + string(uid), ConfigKeys: []string{"A"}}, now, "azimutt"))
		}
		reads, probeReads := 0, 0
		lags := map[types.UID]time.Duration{}
		// A waiter whose last miss was sent below hi reads again by hi (as it would have
		// without the halving): late lists those that did not.
		missedBelow := map[types.UID]time.Duration{} // the hi it missed below
		var late []string
		// Reads run concurrently, as the engine's workers do: a pass that reads sends the
		// request, the answer comes lat later (the API looks half-way); a wake while a read
		// is in flight changes nothing (the pass after the answer tells when to come back).
		type read struct{ sent, answered time.Time }
		inflight := map[types.UID]read{}
		for len(next)+len(inflight) > 0 {
			var uid types.UID
			var at time.Time
			answer := false
			for u, due := range next {
				if uid == "" || due.Before(at) || (due.Equal(at) && u < uid) {
					uid, at = u, due
				}
			}
			for u, rd := range inflight {
				if uid == "" || rd.answered.Before(at) || (rd.answered.Equal(at) && u < uid) {
					uid, at, answer = u, rd.answered, true
				}
			}
			now = at
			w := r.waits.byUID[uid]
			switch {
			case !answer:
				if d := r.waits.dueIn(w, now); d > 0 { // woken early, or its due moved later
					next[uid] = now.Add(d)
					continue
				}
				reads++
				if w.created.Equal(t0) {
					probeReads++
				}
				if hi, ok := missedBelow[uid]; ok && now.Sub(w.created) > hi+wakeSlack {
					late = append(late, fmt.Sprintf("%s read at %s after a miss below hi %s", uid, now.Sub(w.created), hi))
				}
				delete(missedBelow, uid)
				delete(next, uid)
				inflight[uid] = read{sent: now, answered: now.Add(c.lat)}
			default:
				rd := inflight[uid]
				delete(inflight, uid)
				if rd.sent.Add(c.lat/2).Sub(w.created) >= prov {
					lags[uid] = rd.answered.Sub(w.created) - prov
					r.waits.ready(w, now)
				} else {
					next[uid] = now.Add(r.waits.notReady(w, rd.sent, now))
					if g := r.waits.groups[w.group]; g != nil && g.hi > 0 && rd.sent.Sub(w.created) < g.hi {
						missedBelow[uid] = g.hi
					}
				}
			}
			for len(wake) > 0 {
				o := types.UID((<-wake).Object.GetName())
				if _, ok := next[o]; ok {
					next[o] = now
				}
			}
		}
		// hi is at most bisectMin over lo, itself under the provisioning, plus a hit's
		// latency; the read at hi is answered a latency later.
		limit := bisectMin + 2*c.lat
		for uid, lag := range lags {
			if created[uid].Sub(t0) >= probeMax+time.Second && lag > limit {
				late = append(late, fmt.Sprintf("%s (+%s)", uid, lag))
			}
		}
		if len(late) > 0 {
			t.Errorf("provisioned at %s, latency %s: answered more than %s after provisioning, or read past hi: %v", prov, c.lat, limit, late)
		}
		t.Logf("provisioned at %s, latency %s: probe %d reads, others %d for %d add-ons, lags %v", prov, c.lat, probeReads, reads-probeReads, n-1, lags)
		if extra := reads - probeReads - (n - 1); extra < 0 || extra > 6 {
			t.Errorf("provisioned at %s: %d reads besides the probe's %d for %d add-ons: %d more than one each, want at most 6", prov, reads-probeReads, probeReads, n-1, extra)
		}
		if len(r.waits.groups) != 0 {
			t.Errorf("groups left: %d", len(r.waits.groups))
		}
	}
}

// TestWaitBoardLearns: only the oldest waiter probes; once its add-on is seen provisioned,
// the others are woken and read their env at that age of their own.
func TestWaitBoardLearns(t *testing.T) {
	r, t0, wake := boardReconciler(t, 10)
	now := t0
	r.Now = func() time.Time { return now }
	add := func(uid string) (*pass, time.Duration) {
		_, u := testResource(t, func(u *unstructured.Unstructured) { u.SetUID(types.UID(uid)); u.SetName(uid) })
		s := r.newPass(context.Background(), u)
		s.key = "creds"
		return s, r.waits.add(s, &clevercloud.Addon{ID: "addon_" + uid, ConfigKeys: []string{"A"}}, now, "azimutt")
	}
	_, da := add("a")
	if da != 2*time.Second {
		t.Fatalf("probe's first wait %s, want 2s", da)
	}
	now = t0.Add(time.Second)
	sb, db := add("b")
	if db < 90*time.Second || db > 99*time.Second {
		t.Fatalf("second waiter's wait %s, want the fallback (90 s + up to 10 %%)", db)
	}
	now = t0.Add(2 * time.Second)
	add("c")
	wa, wb := r.waits.byUID["a"], r.waits.byUID["b"]
	if wb == nil {
		t.Fatal("b not found on the board")
	}
	// The probe's last miss, sent 0.1 s before the hit: nothing left to halve (bisectMin),
	// the others read at hi (TestWaitBoardHalves: when there is).
	now = t0.Add(61900 * time.Millisecond)
	if d := r.waits.notReady(wa, now, now); d != 3*time.Second {
		t.Fatalf("probe at 61.9 s waits %s, want 3s", d)
	}
	now = t0.Add(62 * time.Second)
	r.waits.ready(wa, now)
	var woken []string
	for len(wake) > 0 {
		woken = append(woken, (<-wake).Object.GetName())
	}
	slices.Sort(woken)
	if !slices.Equal(woken, []string{"b", "c"}) {
		t.Fatalf("woken %v, want [b c]", woken)
	}
	// b (created at 1 s) reads at 62 s of its own age (63 s), c (2 s) at 64 s.
	if d := r.waits.dueIn(wb, now); d != time.Second {
		t.Fatalf("b due in %s, want 1s", d)
	}
	if d := r.waits.dueIn(r.waits.byUID["c"], now); d != 2*time.Second {
		t.Fatalf("c due in %s, want 2s", d)
	}
	// Still missing at 62 s of age (slower than a): the group's oldest now, so its probe.
	now = t0.Add(63 * time.Second)
	if d := r.waits.notReady(wb, now, now); d != 3*time.Second {
		t.Fatalf("b after reading at hi waits %s, want 3s (the group's probe)", d)
	}
	// c, not the probe, misses at hi too (slower than a): it keeps reading every few seconds
	// until twice hi, then falls back.
	wc := r.waits.byUID["c"]
	now = t0.Add(64 * time.Second)
	if d := r.waits.notReady(wc, now, now); d != 3*time.Second {
		t.Fatalf("c after a miss at hi waits %s, want 3s", d)
	}
	now = t0.Add(130 * time.Second)
	if d := r.waits.notReady(wc, now, now); d < 2*time.Minute-time.Second {
		t.Fatalf("c at 128 s of age waits %s, want the fallback", d)
	}
	// A spec change (new generation) takes the resource off the board: a full pass.
	sb.obj.SetGeneration(2)
	if r.waits.lookup(sb) != nil || r.waits.byUID["b"] != nil {
		t.Fatal("a changed resource is still on the board")
	}
	r.waits.drop("c")
	if len(r.waits.groups) != 0 {
		t.Fatalf("groups left: %d", len(r.waits.groups))
	}
}

// keysAPI is fakeAPI whose new add-ons announce their variables (configKeys).
type keysAPI struct{ *fakeAPI }

func (a keysAPI) CreateAddon(ctx context.Context, owner string, o clevercloud.CreateOpts) (*clevercloud.Addon, error) {
	ad, err := a.fakeAPI.CreateAddon(ctx, owner, o)
	if err == nil {
		ad.ConfigKeys = []string{"AZIMUTT_URL"}
		ad.CreationDate = uint64(time.Now().UnixMilli())
		a.addons[ad.ID] = *ad
	}
	return ad, err
}

// TestWaitingPassReadsOnlyTheEnv: while the add-on is provisioned, a pass calls nothing
// before its env is due, then reads the env alone (no GET of the add-on), and publishes from
// it; a spec change goes back to a full pass.
func TestWaitingPassReadsOnlyTheEnv(t *testing.T) {
	for _, specChange := range []bool{false, true} {
		api := &fakeAPI{}
		k, u := testResource(t, nil)
		h := newHarness(t, k, keysAPI{api}, u)
		t0 := time.Now()
		now := t0
		h.r.Now = func() time.Time { return now }
		h.r.ClaimKey = []byte("0123456789abcdef0123456789abcdef") // the claim written after the create
		step := func(at time.Duration, wantCalls []string, wantReady string) {
			t.Helper()
			now = t0.Add(at)
			api.calls = nil
			live := h.pass(t, u)
			if !slices.Equal(api.calls, wantCalls) {
				t.Fatalf("specChange %v, at %s: calls %v, want %v", specChange, at, api.calls, wantCalls)
			}
			if got := ready(live); got != wantReady {
				t.Fatalf("specChange %v, at %s: AddonReady %s, want %s", specChange, at, got, wantReady)
			}
		}
		step(0, []string{"create", "env addon_new"}, "False/Provisioning")
		step(time.Second, nil, "False/Provisioning")
		step(2*time.Second, []string{"env addon_new"}, "False/Provisioning")
		if specChange {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(u.GroupVersionKind())
			_ = h.cl.Get(context.Background(), types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}, live)
			live.SetGeneration(2)
			if err := h.cl.Update(context.Background(), live); err != nil {
				t.Fatal(err)
			}
			step(3*time.Second, []string{"get addon_new", "env addon_new"}, "False/Provisioning")
		}
		api.env = []clevercloud.Variable{{Name: "AZIMUTT_URL", Value: "https://az"}}
		if specChange {
			step(6*time.Second, []string{"env addon_new"}, "True/Provisioned")
		} else {
			step(4*time.Second, []string{"env addon_new"}, "True/Provisioned")
		}
		if len(h.r.waits.byUID) != 0 {
			t.Fatalf("specChange %v: board not empty after Ready", specChange)
		}
	}
}

// TestCreateJoinsAGroupBeingWaitedFor: an add-on created while another of its kind and
// organisation is still being provisioned does not read its env at once; with nothing being
// waited for (an API answering at once), the create is followed by the env read.
func TestCreateJoinsAGroupBeingWaitedFor(t *testing.T) {
	api := &fakeAPI{}
	k, u1 := testResource(t, nil)
	_, u2 := testResource(t, func(u *unstructured.Unstructured) { u.SetName("az2"); u.SetUID("uid-2") })
	h := newHarness(t, k, keysAPI{api}, u1, u2)
	api.calls = nil
	if got := ready(h.pass(t, u1)); got != "False/Provisioning" || !slices.Equal(api.calls, []string{"create", "env addon_new"}) {
		t.Fatalf("first: %s, calls %v", got, api.calls)
	}
	api.calls = nil
	if got := ready(h.pass(t, u2)); got != "False/Provisioning" || !slices.Equal(api.calls, []string{"create"}) {
		t.Fatalf("second: %s, calls %v (want the create alone)", got, api.calls)
	}
	if len(h.r.waits.byUID) != 2 {
		t.Fatalf("%d waiters, want 2", len(h.r.waits.byUID))
	}
}
