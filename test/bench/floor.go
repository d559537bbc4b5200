package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/test/kube"
)

// The floor: a plain client writing, as fast as it can, the Kubernetes objects the operator
// must write for each resource, in the same order: the resource; both finalizers (live read +
// one update, as the engine writes them); three status writes (engine: add-on id and
// AddonReady; Helm: install started; Helm: Deployed/Ready); the source Secret; Helm's release
// Secret (created pending, then updated deployed); the rendered credentials Secret, and the
// Service Binding Secret for the kinds that have one. No Clever Cloud call, no Helm rendering,
// no dry-run, no cache: what the operator does beyond this is its overhead.

// releasePayload stands for the gzip+base64 release record Helm stores (a few KiB, not
// compressible further).
var releasePayload = func() []byte {
	b := make([]byte, 6*1024)
	_, _ = rand.Read(b)
	return b
}()

func floorOne(ctx context.Context, c client.Client, in *unstructured.Unstructured) error {
	kind, ok := kinds.KindFor(in.GroupVersionKind())
	if !ok {
		return fmt.Errorf("unknown kind %s", in.GetKind())
	}
	obj := in.DeepCopy()
	if err := c.Create(ctx, obj); err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(obj)
	// Engine finalizer: live read, update.
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	if err := c.Get(ctx, key, live); err != nil {
		return err
	}
	live.SetFinalizers(append(live.GetFinalizers(), kind.Finalizer(), kinds.HelmUninstallFinalizer))
	if err := c.Update(ctx, live); err != nil {
		return err
	}
	now := metav1.Now().UTC().Format(time.RFC3339)
	cond := func(t, s, reason string) map[string]any {
		return map[string]any{"type": t, "status": s, "reason": reason, "message": reason, "lastTransitionTime": now}
	}
	setStatus := func(fields map[string]any, conds ...map[string]any) error {
		st, _, _ := unstructured.NestedMap(live.Object, "status")
		if st == nil {
			st = map[string]any{}
		}
		for k, v := range fields {
			st[k] = v
		}
		list := []any{}
		for _, cd := range conds {
			list = append(list, cd)
		}
		st["conditions"] = list
		live.Object["status"] = st
		return c.Status().Update(ctx, live)
	}
	addonID := "addon_" + string(obj.GetUID())
	owner := metav1.OwnerReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	data := map[string][]byte{}
	for i := range 7 {
		data[fmt.Sprintf("VAR_%d", i)] = []byte(fmt.Sprintf("value-%d-%s", i, obj.GetUID()))
	}
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: kind.SourceSecretName(obj.GetName()), Namespace: obj.GetNamespace(), OwnerReferences: []metav1.OwnerReference{owner},
		Labels:      map[string]string{kinds.LabelManagedBy: kinds.ManagedByValue, kinds.LabelRole: kinds.RoleSource, kinds.LabelKind: kind.Lower()},
		Annotations: map[string]string{kinds.AnnotationAddonID: addonID},
	}, Data: data}
	if err := c.Create(ctx, src); err != nil {
		return err
	}
	if err := setStatus(map[string]any{"addon": addonID, "plan": "plan_x", "secretName": obj.GetName() + "-secrets", "observedGeneration": obj.GetGeneration()},
		cond("AddonReady", "True", "Provisioned"), cond("Ready", "False", "Provisioning")); err != nil {
		return err
	}
	rel := kind.ReleaseName(obj.GetName())
	relSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "sh.helm.release.v1." + rel + ".v1", Namespace: obj.GetNamespace(),
		Labels: map[string]string{"owner": "helm", "name": rel, "status": "pending-install", "version": "1"},
	}, Type: "helm.sh/release.v1", Data: map[string][]byte{"release": releasePayload}}
	if err := c.Create(ctx, relSecret); err != nil {
		return err
	}
	if err := setStatus(nil, cond("AddonReady", "True", "Provisioned"), cond("Initialized", "True", ""), cond("Ready", "False", "Provisioning")); err != nil {
		return err
	}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: obj.GetName() + "-secrets", Namespace: obj.GetNamespace(), OwnerReferences: []metav1.OwnerReference{owner},
		Labels:      map[string]string{kinds.LabelManagedBy: kinds.ManagedByValue, kinds.LabelRole: kinds.RoleCredentials, "app.kubernetes.io/managed-by": "Helm"},
		Annotations: map[string]string{"meta.helm.sh/release-name": rel, "meta.helm.sh/release-namespace": obj.GetNamespace()},
	}, Data: data}
	if err := c.Create(ctx, creds); err != nil {
		return err
	}
	if b := kind.PublicationFor(obj).BindingName; b != "" {
		bind := creds.DeepCopy()
		bind.ObjectMeta = metav1.ObjectMeta{Name: b, Namespace: obj.GetNamespace(), OwnerReferences: creds.OwnerReferences,
			Labels:      map[string]string{kinds.LabelManagedBy: kinds.ManagedByValue, kinds.LabelRole: "binding", "app.kubernetes.io/managed-by": "Helm"},
			Annotations: creds.Annotations}
		bind.Type = corev1.SecretType("servicebinding.io/" + kind.Lower())
		if err := c.Create(ctx, bind); err != nil {
			return err
		}
	}
	relSecret.Labels["status"] = "deployed"
	if err := c.Update(ctx, relSecret); err != nil {
		return err
	}
	return setStatus(map[string]any{"deployedRelease": map[string]any{"name": rel}},
		cond("AddonReady", "True", "Provisioned"), cond("Initialized", "True", ""), cond("Deployed", "True", "InstallSuccessful"), cond("Ready", "True", "Provisioned"))
}

