package hybrid

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// reconciledReleases remembers, per release, the objects of its deployed manifest as the
// operator's cache saw them right after the last successful drift repair (helm-operator-
// plugins' Reconcile: read every object live, patch what differs), which runs on every
// Helm reconcile that changes nothing. When the same revision's objects still have the
// same uid and resourceVersion in the cache, nobody has touched them since: the repair
// would read them and patch nothing. Any change to one of them (an edit, a deletion, a
// label removed so that it leaves the cache) reaches the cache and the next reconcile
// repairs it as before. Only Secrets and ConfigMaps, which the cache holds (those labelled
// as the operator's), are checked this way; a manifest with any other kind is always
// repaired the long way. Only names, uids and resourceVersions are kept.
var reconciledReleases sync.Map // namespace/release name -> *reconciledState

type reconciledState struct {
	manifest    string // digest of the revision and manifest
	objects     []objectRef
	fingerprint string
}

type objectRef struct {
	kind            string
	namespace, name string
}

// manifestDigest identifies a revision's manifest.
func manifestDigest(rel *release.Release) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%s/%d\x00%s", rel.Namespace, rel.Name, rel.Version, rel.Manifest)))
	return hex.EncodeToString(sum[:])
}

// manifestObjects lists the objects of a manifest; nil when there is none, one is not a Secret
// or a ConfigMap, or the manifest cannot be read.
func manifestObjects(rel *release.Release) []objectRef {
	var refs []objectRef
	for _, doc := range releaseutil.SplitManifests(rel.Manifest) {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return nil
		}
		if head.Kind == "" && head.Metadata.Name == "" {
			continue // nothing but comments: not an object
		}
		if head.APIVersion != "v1" || (head.Kind != "Secret" && head.Kind != "ConfigMap") || head.Metadata.Name == "" {
			return nil
		}
		ns := head.Metadata.Namespace
		if ns == "" {
			ns = rel.Namespace
		}
		refs = append(refs, objectRef{kind: head.Kind, namespace: ns, name: head.Metadata.Name})
	}
	return refs
}

// stamp is one object's part of a fingerprint: its uid and resourceVersion.
func stamp(uid, rv string) string { return uid + "@" + rv + ";" }

// fingerprint reads the objects from the cache: their uids and resourceVersions, in order.
func fingerprint(ctx context.Context, c client.Reader, refs []objectRef) (string, error) {
	var b strings.Builder
	for _, r := range refs {
		var obj client.Object = &corev1.Secret{}
		if r.kind == "ConfigMap" {
			obj = &corev1.ConfigMap{}
		}
		if err := c.Get(ctx, types.NamespacedName{Namespace: r.namespace, Name: r.name}, obj); err != nil {
			return "", err
		}
		b.WriteString(stamp(string(obj.GetUID()), obj.GetResourceVersion()))
	}
	return b.String(), nil
}

// reconcileIfTouched runs repair (Helm's drift repair of rel) unless rel's objects are as
// they were after the last successful repair of the same revision.
func reconcileIfTouched(ctx context.Context, c client.Reader, rel *release.Release, repair func() error) error {
	key := releaseKey(rel.Namespace, rel.Name)
	digest := manifestDigest(rel)
	var refs []objectRef
	if v, ok := reconciledReleases.Load(key); ok && v.(*reconciledState).manifest == digest {
		st := v.(*reconciledState)
		refs = st.objects
		if fp, err := fingerprint(ctx, c, refs); err == nil && fp == st.fingerprint {
			return nil
		}
	} else {
		refs = manifestObjects(rel)
	}
	if err := repair(); err != nil {
		reconciledReleases.Delete(key)
		return err
	}
	if refs == nil {
		reconciledReleases.Delete(key)
		return nil
	}
	fp, err := fingerprint(ctx, c, refs)
	if err != nil {
		reconciledReleases.Delete(key)
		return nil
	}
	reconciledReleases.Store(key, &reconciledState{manifest: digest, objects: refs, fingerprint: fp})
	return nil
}

// appliedObjects holds, per release, the objects Helm's Kubernetes client created or updated
// for it last, as kube-apiserver answered (uid@resourceVersion by object), until the install or
// upgrade that applied them returns: on success they become the release's remembered state
// (seedReconciled), so the reconcile that follows every install and upgrade does not read
// them all back to find nothing to repair.
var appliedObjects sync.Map // namespace/release name -> map[objectRef]string

// Helm's annotations naming the release an object belongs to (set on every object it
// installs or upgrades).
const (
	helmReleaseNameAnnotation      = "meta.helm.sh/release-name"
	helmReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
)

// noteApplied records the objects of infos, which Helm's client has just created or updated
// (each refreshed with kube-apiserver's answer), by the release they belong to.
func noteApplied(infos kube.ResourceList) {
	per := map[string]map[objectRef]string{}
	for _, info := range infos {
		if info == nil || info.Object == nil || info.Mapping == nil {
			continue
		}
		acc, err := meta.Accessor(info.Object)
		if err != nil || acc.GetResourceVersion() == "" {
			continue
		}
		a := acc.GetAnnotations()
		name, ns := a[helmReleaseNameAnnotation], a[helmReleaseNamespaceAnnotation]
		gvk := info.Mapping.GroupVersionKind
		if name == "" || gvk.Group != "" || gvk.Version != "v1" {
			continue
		}
		k := releaseKey(ns, name)
		if per[k] == nil {
			per[k] = map[objectRef]string{}
		}
		per[k][objectRef{kind: gvk.Kind, namespace: acc.GetNamespace(), name: acc.GetName()}] = stamp(string(acc.GetUID()), acc.GetResourceVersion())
	}
	for k, m := range per {
		appliedObjects.Store(k, m)
	}
}

// seedReconciled remembers rel's objects as a drift repair would have left them, when
// Helm's client has just applied every one of them for rel (a successful install or
// upgrade: each object then holds what the manifest says, which is all a repair would
// restore). Otherwise the next reconcile repairs the long way, as before.
func seedReconciled(rel *release.Release) {
	if rel == nil {
		return
	}
	key := releaseKey(rel.Namespace, rel.Name)
	v, ok := appliedObjects.LoadAndDelete(key)
	if !ok {
		return
	}
	applied := v.(map[objectRef]string)
	refs := manifestObjects(rel)
	if refs == nil {
		return
	}
	var b strings.Builder
	for _, r := range refs {
		fp, ok := applied[r]
		if !ok {
			return
		}
		b.WriteString(fp)
	}
	reconciledReleases.Store(key, &reconciledState{manifest: manifestDigest(rel), objects: refs, fingerprint: b.String()})
}
