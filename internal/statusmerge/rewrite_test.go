package statusmerge

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/status"
)

func TestMergeKeepsEngineFieldsAndDropsManifest(t *testing.T) {
	helmWrite := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{
			"conditions":      []any{map[string]any{"type": "Deployed", "status": "True", "reason": "InstallSuccessful"}},
			"deployedRelease": map[string]any{"name": "postgresql-db", "manifest": "kind: Secret\ndata:\n  PASSWORD: c2VjcmV0\n"},
		},
	}}
	live := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{
			"addon":              "addon_1",
			"observedGeneration": int64(3),
			"conditions":         []any{map[string]any{"type": status.TypeAddonReady, "status": "True", "reason": status.ReasonProvisioned, "message": "ok"}},
		},
	}}
	h := &Helm{Cache: getOnly{live: live}}
	h.rewrite(context.Background(), helmWrite, helmPaused(helmWrite))
	if v, _, _ := unstructured.NestedString(helmWrite.Object, "status", "addon"); v != "addon_1" {
		t.Fatalf("status.addon = %q", v)
	}
	if v, _, _ := unstructured.NestedInt64(helmWrite.Object, "status", "observedGeneration"); v != 3 {
		t.Fatalf("observedGeneration = %d", v)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(helmWrite.Object, "status", "deployedRelease", "manifest"); found {
		t.Fatal("manifest kept")
	}
	ready, _ := status.Find(status.Conditions(helmWrite), status.TypeReady)
	if ready.Status != "True" || ready.Reason != status.ReasonProvisioned {
		t.Fatalf("Ready = %+v", ready)
	}
}

func TestMergeDropsWhatTheEngineRemoved(t *testing.T) {
	// The Helm side read the resource while it was in a Network Group; the engine has since
	// removed the membership and its condition: the Helm side's write must not bring them back.
	helmWrite := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{
			"networkGroups": []any{map[string]any{"ref": "a", "id": "ng_1", "member": "redis_1"}},
			"conditions": []any{
				map[string]any{"type": "Deployed", "status": "True", "reason": "UpgradeSuccessful"},
				map[string]any{"type": status.TypeNetworkGroups, "status": "True", "reason": status.ReasonNetworkGroupsJoined},
			},
		},
	}}
	live := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{
			"addon":      "addon_1",
			"conditions": []any{map[string]any{"type": status.TypeAddonReady, "status": "True", "reason": status.ReasonProvisioned}},
		},
	}}
	Merge(helmWrite, live)
	if _, found, _ := unstructured.NestedFieldNoCopy(helmWrite.Object, "status", "networkGroups"); found {
		t.Error("status.networkGroups the engine removed came back")
	}
	if _, ok := status.Find(status.Conditions(helmWrite), status.TypeNetworkGroups); ok {
		t.Error("the NetworkGroups condition the engine removed came back")
	}
	if _, ok := status.Find(status.Conditions(helmWrite), "Deployed"); !ok {
		t.Error("the Helm side's own condition was dropped")
	}
}

// getOnly is a client whose Get returns a fixed live object (the cache, in production).
type getOnly struct {
	client.Client
	live *unstructured.Unstructured
}

func (g getOnly) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	obj.(*unstructured.Unstructured).Object = g.live.DeepCopy().Object
	return nil
}

// countingStatus counts the status writes that reach the API server.
type countingStatus struct {
	client.SubResourceWriter
	updates int
}

func (c *countingStatus) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	c.updates++
	return nil
}

