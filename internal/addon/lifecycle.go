package addon

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

// lifecycle is what the resource asks for, from its spec and annotations.
type lifecycle struct {
	bindID      string // spec.addonId or the addon-id annotation
	observeOnly bool
	paused      bool
	deletion    string // spec.deletionPolicy ("" = not set on the resource)
	onMissing   string // annotation override ("" = operator default)
}

func lifecycleOf(obj *unstructured.Unstructured) lifecycle {
	l := lifecycle{}
	l.bindID = kinds.SpecAddonID.String(obj)
	ann := obj.GetAnnotations()
	if l.bindID == "" {
		l.bindID = ann[kinds.AnnotationAddonID]
	}
	l.observeOnly = kinds.SpecManagementPolicy.String(obj) == "ObserveOnly"
	l.paused = ann[kinds.AnnotationPaused] == "true"
	l.deletion = kinds.SpecDeletionPolicy.String(obj)
	if v := ann[kinds.AnnotationOnAddonMissing]; v == kinds.OnMissingRecreate || v == kinds.OnMissingReport {
		l.onMissing = v
	}
	return l
}

// resyncPeriod is the resource's refresh period: its annotation, else the operator's.
func (r *Reconciler) resyncPeriod(obj *unstructured.Unstructured) time.Duration {
	if v := obj.GetAnnotations()[kinds.AnnotationResyncPeriod]; v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return max(d, kinds.MinResyncPeriod)
		}
	}
	return r.ResyncPeriod
}

// deletionPolicy decides what deleting the resource does to the add-on: ObserveOnly always
// orphans; then the resource's spec.deletionPolicy; an add-on it bound but did not create is
// orphaned; then the namespace's annotation, the operator's default.
func (r *Reconciler) deletionPolicy(ctx context.Context, obj *unstructured.Unstructured, st *kinds.Status, l lifecycle) string {
	if l.observeOnly {
		return kinds.DeletionPolicyOrphan
	}
	if l.deletion == kinds.DeletionPolicyDelete || l.deletion == kinds.DeletionPolicyOrphan {
		return l.deletion
	}
	if st.Adopted {
		// Bound to an add-on this resource did not create: kept unless it says Delete.
		return kinds.DeletionPolicyOrphan
	}
	ns := &corev1.Namespace{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Name: obj.GetNamespace()}, ns); err == nil {
		if v := ns.Annotations[kinds.AnnotationDeletionPolicy]; v == kinds.DeletionPolicyDelete || v == kinds.DeletionPolicyOrphan {
			return v
		}
	}
	if r.DefaultDeletionPolicy == kinds.DeletionPolicyOrphan {
		return kinds.DeletionPolicyOrphan
	}
	return kinds.DeletionPolicyDelete
}

func (r *Reconciler) onMissing(l lifecycle) string {
	if l.onMissing != "" {
		return l.onMissing
	}
	if r.OnAddonMissing == kinds.OnMissingReport {
		return kinds.OnMissingReport
	}
	return kinds.OnMissingRecreate
}
