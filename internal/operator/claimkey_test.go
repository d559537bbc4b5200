package operator

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestClaimKeyFromSecret: the key is created once (32 random bytes) and read back as is; a key
// too short to sign with is refused with one readable error naming the Secret, not its value.
func TestClaimKeyFromSecret(t *testing.T) {
	ctx := context.Background()
	ref := types.NamespacedName{Namespace: "clever-operator-system", Name: "clever-operator-claim-key"}
	c := fake.NewClientBuilder().Build()
	first, err := claimKeyFromSecret(ctx, c, ref, logr.Discard())
	if err != nil || len(first) != minClaimKey {
		t.Fatalf("created key: %d bytes, %v", len(first), err)
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, ref, sec); err != nil || !bytes.Equal(sec.Data[ClaimKeySecretKey], first) {
		t.Fatalf("the Secret does not hold the key: %v", err)
	}
	again, err := claimKeyFromSecret(ctx, c, ref, logr.Discard())
	if err != nil || !bytes.Equal(again, first) {
		t.Fatalf("a restart must read the same key back (%v)", err)
	}

	short := fake.NewClientBuilder().WithObjects(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name},
		Data:       map[string][]byte{ClaimKeySecretKey: []byte("tooshort-value")},
	}).Build()
	_, err = claimKeyFromSecret(ctx, short, ref, logr.Discard())
	if err == nil || !strings.Contains(err.Error(), ref.String()) || strings.Contains(err.Error(), "tooshort-value") {
		t.Fatalf("short key: %v", err)
	}
}

// TestClaimKeyFromEnv: CLEVER_OPERATOR_CLAIM_KEY wins, and must be long enough.
func TestClaimKeyFromEnv(t *testing.T) {
	t.Setenv(ClaimKeyEnv, strings.Repeat("k", 40))
	k, err := LoadClaimKey(context.Background(), nil, types.NamespacedName{}, logr.Discard())
	if err != nil || string(k) != strings.Repeat("k", 40) {
		t.Fatalf("env key: %q %v", k, err)
	}
	t.Setenv(ClaimKeyEnv, "short")
	if _, err := LoadClaimKey(context.Background(), nil, types.NamespacedName{}, logr.Discard()); err == nil || strings.Contains(err.Error(), "short\"") {
		t.Fatalf("short env key: %v", err)
	}
	t.Setenv(ClaimKeyEnv, "")
	k, err = LoadClaimKey(context.Background(), nil, types.NamespacedName{}, logr.Discard())
	if err != nil || len(k) != minClaimKey {
		t.Fatalf("process key: %d bytes, %v", len(k), err)
	}
}
