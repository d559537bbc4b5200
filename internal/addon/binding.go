package addon

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/patch"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Binding an existing add-on is a privilege (docs/security.md, "Binding an existing add-on").
// A resource may use an add-on it did not create in this very pass only when
//
//   - the add-on is named after this resource's UID (kubernetes::<Kind>::<uid>): this resource
//     created it (an earlier pass that crashed, or the Rust operator) — a UID is assigned by
//     the API server, so nobody can forge it; or
//   - the resource carries a claim (annotation api.clever-cloud.com/addon-claim) that the
//     operator signed, with a key only it holds, for this add-on and this namespace: the
//     operator writes it on every resource whose add-on it created, so a resource restored
//     from backup (new UID, no status) finds its add-on again, and so does any resource of
//     the namespace that copies it; a copy in another namespace does not verify; or
//   - the credentials in use allow binding it (spec.binding of the credentials object: any
//     add-on, or a list of ids), which only whoever controls those credentials can grant;
//
// and no other resource of the kind is bound to it already (status.addon). The organisation
// check comes before (connect). A bound add-on the resource did not create is "adopted": its
// deletion defaults to Orphan.

// IndexStatusAddon is the cache index of resources by status.addon (one per kind).
const IndexStatusAddon = "status.addon"

// Every reference by id obeys one rule (docs/security.md, "Binding an existing add-on"). A
// resource of namespace N may use an existing Clever Cloud object it names by id — an add-on
// (spec.addonId and the addon-id or claim annotations of an add-on kind, spec.cellar.addonId
// of a CellarBucket) or a Network Group (an ng_ entry of spec.networkGroups) — only when
//
//   - it was created from N, as a record only the operator writes proves: for an add-on kind's
//     own add-on, its name after the resource's UID or a valid signed claim (mayBind); for a
//     Cellar named by a CellarBucket, a Cellar of N whose status.addon is that id; for a
//     Network Group, a NetworkGroup of N whose status.id is that id (RecordedIn: tenants
//     cannot write the status subresource, and the operator chooses a NetworkGroup's id); or
//   - the grant of the credentials in use allows binding that id (Grant.AllowsBinding:
//     spec.binding.any of the credentials object, or the id in spec.binding.addonIds, a list
//     of add-on ids only, so a Network Group id is granted by binding.any).
//
// MayReference is that decision; every path calls it before any call that reads the object's
// credentials (env), reads or changes a Network Group, or signs a request with its keys.

// mayBind decides whether the pass may use add-on a, which it finds bound by id (spec.addonId,
// the addon-id annotation or the claim annotation) rather than created: MayReference, with the
// add-on's name after this resource's UID or a valid claim as the evidence that the namespace
// created it. adopted reports that this resource did not create it. A refusal ends the pass
// (BindingNotAllowed, AddonClaimed).
func (r *Reconciler) mayBind(ctx context.Context, s *pass, a *clevercloud.Addon) (adopted bool, err error) {
	obj := s.obj
	if want := r.Kind.Provider(obj); a.Provider.ID != "" && want != "" && a.Provider.ID != want {
		return false, s.fail(status.ReasonInvalidSpec, fmt.Sprintf("add-on %s is a %s add-on, not a %s one: it cannot be bound by a %s", a.ID, a.Provider.ID, want, r.Kind.GVK.Kind), nil)
	}
	c := secrets.ParseClaim(r.ClaimKey, obj)
	uidNamed := a.AddonName() == r.Kind.AddonName(string(obj.GetUID()))
	claimed := c != nil && c.Valid && c.AddonID == a.ID
	if ref := credentials.MayReference(credentials.Reference{What: credentials.ReferenceAddon, ID: a.ID, Organisation: s.org, Namespace: obj.GetNamespace(), CreatedHere: uidNamed || claimed}, s.grant); ref != nil {
		return false, s.fail(ref.Reason, ref.Message, nil)
	}
	switch {
	case uidNamed:
		adopted = false // named after this resource's UID: it created it
	case claimed:
		adopted = !c.Own(r.Kind.GVK.Kind, obj.GetName()) // created by this resource, or another of its namespace
	default:
		adopted = true // the credentials allow binding it
	}
	if err := r.refuseIfBoundElsewhere(ctx, s, a.ID); err != nil {
		return false, err
	}
	return adopted, nil
}

// refuseIfBoundElsewhere ends the pass with AddonClaimed, naming the holder, when another live
// resource of the kind records addonID in its status. Of two resources that recorded it in a
// race, the older keeps it.
func (r *Reconciler) refuseIfBoundElsewhere(ctx context.Context, s *pass, addonID string) error {
	obj := s.obj
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(r.Kind.GVK.GroupVersion().WithKind(r.Kind.GVK.Kind + "List"))
	if err := r.Client.List(ctx, list, client.MatchingFields{IndexStatusAddon: addonID}); err != nil {
		return err
	}
	for i := range list.Items {
		o := &list.Items[i]
		if o.GetUID() == obj.GetUID() || kinds.StatusOf(o).Addon != addonID || o.GetDeletionTimestamp() != nil {
			continue
		}
		if s.st.Addon == addonID && olderThan(obj, o) {
			continue // both recorded it: this one is older and keeps it
		}
		return s.fail(status.ReasonAddonClaimed, fmt.Sprintf("add-on %s is already bound to %s %s/%s; one add-on is never shared by two resources", addonID, r.Kind.GVK.Kind, o.GetNamespace(), o.GetName()), nil)
	}
	return nil
}

