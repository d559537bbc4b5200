package addon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/status"
)

// Rotation and rollout annotations.
const (
	// AnnotationRotateRequestedAt on a resource asks Clever Cloud to regenerate the add-on's
	// credentials (any new value, e.g. a timestamp), for the kinds whose API allows it.
	AnnotationRotateRequestedAt = Group + "/rotate-requested-at"
	// AnnotationRolloutOnSecretChange on a Deployment or StatefulSet lists (comma-separated)
	// the credentials Secrets whose change restarts its pods.
	AnnotationRolloutOnSecretChange = Group + "/rollout-on-secret-change"
	// PodTemplateHashPrefix prefixes the pod-template annotation the operator bumps, one per
	// Secret: credentials.api.clever-cloud.com/<secret name> = <credentials hash>.
	PodTemplateHashPrefix = "credentials." + Group + "/"
)

// Events of rotation and rollout.
const (
	EventCredentialsRotated = "CredentialsRotated"
	EventRotationNotSupport = "RotationNotSupported"
	EventRolloutTriggered   = "RolloutTriggered"
	EventRolloutFailed      = "RolloutFailed"
)

// rolloutPoll is how often the engine looks whether the Helm side has rendered the new
// credentials before restarting workloads (cache reads only).
const rolloutPoll = 2 * time.Second

var workloadKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
}

func credentialsField(obj *unstructured.Unstructured, field string) string {
	v, _, _ := unstructured.NestedString(obj.Object, "status", "credentials", field)
	return v
}

// recordCredentials updates status.credentials for the published data: hash, lastChangedAt
// when it changed; the first publication is the rollout baseline (nothing to restart).
func recordCredentials(u *unstructured.Unstructured, hash string, now time.Time) {
	prev := credentialsField(u, "hash")
	if prev == hash {
		return
	}
	_ = unstructured.SetNestedField(u.Object, hash, "status", "credentials", "hash")
	_ = unstructured.SetNestedField(u.Object, now.UTC().Format(time.RFC3339), "status", "credentials", "lastChangedAt")
	if prev == "" {
		_ = unstructured.SetNestedField(u.Object, hash, "status", "credentials", "rolledOutHash")
	}
}

// rolloutDue says whether the credentials changed since the workloads were last restarted.
func rolloutDue(obj *unstructured.Unstructured) bool {
	h := credentialsField(obj, "hash")
	return h != "" && h != credentialsField(obj, "rolledOutHash")
}

// rollout restarts the opted-in workloads once the Helm side has published the new
// credentials: their pod template gets the new hash, so their pods roll. It makes no Clever
// Cloud call.
func (r *Reconciler) rollout(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, error) {
	hash := credentialsField(obj, "hash")
	p := r.Kind.PublicationFor(obj)
	if !p.Disabled {
		sec := &corev1.Secret{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: p.SecretName}, sec)
		if err != nil || sec.Annotations[AnnotationCredentialsHash] != hash {
			return ctrl.Result{RequeueAfter: rolloutPoll}, nil
		}
		restarted, err := r.restartWorkloads(ctx, obj, p.SecretName, hash)
		if err != nil {
			r.Recorder.Eventf(obj, corev1.EventTypeWarning, EventRolloutFailed, "Restarting the workloads that use Secret %s failed: %v", p.SecretName, err)
			return ctrl.Result{}, err
		}
		if len(restarted) > 0 {
			r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventRolloutTriggered, "Credentials in Secret %s changed; restarting %s", p.SecretName, strings.Join(restarted, ", "))
		}
	}
	if err := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, hash, "status", "credentials", "rolledOutHash")
	}); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.jitter(r.resyncPeriod(obj))}, nil
}

// PodTemplateAnnotation is the pod-template annotation bumped for a Secret.
func PodTemplateAnnotation(secretName string) string {
	name := secretName
	if len(name) > 63 {
		sum := sha256.Sum256([]byte(name))
		name = strings.TrimRight(name[:54], "-.") + "-" + hex.EncodeToString(sum[:])[:8]
	}
	return PodTemplateHashPrefix + name
}

// restartWorkloads patches the Deployments and StatefulSets of the namespace that opted in
// (spec.secret.rollout.matchLabels, or their rollout-on-secret-change annotation naming the
// Secret) and whose pod template does not carry the hash yet. Listing is metadata-only and
// uncached: it happens only when credentials change.
func (r *Reconciler) restartWorkloads(ctx context.Context, obj *unstructured.Unstructured, secretName, hash string) ([]string, error) {
	var sel labels.Selector
	if ml, found, _ := unstructured.NestedStringMap(obj.Object, "spec", "secret", "rollout", "matchLabels"); found && len(ml) > 0 {
		sel = labels.SelectorFromSet(ml)
	}
	key := PodTemplateAnnotation(secretName)
	var restarted []string
	for _, gvk := range workloadKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.APIReader.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			return restarted, err
		}
		for _, w := range list.Items {
			if !(sel != nil && !sel.Empty() && sel.Matches(labels.Set(w.Labels))) && !listsName(w.Annotations[AnnotationRolloutOnSecretChange], secretName) {
				continue
			}
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			u.SetNamespace(w.Namespace)
			u.SetName(w.Name)
			body, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: hash}}}}})
			if err := r.Client.Patch(ctx, u, client.RawPatch(types.MergePatchType, body)); err != nil {
				return restarted, err
			}
			restarted = append(restarted, strings.ToLower(gvk.Kind)+"/"+w.Name)
		}
	}
	sort.Strings(restarted)
	return restarted, nil
}

