package addon

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

// keysAPI is fakeAPI whose new add-ons announce their variables (configKeys).
type keysAPI struct{ *fakeAPI }

func (a keysAPI) CreateAddon(ctx context.Context, owner string, o clevercloud.CreateOpts) (*clevercloud.Addon, error) {
	ad, err := a.fakeAPI.CreateAddon(ctx, owner, o)
	if err == nil {
		ad.ConfigKeys = []string{"AZIMUTT_URL"}
		ad.CreationDate = uint64(time.Now().UnixMilli())
		a.addons[ad.ID] = *ad
	}
	return ad, err
}

// TestWaitingPassReadsOnlyTheEnv: while the add-on is provisioned, a pass calls nothing
// before its env is due, then reads the env alone (no GET of the add-on), and publishes from
// it; a spec change goes back to a full pass.
func TestWaitingPassReadsOnlyTheEnv(t *testing.T) {
	for _, specChange := range []bool{false, true} {
		api := &fakeAPI{}
		k, u := testResource(t, nil)
		h := newHarness(t, k, keysAPI{api}, u)
		t0 := time.Now()
		now := t0
		h.r.Now = func() time.Time { return now }
		h.r.ClaimKey = []byte("0123456789abcdef0123456789abcdef") // the claim written after the create
		step := func(at time.Duration, wantCalls []string, wantReady string) {
			t.Helper()
			now = t0.Add(at)
			api.calls = nil
			live := h.pass(t, u)
			if !slices.Equal(api.calls, wantCalls) {
				t.Fatalf("specChange %v, at %s: calls %v, want %v", specChange, at, api.calls, wantCalls)
			}
			if got := ready(live); got != wantReady {
				t.Fatalf("specChange %v, at %s: AddonReady %s, want %s", specChange, at, got, wantReady)
			}
		}
		step(0, []string{"create", "env addon_new"}, "False/Provisioning")
		step(time.Second, nil, "False/Provisioning")
		step(2*time.Second, []string{"env addon_new"}, "False/Provisioning")
		if specChange {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(u.GroupVersionKind())
			_ = h.cl.Get(context.Background(), types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}, live)
			live.SetGeneration(2)
			if err := h.cl.Update(context.Background(), live); err != nil {
				t.Fatal(err)
			}
			step(3*time.Second, []string{"get addon_new", "env addon_new"}, "False/Provisioning")
		}
		api.env = []clevercloud.Variable{{Name: "AZIMUTT_URL", Value: "https://az"}}
		if specChange {
			step(6*time.Second, []string{"env addon_new"}, "True/Provisioned")
		} else {
			step(4*time.Second, []string{"env addon_new"}, "True/Provisioned")
		}
		if h.r.board.Len() != 0 {
			t.Fatalf("specChange %v: board not empty after Ready", specChange)
		}
	}
}

// TestCreateJoinsAGroupBeingWaitedFor: an add-on created while another of its kind and
// organisation is still being provisioned does not read its env at once; with nothing being
// waited for (an API answering at once), the create is followed by the env read.
func TestCreateJoinsAGroupBeingWaitedFor(t *testing.T) {
	api := &fakeAPI{}
	k, u1 := testResource(t, nil)
	_, u2 := testResource(t, func(u *unstructured.Unstructured) { u.SetName("az2"); u.SetUID("uid-2") })
	h := newHarness(t, k, keysAPI{api}, u1, u2)
	api.calls = nil
	if got := ready(h.pass(t, u1)); got != "False/Provisioning" || !slices.Equal(api.calls, []string{"create", "env addon_new"}) {
		t.Fatalf("first: %s, calls %v", got, api.calls)
	}
	api.calls = nil
	if got := ready(h.pass(t, u2)); got != "False/Provisioning" || !slices.Equal(api.calls, []string{"create"}) {
		t.Fatalf("second: %s, calls %v (want the create alone)", got, api.calls)
	}
	if n := h.r.board.Len(); n != 2 {
		t.Fatalf("%d waiters, want 2", n)
	}
}