func olderThan(a, b *unstructured.Unstructured) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	return a.GetNamespace()+"/"+a.GetName() < b.GetNamespace()+"/"+b.GetName()
}

// indexStatusAddon is the index function of IndexStatusAddon.
func indexStatusAddon(o client.Object) []string {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	if id := kinds.StatusOf(u).Addon; id != "" {
		return []string{id}
	}
	return nil
}

// ensureClaim asks for the signed claim of add-on addonID on the resource that created it
// (written after the pass's status write by writeClaim, one metadata patch, only when the
// annotation is missing or does not verify, e.g. after the key changed), so that a restore
// from backup finds the add-on again.
func (r *Reconciler) ensureClaim(s *pass, addonID string) {
	if len(r.ClaimKey) == 0 {
		return
	}
	obj := s.obj
	if c := secrets.ParseClaim(r.ClaimKey, obj); c != nil && c.Own(r.Kind.GVK.Kind, obj.GetName()) && c.AddonID == addonID {
		return
	}
	s.claim = secrets.ClaimValue(r.ClaimKey, addonID, obj.GetNamespace(), r.Kind.GVK.Kind, obj.GetName())
}

// writeClaim writes the claim a pass asked for. A failure is only logged: the next full pass
// asks again.
func (r *Reconciler) writeClaim(ctx context.Context, s *pass) {
	if s.claim == "" || s.released {
		return
	}
	if err := patch.Annotate(ctx, r.Client, s.obj, kinds.AnnotationAddonClaim, s.claim); err != nil {
		s.log.V(1).Info("writing the add-on claim failed; asked again on the next full pass", "error", err.Error())
	}
}

// claimedAddon is the restore path: a resource with no recorded add-on and no addonId whose
// claim annotation names one. A claim that does not verify is refused (never a new add-on in
// its place: the user removes the annotation to get one); a valid one is bound as by id.
func (r *Reconciler) claimedAddon(ctx context.Context, s *pass) (*clevercloud.Addon, bool, bool, error) {
	c := secrets.ParseClaim(r.ClaimKey, s.obj)
	if c == nil {
		return nil, false, false, nil
	}
	if !c.Valid && s.grant != nil && s.grant.AllowsBinding(c.AddonID) {
		// A claim signed with a key since lost (the cluster rebuilt without the operator's
		// namespace): the credentials' binding grant lets the resource have the add-on anyway,
		// as adopted (its deletion then defaults to Orphan).
		c.Valid = true
	}
	if !c.Valid {
		if !s.first {
			// Perhaps its own claim under a key since lost (a restart without the key Secret):
			// the name lookup finds an add-on this resource created; findAddon refuses the
			// claim only when it does not.
			return nil, false, false, nil
		}
		return nil, false, true, s.refuseClaim()
	}
	a, err := s.api.GetAddon(ctx, s.org, c.AddonID)
	if err != nil {
		if clevercloud.IsNotFound(err) {
			return nil, false, true, s.fail(status.ReasonAddonNotFound, fmt.Sprintf(
				"add-on %s, named by annotation %s, does not exist in organisation %s; remove the annotation to create a new add-on", c.AddonID, kinds.AnnotationAddonClaim, s.org), nil)
		}
		return nil, false, true, err
	}
	adopted, err := r.mayBind(ctx, s, a)
	if err != nil {
		return nil, false, true, err
	}
	s.event(corev1.EventTypeNormal, status.EventAddonAdopted, fmt.Sprintf("Bound to add-on %s recorded by annotation %s (created from this namespace)", a.ID, kinds.AnnotationAddonClaim))
	if !adopted {
		if a, err = r.takeBack(ctx, s, a); err != nil {
			return nil, false, true, err
		}
	}
	return a, adopted, true, nil
}

// refuseClaim reports a claim annotation that does not verify.
func (s *pass) refuseClaim() error {
	return s.fail(status.ReasonBindingNotAllowed, fmt.Sprintf(
		"annotation %s does not verify for namespace %s: copied from another namespace, or signed with an operator key since lost (restore the operator's claim key Secret, or have an admin allow binding the add-on in the credentials' spec.binding; remove the annotation to create a new add-on instead)", kinds.AnnotationAddonClaim, s.obj.GetNamespace()), nil)
}

// bindingStillAllowed says whether deleting an adopted add-on (explicit deletionPolicy
// Delete) is allowed: the claim or the credentials still grant it.
func (r *Reconciler) bindingStillAllowed(s *pass, addonID string) bool {
	if c := secrets.ParseClaim(r.ClaimKey, s.obj); c != nil && c.Valid && c.AddonID == addonID {
		return true
	}
	return s.grant != nil && s.grant.AllowsBinding(addonID)
}