// helmRewrite is what helm-operator-plugins' status updater sends for a resource whose status
// it read from the cache: the conditions as its own type (type, status, reason, message,
// lastTransitionTime; any other field lost), its deployedRelease with the manifest, and
// nothing else.
func helmRewrite(t *testing.T, cached *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	type helmCondition struct {
		Type               string `json:"type"`
		Status             string `json:"status"`
		Reason             string `json:"reason,omitempty"`
		Message            string `json:"message,omitempty"`
		LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	}
	var st struct {
		Conditions      []helmCondition   `json:"conditions"`
		DeployedRelease map[string]string `json:"deployedRelease,omitempty"`
	}
	raw, _, _ := unstructured.NestedMap(cached.Object, "status")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st); err != nil {
		t.Fatal(err)
	}
	st.DeployedRelease = map[string]string{"name": "postgresql-db", "manifest": "kind: Secret\n"}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		t.Fatal(err)
	}
	u := cached.DeepCopy()
	u.Object["status"] = out
	return u
}

func TestHelmStatusWriteThatChangesNothingIsNotSent(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
		"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "7", "generation": int64(3)},
		"status": map[string]any{
			"addon": "addon_1", "observedGeneration": int64(3),
			"conditions": []any{
				map[string]any{"type": status.TypeAddonReady, "status": "True", "reason": status.ReasonProvisioned, "message": "ok", "lastTransitionTime": "2026-11-24T09:00:00Z", "observedGeneration": int64(3)},
				map[string]any{"type": "Deployed", "status": "True", "reason": "InstallSuccessful", "lastTransitionTime": "2026-11-24T09:00:01Z"},
			},
		},
	}}
	// The first Helm write after the engine's: Ready is computed, the manifest dropped. Then
	// the API server stores it and the cache decodes it.
	sc := &Helm{Cache: getOnly{live: live}, Now: func() time.Time { return time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC) }}
	first := helmRewrite(t, live)
	sc.rewrite(context.Background(), first, helmPaused(first))
	b, err := first.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	stored := &unstructured.Unstructured{}
	if err := stored.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}

	w := &countingStatus{}
	sw := &Helm{SubResourceWriter: w, Cache: getOnly{live: stored}, Now: func() time.Time { return time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC) }} // an hour on
	if err := sw.Update(context.Background(), helmRewrite(t, stored)); err != nil {
		t.Fatal(err)
	}
	if w.updates != 0 {
		t.Fatalf("a status write that changes nothing was sent (%d)", w.updates)
	}
	// A change (a Helm condition), or a stale resourceVersion, is sent.
	changed := helmRewrite(t, stored)
	changed.Object["status"].(map[string]any)["conditions"].([]any)[1].(map[string]any)["reason"] = "UpgradeSuccessful"
	if err := sw.Update(context.Background(), changed); err != nil || w.updates != 1 {
		t.Fatalf("a changed status was not sent (%d, %v)", w.updates, err)
	}
	// A write from a reconcile that started before the engine's last write (an older
	// resourceVersion) is rebased on the cached version: not sent when it changes nothing,
	// sent at the cached version otherwise (no conflict, no second reconcile).
	stale := helmRewrite(t, stored)
	stale.SetResourceVersion("6")
	if err := sw.Update(context.Background(), stale); err != nil || w.updates != 1 {
		t.Fatalf("a stale write that changes nothing was sent (%d, %v)", w.updates, err)
	}
	staleChanged := helmRewrite(t, stored)
	staleChanged.SetResourceVersion("6")
	staleChanged.Object["status"].(map[string]any)["conditions"].([]any)[1].(map[string]any)["reason"] = "UpgradeSuccessful"
	if err := sw.Update(context.Background(), staleChanged); err != nil || w.updates != 2 || staleChanged.GetResourceVersion() != "7" {
		t.Fatalf("a stale changed write was not sent at the cached version (%d, %v, rv %s)", w.updates, err, staleChanged.GetResourceVersion())
	}
	// A cached copy older than the write (the cache lags) is never used as a base.
	ahead := helmRewrite(t, stored)
	ahead.SetResourceVersion("8")
	if err := sw.Update(context.Background(), ahead); err != nil || w.updates != 3 || ahead.GetResourceVersion() != "8" {
		t.Fatalf("a write ahead of the cache was not sent as is (%d, %v)", w.updates, err)
	}
}

