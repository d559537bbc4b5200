package operator

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClaimKeyEnv holds the claim key directly (at least 32 bytes), e.g. from a Secret the admin
// manages and restores with the cluster.
const ClaimKeyEnv = "CLEVER_OPERATOR_CLAIM_KEY"

// ClaimKeySecretKey is the key of the claim key in its Secret.
const ClaimKeySecretKey = "key"

// minClaimKey is the shortest key accepted (HMAC-SHA256: 32 bytes of entropy).
const minClaimKey = 32

// LoadClaimKey returns the key that signs the addon-claim annotations (the proof that a
// namespace created an add-on, internal/addon/binding.go): the environment variable
// CLEVER_OPERATOR_CLAIM_KEY; else the Secret ref (key "key"), created with 32 random bytes
// when it does not exist; else (no Secret named: outside a cluster) a random key for this
// process only, with a log line saying that claims will not verify after a restart.
//
// Back the Secret up with the operator's namespace: a cluster restored without it still
// finds each resource's add-on by its name while the resource keeps its UID, but resources
// restored with new UIDs need the key (or an admin's spec.binding) to bind their add-ons.
func LoadClaimKey(ctx context.Context, mgr ctrl.Manager, ref types.NamespacedName, log logr.Logger) ([]byte, error) {
	if v := os.Getenv(ClaimKeyEnv); v != "" {
		if len(v) < minClaimKey {
			return nil, fmt.Errorf("%s must be at least %d bytes long", ClaimKeyEnv, minClaimKey)
		}
		return []byte(v), nil
	}
	if ref.Name == "" || ref.Namespace == "" {
		log.Info("no claim key Secret (set --claim-key-secret or " + ClaimKeyEnv + "): add-on claims are signed with a key of this process and will not verify after a restart")
		return randomKey()
	}
	// The manager's cache does not hold this Secret (unlabelled) and is not started yet.
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return nil, err
	}
	return claimKeyFromSecret(ctx, c, ref, log)
}

// claimKeyFromSecret reads the claim key from Secret ref, creating it when it does not exist.
func claimKeyFromSecret(ctx context.Context, c client.Client, ref types.NamespacedName, log logr.Logger) ([]byte, error) {
	for attempt := 0; attempt < 3; attempt++ {
		sec := &corev1.Secret{}
		err := c.Get(ctx, ref, sec)
		switch {
		case err == nil:
			if k := sec.Data[ClaimKeySecretKey]; len(k) >= minClaimKey {
				return k, nil
			}
			return nil, fmt.Errorf("secret %s: key %q must hold at least %d bytes", ref, ClaimKeySecretKey, minClaimKey)
		case apierrors.IsNotFound(err):
			k, err := randomKey()
			if err != nil {
				return nil, err
			}
			sec = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, Labels: map[string]string{
					"app.kubernetes.io/name": "clever-operator", "app.kubernetes.io/component": "claim-key",
				}},
				Type: corev1.SecretTypeOpaque,
				Data: map[string][]byte{ClaimKeySecretKey: k},
			}
			err = c.Create(ctx, sec)
			if err == nil {
				log.Info("created the add-on claim key Secret; back it up with the operator's namespace", "secret", ref.String())
				return k, nil
			}
			if !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("creating the claim key Secret %s: %w", ref, err)
			}
			// Another replica created it meanwhile: read it.
		default:
			return nil, fmt.Errorf("reading the claim key Secret %s: %w", ref, err)
		}
	}
	return nil, errors.New("the claim key Secret " + ref.String() + " keeps changing")
}

func randomKey() ([]byte, error) {
	k := make([]byte, minClaimKey)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	return k, nil
}
