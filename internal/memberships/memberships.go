// Package memberships is the capability of the add-ons that join Network Groups (issue #18
// §3): an add-on of a provider Clever Cloud lets join a Network
// Group (clevercloud.NetworkGroupProviders) joins those of its spec.networkGroups, a
// NetworkGroup resource of its namespace or a group id, and publishes the first group's
// private host name in its Secret. Memberships are read and changed on full passes (a spec
// change, a NetworkGroup's change, the joins Clever Cloud has not finished); the periodic
// refresh keeps the published host from status.networkGroups without a call.
package memberships

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/clever-operator/clever-operator/api/shared"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/step"
)

// Syncer syncs an add-on's memberships: Client reads the NetworkGroup resources its spec
// names; Changed, when set, is told of each NetworkGroup (namespace, name) whose members the
// sync changed (the NetworkGroup controller then reads them again).
type Syncer struct {
	step.Hooks
	Client  client.Client
	Changed func(namespace, name string)
}

// API is what memberships need beyond API (*clevercloud.Client implements it).
type API interface {
	GetNetworkGroup(ctx context.Context, ownerID, id string) (*clevercloud.NetworkGroup, error)
	AddNetworkGroupMember(ctx context.Context, ownerID, networkGroupID string, m clevercloud.NetworkGroupMember) error
	RemoveNetworkGroupMember(ctx context.Context, ownerID, networkGroupID, memberID string) error
}

