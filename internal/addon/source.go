package addon

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/internal/status"
)

// writeSource creates or updates the source Secret the Helm side renders from. It writes only
// when the content changed; its owner reference makes the Helm controller re-render.
func (r *Reconciler) writeSource(ctx context.Context, s *pass, addonID, realID string, data map[string]string) error {
	obj := s.obj
	hash := secrets.Hash(data)
	key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Kind.SourceSecretName(obj.GetName())}
	cur := &corev1.Secret{}
	err := r.Client.Get(ctx, key, cur)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	exists := err == nil
	readopted := false
	sig := secrets.Signature(r.ClaimKey, key.Namespace, key.Name, addonID, realID, hash)
	if exists && !metav1.IsControlledBy(cur, obj) {
		if !ownSourceSecret(cur, obj, r.Kind.Lower()) {
			return &ForeignSourceSecretError{Name: key.Name, Kind: r.Kind.GVK.Kind, Owner: obj.GetName()}
		}
		// Restored from a backup (its owner gone or never restored): taken back, as written.
		cur.OwnerReferences, readopted = withoutController(cur.OwnerReferences), true
	}
	if exists && !readopted && secrets.DataHash(cur) == hash && cur.Annotations[secrets.AnnotationCredentialsHash] == hash &&
		cur.Annotations[kinds.AnnotationAddonID] == addonID && cur.Annotations[secrets.AnnotationRealID] == realID &&
		cur.Annotations[secrets.AnnotationSignature] == sig {
		return nil
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	if exists {
		sec = cur.DeepCopy()
	}
	sec.Labels = mergeMaps(sec.Labels, map[string]string{kinds.LabelManagedBy: kinds.ManagedByValue, kinds.LabelRole: kinds.RoleSource, kinds.LabelKind: r.Kind.Lower()})
	sec.Annotations = mergeMaps(sec.Annotations, map[string]string{kinds.AnnotationAddonID: addonID, secrets.AnnotationRealID: realID, secrets.AnnotationCredentialsHash: hash, secrets.AnnotationSignature: sig})
	sec.Type = corev1.SecretTypeOpaque
	sec.Data = make(map[string][]byte, len(data))
	for k, v := range data {
		sec.Data[k] = []byte(v)
	}
	sec.StringData = nil
	if err := controllerutil.SetControllerReference(obj, sec, r.Client.Scheme()); err != nil {
		return err
	}
	if exists {
		if err := r.Client.Update(ctx, sec); err != nil {
			return err
		}
		if readopted {
			s.event(corev1.EventTypeNormal, status.EventSecretReadopted, fmt.Sprintf("Took back Secret %s, written by the operator for a resource of this name (restored from a backup)", key.Name))
			if cur.Annotations[secrets.AnnotationCredentialsHash] == hash && secrets.DataHash(cur) == hash {
				return nil
			}
		}
		s.event(corev1.EventTypeNormal, status.EventCredentialsUpdated, fmt.Sprintf("Credentials of add-on %s changed; updating Secret %s", addonID, kinds.SecretName(obj)))
		return nil
	}
	if err := r.Client.Create(ctx, sec); err != nil {
		return err
	}
	// An add-on this operator created was announced by AddonCreated, and Ready says when its
	// credentials are out: one event per new resource. One it bound or found by name says
	// here where its credentials went.
	if s.st.Adopted {
		s.event(corev1.EventTypeNormal, status.EventCredentialsWritten, fmt.Sprintf("Publishing %d credential keys of add-on %s in Secret %s", len(data), addonID, kinds.SecretName(obj)))
	}
	return nil
}

func (r *Reconciler) deleteSource(ctx context.Context, obj *unstructured.Unstructured) error {
	key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Kind.SourceSecretName(obj.GetName())}
	sec := &corev1.Secret{}
	// The cache holds only Secrets labelled managed-by=clever-operator: a user's Secret of that
	// name without the label is "not found" here, and so never deleted.
	if err := r.Client.Get(ctx, key, sec); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if !ownSourceSecret(sec, obj, r.Kind.Lower()) {
		return nil
	}
	// Delete exactly the Secret that was checked, not one recreated under the same name since.
	err := r.Client.Delete(ctx, sec, client.Preconditions{UID: &sec.UID, ResourceVersion: &sec.ResourceVersion})
	if err != nil && !apierrors.IsNotFound(err) { // a conflict is retried, and checked again
		return err
	}
	return nil
}

// ownSourceSecret tells whether sec is a source Secret the operator wrote for obj: labelled
// managed-by=clever-operator and role=source (and, when labelled with a kind, this kind), and
// controlled by obj (owner reference with obj's UID), by nothing (a Secret restored from a
// backup without its owner references), or by a resource of obj's kind and name that no
// longer exists (restored with its owner references: obj holds that name now, under a new
// UID). A Secret controlled by anything else, or missing our labels, belongs to someone else
// and is left alone.
func ownSourceSecret(sec *corev1.Secret, obj *unstructured.Unstructured, kind string) bool {
	l := sec.GetLabels()
	if l[kinds.LabelManagedBy] != kinds.ManagedByValue || l[kinds.LabelRole] != kinds.RoleSource {
		return false
	}
	if k, ok := l[kinds.LabelKind]; ok && k != kind {
		return false
	}
	owner := metav1.GetControllerOf(sec)
	if owner == nil || owner.UID == obj.GetUID() {
		return true
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	return err == nil && gv.Group == obj.GroupVersionKind().Group && owner.Kind == obj.GetKind() && owner.Name == obj.GetName()
}

// withoutController drops the controller reference (a dead owner's) from refs.
func withoutController(refs []metav1.OwnerReference) []metav1.OwnerReference {
	out := refs[:0:0]
	for _, r := range refs {
		if r.Controller == nil || !*r.Controller {
			out = append(out, r)
		}
	}
	return out
}

func mergeMaps(base, add map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(add))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}

// trustedSource says whether src, obj's source Secret, is as the operator wrote it for the
// add-on its status (st) records: its signature verifies and its add-on id is status.addon
// (status is written by the operator alone). Its ids are used only then.
func (r *Reconciler) trustedSource(st *kinds.Status, src *corev1.Secret) bool {
	return src.Annotations[kinds.AnnotationAddonID] == st.Addon && secrets.Verified(r.ClaimKey, src)
}
