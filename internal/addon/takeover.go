package addon

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/status"
)

// One add-on, one managing resource, across clusters (docs/disaster-recovery.md).
//
// The add-on's name is the marker Clever Cloud keeps for us: an add-on the operator created
// is named kubernetes::<Kind>::<uid of the resource that manages it>. A resource restored
// from a backup (a new UID) that takes its add-on back through its signed claim renames the
// add-on after its own UID. If the resource it was restored from still runs (the same
// manifest applied to a second cluster with the same claim key, or a restore test next to
// production), that one sees at its next read of the add-on that the name is no longer its
// own: it reports AddonManagedElsewhere, stops touching the add-on, and its deletion keeps
// the add-on. The last resource to take the add-on back manages it; the other says so.
//
// An add-on a resource bound without having created it (spec.addonId, an import) keeps the
// name its owner gave it: the rule does not apply to it (docs/disaster-recovery.md).

// otherHolder returns the UID the add-on is named after when it is named after a resource of
// this kind other than obj ("" otherwise).
func (r *Reconciler) otherHolder(obj *unstructured.Unstructured, a *clevercloud.Addon) string {
	prefix := r.Kind.AddonName("")
	name := a.AddonName()
	if !strings.HasPrefix(name, prefix) || name == r.Kind.AddonName(string(obj.GetUID())) {
		return ""
	}
	return strings.TrimPrefix(name, prefix)
}

// refuseIfManagedElsewhere ends the pass with AddonManagedElsewhere when the add-on this
// resource created (not adopted) is named after another resource.
func (r *Reconciler) refuseIfManagedElsewhere(s *pass, a *clevercloud.Addon) error {
	other := r.otherHolder(s.obj, a)
	if other == "" {
		return nil
	}
	return s.fail(status.ReasonAddonManagedElsewhere, r.managedElsewhereMessage(a, other), nil)
}

func (r *Reconciler) managedElsewhereMessage(a *clevercloud.Addon, other string) string {
	return fmt.Sprintf("add-on %s is now named %s: the %s with UID %s (restored from this one's backup, in this cluster or another) took it over; "+
		"this resource no longer touches it and deleting it keeps the add-on. To manage it from here again, restore this resource from its backup (it takes the add-on back the same way)",
		a.ID, a.AddonName(), r.Kind.GVK.Kind, other)
}

// takeBack renames add-on a, found through this resource's own signed claim (a restore: the
// resource has a new UID), after this resource, so that the resource it was restored from, if
// it still runs somewhere, sees that it no longer manages it.
func (r *Reconciler) takeBack(ctx context.Context, s *pass, a *clevercloud.Addon) (*clevercloud.Addon, error) {
	other := r.otherHolder(s.obj, a)
	if other == "" {
		return a, nil
	}
	want := r.Kind.AddonName(string(s.obj.GetUID()))
	renamed, err := s.api.RenameAddon(ctx, s.org, a.ID, want)
	if err != nil {
		return nil, err
	}
	if renamed == nil || renamed.ID == "" {
		renamed = a
	}
	s.event(corev1.EventTypeNormal, status.EventAddonTakenOver, fmt.Sprintf(
		"Add-on %s was named after resource UID %s; renamed %s for this resource. A resource still holding it (another cluster running the same manifest) now reports %s and will not delete it",
		a.ID, other, want, status.ReasonAddonManagedElsewhere))
	return renamed, nil
}