// Pending says whether the memberships need a full pass: the spec asks for other groups than
// status holds, or the last attempt did not end with every one joined (conds: u's conditions).
func Pending(u *unstructured.Unstructured, st *kinds.Status, conds []status.Condition) bool {
	want, have := kinds.WantedGroups(u), st.NetworkGroups
	if len(want) == 0 && len(have) == 0 {
		return false
	}
	refs := make([]string, len(have))
	for i, m := range have {
		refs[i] = m.Ref
	}
	if !sameSet(want, refs) {
		return true
	}
	c, ok := status.Find(conds, status.TypeNetworkGroups)
	return !ok || c.Status != string(metav1.ConditionTrue)
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// sync brings the add-on's memberships to spec.networkGroups (a full pass's
// step, after the add-on is found and before its credentials are published). It reports in
// status.networkGroups and the NetworkGroups condition, and returns when to look again
// (0: nothing pending).
func (y *Syncer) sync(ctx context.Context, s step.Pass, addon *clevercloud.Addon) time.Duration {
	obj := s.Object()
	want, have := kinds.WantedGroups(obj), slices.Clone(s.Status().NetworkGroups)
	if len(want) == 0 && len(have) == 0 {
		if _, ok := status.Find(s.Conditions(), status.TypeNetworkGroups); ok {
			s.RemoveCondition(status.TypeNetworkGroups)
		}
		return 0
	}
	provider := s.Kind().Provider(obj)
	api, ok := s.API().(API)
	switch {
	case len(want) > 0 && kinds.PrivateHostKey(provider) == "":
		s.Condition(status.TypeNetworkGroups, metav1.ConditionFalse, status.ReasonNetworkGroupsNotSupported, fmt.Sprintf(
			"add-ons of provider %s cannot join a Network Group (Clever Cloud offers them to %s); remove spec.networkGroups", provider, strings.Join(networkGroupProviderList(), ", ")))
		return 0
	case len(want) > 0 && strings.EqualFold(addon.Plan.Slug, "dev"):
		s.Condition(status.TypeNetworkGroups, metav1.ConditionFalse, status.ReasonNetworkGroupsNotSupported,
			"add-ons on the shared dev plan cannot join a Network Group (Clever Cloud offers them to dedicated plans); choose a dedicated plan or remove spec.networkGroups")
		return 0
	case !ok:
		s.Condition(status.TypeNetworkGroups, metav1.ConditionFalse, status.ReasonNetworkGroupsNotSupported, "the Clever Cloud client in use has no Network Group calls")
		return 0
	}

	var (
		out          []shared.NetworkGroupMembership
		problems     []string
		reason       string
		joining      []string
		joined       []string
		resolved     = map[string]string{} // ref -> id
		problem      = func(rsn, msg string) { problems = append(problems, msg); reason = firstNonEmpty(reason, rsn) }
		label        = obj.GetNamespace() + "/" + obj.GetName()
		previous     = func(ref string) (shared.NetworkGroupMembership, bool) { return findMembership(have, ref) }
		memberID     = addon.RealID
		keepPrevious = func(ref string) {
			if m, ok := previous(ref); ok {
				out = append(out, m)
			}
		}
	)
	for _, ref := range want {
		id, rsn, msg := Resolve(ctx, y.Client, s, ref)
		if msg != "" {
			problem(rsn, msg)
			keepPrevious(ref) // still tracked: left when the entry goes
			continue
		}
		resolved[ref] = id
		ng, err := api.GetNetworkGroup(ctx, s.Org(), id)
		switch {
		case clevercloud.IsNotFound(err):
			problem(status.ReasonNetworkGroupNotFound, fmt.Sprintf("Network Group %s (%s) does not exist in organisation %s", id, ref, s.Org()))
			continue
		case err != nil:
			problem(status.ReasonNetworkGroupFailed, fmt.Sprintf("reading Network Group %s (%s): %s", id, ref, clevercloud.Message(err)))
			keepPrevious(ref)
			continue
		}
		if i := slices.IndexFunc(ng.Members, func(m clevercloud.NetworkGroupMember) bool { return m.ID == memberID }); i >= 0 {
			out = append(out, shared.NetworkGroupMembership{Ref: ref, ID: id, Member: memberID, PrivateHost: ng.Members[i].DomainName})
			joined = append(joined, fmt.Sprintf("%s (%s)", id, ref))
			continue
		}
		if m, ok := previous(ref); !ok || m.ID != id || m.PrivateHost != "" {
			// Not asked yet for this group (or the member went away): ask. A join asked
			// earlier whose member does not show yet is waited for, not asked again.
			err := api.AddNetworkGroupMember(ctx, s.Org(), id, clevercloud.NetworkGroupMember{
				ID: memberID, Label: label, DomainName: clevercloud.MemberDomainName(id, memberID), Kind: clevercloud.MemberKindAddon})
			if err != nil && !clevercloud.IsConflict(err) {
				problem(status.ReasonNetworkGroupFailed, fmt.Sprintf("joining Network Group %s (%s): %s", id, ref, clevercloud.Message(err)))
				continue
			}
			s.Event(corev1.EventTypeNormal, status.EventNetworkGroupJoined, fmt.Sprintf("Asked Clever Cloud to add %s to Network Group %s (%s)", memberID, id, ref))
		}
		out = append(out, shared.NetworkGroupMembership{Ref: ref, ID: id, Member: memberID})
		joining = append(joining, fmt.Sprintf("%s (%s)", id, ref))
	}
	// Leave the groups no longer asked for (or whose NetworkGroup now names another group).
	for _, m := range have {
		if slices.ContainsFunc(out, func(o shared.NetworkGroupMembership) bool { return o.ID == m.ID }) {
			continue
		}
		if id, ok := resolved[m.Ref]; ok && id == m.ID {
			continue // the group is gone (reported above): nothing to leave
		}
		err := api.RemoveNetworkGroupMember(ctx, s.Org(), m.ID, m.Member)
		if err != nil && !clevercloud.IsNotFound(err) {
			problem(status.ReasonNetworkGroupFailed, fmt.Sprintf("leaving Network Group %s: %s", m.ID, clevercloud.Message(err)))
			out = append(out, m)
			continue
		}
		s.Event(corev1.EventTypeNormal, status.EventNetworkGroupLeft, fmt.Sprintf("Removed %s from Network Group %s", m.Member, m.ID))
	}
	s.Update(func(st *kinds.Status) { st.NetworkGroups = slices.Clone(out) })
	if y.Changed != nil {
		for _, ref := range changedRefs(have, out) {
			if !strings.HasPrefix(ref, "ng_") {
				y.Changed(obj.GetNamespace(), ref)
			}
		}
	}

	switch {
	case len(problems) > 0:
		s.Condition(status.TypeNetworkGroups, metav1.ConditionFalse, reason, strings.Join(problems, "; "))
		if reason == status.ReasonNetworkGroupFailed {
			return backoff(s)
		}
		return 0 // a NetworkGroup's change (watched) or the spec's wakes the resource
	case len(joining) > 0:
		s.Condition(status.TypeNetworkGroups, metav1.ConditionFalse, status.ReasonNetworkGroupJoining,
			"Clever Cloud is adding the add-on to Network Group "+strings.Join(joining, ", "))
		return backoff(s)
	case len(want) == 0:
		s.RemoveCondition(status.TypeNetworkGroups)
		return 0
	}
	s.Condition(status.TypeNetworkGroups, metav1.ConditionTrue, status.ReasonNetworkGroupsJoined, "member of Network Group "+strings.Join(joined, ", "))
	return 0
}

// backoff is when to look at memberships again while they do not settle: 2 s,
// growing with the time the condition has been False, up to 5 min.
func backoff(s step.Pass) time.Duration {
	c, ok := status.Find(status.Conditions(s.Snapshot()), status.TypeNetworkGroups)
	if !ok || c.Status != string(metav1.ConditionFalse) {
		return 2 * time.Second
	}
	age, _ := c.Age(s.Now())
	return queue.GrowingDelay(age, 2*time.Second, 5*time.Minute)
}

// changedRefs are the refs whose membership differs between a and b.
func changedRefs(a, b []shared.NetworkGroupMembership) []string {
	var out []string
	for _, x := range a {
		if i := slices.IndexFunc(b, func(y shared.NetworkGroupMembership) bool { return y.Ref == x.Ref }); i < 0 || b[i] != x {
			out = append(out, x.Ref)
		}
	}
	for _, y := range b {
		if !slices.ContainsFunc(a, func(x shared.NetworkGroupMembership) bool { return x.Ref == y.Ref }) {
			out = append(out, y.Ref)
		}
	}
	return out
}

func findMembership(ms []shared.NetworkGroupMembership, ref string) (shared.NetworkGroupMembership, bool) {
	for _, m := range ms {
		if m.Ref == ref {
			return m, true
		}
	}
	return shared.NetworkGroupMembership{}, false
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func networkGroupProviderList() []string {
	out := make([]string, 0, len(clevercloud.NetworkGroupProviders))
	for p := range clevercloud.NetworkGroupProviders {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Resolve turns a spec.networkGroups entry into a group id: an id as MayReference allows
// it (a NetworkGroup of the namespace records it in status.id, or the credentials allow
// binding it), decided before any call about the group; a name into the id of the
// NetworkGroup resource of the namespace (Ready, same organisation). msg says why it cannot
// be had (reason for the condition).
func Resolve(ctx context.Context, c client.Client, s step.Pass, ref string) (id, reason, msg string) {
	if strings.HasPrefix(ref, "ng_") {
		ns := s.Object().GetNamespace()
		here, err := credentials.RecordedIn(ctx, c, kinds.NetworkGroupGVK, ns, ref, "id")
		if err != nil {
			return "", status.ReasonNetworkGroupFailed, fmt.Sprintf("listing the NetworkGroups of namespace %s: %v", ns, err)
		}
		if refused := credentials.MayReference(credentials.Reference{What: credentials.ReferenceNetworkGroup, ID: ref, Organisation: s.Org(), Namespace: ns, Field: "spec.networkGroups", CreatedHere: here}, s.Grant()); refused != nil {
			return "", refused.Reason, refused.Message
		}
		return ref, "", ""
	}
	ng := &unstructured.Unstructured{}
	ng.SetGroupVersionKind(kinds.NetworkGroupGVK)
	if err := c.Get(ctx, types.NamespacedName{Namespace: s.Object().GetNamespace(), Name: ref}, ng); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return "", status.ReasonNetworkGroupNotFound, fmt.Sprintf("NetworkGroup %s does not exist in namespace %s", ref, s.Object().GetNamespace())
		}
		return "", status.ReasonNetworkGroupFailed, fmt.Sprintf("reading NetworkGroup %s: %v", ref, err)
	}
	if org := kinds.SpecOrganisation.String(ng); org != s.Org() {
		return "", status.ReasonNetworkGroupNotFound, fmt.Sprintf("NetworkGroup %s is in organisation %s, the add-on in %s: a group only takes members of its organisation", ref, org, s.Org())
	}
	ready, _ := status.Find(status.Conditions(ng), status.TypeReady)
	id = kinds.NetworkGroupID(ng)
	if ready.Status != string(metav1.ConditionTrue) || id == "" || ng.GetDeletionTimestamp() != nil {
		return "", status.ReasonNetworkGroupNotReady, fmt.Sprintf("NetworkGroup %s is not Ready yet", ref)
	}
	return id, "", ""
}

// Leave removes the add-on from its groups before it is deleted (errors other
// than 404 stop the deletion, which is retried).
func Leave(ctx context.Context, s step.Pass, api credentials.API) error {
	nga, ok := api.(API)
	if !ok {
		return nil
	}
	for _, m := range s.Status().NetworkGroups {
		if err := nga.RemoveNetworkGroupMember(ctx, s.Org(), m.ID, m.Member); err != nil && !clevercloud.IsNotFound(err) {
			return fmt.Errorf("leaving Network Group %s: %w", m.ID, err)
		}
	}
	return nil
}

// Users maps a NetworkGroup to the resources of kind k that name it (a watch's map).
func (y *Syncer) Users(k *kinds.Kind) func(ctx context.Context, ng client.Object) []reconcile.Request {
	return func(ctx context.Context, ng client.Object) []reconcile.Request { return y.users(ctx, k, ng) }
}

func (y *Syncer) users(ctx context.Context, k *kinds.Kind, ng client.Object) []reconcile.Request {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
	if err := y.Client.List(ctx, list, client.InNamespace(ng.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if slices.Contains(kinds.WantedGroups(&list.Items[i]), ng.GetName()) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// Sync is the full pass's membership step: synced, except for a resource that may
// not change its add-on (ObserveOnly) or is paused, which keeps what status says.
func (y *Syncer) Sync(ctx context.Context, s step.Pass, addon *clevercloud.Addon) time.Duration {
	if len(kinds.WantedGroups(s.Object())) > 0 && s.ObserveOnly() {
		s.Condition(status.TypeNetworkGroups, metav1.ConditionFalse, status.ReasonNetworkGroupsNotSupported,
			"managementPolicy ObserveOnly never changes the add-on, so it joins no Network Group; remove spec.networkGroups or manage the add-on (Full)")
		return 0
	}
	if s.Paused() {
		return 0
	}
	return y.sync(ctx, s, addon)
}

// The Syncer is the memberships as the pass calls them (step.Capability): a NetworkGroup
// wakes the resources naming it, pending memberships make a full pass due (and the next pass
// come in a second when a pass did not sync them), and a full pass syncs them (Sync).
var _ step.Capability = (*Syncer)(nil)

// Watch: a NetworkGroup that becomes Ready (or goes) wakes the resources of k naming it.
func (y *Syncer) Watch(k *kinds.Kind) (client.Object, handler.MapFunc) {
	ng := &unstructured.Unstructured{}
	ng.SetGroupVersionKind(kinds.NetworkGroupGVK)
	return ng, y.Users(k)
}

// Due: the memberships are pending (Pending).
func (y *Syncer) Due(obj *unstructured.Unstructured, st *kinds.Status, conds []status.Condition) bool {
	return Pending(obj, st, conds)
}

// Provisioned syncs the memberships (Sync).
func (y *Syncer) Provisioned(ctx context.Context, s step.Pass, addon *clevercloud.Addon) time.Duration {
	return y.Sync(ctx, s, addon)
}

// Soon: pending memberships, not synced by this pass, are synced by a full pass in a second.
func (y *Syncer) Soon(obj *unstructured.Unstructured, st *kinds.Status, conds []status.Condition) time.Duration {
	if Pending(obj, st, conds) {
		return time.Second
	}
	return 0
}
