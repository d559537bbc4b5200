package waits

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
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
		{5 * time.Minute, 30 * time.Second, 2 * time.Minute}, // too old to probe fast: PendingPoll
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
		g := &group{hi: c.hi}
		if got, ok := g.estimate(&Waiter{polledAge: c.polled}); got != c.want || ok != c.ok {
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
		b := &Waiter{UID: "b", polledAge: c.polled, created: time.Unix(0, 0)}
		o := &Waiter{UID: "o", created: time.Unix(1, 0)}
		g := &group{lo: c.lo, hi: c.hi, members: map[types.UID]*Waiter{"b": b, "o": o}}
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
	if _, ok := (&group{lo: 59 * s, hi: 62 * s, bisects: maxBisects}).mid(); ok {
		t.Error("halved again after maxBisects reads at the middle")
	}
	// What the reads teach: a miss below hi raises lo, a hit below hi lowers it (and drops a
	// lo it passed: ages that disagree), the hit's own last miss is a lo.
	g := &group{}
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

// testBoard is a board that wakes into a channel of capacity c, and the time its tests
// start at.
func testBoard(c int) (*Board, time.Time, chan event.TypedGenericEvent[*unstructured.Unstructured]) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	wake := make(chan event.TypedGenericEvent[*unstructured.Unstructured], c)
	return &Board{Wake: wake}, t0, wake
}

// testOrg is the organisation of the tests' waiters.
const testOrg = "orga_00000000-0000-0000-0000-000000000001"

// resource is a resource of namespace ns named for its UID, at generation 1.
func resource(uid string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetNamespace("ns")
	u.SetName(uid)
	u.SetUID(types.UID(uid))
	u.SetGeneration(1)
	return u
}

// add puts resource uid, created at now, on b with the tests' credentials, organisation and
// kind, and returns how long it waits.
func add(b *Board, uid string, now time.Time) time.Duration {
	return b.Add(resource(uid), "creds", testOrg, "azimutt", Addon{ID: "addon_" + uid, ConfigKeys: []string{"A"}}, now, now)
}