// TestPausedHelmWriteBeforeTheEngineIsNotSent: while the Helm side waits for the engine (no
// AddonReady yet), its status write (Unknown conditions) is not sent; once the engine has
// reported, or when the resource is being deleted, it is.
func TestPausedHelmWriteBeforeTheEngineIsNotSent(t *testing.T) {
	paused := func(engine bool, deleting bool) *unstructured.Unstructured {
		conds := []any{map[string]any{"type": status.TypePaused, "status": "True", "reason": "ReconcilePauseAnnotationTrue"},
			map[string]any{"type": "Deployed", "status": "Unknown"}}
		if engine {
			conds = append(conds, map[string]any{"type": status.TypeAddonReady, "status": "False", "reason": status.ReasonProvisioning, "message": "waiting"})
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
			"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "7", "generation": int64(1)},
			"status":   map[string]any{"conditions": conds},
		}}
		if deleting {
			now := metav1.Now()
			u.SetDeletionTimestamp(&now)
		}
		return u
	}
	cases := []struct {
		name             string
		engine, deleting bool
		sent             int
	}{
		{"engine has not reported: not sent", false, false, 0},
		{"engine has reported: sent", true, false, 1},
		{"being deleted: sent", false, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			live := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
				"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "7", "generation": int64(1)},
				"status":   map[string]any{"observedGeneration": int64(0)},
			}}
			if c.engine {
				live.Object["status"] = paused(true, false).Object["status"]
			}
			if n := statusWritesSent(t, live, paused(c.engine, c.deleting)); n != c.sent {
				t.Fatalf("sent %d, want %d", n, c.sent)
			}
		})
	}
}

// TestPausedHelmWriteThatOnlyAddsUnknownsIsNotSent: once the engine has reported an add-on
// still being provisioned, a paused Helm write that would only add Helm's conditions as
// Unknown to a resource it never rendered is not sent (Ready comes from the engine's
// conditions); a paused write that changes a condition the resource has, or an unpaused one,
// is.
func TestPausedHelmWriteThatOnlyAddsUnknownsIsNotSent(t *testing.T) {
	obj := func(conds ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
			"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "7", "generation": int64(1)},
			"status":   map[string]any{"addon": "addon_1", "conditions": conds},
		}}
	}
	cond := func(t, st, reason string) map[string]any {
		return map[string]any{"type": t, "status": st, "reason": reason, "message": "m", "lastTransitionTime": "2026-11-28T09:00:00Z", "observedGeneration": int64(1)}
	}
	provisioning := []any{cond(status.TypeAddonReady, "False", status.ReasonProvisioning), cond(status.TypeReady, "False", status.ReasonProvisioning)}
	rendered := []any{cond(status.TypeAddonReady, "True", status.ReasonProvisioned), cond("Deployed", "True", "InstallSuccessful"), cond(status.TypeReady, "True", status.ReasonProvisioned)}
	helmPaused := []any{cond(status.TypePaused, "True", "ReconcilePauseAnnotationTrue"), cond("Deployed", "Unknown", ""), cond("Initialized", "Unknown", ""), cond("ReleaseFailed", "Unknown", ""), cond("Irreconcilable", "Unknown", "")}
	helmRunning := []any{cond(status.TypePaused, "False", ""), cond("Initialized", "True", ""), cond("Deployed", "False", "")}
	cases := []struct {
		name       string
		live, sent []any
		want       int
	}{
		{"provisioning, never rendered, paused: not sent", provisioning, helmPaused, 0},
		{"rendered once, now paused (Deployed True to Unknown): sent", rendered, helmPaused, 1},
		{"provisioning, not paused (Initialized True): sent", provisioning, helmRunning, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			live := obj(c.live...)
			sent := append([]any(nil), c.sent...)
			for _, lc := range c.live { // Helm's write carries the engine's conditions as it read them
				if !slices.ContainsFunc(c.sent, func(x any) bool { return x.(map[string]any)["type"] == lc.(map[string]any)["type"] }) {
					sent = append(sent, lc)
				}
			}
			if n := statusWritesSent(t, live, obj(sent...)); n != c.want {
				t.Fatalf("sent %d, want %d", n, c.want)
			}
		})
	}
}

