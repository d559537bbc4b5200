// Package rollout restarts the workloads that use a credentials Secret when its credentials
// change: the Deployments and StatefulSets of the namespace that opted in get the new hash in
// their pod template, so their pods roll.
package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

const (
	// AnnotationRolloutOnSecretChange on a Deployment or StatefulSet lists (comma-separated)
	// the credentials Secrets whose change restarts its pods.
	AnnotationRolloutOnSecretChange = kinds.Group + "/rollout-on-secret-change"
	// PodTemplateHashPrefix prefixes the pod-template annotation the operator bumps, one per
	// Secret: credentials.api.clever-cloud.com/<secret name> = <credentials hash>.
	PodTemplateHashPrefix = "credentials." + kinds.Group + "/"
)

var workloadKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
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

// Restart patches the Deployments and StatefulSets of the namespace that opted in
// (spec.secret.rollout.matchLabels, or their rollout-on-secret-change annotation naming the
// Secret) and whose pod template does not carry the hash yet. Listing is metadata-only and
// uncached: it happens only when credentials change.
func Restart(ctx context.Context, reader client.Reader, c client.Client, obj *unstructured.Unstructured, secretName, hash string) ([]string, error) {
	var sel labels.Selector
	if ro := kinds.SecretSpecOf(obj).Rollout; ro != nil && len(ro.MatchLabels) > 0 {
		sel = labels.SelectorFromSet(ro.MatchLabels)
	}
	key := PodTemplateAnnotation(secretName)
	var restarted []string
	for _, gvk := range workloadKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := reader.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
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
			if err := c.Patch(ctx, u, client.RawPatch(types.MergePatchType, body)); err != nil {
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
