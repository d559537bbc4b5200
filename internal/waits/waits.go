// Package waits holds the board of the add-ons this process waits for while Clever Cloud
// provisions them (issue #17, P7); the engine (internal/addon) reads and feeds it.
//
// A new add-on's env lists none of its variables until the platform has provisioned it (about
// a minute for a database; the fake's ProvisioningDelay). Each resource reading its env on its
// own short backoff cost about 20 calls per resource (11 env reads and 7.5 add-on GETs while
// waiting) and, with 500 resources waiting, 150 requests/s against one organisation. The
// Board keeps, in memory, the add-ons this process is waiting for, grouped by credential
// set, organisation and kind (add-ons of one kind created together provision in about the same
// time), and:
//
//   - only the group's oldest waiting add-on (the probe) reads its env often (every 2–3 s);
//     the others wait without any call, on a long fallback backoff (90 s, then their age,
//     at most 2 min between reads: longer than most provisioning, so rarely a wasted read);
//   - once an add-on of the group is seen provisioned, at age hi, every other waiter reads
//     its env once at that age of its own, and is woken for it at once;
//   - hi is up to a probe gap (3 s) later than the add-on's provisioning, and with it every
//     waiter's read. When the group also knows an age lo < hi at which an add-on was seen
//     unprovisioned (the probe's previous read), one waiter at a time, the bisector (the
//     oldest still younger than the middle), reads at the middle of lo..hi instead, until the
//     two are less than bisectMin apart or maxBisects such reads were made: each halves the
//     interval (a miss raises lo; a hit lowers hi, to the age the answer came at) and costs
//     at most one read more (a miss reads again), a few reads per group whatever its size,
//     and the waiters created later read about bisectMin after their add-on is provisioned
//     instead of up to 3 s (P7: 1.2 s of the last add-on's 61.2 s in one run, where all Ready
//     came at 70.0 s against a goal of 70). No read is later than at hi, as before; when ages
//     disagree (add-ons of one kind that take different times), a hit below lo drops lo and
//     the group reads at hi;
//   - an add-on created while others of its group are waited for joins them without reading
//     its env at once (with an API answering at once, no group ever waits: the read right
//     after the create stays, and a resource is Ready in one pass);
//   - a waiting pass reads the env only: the add-on's id, realId and configKeys were read by
//     the pass that created (or found) it, and its spec has not changed since (generation,
//     annotations and credentials are compared), so no GET of the add-on is needed until it is
//     Ready. That pass did the checks the engine's findAddon does (claim, binding); the next
//     full pass (the periodic refresh, or any spec change) does them again.
//
// Nothing here is needed for correctness: the Board is lost on restart, when every resource
// gets a full pass again (GET of the add-on, then its env), as before.
package waits

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Board keeps the resources waiting for their add-ons' env, by group; its zero value is
// ready to use.
type Board struct {
	mu     sync.Mutex
	byUID  map[types.UID]*Waiter
	groups map[string]*group
	// Wake enqueues a resource (the engine's channel source, made by its SetupWithManager);
	// nil: no resource is woken (unit tests).
	Wake chan event.TypedGenericEvent[*unstructured.Unstructured]
}

// Addon is what a waiting pass needs of the add-on waited for, read by the pass that created
// (or found) it.
type Addon struct {
	ID, RealID string
	ConfigKeys []string
}

// Waiter is one resource waiting for its add-on's env. UID and Addon are set by Add and never
// change; the rest is the board's, under its lock.
type Waiter struct {
	UID         types.UID
	Addon       Addon
	key         types.NamespacedName
	group       string
	created     time.Time
	generation  int64
	annotations string
	lastPoll    time.Time     // its last env read (or when it joined without one)
	polledAge   time.Duration // the add-on's age then
	missAge     time.Duration // the add-on's age when its last read that missed was sent (0: none)
	next        time.Time     // when its pass was last told to come back (zero: now)
	credKey     string
	org         string
}

// group is what the waiters of one credential set, organisation and kind learnt.
type group struct {
	members map[types.UID]*Waiter
	// hi is the youngest age at which an add-on of the group was seen provisioned (0: none yet).
	hi time.Duration
	// lo is the oldest age below hi at which an add-on of the group was seen unprovisioned,
	// taken when the read was sent (0: none known): with one provisioning time for the
	// group, it lies in lo..hi.
	lo time.Duration
	// bisector is the one waiter that reads at the middle of lo..hi (nil: none), kept by
	// pickBisector; bisects counts the reads it made.
	bisector *Waiter
	bisects  int
}

