package addon

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	apiv1 "github.com/clever-operator/clever-operator/api/v1"
	"github.com/clever-operator/clever-operator/internal/catalog"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/statusmerge"
)

// fakeAPI is a Clever Cloud API in memory: the add-ons it knows, their env, and errors to
// answer. It records the calls it gets.
type fakeAPI struct {
	credentials.API
	addons    map[string]clevercloud.Addon
	env       []clevercloud.Variable
	getErr    error
	listErr   error
	envErr    error
	createErr error
	providers []clevercloud.Provider
	catErr    error
	calls     []string
}

func (a *fakeAPI) ListProvidersForOwner(context.Context, string) ([]clevercloud.Provider, error) {
	a.calls = append(a.calls, "catalogue")
	return a.providers, a.catErr
}

func (a *fakeAPI) GetAddon(_ context.Context, _, id string) (*clevercloud.Addon, error) {
	a.calls = append(a.calls, "get "+id)
	if a.getErr != nil {
		return nil, a.getErr
	}
	if ad, ok := a.addons[id]; ok {
		return &ad, nil
	}
	return nil, apiErr(404)
}

func (a *fakeAPI) ListAddons(context.Context, string) ([]clevercloud.Addon, error) {
	a.calls = append(a.calls, "list")
	if a.listErr != nil {
		return nil, a.listErr
	}
	var out []clevercloud.Addon
	for _, ad := range a.addons {
		out = append(out, ad)
	}
	return out, nil
}

func (a *fakeAPI) GetAddonEnv(_ context.Context, _, id string) ([]clevercloud.Variable, error) {
	a.calls = append(a.calls, "env "+id)
	return a.env, a.envErr
}

func (a *fakeAPI) CreateAddon(_ context.Context, _ string, o clevercloud.CreateOpts) (*clevercloud.Addon, error) {
	a.calls = append(a.calls, "create")
	if a.createErr != nil {
		return nil, a.createErr
	}
	name := o.Name
	ad := clevercloud.Addon{ID: "addon_new", RealID: "real_new", Name: &name, Region: o.Region, Plan: clevercloud.Plan{ID: o.Plan}}
	if a.addons == nil {
		a.addons = map[string]clevercloud.Addon{}
	}
	a.addons[ad.ID] = ad
	return &ad, nil
}

// countingClient counts the writes to the resource's status (and to the resource itself)
// around controller-runtime's fake client.
type countingClient struct {
	client.Client
	statusWrites, writes *int
	conflicts            int    // the next status writes that answer a conflict
	beforeStatus         func() // called before each status write
}

func (c *countingClient) Update(ctx context.Context, o client.Object, opts ...client.UpdateOption) error {
	*c.writes++
	return c.Client.Update(ctx, o, opts...)
}

func (c *countingClient) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.PatchOption) error {
	*c.writes++
	return c.Client.Patch(ctx, o, p, opts...)
}

func (c *countingClient) Status() client.SubResourceWriter {
	return &countingStatus{SubResourceWriter: c.Client.Status(), c: c}
}

type countingStatus struct {
	client.SubResourceWriter
	c *countingClient
}

func (w *countingStatus) Update(ctx context.Context, o client.Object, opts ...client.SubResourceUpdateOption) error {
	if w.c.beforeStatus != nil {
		w.c.beforeStatus()
	}
	if w.c.conflicts > 0 {
		w.c.conflicts--
		return apierrors.NewConflict(schema.GroupResource{Resource: "azimutts"}, o.GetName(), nil)
	}
	*w.c.statusWrites++
	return w.SubResourceWriter.Update(ctx, o, opts...)
}

const testOrg = "orga_00000000-0000-0000-0000-000000000001"

// testResource is an Azimutt (no plan resolution, no migration, no v4 data): the engine's
// generic path.
func testResource(t *testing.T, mutate func(u *unstructured.Unstructured)) (*kinds.Kind, *unstructured.Unstructured) {
	t.Helper()
	k := kind(t, "Azimutt")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.GVK)
	u.SetNamespace("ns")
	u.SetName("az")
	u.SetUID("uid-1")
	u.SetGeneration(1)
	u.SetCreationTimestamp(metav1.NewTime(time.Now().Add(-time.Minute)))
	_ = unstructured.SetNestedField(u.Object, map[string]any{"organisation": testOrg, "instance": map[string]any{"region": "par", "plan": "plan_free"}}, "spec")
	if mutate != nil {
		mutate(u)
	}
	return k, u
}

type harness struct {
	r                    *Reconciler
	cl                   *countingClient
	statusWrites, writes int
	rec                  *record.FakeRecorder
}

