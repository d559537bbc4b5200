package addon

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/internal/rollout"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Rotation annotation.
const (
	// AnnotationRotateRequestedAt on a resource asks Clever Cloud to regenerate the add-on's
	// credentials (any new value, e.g. a timestamp), for the kinds whose API allows it.
	AnnotationRotateRequestedAt = kinds.Group + "/rotate-requested-at"
)

// rolloutPoll is how often the engine looks whether the Helm side has rendered the new
// credentials before restarting workloads (cache reads only).
const rolloutPoll = 2 * time.Second

// recordCredentials updates status.credentials for the published data: hash, lastChangedAt
// when it changed; the first publication is the rollout baseline (nothing to restart).
func recordCredentials(st *kinds.Status, hash string, now time.Time) {
	c := st.EnsureCreds()
	prev := c.Hash
	if prev == hash {
		return
	}
	changed := metav1.NewTime(now)
	c.Hash, c.LastChangedAt = hash, &changed
	if prev == "" {
		c.RolledOutHash = hash
	}
}

// rolloutDue says whether the credentials changed since the workloads were last restarted.
func rolloutDue(st *kinds.Status) bool {
	c := st.Creds()
	return c.Hash != "" && c.Hash != c.RolledOutHash
}

// rollout restarts the opted-in workloads once the Helm side has published the new
// credentials: their pod template gets the new hash, so their pods roll. It makes no Clever
// Cloud call.
func (r *Reconciler) rollout(ctx context.Context, s *pass) error {
	obj := s.obj
	hash := s.st.Creds().Hash
	p := r.Kind.PublicationFor(obj)
	if !p.Disabled {
		sec := &corev1.Secret{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: p.SecretName}, sec)
		if err != nil || sec.Annotations[secrets.AnnotationCredentialsHash] != hash {
			return stop(ctrl.Result{RequeueAfter: rolloutPoll})
		}
		restarted, err := rollout.Restart(ctx, r.APIReader, r.Client, obj, p.SecretName, hash)
		if err != nil {
			s.event(corev1.EventTypeWarning, status.EventRolloutFailed, fmt.Sprintf("Restarting the workloads that use Secret %s failed: %v", p.SecretName, err))
			return err
		}
		if len(restarted) > 0 {
			s.event(corev1.EventTypeNormal, status.EventRolloutTriggered, fmt.Sprintf("Credentials in Secret %s changed; restarting %s", p.SecretName, strings.Join(restarted, ", ")))
		}
	}
	s.update(func(st *kinds.Status) { st.EnsureCreds().RolledOutHash = hash })
	return stop(ctrl.Result{RequeueAfter: queue.Jitter(r.resyncPeriod(obj))})
}

// rotationRequested says whether the rotate-requested-at annotation has a value not acted on.
func rotationRequested(obj *unstructured.Unstructured, st *kinds.Status) bool {
	req := obj.GetAnnotations()[AnnotationRotateRequestedAt]
	return req != "" && req != st.Creds().LastRotationRequest
}

// rotate acts on a rotate-requested-at annotation: for the kinds whose API can regenerate
// credentials it asks Clever Cloud to, then runs a full pass that publishes the new ones
// (and so rolls the opted-in workloads); for the others it says so in a Warning event.
// It returns nil when the normal pass should follow.
//
// Nothing is written before the renewal: if the pass dies after it, the request is not
// recorded, so the next pass renews again from the same source Secret (the key it revokes
// then was never published) and records it.
func (r *Reconciler) rotate(ctx context.Context, s *pass) error {
	obj := s.obj
	req := obj.GetAnnotations()[AnnotationRotateRequestedAt]
	record := func() { s.update(func(st *kinds.Status) { st.EnsureCreds().LastRotationRequest = req }) }
	switch {
	case s.life.paused:
		return nil // acted on once the resource is resumed
	case r.Kind.Renew == nil:
		s.event(corev1.EventTypeWarning, status.EventRotationNotSupport,
			fmt.Sprintf("Clever Cloud offers no way to regenerate the credentials of a %s add-on; nothing was changed (see docs/kinds.md)", r.Kind.GVK.Kind))
		record()
		return nil
	case s.life.observeOnly:
		s.event(corev1.EventTypeWarning, status.EventRotationNotSupport, "managementPolicy ObserveOnly: the operator does not rotate the add-on's credentials")
		record()
		return nil
	}
	src := &corev1.Secret{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Kind.SourceSecretName(obj.GetName())}, src); err != nil || src.Annotations[secrets.AnnotationRealID] == "" {
		// Not provisioned yet: the credentials about to be published are new anyway.
		record()
		return nil
	}
	if !r.trustedSource(&s.st, src) {
		// Not as the operator wrote it (edited in the namespace): the full pass writes it
		// again, and the request, not recorded, is acted on by the pass a second later.
		s.soon = time.Second
		return nil
	}
	if err := r.connect(ctx, s); err != nil {
		return err
	}
	// The key in use now is revoked by the renewal. Clever Cloud's env may still show it for
	// a while after: remember it (as a hash) so no read publishes it again
	// (staleAfterRotation).
	revoked := revokedKeyHash(r.Kind, secrets.Strings(src.Data))
	if err := r.Kind.Renew(ctx, s.api, s.org, src.Annotations[secrets.AnnotationRealID]); err != nil {
		if revoked != "" {
			// Not renewed: the key in use stays valid and must stay publishable.
			s.update(func(st *kinds.Status) {
				if st.Credentials != nil {
					st.Credentials.RevokedKeyHash = ""
				}
			})
		}
		return s.failAPI("regenerating the add-on's credentials", err)
	}
	if revoked != "" {
		s.update(func(st *kinds.Status) { st.EnsureCreds().RevokedKeyHash = revoked })
	}
	s.event(corev1.EventTypeNormal, status.EventCredentialsRotated, fmt.Sprintf("Clever Cloud regenerated the credentials of add-on %s (request %q)", src.Annotations[kinds.AnnotationAddonID], req))
	record()
	return r.provision(ctx, s)
}

// RotatedKeys are, per kind with Renew, the keys that identify the credentials a renewal
// revokes (Cellar: the key id and secret).
var RotatedKeys = map[string][]string{
	"Cellar": {"CELLAR_ADDON_KEY_ID", "CELLAR_ADDON_KEY_SECRET"},
}

// revokedKeyHash is a hash of the credentials a renewal revokes ("" when there are none).
func revokedKeyHash(k *kinds.Kind, data map[string]string) string {
	keys := RotatedKeys[k.GVK.Kind]
	sub := make(map[string]string, len(keys))
	for _, key := range keys {
		if data[key] != "" {
			sub[key] = data[key]
		}
	}
	if len(sub) == 0 {
		return ""
	}
	return secrets.Hash(sub)
}

// staleAfterRotation says whether data still carries credentials a renewal revoked: such a
// read is stale and must not be published.
func staleAfterRotation(k *kinds.Kind, st *kinds.Status, data map[string]string) bool {
	revoked := st.Creds().RevokedKeyHash
	return revoked != "" && revokedKeyHash(k, data) == revoked
}
