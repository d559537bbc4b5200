package addon

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/internal/status"
)

var testClaimKey = []byte("0123456789abcdef0123456789abcdef")

// TestClaimVerifiesOnlyWhereSigned: a claim verifies for the add-on, namespace, kind and name
// it was signed for, with the key that signed it; changing any of them breaks it.
func TestClaimVerifiesOnlyWhereSigned(t *testing.T) {
	k := kind(t, "Azimutt")
	r := &Reconciler{Kind: k, ClaimKey: testClaimKey}
	good := secrets.ClaimValue(testClaimKey, "addon_1", "ns", "Azimutt", "az")
	cases := []struct {
		name, ns, value string
		valid, own      bool
	}{
		{"as signed", "ns", good, true, true},
		{"another namespace", "other", good, false, false},
		{"another name in the namespace: valid, not its own", "ns", secrets.ClaimValue(testClaimKey, "addon_1", "ns", "Azimutt", "sibling"), true, false},
		{"another key", "ns", secrets.ClaimValue([]byte("another key, also 32 bytes long!"), "addon_1", "ns", "Azimutt", "az"), false, false},
		{"add-on id edited", "ns", strings.Replace(good, "addon_1", "addon_2", 1), false, false},
		{"kind edited", "ns", strings.Replace(good, "/Azimutt/", "/Metabase/", 1), false, false},
		{"truncated", "ns", good[:len(good)-3], false, false},
		{"garbage", "ns", "not a claim", false, false},
		{"empty", "ns", "", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, u := testResource(t, func(u *unstructured.Unstructured) {
				u.SetNamespace(c.ns)
				u.SetAnnotations(map[string]string{kinds.AnnotationAddonClaim: c.value})
			})
			cl := secrets.ParseClaim(r.ClaimKey, u)
			if cl == nil || cl.Valid != c.valid || cl.Own(k.GVK.Kind, u.GetName()) != c.own {
				t.Fatalf("claim %+v: valid/own %v/%v, want %v/%v", cl, cl != nil && cl.Valid, cl != nil && cl.Own(k.GVK.Kind, u.GetName()), c.valid, c.own)
			}
		})
	}
	// Without a key nothing verifies.
	_, u := testResource(t, func(u *unstructured.Unstructured) {
		u.SetAnnotations(map[string]string{kinds.AnnotationAddonClaim: good})
	})
	if cl := secrets.ParseClaim(nil, u); cl.Valid {
		t.Fatal("a claim verified without a key")
	}
}

// TestCreatedAddonIsClaimed: the resource that creates an add-on gets the signed claim (one
// metadata write), and a later pass writes nothing more.
func TestCreatedAddonIsClaimed(t *testing.T) {
	env := []clevercloud.Variable{{Name: "AZIMUTT_URL", Value: "https://az"}}
	k, u := testResource(t, nil)
	api := &fakeAPI{env: env}
	h := newHarness(t, k, api, u)
	h.r.ClaimKey = testClaimKey
	live := h.pass(t, u)
	if got := ready(live); got != "True/"+status.ReasonProvisioned {
		t.Fatalf("AddonReady %s", got)
	}
	id := kinds.StatusOf(live).Addon
	if want := secrets.ClaimValue(testClaimKey, id, "ns", "Azimutt", "az"); live.GetAnnotations()[kinds.AnnotationAddonClaim] != want {
		t.Fatalf("claim %q, want %q", live.GetAnnotations()[kinds.AnnotationAddonClaim], want)
	}
	if kinds.StatusOf(live).Adopted {
		t.Fatal("a created add-on is not adopted")
	}
	h.statusWrites, h.writes = 0, 0
	h.pass(t, live)
	if h.statusWrites != 0 || h.writes != 0 {
		t.Fatalf("an idle pass wrote: status %d, resource %d", h.statusWrites, h.writes)
	}
}