// Probe and fallback schedules. A probe younger than probeMaxAge reads its env every
// probeGap of its age (clamped to probeMin..probeMax); older add-ons are not taken as probes
// (one stuck add-on must not make its group poll fast forever).
const (
	probeMin    = 2 * time.Second
	probeMax    = 3 * time.Second
	probeMaxAge = 3 * time.Minute
	fallbackMin = 90 * time.Second
	fallbackMax = 2 * time.Minute
	// bisectMin: lo..hi narrower than this is not halved further (a few API round trips: a
	// hit's age is taken when its answer came, 100–200 ms after the request); maxBisects
	// bounds the reads at the middle per group (the hits' latency keeps lo..hi above it).
	bisectMin  = 500 * time.Millisecond
	maxBisects = 6
	// wakeSlack: a waiter whose next read comes earlier by less than this is not woken for it.
	wakeSlack = 100 * time.Millisecond
	// MaxAge: an add-on older than this with variables missing is not provisioning in the
	// usual sense; it gets the plain per-resource backoff (PendingPoll), not the board.
	MaxAge = 10 * time.Minute
)

// PendingPoll is the delay before looking again at an add-on of that age being provisioned.
func PendingPoll(age time.Duration) time.Duration {
	if age <= 0 {
		return 2 * time.Second
	}
	return min(max(age/4, 2*time.Second), 30*time.Second)
}

// probeGap is the delay between two env reads of a group's probe of that age.
func probeGap(age time.Duration) time.Duration {
	if age >= probeMaxAge {
		return PendingPoll(age)
	}
	return min(max(age/4, probeMin), probeMax)
}

// fallbackGap is the delay between two env reads of a waiter that is not its group's probe
// and has nothing learnt to go by.
func fallbackGap(age time.Duration) time.Duration {
	return min(max(age, fallbackMin), fallbackMax)
}

// estimate is the age at which w should read its env next, from what its group learnt (ok
// false: nothing learnt that applies): hi, the youngest age at which an add-on of the group
// was seen provisioned, or for the bisector the middle of lo..hi.
func (g *group) estimate(w *Waiter) (time.Duration, bool) {
	read := w.readAge()
	if g.hi <= 0 || read >= g.hi {
		return 0, false
	}
	if mid, ok := g.mid(); ok && w == g.bisector && read < mid {
		return mid, true
	}
	return g.hi, true
}

// readAge is the add-on's age at w's last read, as sent (a miss answered after hi was still
// asked before it: w reads at hi, not as a waiter slower than the group), or when w joined.
func (w *Waiter) readAge() time.Duration {
	if w.missAge > 0 {
		return w.missAge
	}
	return w.polledAge
}

// mid is the middle of lo..hi while both are known, at least bisectMin apart and halved
// fewer than maxBisects times.
func (g *group) mid() (time.Duration, bool) {
	if g.hi <= 0 || g.lo <= 0 || g.hi-g.lo < bisectMin || g.bisects >= maxBisects {
		return 0, false
	}
	return g.lo + (g.hi-g.lo)/2, true
}

// pickBisector makes the group's oldest waiter still younger than the middle of lo..hi its
// bisector (none when there is no interval to halve): it will read there, at that age. One
// already older would read at an age nearer hi, and an answer arriving past hi tells nothing.
// A bisector keeps the role until it has read (or is past hi): its read may come a little
// after the middle.
// Called whenever lo, hi or the members change; it returns the bisector when it changed
// (nil otherwise) so that it can be woken.
func (g *group) pickBisector(now time.Time) *Waiter {
	prev := g.bisector
	g.bisector = nil
	mid, ok := g.mid()
	if !ok {
		return nil
	}
	if prev != nil && g.members[prev.UID] == prev && prev.readAge() < mid && now.Sub(prev.created) < g.hi {
		g.bisector = prev // it has not read yet: on its way to the middle, or reading there
		return nil
	}
	for _, w := range g.members {
		if w.readAge() < mid && now.Sub(w.created) < mid && (g.bisector == nil || older(w, g.bisector)) {
			g.bisector = w
		}
	}
	if g.bisector == prev {
		return nil
	}
	return g.bisector
}

// noProbe stands for "the group has no probe" in dueWith.
var noProbe = &Waiter{}