// floorCleanup removes what floorOne (finalizers) or jobFloorOne wrote in namespace ns (not
// timed): each resource's finalizers, then the resources and the Secrets kind by kind.
func floorCleanup(ctx context.Context, c client.Client, ns string, objs []*unstructured.Unstructured, finalizers bool) error {
	t := time.Now()
	var err error
	if finalizers {
		err = kube.ForEach(ctx, objs, setupWorkers, func(ctx context.Context, u *unstructured.Unstructured) error {
			cur := u.DeepCopy()
			cur.SetNamespace(ns)
			return client.IgnoreNotFound(c.Patch(ctx, cur, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))
		})
		if err != nil {
			return err
		}
	}
	seen := map[schema.GroupVersionKind]bool{}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		if seen[gvk] {
			continue
		}
		seen[gvk] = true
		all := &unstructured.Unstructured{}
		all.SetGroupVersionKind(gvk)
		if err := c.DeleteAllOf(ctx, all, client.InNamespace(ns)); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	// One DELETE of every Secret of the namespace (20,000 after P6's floor) can outlast
	// kube-apiserver's request timeout; what it deleted stays deleted, so it is sent again.
	for try := 1; ; try++ {
		err = c.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(ns))
		if err == nil || try == 3 || ctx.Err() != nil {
			if err == nil {
				fmt.Printf("    (cleaned up in %.1fs)\n", time.Since(t).Seconds())
			}
			return err
		}
		step(fmt.Sprintf("floor cleanup: deleting the Secrets again (%v)", err))
	}
}

// setupWorkers is how many requests the bench sends at once for what it does not time:
// creating unrelated objects, cleaning up after a floor.
const setupWorkers = 64

// jobFloorOne writes only what the job itself needs for one resource: the resource, one
// status write (Ready, with the add-on id) and the credentials Secret. The gap between the
// floor and this is what the design costs (finalizers, the source Secret, Helm's release
// record, the binding Secret, status writes in steps).
func jobFloorOne(ctx context.Context, c client.Client, in *unstructured.Unstructured) error {
	obj := in.DeepCopy()
	if err := c.Create(ctx, obj); err != nil {
		return err
	}
	now := metav1.Now().UTC().Format(time.RFC3339)
	obj.Object["status"] = map[string]any{"addon": "addon_" + string(obj.GetUID()), "observedGeneration": obj.GetGeneration(),
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Provisioned", "message": "Provisioned", "lastTransitionTime": now}}}
	if err := c.Status().Update(ctx, obj); err != nil {
		return err
	}
	owner := metav1.OwnerReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	data := map[string][]byte{}
	for i := range 7 {
		data[fmt.Sprintf("VAR_%d", i)] = []byte(fmt.Sprintf("value-%d-%s", i, obj.GetUID()))
	}
	return c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: obj.GetName() + "-secrets", Namespace: obj.GetNamespace(),
		OwnerReferences: []metav1.OwnerReference{owner}}, Data: data})
}