// TestSecondClaimantIsRefused: an add-on recorded by one resource cannot be bound by another,
// whatever the credentials allow; the refusal names the first.
func TestSecondClaimantIsRefused(t *testing.T) {
	existing := clevercloud.Addon{ID: "addon_1", RealID: "real_1", Region: "par", Plan: clevercloud.Plan{ID: "plan_free"}}
	k, first := testResource(t, func(u *unstructured.Unstructured) {
		u.SetNamespace("team-a")
		u.SetName("db")
		u.SetUID("uid-a")
	})
	kinds.Change(first, func(st *kinds.Status) { st.Addon = "addon_1" })
	_, second := testResource(t, func(u *unstructured.Unstructured) {
		u.SetNamespace("team-b")
		u.SetName("db")
		u.SetUID("uid-b")
		kinds.SpecAddonID.Set(u, "addon_1")
		u.SetFinalizers([]string{k.Finalizer(), kinds.HelmUninstallFinalizer})
	})
	api := &fakeAPI{addons: map[string]clevercloud.Addon{"addon_1": existing}}
	h := newHarness(t, k, api, first, second)
	s := h.r.newPass(context.Background(), second)
	s.api, s.grant = api, &credentials.Grant{BindAny: true}
	if _, _, err := h.r.findAddon(context.Background(), s); err == nil {
		t.Fatal("the second claimant was allowed")
	}
	cond, _ := status.Find(s.conds, status.TypeAddonReady)
	if cond.Reason != status.ReasonAddonClaimed || !strings.Contains(cond.Message, "team-a/db") {
		t.Fatalf("condition %s: %s", cond.Reason, cond.Message)
	}

	// Both recorded it (a race): the older keeps it, the younger is refused.
	kinds.Change(second, func(st *kinds.Status) { st.Addon, st.Adopted = "addon_1", true })
	second.SetCreationTimestamp(metav1.NewTime(first.GetCreationTimestamp().Add(time.Second)))
	s = h.r.newPass(context.Background(), second)
	s.api, s.grant = api, &credentials.Grant{BindAny: true}
	if _, _, err := h.r.findAddon(context.Background(), s); err == nil {
		t.Fatal("the younger of two holders kept the add-on")
	}
	s = h.r.newPass(context.Background(), first)
	s.api = api
	if a, _, err := h.r.findAddon(context.Background(), s); err != nil || a.ID != "addon_1" {
		t.Fatalf("the older holder lost its add-on: %v", err)
	}
}

// TestAdoptedAddonOrphanedByDefault: deleting a resource bound to an add-on it did not create
// keeps the add-on unless the resource says Delete.
func TestAdoptedAddonOrphanedByDefault(t *testing.T) {
	cases := []struct {
		name    string
		adopted bool
		spec    string
		want    string
	}{
		{"created, no policy", false, "", kinds.DeletionPolicyDelete},
		{"adopted, no policy", true, "", kinds.DeletionPolicyOrphan},
		{"adopted, Delete", true, kinds.DeletionPolicyDelete, kinds.DeletionPolicyDelete},
		{"created, Orphan", false, kinds.DeletionPolicyOrphan, kinds.DeletionPolicyOrphan},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, u := testResource(t, func(u *unstructured.Unstructured) {
				if c.adopted {
					kinds.Change(u, func(st *kinds.Status) { st.Adopted = true })
				}
				if c.spec != "" {
					kinds.SpecDeletionPolicy.Set(u, c.spec)
				}
			})
			h := newHarness(t, k, &fakeAPI{}, u)
			if got := h.r.deletionPolicy(context.Background(), u, new(kinds.StatusOf(u)), lifecycleOf(u)); got != c.want {
				t.Fatalf("policy %s, want %s", got, c.want)
			}
		})
	}
}

// TestBoundAddonNotDeletedWithoutThePrivilege: deletionPolicy Delete on an add-on this
// resource bound without a claim of its namespace or the credentials' permission (recorded
// before the rules, or the permission was withdrawn) never deletes it.
func TestBoundAddonNotDeletedWithoutThePrivilege(t *testing.T) {
	for _, c := range []struct {
		name    string
		claim   bool
		deletes int
	}{{"no claim, no permission: kept", false, 0}, {"claimed by its namespace: deleted", true, 1}} {
		t.Run(c.name, func(t *testing.T) {
			k, u := testResource(t, func(u *unstructured.Unstructured) {
				u.SetFinalizers([]string{"api.clever-cloud.com/azimutt"})
				now := metav1.NewTime(time.Now().Add(-10 * time.Second))
				u.SetDeletionTimestamp(&now)
				kinds.SpecDeletionPolicy.Set(u, kinds.DeletionPolicyDelete)
				kinds.Change(u, func(st *kinds.Status) { st.Addon, st.Adopted = "addon_1", true })
				if c.claim {
					u.SetAnnotations(map[string]string{kinds.AnnotationAddonClaim: secrets.ClaimValue(testClaimKey, "addon_1", "ns", "Azimutt", "sibling")})
				}
			})
			api := &deleteAPI{}
			h := newHarness(t, k, api, u)
			h.r.ClaimKey = testClaimKey
			h.r.Credentials = grantOnly{&credentials.Grant{API: api, Key: "k", Source: "test credentials"}} // no binding allowed
			if _, err := h.r.reconcileObject(context.Background(), u); err != nil {
				t.Fatal(err)
			}
			if api.deletes != c.deletes {
				t.Fatalf("DELETE calls %d, want %d", api.deletes, c.deletes)
			}
		})
	}
}

// grantOnly resolves every resource to one grant.
type grantOnly struct{ g *credentials.Grant }

func (c grantOnly) Resolve(context.Context, *unstructured.Unstructured) (*credentials.Grant, error) {
	return c.g, nil
}
