package addon

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/waits"
)

// Waiting for Clever Cloud to provision an add-on (issue #17, P7): the board of internal/waits
// keeps the resources waiting, by credential set, organisation and kind; these are the pass
// steps that feed and read it.

// wait puts s's resource on the board, waiting for addon created at created (its env read in
// this pass and incomplete, or not read: its group is being waited for), and returns when to
// look again.
func (r *Reconciler) wait(s *pass, addon *clevercloud.Addon, created time.Time) time.Duration {
	return r.board.Add(s.obj, s.key, s.org, r.Kind.Lower(), waits.Addon{ID: addon.ID, RealID: addon.RealID, ConfigKeys: addon.ConfigKeys}, created, s.now())
}

// waiting is the board's waiter for s's resource when a waiting pass may stand for a full
// one (nil: a full pass).
func (r *Reconciler) waiting(s *pass) *waits.Waiter {
	return r.board.Lookup(s.obj, &s.st, s.conds, s.key, s.org, s.life.observeOnly || s.life.paused)
}

// waitPass stands for a full pass while the add-on is being provisioned: no call before its
// env is worth reading, then one env read; provisioned, the credentials are published as the
// full pass would.
func (r *Reconciler) waitPass(ctx context.Context, s *pass, w *waits.Waiter) error {
	now := r.now()
	if d := r.board.DueIn(w, now); d > 0 {
		return stop(ctrl.Result{RequeueAfter: d})
	}
	env, err := s.api.GetAddonEnv(ctx, s.org, w.Addon.ID) // sent at now
	if err != nil {
		r.board.Drop(w.UID)
		if clevercloud.IsNotFound(err) {
			// Gone meanwhile: a full pass looks it up.
			return stop(ctrl.Result{Requeue: true})
		}
		return s.failAPI("reading the add-on's credentials", err)
	}
	r.ensureClaim(s, w.Addon.ID)
	data := clevercloud.EnvMap(env)
	if msg := pendingMessage(r.Kind, &s.st, w.Addon.ID, w.Addon.ConfigKeys, data); msg != "" {
		return s.pendingFor(msg, r.board.NotReady(w, now, r.now()))
	}
	r.board.Ready(w, r.now())
	return r.publish(ctx, s, w.Addon.ID, w.Addon.RealID, data)
}

// waitable: the kind's credentials are its v2 env (its source is waited for), and nothing
// but provisioning can make variables missing (no rotation under way).
func (r *Reconciler) waitable(s *pass, addon *clevercloud.Addon, created time.Time) bool {
	src, _ := r.capabilities()
	return src.Waited() && len(addon.ConfigKeys) > 0 &&
		s.st.Creds().RevokedKeyHash == "" && s.now().Sub(created) < waits.MaxAge
}
