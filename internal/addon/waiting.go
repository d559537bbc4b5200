package addon

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Waiting for Clever Cloud to provision an add-on (issue #17, P7).
//
// A new add-on's env lists none of its variables until the platform has provisioned it (about
// a minute for a database; the fake's ProvisioningDelay). Each resource reading its env on its
// own short backoff cost about 20 calls per resource (11 env reads and 7.5 add-on GETs while
// waiting) and, with 500 resources waiting, 150 requests/s against one organisation. The
// board below keeps, in memory, the add-ons this process is waiting for, grouped by credential
// set, organisation and kind (add-ons of one kind created together provision in about the same
// time), and:
//
//   - only the group's oldest waiting add-on (the probe) reads its env often (every 2–3 s);
//     the others wait without any call, on a long fallback backoff (90 s, then their age,
//     at most 2 min between reads: longer than most provisioning, so rarely a wasted read);
//   - once an add-on of the group is seen provisioned, at age hi, every other waiter reads
//     its env once at that age of its own, and is woken for it at once;
//   - an add-on created while others of its group are waited for joins them without reading
//     its env at once (with an API answering at once, no group ever waits: the read right
//     after the create stays, and a resource is Ready in one pass);
//   - a waiting pass reads the env only: the add-on's id, realId and configKeys were read by
//     the pass that created (or found) it, and its spec has not changed since (generation,
//     annotations and credentials are compared), so no GET of the add-on is needed until it is
//     Ready. That pass did the checks findAddon does (claim, binding); the next full pass (the
//     periodic refresh, or any spec change) does them again.
//
// Nothing here is needed for correctness: the board is lost on restart, when every resource
// gets a full pass again (GET of the add-on, then its env), as before.
type waitBoard struct {
	mu     sync.Mutex
	byUID  map[types.UID]*waiter
	groups map[string]*waitGroup
	// wake enqueues a resource (the engine's channel source); nil in unit tests.
	wake chan event.TypedGenericEvent[*unstructured.Unstructured]
}

// waiter is one resource waiting for its add-on's env.
type waiter struct {
	uid             types.UID
	key             types.NamespacedName
	group           string
	addonID, realID string
	configKeys      []string
	created         time.Time
	generation      int64
	annotations     string
	lastPoll        time.Time     // its last env read (or when it joined without one)
	polledAge       time.Duration // the add-on's age then
	credKey, org    string
}

// waitGroup is what the waiters of one credential set, organisation and kind learnt.
type waitGroup struct {
	members map[types.UID]*waiter
	// hi is the youngest age at which an add-on of the group was seen provisioned (0: none yet).
	hi time.Duration
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
	// maxWaiterAge: an add-on older than this with variables missing is not provisioning
	// in the usual sense; it gets the plain per-resource backoff (pendingPoll).
	maxWaiterAge = 10 * time.Minute
)

// probeGap is the delay between two env reads of a group's probe of that age.
func probeGap(age time.Duration) time.Duration {
	if age >= probeMaxAge {
		return pendingPoll(age)
	}
	return min(max(age/4, probeMin), probeMax)
}

// fallbackGap is the delay between two env reads of a waiter that is not its group's probe
// and has nothing learnt to go by.
func fallbackGap(age time.Duration) time.Duration {
	return min(max(age, fallbackMin), fallbackMax)
}

// estimate is the age at which a waiter that was last read at age polled should read its
// env next, from what its group learnt (ok false: nothing learnt that applies): hi, the
// youngest age at which an add-on of the group was seen provisioned. (Not earlier, e.g. the
// middle of lo..hi: every waiter reading too early costs one more read, and the probe's
// reads are at most probeMax apart, so hi is that late at most.)
func (g *waitGroup) estimate(polled time.Duration) (time.Duration, bool) {
	if g.hi <= 0 || polled >= g.hi {
		return 0, false
	}
	return g.hi, true
}

// probe is the group's oldest waiter younger than probeMaxAge (nil: none).
func (g *waitGroup) probe(now time.Time) *waiter {
	var p *waiter
	for _, w := range g.members {
		if now.Sub(w.created) >= probeMaxAge {
			continue
		}
		if p == nil || w.created.Before(p.created) || (w.created.Equal(p.created) && w.uid < p.uid) {
			p = w
		}
	}
	return p
}

// due is when w's env is worth reading again.
func (g *waitGroup) due(w *waiter, now time.Time) time.Time {
	if est, ok := g.estimate(w.polledAge); ok {
		return w.created.Add(est)
	}
	if g.probe(now) == w || (g.hi > 0 && w.polledAge < 2*g.hi) {
		// The probe; or a waiter slower than the add-on seen provisioned at hi (a miss at
		// that age): it keeps close until twice that age, then falls back.
		return w.lastPoll.Add(probeGap(w.polledAge))
	}
	gap := fallbackGap(w.polledAge)
	return w.lastPoll.Add(gap + time.Duration(rand.Int64N(int64(gap/10)+1)))
}

func annotationsKey(obj *unstructured.Unstructured) string {
	a := obj.GetAnnotations()
	keys := make([]string, 0, len(a))
	for k := range a {
		if k != AnnotationAddonClaim { // written by the pass that created the add-on
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

func (b *waitBoard) init() {
	if b.byUID == nil {
		b.byUID = map[types.UID]*waiter{}
		b.groups = map[string]*waitGroup{}
	}
}

// add records that s's resource waits for addon (its env read in this pass and incomplete, or
// not read: its group is being waited for), and returns when to look again.
func (b *waitBoard) add(s *pass, addon *clevercloud.Addon, created time.Time, kind string) time.Duration {
	now := s.now()
	obj := s.obj
	w := &waiter{
		uid: obj.GetUID(), key: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()},
		addonID: addon.ID, realID: addon.RealID, configKeys: slices.Clone(addon.ConfigKeys),
		created: created, generation: obj.GetGeneration(), annotations: annotationsKey(obj),
		lastPoll: now, polledAge: now.Sub(created), credKey: s.key, org: s.org,
	}
	w.group = s.key + "\x00" + s.org + "\x00" + kind
	b.mu.Lock()
	defer b.mu.Unlock()
	b.init()
	b.removeLocked(w.uid)
	b.byUID[w.uid] = w
	g := b.groups[w.group]
	if g == nil {
		g = &waitGroup{members: map[types.UID]*waiter{}}
		b.groups[w.group] = g
	}
	g.members[w.uid] = w
	return max(g.due(w, now).Sub(now), 0)
}

// busy: add-ons of s's credential set, organisation and kind are being waited for (seen
// unprovisioned): one just created is not provisioned either, its env is not worth reading yet.
func (b *waitBoard) busy(s *pass, kind string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.groups[s.key+"\x00"+s.org+"\x00"+kind]
	return g != nil && len(g.members) > 0
}

// lookup is the waiter of s's resource, when a waiting pass may stand for a full one: same
// add-on in status, still Provisioning, same generation, annotations and credentials.
// A waiter that no longer matches is dropped.
func (b *waitBoard) lookup(s *pass) *waiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.byUID[s.obj.GetUID()]
	if w == nil {
		return nil
	}
	a, _ := status.Find(status.Conditions(s.obj), status.TypeAddonReady)
	if w.generation != s.obj.GetGeneration() || statusObservedGeneration.Int64(s.obj) != w.generation ||
		statusAddon.String(s.obj) != w.addonID || a.Status != string(metav1.ConditionFalse) || a.Reason != status.ReasonProvisioning ||
		w.annotations != annotationsKey(s.obj) || w.credKey != s.key || w.org != s.org || s.life.observeOnly || s.life.paused {
		b.removeLocked(w.uid)
		return nil
	}
	return w
}

// dueIn is how long w still waits before its env is worth reading (0: now).
func (b *waitBoard) dueIn(w *waiter, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.groups[w.group]
	if g == nil {
		return 0
	}
	return max(g.due(w, now).Sub(now), 0)
}

// notReady records an env read of w that found variables missing; returns when to look again.
func (b *waitBoard) notReady(w *waiter, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	w.lastPoll, w.polledAge = now, now.Sub(w.created)
	g := b.groups[w.group]
	if g == nil {
		return pendingPoll(w.polledAge)
	}
	return max(g.due(w, now).Sub(now), 0)
}

// ready records that w's add-on was seen provisioned, drops it, and wakes the waiters of its
// group whose next read comes earlier now.
func (b *waitBoard) ready(w *waiter, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.groups[w.group]
	b.removeLocked(w.uid)
	if g == nil {
		return
	}
	age := now.Sub(w.created)
	if g.hi > 0 && age >= g.hi {
		return
	}
	g.hi = age
	for _, o := range g.members {
		b.wakeLocked(o) // its next read may come earlier now: it decides on its pass
	}
}

// wakeLocked enqueues o without blocking (a full channel leaves it to its requeue).
func (b *waitBoard) wakeLocked(o *waiter) {
	if b.wake == nil {
		return
	}
	u := &unstructured.Unstructured{}
	u.SetNamespace(o.key.Namespace)
	u.SetName(o.key.Name)
	select {
	case b.wake <- event.TypedGenericEvent[*unstructured.Unstructured]{Object: u}:
	default:
	}
}

func (b *waitBoard) drop(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(uid)
}

func (b *waitBoard) removeLocked(uid types.UID) {
	w := b.byUID[uid]
	if w == nil {
		return
	}
	delete(b.byUID, uid)
	if g := b.groups[w.group]; g != nil {
		delete(g.members, uid)
		if len(g.members) == 0 {
			delete(b.groups, w.group)
		}
	}
}

// waitPass stands for a full pass while the add-on is being provisioned: no call before its
// env is worth reading, then one env read; provisioned, the credentials are published as the
// full pass would.
func (r *Reconciler) waitPass(ctx context.Context, s *pass, w *waiter) error {
	now := r.now()
	if d := r.waits.dueIn(w, now); d > 0 {
		return stop(ctrl.Result{RequeueAfter: d})
	}
	env, err := s.api.GetAddonEnv(ctx, s.org, w.addonID)
	if err != nil {
		r.waits.drop(w.uid)
		if clevercloud.IsNotFound(err) {
			// Gone meanwhile: a full pass looks it up.
			return stop(ctrl.Result{Requeue: true})
		}
		return s.failAPI("reading the add-on's credentials", err)
	}
	r.ensureClaim(s, w.addonID)
	data := envToMap(env)
	if msg := pendingMessage(r.Kind, s.obj, w.addonID, w.configKeys, data); msg != "" {
		return s.pendingFor(msg, r.waits.notReady(w, r.now()))
	}
	r.waits.ready(w, r.now())
	return r.publish(ctx, s, w.addonID, w.realID, data)
}

// waitable: the kind's credentials are its v2 env, and nothing but provisioning can make
// variables missing (no rotation under way).
func (r *Reconciler) waitable(s *pass, addon *clevercloud.Addon, created time.Time) bool {
	return r.Kind.Operator == "" && !r.Kind.ConfigProvider && len(addon.ConfigKeys) > 0 &&
		credRevokedKeyHash.String(s.obj) == "" && s.now().Sub(created) < maxWaiterAge
}
