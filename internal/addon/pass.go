package addon

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/patch"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/step"
)

// pass is the scope of one reconcile pass (Cluster API's scope, CloudNativePG's status
// transactions): the resource, what the pass learnt, and the status changes and events it
// decided. Steps change the status only in memory, through set; the pass's one status write
// happens in commit, at the end.
type pass struct {
	r    *Reconciler
	kind *kinds.Kind
	log  logr.Logger

	// obj is the working copy, base the snapshot taken at the start: what commit compares
	// with. st and conds are obj's status and conditions, decoded once: every change of them
	// is applied to them at once, and commit encodes them into obj once.
	obj, base *unstructured.Unstructured
	st        kinds.Status
	conds     []status.Condition
	// org is spec.organisation; life what the resource asks for (spec and annotations).
	org  string
	life lifecycle
	// first: this pass put the finalizer on the resource (no operator worked on it before).
	first bool

	// claim is the addon-claim annotation to write once the status is committed ("" none).
	claim string
	// grant is what the resource's credentials allow; api and key: its Clever Cloud client
	// and the key of its credential set (all set by connect).
	grant *credentials.Grant
	api   credentials.API
	key   string
	// slot is the tenant whose share of workers the pass holds ("" none: fairness.go).
	slot string
	// recorded is what the kind's source read for status (an operator add-on's v4 answer),
	// applied by publish (nil: nothing).
	recorded func(*kinds.Status)

	// changes are a handoff's changes of the resource, condChanges the pass's of the
	// conditions (condsChanged: one changed something), updates those of the typed status,
	// each in order; commit applies them again to a fresh copy when the write conflicts.
	changes      []func(*unstructured.Unstructured)
	condChanges  []status.Change
	condsChanged bool
	updates      []func(*kinds.Status)
	// syncPause: the Paused condition does not match the annotation yet (a write is due even
	// when nothing else changed).
	syncPause bool
	// released: the finalizer was removed; the resource may be gone, nothing more to write.
	released bool
	events   []passEvent
	// writes counts the status writes of the pass (0 or 1; tests and the bench check it).
	writes int
	// mode is what the pass turned out to be, for its trace span (tracing.go).
	mode string
	// soon, when positive, is when the pass wants to run again before the resync period
	// (Network Group joins Clever Cloud has not finished); provisioned: the pass ran the
	// capabilities' Provisioned hooks (synced the memberships).
	soon        time.Duration
	provisioned bool

	// handoffOpen: this pass opened a handoff of its status to the Helm side before writing
	// the source Secret; handingOff: it published, and commit fills the handoff instead of
	// writing (handoff.go). overlay: a handoff of an earlier pass, not written yet, applied to
	// this pass's copies as if it were (commit writes it with its own changes, if any).
	handoffOpen, handingOff bool
	overlay                 []func(*unstructured.Unstructured)
}

type passEvent struct{ typ, reason, msg string }

func (r *Reconciler) newPass(ctx context.Context, obj *unstructured.Unstructured) *pass {
	return &pass{
		r: r, kind: r.Kind, log: logr.FromContextOrDiscard(ctx),
		obj: obj, base: obj.DeepCopy(), st: kinds.StatusOf(obj), conds: status.Conditions(obj),
		org: kinds.SpecOrganisation.String(obj), life: lifecycleOf(obj),
	}
}

// reset makes live the pass's resource and snapshot (the deletion path reads it live).
func (s *pass) reset(live *unstructured.Unstructured) {
	s.obj, s.base, s.st, s.conds = live, live.DeepCopy(), kinds.StatusOf(live), status.Conditions(live)
	s.org, s.life = kinds.SpecOrganisation.String(live), lifecycleOf(live)
}

func (s *pass) now() time.Time { return s.r.now() }

// requeueAfter is when a published resource is looked at again: d (the resync), sooner when
// the pass asked for it, or when a capability asks (memberships pending that this pass, a
// wait or refresh pass, did not sync: in a second, and the next pass is a full one).
func (s *pass) requeueAfter(d time.Duration) time.Duration {
	if s.soon > 0 && s.soon < d {
		return s.soon
	}
	if s.soon == 0 && !s.provisioned {
		_, caps := s.r.capabilities()
		for _, c := range caps {
			if soon := c.Soon(s.obj, &s.st, s.conds); soon > 0 {
				return soon
			}
		}
	}
	return d
}

// set applies a change of the resource (a handoff's) to the working copy and records it.
func (s *pass) set(change func(*unstructured.Unstructured)) {
	change(s.obj)
	s.changes = append(s.changes, change)
}

// change applies a change of the conditions to the decoded ones and records it for commit.
func (s *pass) change(c status.Change) {
	var changed bool
	s.conds, changed = c(s.conds, s.obj)
	s.condsChanged = s.condsChanged || changed
	s.condChanges = append(s.condChanges, c)
}

// update applies a change of the typed status and records it for commit.
func (s *pass) update(change func(*kinds.Status)) {
	change(&s.st)
	s.updates = append(s.updates, change)
}

