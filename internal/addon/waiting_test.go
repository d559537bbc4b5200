package addon

import (
	"context"
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
		if got, ok := g.estimate(c.polled); got != c.want || ok != c.ok {
			t.Errorf("estimate(hi %s, polled %s) = %s %v, want %s %v", c.hi, c.polled, got, ok, c.want, c.ok)
		}
	}
}

// TestWaitBoardLearns: only the oldest waiter probes; once its add-on is seen provisioned,
// the others are woken and read their env at that age of their own.
func TestWaitBoardLearns(t *testing.T) {
	k, _ := testResource(t, nil)
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	now := t0
	r := &Reconciler{Kind: k, Now: func() time.Time { return now }}
	wake := make(chan event.TypedGenericEvent[*unstructured.Unstructured], 10)
	r.waits.wake = wake
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
	now = t0.Add(58 * time.Second)
	if d := r.waits.notReady(wa, now); d != 3*time.Second {
		t.Fatalf("probe at 58 s waits %s, want 3s", d)
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
	if d := r.waits.notReady(wb, now); d != 3*time.Second {
		t.Fatalf("b after reading at hi waits %s, want 3s (the group's probe)", d)
	}
	// c, not the probe, misses at hi too (slower than a): it keeps reading every few seconds
	// until twice hi, then falls back.
	wc := r.waits.byUID["c"]
	now = t0.Add(64 * time.Second)
	if d := r.waits.notReady(wc, now); d != 3*time.Second {
		t.Fatalf("c after a miss at hi waits %s, want 3s", d)
	}
	now = t0.Add(130 * time.Second)
	if d := r.waits.notReady(wc, now); d < 2*time.Minute-time.Second {
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
