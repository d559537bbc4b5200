package addon

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/config"
)

// OverrideSecretNames are the per-namespace credentials Secrets, in lookup order: the Rust
// operator's v0.6 name, then the name of its renamed v0.8 (clever-kubernetes-operator).
var OverrideSecretNames = []string{"clever-operator", "clever-kubernetes-operator"}

// OverrideSecretKey is the key holding the configuration document.
const OverrideSecretKey = "config"

// NamespacedCredentials resolves the API client of a namespace: the operator's global
// credentials, overridden field by field by the namespace's clever-operator Secret when it
// exists. Trust model: whoever can write Secrets in a namespace can point that namespace's
// resources at other Clever Cloud credentials, never another namespace's.
type NamespacedCredentials struct {
	// Reader reads the override Secrets. The operator gives it a cache of just those Secrets
	// (they are not labelled, so the manager's Secret cache does not hold them).
	Reader client.Reader
	Global config.APIConfig
	// NewClient builds a client (the engine shares one per credential set).
	NewClient func(config.APIConfig) (*clevercloud.Client, error)

	mu      sync.Mutex
	clients map[string]*clevercloud.Client
}

// For implements Credentials.
func (n *NamespacedCredentials) For(ctx context.Context, namespace string) (API, string, error) {
	cfg := n.Global
	for _, name := range OverrideSecretNames {
		sec := &corev1.Secret{}
		err := n.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, sec)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
		}
		// The "config" document and/or clever-tools' login file ("clever-tools.json").
		over, err := config.ParseOverrideSecret(sec.Data, OverrideSecretKey)
		if err != nil {
			return nil, "", fmt.Errorf("secret %s/%s %w", namespace, name, err)
		}
		if cfg, err = config.ApplyOverride(cfg, over); err != nil {
			return nil, "", fmt.Errorf("secret %s/%s: %w", namespace, name, err)
		}
		break
	}
	if err := cfg.Validate(); err != nil {
		return nil, "", err
	}
	key := cfg.Fingerprint()
	n.mu.Lock()
	defer n.mu.Unlock()
	if c, ok := n.clients[key]; ok {
		return c, key, nil
	}
	c, err := n.NewClient(cfg)
	if err != nil {
		return nil, "", err
	}
	if n.clients == nil {
		n.clients = map[string]*clevercloud.Client{}
	}
	n.clients[key] = c
	return c, key, nil
}
