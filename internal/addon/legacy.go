package addon

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Helm's ownership metadata: Helm only updates an existing object that carries it.
const (
	helmManagedByLabel      = "app.kubernetes.io/managed-by"
	helmReleaseNameAnnot    = "meta.helm.sh/release-name"
	helmReleaseNamespaceAnn = "meta.helm.sh/release-namespace"
)

// adoptLegacySecret hands a credentials Secret left by the Rust operator over to this
// resource's Helm release, so switching operators needs no manual step. Only a Secret that
// already names this very resource (same UID) among its owners and that no Helm release
// claims is adopted; any other existing Secret is left untouched and Helm reports the
// conflict (SecretConflict).
func (r *Reconciler) adoptLegacySecret(ctx context.Context, s *pass) error {
	obj := s.obj
	if _, fresh := r.fresh.Load(obj.GetUID()); fresh {
		return nil // this process put the finalizer on: the Rust operator never handled it
	}
	key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: kinds.SecretName(obj)}
	cached := &corev1.Secret{}
	if err := r.Client.Get(ctx, key, cached); err == nil {
		return nil // labelled as ours: already rendered by the Helm release
	}
	sec := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, key, sec); err != nil {
		return client.IgnoreNotFound(err)
	}
	if sec.Annotations[helmReleaseNameAnnot] != "" || sec.Labels[helmManagedByLabel] != "" {
		return nil
	}
	ownedByUs := false
	for _, o := range sec.OwnerReferences {
		if o.UID == obj.GetUID() {
			ownedByUs = true
		}
	}
	if !ownedByUs {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]string{helmManagedByLabel: "Helm"},
		"annotations": map[string]string{helmReleaseNameAnnot: r.Kind.ReleaseName(obj.GetName()), helmReleaseNamespaceAnn: obj.GetNamespace()},
	}})
	if err := r.Client.Patch(ctx, sec, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	s.event(corev1.EventTypeNormal, status.EventSecretAdopted, fmt.Sprintf("Secret %s, written by the previous operator for this resource, is now managed by this operator", key.Name))
	return nil
}