func older(a, b *Waiter) bool {
	return a.created.Before(b.created) || (a.created.Equal(b.created) && a.UID < b.UID)
}

// seenUnprovisioned records a read sent at the add-on's age sent that found it unprovisioned.
func (g *group) seenUnprovisioned(sent time.Duration) {
	if g.hi > 0 && sent < g.hi {
		g.lo = max(g.lo, sent)
	}
}

// seenProvisioned records a read that found the add-on provisioned at age, whose last read
// that missed was sent at age missed (0: none); false when hi did not move.
func (g *group) seenProvisioned(age, missed time.Duration) bool {
	if g.hi > 0 && age >= g.hi {
		return false
	}
	g.hi = age
	if g.lo >= g.hi {
		g.lo = 0 // ages that disagree: no interval to halve
	}
	if missed > 0 && missed < age {
		g.lo = max(g.lo, missed)
	}
	return true
}

// probe is the group's oldest waiter younger than probeMaxAge (nil: none).
func (g *group) probe(now time.Time) *Waiter {
	var p *Waiter
	for _, w := range g.members {
		if now.Sub(w.created) >= probeMaxAge {
			continue
		}
		if p == nil || older(w, p) {
			p = w
		}
	}
	return p
}

// due is when w's env is worth reading again.
func (g *group) due(w *Waiter, now time.Time) time.Time {
	return g.dueWith(w, now, nil)
}

// dueWith is due with the group's probe, when the caller has it (nil: found here; a loop
// over the members finds it once; noProbe: the group has none).
func (g *group) dueWith(w *Waiter, now time.Time, probe *Waiter) time.Time {
	if est, ok := g.estimate(w); ok {
		return w.created.Add(est)
	}
	if probe == nil {
		probe = g.probe(now)
	}
	if probe == w || (g.hi > 0 && w.polledAge < 2*g.hi) {
		// The probe; or a waiter slower than the add-on seen provisioned at hi (a miss at
		// that age): it keeps close until twice that age, then falls back.
		return w.lastPoll.Add(probeGap(w.polledAge))
	}
	gap := fallbackGap(w.polledAge)
	return w.lastPoll.Add(gap + time.Duration(rand.Int64N(int64(gap/10)+1)))
}

// groupKey names the group of add-ons of one credential set, organisation and kind.
func groupKey(credKey, org, kind string) string {
	return credKey + "\x00" + org + "\x00" + kind
}

func annotationsKey(obj *unstructured.Unstructured) string {
	a := obj.GetAnnotations()
	keys := make([]string, 0, len(a))
	for k := range a {
		if k != kinds.AnnotationAddonClaim { // written by the pass that created the add-on
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(a[k])
		b.WriteByte(0)
	}
	return b.String()
}

func (b *Board) init() {
	if b.byUID == nil {
		b.byUID = map[types.UID]*Waiter{}
		b.groups = map[string]*group{}
	}
}

// Add records that obj waits for addon, created at created (its env read in this pass and
// incomplete, or not read: its group is being waited for), with the credentials of key
// credKey in organisation org, and returns how long from now to wait before looking again.
// kind names the add-ons' group with credKey and org.
func (b *Board) Add(obj *unstructured.Unstructured, credKey, org, kind string, addon Addon, created, now time.Time) time.Duration {
	addon.ConfigKeys = slices.Clone(addon.ConfigKeys)
	w := &Waiter{
		UID: obj.GetUID(), Addon: addon, key: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()},
		created: created, generation: obj.GetGeneration(), annotations: annotationsKey(obj),
		lastPoll: now, polledAge: now.Sub(created), credKey: credKey, org: org,
	}
	w.group = groupKey(credKey, org, kind)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.init()
	b.removeLocked(w.UID)
	b.byUID[w.UID] = w
	g := b.groups[w.group]
	if g == nil {
		g = &group{members: map[types.UID]*Waiter{}}
		b.groups[w.group] = g
	}
	g.members[w.UID] = w
	if o := g.pickBisector(now); o != nil && o != w {
		b.wakeIfEarlierLocked(g, o, now, nil)
	}
	return w.after(g, now)
}

// after is how long w waits from now for its next read, noted as its next wake.
func (w *Waiter) after(g *group, now time.Time) time.Duration {
	d := max(g.due(w, now).Sub(now), 0)
	w.next = now.Add(d)
	return d
}