func newHarness(t *testing.T, k *kinds.Kind, api credentials.API, objs ...client.Object) *harness {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := apiv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	base := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&apiv1.Azimutt{}, &apiv1.Metabase{}).
		WithIndex((&Reconciler{Kind: k}).newObject(), IndexStatusAddon, indexStatusAddon).Build()
	h := &harness{rec: record.NewFakeRecorder(50)}
	h.cl = &countingClient{Client: base, statusWrites: &h.statusWrites, writes: &h.writes}
	h.r = &Reconciler{Kind: k, Client: h.cl, APIReader: h.cl, Recorder: h.rec, Credentials: staticCredentials{api}, Plans: &catalog.PlanCache{}, ResyncPeriod: time.Hour}
	return h
}

func (h *harness) pass(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	if _, err := h.r.reconcileObject(context.Background(), h.get(t, u)); err != nil {
		if _, ok := err.(*clevercloud.APIError); !ok {
			t.Fatalf("pass: %v", err)
		}
	}
	return h.get(t, u)
}

func ready(u *unstructured.Unstructured) string {
	a, _ := status.Find(status.Conditions(u), status.TypeAddonReady)
	return a.Status + "/" + a.Reason
}

// TestOnePassOneStatusWrite: whatever a pass decides, its status is written at most once,
// and a pass that changes nothing writes nothing.
func TestOnePassOneStatusWrite(t *testing.T) {
	existing := clevercloud.Addon{ID: "addon_1", RealID: "real_1", Region: "par", Plan: clevercloud.Plan{ID: "plan_free"}}
	env := []clevercloud.Variable{{Name: "AZIMUTT_URL", Value: "https://az"}}
	cases := []struct {
		name         string
		api          *fakeAPI
		mutate       func(*unstructured.Unstructured)
		statusWrites int
		writes       int // writes to the resource itself (finalizers)
		ready        string
	}{
		{"new resource: finalizers, create, publish", &fakeAPI{env: env}, nil, 1, 1, "True/" + status.ReasonProvisioned},
		{"Helm's finalizer already there: one patch adds the engine's", &fakeAPI{env: env}, func(u *unstructured.Unstructured) {
			u.SetFinalizers([]string{kinds.HelmUninstallFinalizer})
		}, 1, 1, "True/" + status.ReasonProvisioned},
		{"spec changed on a Ready resource: one write", &fakeAPI{addons: map[string]clevercloud.Addon{"addon_1": existing}, env: env}, func(u *unstructured.Unstructured) {
			u.SetFinalizers([]string{"api.clever-cloud.com/azimutt", kinds.HelmUninstallFinalizer})
			u.SetGeneration(2)
			_ = unstructured.SetNestedField(u.Object, "addon_1", "status", "addon")
			_ = unstructured.SetNestedField(u.Object, int64(1), "status", "observedGeneration")
			setCondition(u, status.TypeAddonReady, metav1.ConditionTrue, status.ReasonProvisioned, "ok", time.Now())
		}, 1, 0, "True/" + status.ReasonProvisioned},
		{"API unavailable: one write", &fakeAPI{getErr: apiErr(503)}, func(u *unstructured.Unstructured) {
			u.SetFinalizers([]string{"api.clever-cloud.com/azimutt", kinds.HelmUninstallFinalizer})
			_ = unstructured.SetNestedField(u.Object, "addon_1", "status", "addon")
		}, 1, 0, "False/" + status.ReasonAPIUnavailable},
		{"invalid organisation: one write", &fakeAPI{}, func(u *unstructured.Unstructured) {
			u.SetFinalizers([]string{"api.clever-cloud.com/azimutt", kinds.HelmUninstallFinalizer})
			_ = unstructured.SetNestedField(u.Object, "acme", "spec", "organisation")
		}, 1, 0, "False/" + status.ReasonInvalidSpec},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, u := testResource(t, c.mutate)
			h := newHarness(t, k, c.api, u)
			live := h.pass(t, u)
			if h.statusWrites != c.statusWrites || h.writes != c.writes {
				t.Fatalf("status writes %d, writes %d; want %d, %d (calls %v)", h.statusWrites, h.writes, c.statusWrites, c.writes, c.api.calls)
			}
			if got := ready(live); got != c.ready {
				t.Fatalf("AddonReady %s, want %s", got, c.ready)
			}
			if fs := live.GetFinalizers(); len(fs) != 2 {
				t.Fatalf("finalizers %v", fs)
			}
			if c.ready == "True/"+status.ReasonProvisioned {
				if og, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration"); og != live.GetGeneration() {
					t.Fatalf("observedGeneration %d, generation %d", og, live.GetGeneration())
				}
				if id, _, _ := unstructured.NestedString(live.Object, "status", "addon"); id == "" {
					t.Fatal("status.addon not recorded")
				}
			}
			// The same pass again, nothing new: no status write at all.
			h.statusWrites, h.writes = 0, 0
			h.pass(t, live)
			if c.ready == "True/"+status.ReasonProvisioned && (h.statusWrites != 0 || h.writes != 0) {
				t.Fatalf("an idle pass wrote: status %d, resource %d", h.statusWrites, h.writes)
			}
		})
	}
}