// allChanges are the pass's changes as changes of a resource: a handoff's, one that applies
// the conditions' (then derive's), one that applies the typed ones (distinct fields).
func (s *pass) allChanges(derive ...status.Change) []func(*unstructured.Unstructured) {
	all := slices.Clip(s.changes)
	for _, u := range []func(*unstructured.Unstructured){status.Update(append(slices.Clip(s.condChanges), derive...)), kinds.Update(s.updates)} {
		if u != nil {
			all = append(all, u)
		}
	}
	return all
}

// condition sets a condition in memory; it reports whether its reason or message changed
// (the engine records an event on such changes only, never on every retry).
func (s *pass) condition(t string, cs metav1.ConditionStatus, reason, msg string) (changed bool) {
	old, _ := status.Find(s.conds, t)
	s.change(status.Setting(t, cs, reason, msg, s.r.now)) // not s.now: a change handed off outlives the pass (handoff.go)
	return old.Reason != reason || old.Message != msg
}

// removeCondition drops a condition in memory.
func (s *pass) removeCondition(t string) { s.change(status.Removing(t)) }

// event queues an event on the resource; they are recorded when the pass ends.
func (s *pass) event(typ, reason, msg string) {
	s.events = append(s.events, passEvent{typ, reason, msg})
}

// stop ends the pass with res (step.End); stopRetry hands cause to the work queue's backoff.
func stop(res ctrl.Result) error { return step.End(res) }

func stopRetry(cause error) error { return step.Retry(cause) }

// end translates what the pass's steps returned into the work queue's answer.
func end(err error) (ctrl.Result, error) {
	var sp *step.Stop
	if errors.As(err, &sp) {
		return sp.Result, sp.Cause
	}
	return ctrl.Result{}, err
}

// commit is the pass's one status write. It encodes the pass's status and conditions (with
// Paused mirrored from the annotation and Ready derived) into the working copy once, and
// writes its status when it differs from the snapshot, with the snapshot's resourceVersion as
// an optimistic lock. On a conflict (the Helm side writes status too) it reads the resource
// live and applies the pass's changes again, as CloudNativePG's PatchWithOptimisticLock does.
// A pass that changed nothing writes nothing.
func (r *Reconciler) commit(ctx context.Context, s *pass) error {
	if s.handoffOpen {
		if s.handingOff && !s.released && !s.syncPause && r.Handoff.Fill(s.obj.GetUID(), s.obj.GetGeneration(), s.allChanges()) {
			s.log.V(1).Info("status handed off to the Helm side's write")
			return nil
		}
		r.Handoff.Drop(s.obj.GetUID())
	}
	if s.released || (len(s.changes) == 0 && len(s.condChanges) == 0 && len(s.updates) == 0 && !s.syncPause) {
		return nil
	}
	s.st.Encode(s.obj)
	derive := []status.Change{syncPaused(r.now), status.Deriving(r.now)} // replayed after a conflict too
	var changed bool
	if s.conds, changed = status.Apply(s.conds, s.obj, derive...); changed || s.condsChanged {
		status.SetConditions(s.obj, s.conds)
	}
	h := &patch.Helper[*unstructured.Unstructured]{Base: s.base, Obj: s.obj, Changes: s.allChanges(derive...)}
	wrote, err := h.Commit(ctx, r.Client, patch.Options[*unstructured.Unstructured]{
		Reader:  r.APIReader,
		Overlay: s.overlay,
		Writing: func() {
			if r.Handoff != nil {
				r.Handoff.Claim(s.obj.GetUID()) // a handoff this status holds is the engine's to write now
			}
		},
		Wrote: func(cur, next *unstructured.Unstructured) {
			if ready, shown := status.HelmFailureShown(cur, next); shown {
				s.event(corev1.EventTypeWarning, ready.Reason, ready.Message)
			}
			s.writes++
		},
	})
	if err == nil && wrote && r.Handoff != nil {
		r.Handoff.Settle(s.obj.GetUID()) // a handoff it held was written with this pass's status
	}
	return err
}

// flushEvents records the pass's events.
func (r *Reconciler) flushEvents(s *pass) {
	for _, e := range s.events {
		r.Recorder.Event(s.obj, e.typ, e.reason, e.msg)
	}
	s.events = nil
}

// syncPaused mirrors the pause annotation in the Paused condition.
func syncPaused(now func() time.Time) status.Change {
	return func(conds []status.Condition, u *unstructured.Unstructured) ([]status.Condition, bool) {
		if u.GetAnnotations()[kinds.AnnotationPaused] != "true" {
			return status.Remove(conds, status.TypePaused)
		}
		return status.Setting(status.TypePaused, metav1.ConditionTrue, status.ReasonPauseRequested,
			"paused by the annotation "+kinds.AnnotationPaused+": no Clever Cloud writes and no Secret re-rendering; reads and the existing Secret stay", now)(conds, u)
	}
}

// pausedChanged says whether the Paused condition does not match the annotation yet.
func (s *pass) pausedChanged() bool {
	_, has := status.Find(s.conds, status.TypePaused)
	return has != (s.obj.GetAnnotations()[kinds.AnnotationPaused] == "true")
}
