package kinds

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestStatusRoundTrip: decoding a stored status and encoding it back changes nothing, even
// where the stored representation is not the one Encode would choose (so an idle pass writes
// nothing); a change sets or removes only its field; Helm's fields are never touched.
func TestStatusRoundTrip(t *testing.T) {
	stored := map[string]any{
		"observedGeneration": int64(3),
		"addon":              "addon_1",
		"credentials":        map[string]any{"hash": "h", "lastChangedAt": "2026-11-24T03:00:00.5+01:00"},
		"backups":            map[string]any{"count": float64(2), "last": map[string]any{"time": "2026-11-24T03:00:00Z"}},
		"price":              map[string]any{"hourly": "0.1", "checkedAt": "2026-11-24T03:00:00Z"},
		"networkGroups":      []any{map[string]any{"ref": "a", "id": "ng_1", "member": "m"}},
		"conditions":         []any{map[string]any{"type": "Deployed", "status": "True"}},
		"deployedRelease":    map[string]any{"name": "r", "manifest": "x"},
		"unknown":            "kept",
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": stored}}
	before := u.DeepCopy()
	st := StatusOf(u)
	if st.Addon != "addon_1" || st.Backups == nil || st.Backups.Count != 2 || len(st.NetworkGroups) != 1 || st.Conditions != nil {
		t.Fatalf("decoded %+v", st)
	}
	st.Encode(u)
	if !equality.Semantic.DeepEqual(before.Object, u.Object) {
		t.Fatalf("an unchanged status was rewritten:\n%v\n%v", before.Object, u.Object)
	}

	changed := metav1.NewTime(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	st.Addon, st.Backups, st.NetworkGroups = "", nil, nil
	st.EnsureCreds().LastChangedAt = &changed
	st.SetURL("admin_url", "https://admin")
	st.Encode(u)
	got := u.Object["status"].(map[string]any)
	for _, f := range []string{"addon", "backups", "networkGroups"} {
		if _, has := got[f]; has {
			t.Errorf("status.%s kept after its removal", f)
		}
	}
	if c := got["credentials"].(map[string]any); c["lastChangedAt"] != "2026-11-25T10:00:00Z" || c["hash"] != "h" {
		t.Errorf("credentials %v", c)
	}
	if got["admin_url"] != "https://admin" || got["unknown"] != "kept" || got["observedGeneration"] != int64(3) {
		t.Errorf("status %v", got)
	}
	for _, f := range NotEncoded {
		if !equality.Semantic.DeepEqual(got[f], before.Object["status"].(map[string]any)[f]) {
			t.Errorf("status.%s changed: %v", f, got[f])
		}
	}
}