func listsName(list, name string) bool {
	for _, n := range strings.Split(list, ",") {
		if strings.TrimSpace(n) == name {
			return true
		}
	}
	return false
}

// rotationRequested says whether the rotate-requested-at annotation has a value not acted on.
func rotationRequested(obj *unstructured.Unstructured) bool {
	req := obj.GetAnnotations()[AnnotationRotateRequestedAt]
	return req != "" && req != credentialsField(obj, "lastRotationRequest")
}

// rotate acts on a rotate-requested-at annotation: for the kinds whose API can regenerate
// credentials it asks Clever Cloud to, then runs a full pass that publishes the new ones
// (and so rolls the opted-in workloads); for the others it says so in a Warning event.
// done is false when the normal pass should follow.
func (r *Reconciler) rotate(ctx context.Context, obj *unstructured.Unstructured) (res ctrl.Result, done bool, err error) {
	req := obj.GetAnnotations()[AnnotationRotateRequestedAt]
	l := lifecycleOf(obj)
	record := func() error {
		return r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, req, "status", "credentials", "lastRotationRequest")
		})
	}
	switch {
	case l.paused:
		return ctrl.Result{}, false, nil // acted on once the resource is resumed
	case r.Kind.Renew == nil:
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, EventRotationNotSupport,
			"Clever Cloud offers no way to regenerate the credentials of a %s add-on; nothing was changed (see docs/kinds.md)", r.Kind.GVK.Kind)
		return ctrl.Result{}, false, record()
	case l.observeOnly:
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, EventRotationNotSupport, "managementPolicy ObserveOnly: the operator does not rotate the add-on's credentials")
		return ctrl.Result{}, false, record()
	}
	src := &corev1.Secret{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Kind.SourceSecretName(obj.GetName())}, src); err != nil || src.Annotations[AnnotationRealID] == "" {
		// Not provisioned yet: the credentials about to be published are new anyway.
		return ctrl.Result{}, false, record()
	}
	org, _, _ := unstructured.NestedString(obj.Object, "spec", "organisation")
	api, _, err := r.Credentials.For(ctx, obj.GetNamespace())
	if err != nil {
		res, err := r.fail(ctx, obj, status.ReasonInvalidCredentials, fmt.Sprintf("no usable Clever Cloud credentials for namespace %s: %v", obj.GetNamespace(), err), err)
		return res, true, err
	}
	// The key in use now is revoked by the renewal. Clever Cloud's env may still show it for
	// a while after: remember it (as a hash) so no read publishes it again (revokedKeys).
	revoked := revokedKeyHash(r.Kind, secretStrings(src.Data))
	if revoked != "" {
		if err := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, revoked, "status", "credentials", "revokedKeyHash")
		}); err != nil {
			return ctrl.Result{}, true, err
		}
	}
	if err := r.Kind.Renew(ctx, api, org, src.Annotations[AnnotationRealID]); err != nil {
		if revoked != "" {
			// Not renewed: the key in use stays valid and must stay publishable.
			if uerr := r.updateStatus(ctx, obj, func(u *unstructured.Unstructured) {
				unstructured.RemoveNestedField(u.Object, "status", "credentials", "revokedKeyHash")
			}); uerr != nil {
				return ctrl.Result{}, true, uerr
			}
		}
		res, err := r.failAPI(ctx, obj, "regenerating the add-on's credentials", err)
		return res, true, err
	}
	r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventCredentialsRotated, "Clever Cloud regenerated the credentials of add-on %s (request %q)", src.Annotations[AnnotationAddonID], req)
	if err := record(); err != nil {
		return ctrl.Result{}, true, err
	}
	res, err = r.provision(ctx, obj)
	return res, true, err
}

// RotatedKeys are, per kind with Renew, the keys that identify the credentials a renewal
// revokes (Cellar: the key id and secret).
var RotatedKeys = map[string][]string{
	"Cellar": {"CELLAR_ADDON_KEY_ID", "CELLAR_ADDON_KEY_SECRET"},
}

// revokedKeyHash is a hash of the credentials a renewal revokes ("" when there are none).
func revokedKeyHash(k *Kind, data map[string]string) string {
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
	return CredentialsHash(sub)
}

// staleAfterRotation says whether data still carries credentials a renewal revoked: such a
// read is stale and must not be published.
func staleAfterRotation(k *Kind, obj *unstructured.Unstructured, data map[string]string) bool {
	revoked := credentialsField(obj, "revokedKeyHash")
	return revoked != "" && revokedKeyHash(k, data) == revoked
}

func secretStrings(data map[string][]byte) map[string]string {
	out := make(map[string]string, len(data))
	for k, v := range data {
		out[k] = string(v)
	}
	return out
}