// TestWaitBisectorAnsweredPastHi: a read sent at the middle whose miss is answered after hi
// (a latency over half of lo..hi) reads again at hi, at once, not a probe gap later as a
// waiter slower than the group would.
func TestWaitBisectorAnsweredPastHi(t *testing.T) {
	b, t0, _ := testBoard(10)
	add(b, "b", t0)
	w := b.byUID["b"]
	g := b.groups[w.group]
	g.lo, g.hi = 59*time.Second, 60*time.Second
	g.pickBisector(t0.Add(time.Second))
	if g.bisector != w {
		t.Fatal("b is not the bisector")
	}
	sent, answered := t0.Add(59500*time.Millisecond), t0.Add(60100*time.Millisecond)
	if d := b.DueIn(w, sent); d != 0 {
		t.Fatalf("the bisector is due in %s at the middle, want now", d)
	}
	if d := b.NotReady(w, sent, answered); d != 0 {
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
		b, t0, wake := testBoard(1000)
		now := t0
		const n = 40
		next := map[types.UID]time.Time{}
		created := map[types.UID]time.Time{}
		for i := range n {
			now = t0.Add(time.Duration(i) * c.every)
			uid := types.UID(string(rune('a'+i/26)) + string(rune('a'+i%26)))
			created[uid] = now
			next[uid] = now.Add(add(b, string(uid), now))
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
			w := b.byUID[uid]
			switch {
			case !answer:
				if d := b.DueIn(w, now); d > 0 { // woken early, or its due moved later
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
					b.Ready(w, now)
				} else {
					next[uid] = now.Add(b.NotReady(w, rd.sent, now))
					if g := b.groups[w.group]; g != nil && g.hi > 0 && rd.sent.Sub(w.created) < g.hi {
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
		if len(b.groups) != 0 {
			t.Errorf("groups left: %d", len(b.groups))
		}
	}
}

// TestWaitBoardLearns: only the oldest waiter probes; once its add-on is seen provisioned,
// the others are woken and read their env at that age of their own.
func TestWaitBoardLearns(t *testing.T) {
	b, t0, wake := testBoard(10)
	now := t0
	da := add(b, "a", now)
	if !b.Busy("creds", testOrg, "azimutt") || b.Busy("creds", testOrg, "redis") || b.Busy("other", testOrg, "azimutt") {
		t.Fatal("busy: only the group of a is being waited for")
	}
	if da != 2*time.Second {
		t.Fatalf("probe's first wait %s, want 2s", da)
	}
	now = t0.Add(time.Second)
	db := add(b, "b", now)
	if db < 90*time.Second || db > 99*time.Second {
		t.Fatalf("second waiter's wait %s, want the fallback (90 s + up to 10 %%)", db)
	}
	now = t0.Add(2 * time.Second)
	add(b, "c", now)
	wa, wb := b.byUID["a"], b.byUID["b"]
	if wb == nil {
		t.Fatal("b not found on the board")
	}
	// The probe's last miss, sent 0.1 s before the hit: nothing left to halve (bisectMin),
	// the others read at hi (TestWaitBoardHalves: when there is).
	now = t0.Add(61900 * time.Millisecond)
	if d := b.NotReady(wa, now, now); d != 3*time.Second {
		t.Fatalf("probe at 61.9 s waits %s, want 3s", d)
	}
	now = t0.Add(62 * time.Second)
	b.Ready(wa, now)
	var woken []string
	for len(wake) > 0 {
		woken = append(woken, (<-wake).Object.GetName())
	}
	slices.Sort(woken)
	if !slices.Equal(woken, []string{"b", "c"}) {
		t.Fatalf("woken %v, want [b c]", woken)
	}
	// b (created at 1 s) reads at 62 s of its own age (63 s), c (2 s) at 64 s.
	if d := b.DueIn(wb, now); d != time.Second {
		t.Fatalf("b due in %s, want 1s", d)
	}
	if d := b.DueIn(b.byUID["c"], now); d != 2*time.Second {
		t.Fatalf("c due in %s, want 2s", d)
	}
	// Still missing at 62 s of age (slower than a): the group's oldest now, so its probe.
	now = t0.Add(63 * time.Second)
	if d := b.NotReady(wb, now, now); d != 3*time.Second {
		t.Fatalf("b after reading at hi waits %s, want 3s (the group's probe)", d)
	}
	// c, not the probe, misses at hi too (slower than a): it keeps reading every few seconds
	// until twice hi, then falls back.
	wc := b.byUID["c"]
	now = t0.Add(64 * time.Second)
	if d := b.NotReady(wc, now, now); d != 3*time.Second {
		t.Fatalf("c after a miss at hi waits %s, want 3s", d)
	}
	now = t0.Add(130 * time.Second)
	if d := b.NotReady(wc, now, now); d < 2*time.Minute-time.Second {
		t.Fatalf("c at 128 s of age waits %s, want the fallback", d)
	}
	// A spec change (new generation) takes the resource off the board: a full pass.
	ob := resource("b")
	ob.SetGeneration(2)
	if b.Lookup(ob, statusOf(ob), status.Conditions(ob), "creds", testOrg, false) != nil || b.byUID["b"] != nil {
		t.Fatal("a changed resource is still on the board")
	}
	b.Drop("c")
	if len(b.groups) != 0 {
		t.Fatalf("groups left: %d", len(b.groups))
	}
}

func TestPendingPoll(t *testing.T) {
	for age, want := range map[time.Duration]time.Duration{0: 2 * time.Second, time.Second: 2 * time.Second, 40 * time.Second: 10 * time.Second, time.Hour: 30 * time.Second} {
		if got := PendingPoll(age); got != want {
			t.Errorf("PendingPoll(%s) = %s, want %s", age, got, want)
		}
	}
}

// TestWaitBoardLookup: a waiting pass stands for a full one only while nothing it would not
// see changed: the resource's generation, status (add-on, Provisioning), annotations (but the
// claim the creating pass wrote), credentials and organisation, and it is not frozen. A
// waiter that no longer matches is dropped.
func TestWaitBoardLookup(t *testing.T) {
	waiting := func(mutate func(u *unstructured.Unstructured)) *unstructured.Unstructured {
		u := resource("b")
		u.SetAnnotations(map[string]string{"team": "a"})
		kinds.Change(u, func(st *kinds.Status) { st.ObservedGeneration, st.Addon = 1, "addon_b" })
		status.SetConditions(u, []status.Condition{{Type: status.TypeAddonReady, Status: "False", Reason: status.ReasonProvisioning}})
		if mutate != nil {
			mutate(u)
		}
		return u
	}
	for _, c := range []struct {
		name         string
		mutate       func(u *unstructured.Unstructured)
		credKey, org string
		frozen, want bool
	}{
		{name: "unchanged", want: true},
		{name: "claim written since", mutate: func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"team": "a", kinds.AnnotationAddonClaim: "v1/addon_b/Azimutt/b/sig"})
		}, want: true},
		{name: "new generation", mutate: func(u *unstructured.Unstructured) { u.SetGeneration(2) }},
		{name: "generation not observed", mutate: func(u *unstructured.Unstructured) {
			kinds.Change(u, func(st *kinds.Status) { st.ObservedGeneration = 0 })
		}},
		{name: "another add-on", mutate: func(u *unstructured.Unstructured) { kinds.Change(u, func(st *kinds.Status) { st.Addon = "addon_c" }) }},
		{name: "no longer provisioning", mutate: func(u *unstructured.Unstructured) {
			status.SetConditions(u, []status.Condition{{Type: status.TypeAddonReady, Status: "True", Reason: "Provisioned"}})
		}},
		{name: "annotation changed", mutate: func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"team": "b"}) }},
		{name: "other credentials", credKey: "other"},
		{name: "other organisation", org: "orga_other"},
		{name: "frozen", frozen: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, t0, _ := testBoard(10)
			b.Add(waiting(nil), "creds", testOrg, "azimutt", Addon{ID: "addon_b", ConfigKeys: []string{"A"}}, t0, t0)
			credKey, org := "creds", testOrg
			if c.credKey != "" {
				credKey = c.credKey
			}
			if c.org != "" {
				org = c.org
			}
			u := waiting(c.mutate)
			w := b.Lookup(u, statusOf(u), status.Conditions(u), credKey, org, c.frozen)
			if (w != nil) != c.want || (b.Len() == 1) != c.want {
				t.Fatalf("found %v (%d waiting), want %v", w != nil, b.Len(), c.want)
			}
			if c.want && (w.UID != "b" || w.Addon.ID != "addon_b" || !slices.Equal(w.Addon.ConfigKeys, []string{"A"})) {
				t.Fatalf("waiter %s for %+v", w.UID, w.Addon)
			}
		})
	}
	if u := resource("b"); (&Board{}).Lookup(u, statusOf(u), status.Conditions(u), "creds", testOrg, false) != nil {
		t.Fatal("a waiter found on an empty board")
	}
}

func statusOf(u *unstructured.Unstructured) *kinds.Status {
	st := kinds.StatusOf(u)
	return &st
}