// TestHelmWriteThatOnlyReordersConditionsIsNotSent: conditions are a list-map keyed by type;
// Helm's updater rebuilds them in its own order, which is no change.
func TestHelmWriteThatOnlyReordersConditionsIsNotSent(t *testing.T) {
	conds := []any{
		map[string]any{"type": status.TypeAddonReady, "status": "True", "reason": status.ReasonProvisioned, "message": "ok", "lastTransitionTime": "2026-11-24T09:00:00Z", "observedGeneration": int64(1)},
		map[string]any{"type": "Deployed", "status": "True", "reason": "InstallSuccessful", "message": "release was successfully installed", "lastTransitionTime": "2026-11-24T09:00:01Z"},
		map[string]any{"type": status.TypeReady, "status": "True", "reason": status.ReasonProvisioned, "message": "ok", "lastTransitionTime": "2026-11-24T09:00:01Z", "observedGeneration": int64(1)},
	}
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
		"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "7", "generation": int64(1)},
		"status":   map[string]any{"addon": "addon_1", "observedGeneration": int64(1), "conditions": conds},
	}}
	reordered := live.DeepCopy()
	reordered.Object["status"].(map[string]any)["conditions"] = []any{conds[1], conds[0], conds[2]}
	if statusWritesSent(t, live, reordered) != 0 {
		t.Fatalf("a write that only reorders the conditions was sent")
	}
}

// statusWritesSent passes Helm's status write u through the status wrapper over a cache holding
// live, and counts the writes that reach the API server.
func statusWritesSent(t *testing.T, live, u *unstructured.Unstructured) int {
	t.Helper()
	w := &countingStatus{}
	sw := &Helm{SubResourceWriter: w, Cache: getOnly{live: live}}
	if err := sw.Update(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return w.updates
}

// TestHelmWriteOnlyMovingReadysGenerationWaitsForTheEngine: after a spec change Helm does not
// render differently (spec.deletionPolicy), the Helm side's write would only move Ready's
// observedGeneration. While the engine has not recorded the generation, its own write carries
// that, so this one is not sent (sent after the engine's, it was refused: a 409). A write that
// changes anything else, or one after the engine's, is sent.
func TestHelmWriteOnlyMovingReadysGenerationWaitsForTheEngine(t *testing.T) {
	cached := func(engineGen int64, deployedMsg string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "api.clever-cloud.com/v1", "kind": "PostgreSql",
			"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "7", "generation": int64(2)},
			"status": map[string]any{"addon": "addon_1", "observedGeneration": engineGen, "deployedRelease": map[string]any{"name": "postgresql-db"}, "conditions": []any{
				map[string]any{"type": status.TypeAddonReady, "status": "True", "reason": status.ReasonProvisioned, "message": "ok", "lastTransitionTime": "2026-11-24T09:00:00Z", "observedGeneration": engineGen},
				map[string]any{"type": "Deployed", "status": "True", "reason": "InstallSuccessful", "message": deployedMsg, "lastTransitionTime": "2026-11-24T09:00:01Z"},
				map[string]any{"type": status.TypeReady, "status": "True", "reason": status.ReasonProvisioned, "message": "ok", "lastTransitionTime": "2026-11-24T09:00:01Z", "observedGeneration": int64(1)},
			}},
		}}
	}
	for _, tc := range []struct {
		name      string
		engineGen int64
		helmMsg   string
		want      int
	}{
		{"engine behind, only Ready's generation moves", 1, "installed", 0},
		{"engine behind, Helm's own condition changes", 1, "upgraded", 1},
		{"engine caught up", 2, "installed", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := cached(tc.engineGen, "installed")
			u := helmRewrite(t, cached(tc.engineGen, tc.helmMsg))
			if got := statusWritesSent(t, live, u); got != tc.want {
				t.Fatalf("writes sent %d, want %d", got, tc.want)
			}
		})
	}
}