// Busy: add-ons of this credential set, organisation and kind are being waited for (seen
// unprovisioned): one just created is not provisioned either, its env is not worth reading yet.
func (b *Board) Busy(credKey, org, kind string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.groups[groupKey(credKey, org, kind)]
	return g != nil && len(g.members) > 0
}

// Lookup is the waiter of obj (of status st and conditions conds), when a waiting pass may
// stand for a full one: same add-on in status, still Provisioning, same generation,
// annotations and credentials (credKey, org), and not frozen (observe-only or paused: such a
// resource gets full passes). A waiter that no longer matches is dropped.
func (b *Board) Lookup(obj *unstructured.Unstructured, st *kinds.Status, conds []status.Condition, credKey, org string, frozen bool) *Waiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.byUID[obj.GetUID()]
	if w == nil {
		return nil
	}
	a, _ := status.Find(conds, status.TypeAddonReady)
	if w.generation != obj.GetGeneration() || st.ObservedGeneration != w.generation ||
		st.Addon != w.Addon.ID || a.Status != string(metav1.ConditionFalse) || a.Reason != status.ReasonProvisioning ||
		w.annotations != annotationsKey(obj) || w.credKey != credKey || w.org != org || frozen {
		b.removeLocked(w.UID)
		return nil
	}
	return w
}

// DueIn is how long w still waits before its env is worth reading (0: now).
func (b *Board) DueIn(w *Waiter, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.groups[w.group]
	if g == nil {
		return 0
	}
	return w.after(g, now)
}

// NotReady records an env read of w, sent at sent, that found variables missing; returns
// how long from now to wait before looking again.
func (b *Board) NotReady(w *Waiter, sent, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	w.lastPoll, w.polledAge, w.missAge = now, now.Sub(w.created), max(sent.Sub(w.created), 0)
	g := b.groups[w.group]
	if g == nil {
		return PendingPoll(w.polledAge)
	}
	if w == g.bisector {
		g.bisects++
	}
	g.seenUnprovisioned(w.missAge)
	if o := g.pickBisector(now); o != nil && o != w {
		b.wakeIfEarlierLocked(g, o, now, nil) // the next read at the middle is its
	}
	return w.after(g, now)
}

// Ready records that w's add-on was seen provisioned, drops it, and wakes the waiters of its
// group whose next read comes earlier now.
func (b *Board) Ready(w *Waiter, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.groups[w.group]
	if g != nil && w == g.bisector {
		g.bisects++
	}
	b.removeLocked(w.UID)
	if g == nil || len(g.members) == 0 {
		return
	}
	if !g.seenProvisioned(now.Sub(w.created), w.missAge) {
		if o := g.pickBisector(now); o != nil {
			b.wakeIfEarlierLocked(g, o, now, nil)
		}
		return
	}
	g.pickBisector(now)
	p := g.probe(now)
	if p == nil {
		p = noProbe
	}
	for _, o := range g.members {
		b.wakeIfEarlierLocked(g, o, now, p)
	}
}

// wakeIfEarlierLocked wakes o when its next read comes earlier than it was told; its pass
// notes its next wake. probe is as for dueWith.
func (b *Board) wakeIfEarlierLocked(g *group, o *Waiter, now time.Time, probe *Waiter) {
	if o.next.IsZero() || g.dueWith(o, now, probe).Before(o.next.Add(-wakeSlack)) {
		b.wakeLocked(o)
	}
}

// wakeLocked enqueues o without blocking (a full channel leaves it to its requeue).
func (b *Board) wakeLocked(o *Waiter) {
	if b.Wake == nil {
		return
	}
	u := &unstructured.Unstructured{}
	u.SetNamespace(o.key.Namespace)
	u.SetName(o.key.Name)
	select {
	case b.Wake <- event.TypedGenericEvent[*unstructured.Unstructured]{Object: u}:
	default:
	}
}

// Drop takes the resource of that UID off the board.
func (b *Board) Drop(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(uid)
}

// Len is the number of resources waiting.
func (b *Board) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.byUID)
}

func (b *Board) removeLocked(uid types.UID) {
	w := b.byUID[uid]
	if w == nil {
		return
	}
	delete(b.byUID, uid)
	if g := b.groups[w.group]; g != nil {
		delete(g.members, uid)
		if len(g.members) == 0 {
			delete(b.groups, w.group)
		} else if g.bisector == w {
			g.bisector = nil // the next change in the group picks another
		}
	}
}