// TestCommitRetriesAConflictOnALiveCopy: when the Helm side wrote status in between, the
// pass's changes are applied again to the live resource, keeping what Helm wrote.
func TestCommitRetriesAConflictOnALiveCopy(t *testing.T) {
	k, u := testResource(t, func(u *unstructured.Unstructured) {
		u.SetFinalizers([]string{"api.clever-cloud.com/azimutt", kinds.HelmUninstallFinalizer})
	})
	h := newHarness(t, k, &fakeAPI{}, u)
	s := h.r.newPass(context.Background(), u.DeepCopy())
	// The Helm side writes its condition after the pass read the resource.
	helm := u.DeepCopy()
	setCondition(helm, status.TypeDeployed, metav1.ConditionTrue, "InstallSuccessful", "", time.Now())
	if err := h.cl.Client.Status().Update(context.Background(), helm); err != nil {
		t.Fatal(err)
	}
	h.cl.conflicts = 1
	_ = s.fail(status.ReasonInvalidSpec, "bad", nil)
	if err := h.r.commit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if s.writes != 1 {
		t.Fatalf("writes %d", s.writes)
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(k.GVK)
	if err := h.cl.Get(context.Background(), client.ObjectKeyFromObject(u), live); err != nil {
		t.Fatal(err)
	}
	if _, ok := status.Find(status.Conditions(live), status.TypeDeployed); !ok {
		t.Fatal("the retry dropped the Helm side's condition")
	}
	if got := ready(live); got != "False/"+status.ReasonInvalidSpec {
		t.Fatalf("AddonReady %s", got)
	}
}

// TestNoChangeNoWrite: a pass that decides nothing writes nothing (even a failure helper's
// condition identical to the one recorded).
func TestNoChangeNoWrite(t *testing.T) {
	k, u := testResource(t, func(u *unstructured.Unstructured) {
		u.SetFinalizers([]string{"api.clever-cloud.com/azimutt", kinds.HelmUninstallFinalizer})
	})
	h := newHarness(t, k, &fakeAPI{}, u)
	s := h.r.newPass(context.Background(), u.DeepCopy())
	if err := h.r.commit(context.Background(), s); err != nil || s.writes != 0 || h.statusWrites != 0 {
		t.Fatalf("empty pass: writes %d err %v", h.statusWrites, err)
	}
}

// TestMarkedNewIsAFirstPass: a resource whose engine finalizer the Helm side's client added
// (MarkNew) is treated as one the engine put it on: no organisation-wide lookup by name before
// creating; a later pass does look.
func TestMarkedNewIsAFirstPass(t *testing.T) {
	k, u := testResource(t, func(u *unstructured.Unstructured) {
		u.SetUID("uid-marked")
		u.SetFinalizers([]string{kinds.HelmUninstallFinalizer, "api.clever-cloud.com/azimutt"})
	})
	api := &fakeAPI{createErr: apiErr(503)}
	h := newHarness(t, k, api, u)
	statusmerge.MarkNew(u.GetUID())(true)
	h.pass(t, u)
	if calls := strings.Join(api.calls, ","); calls != "create" {
		t.Fatalf("calls %q: a marked resource is new, no list before the create", calls)
	}
	api.calls = nil
	h.pass(t, u)
	if calls := strings.Join(api.calls, ","); calls != "list,create" {
		t.Fatalf("calls %q: after a create whose answer was lost, the next pass looks first", calls)
	}
}

// TestNewMarkSettledByTheWrite: only a write that succeeded makes the resource new; a pass
// that sees the mark while the write is in flight waits for its outcome.
func TestNewMarkSettledByTheWrite(t *testing.T) {
	ctx := context.Background()
	statusmerge.MarkNew("uid-failed")(false)
	if statusmerge.TakeNew(ctx, "uid-failed") {
		t.Fatal("a failed write made the resource new")
	}
	settle := statusmerge.MarkNew("uid-inflight")
	go func() { time.Sleep(20 * time.Millisecond); settle(true) }()
	if !statusmerge.TakeNew(ctx, "uid-inflight") {
		t.Fatal("the pass did not wait for the write in flight")
	}
	if statusmerge.TakeNew(ctx, "uid-inflight") {
		t.Fatal("a mark is taken once")
	}
	settle = statusmerge.MarkNew("uid-late-fail")
	go func() { time.Sleep(20 * time.Millisecond); settle(false) }()
	if statusmerge.TakeNew(ctx, "uid-late-fail") {
		t.Fatal("a write in flight that failed made the resource new")
	}
}
