package memberships

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/api/shared"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

func ngObject(want []any, have []any, cond string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}, "status": map[string]any{}}}
	if want != nil {
		u.Object["spec"].(map[string]any)["networkGroups"] = want
	}
	if have != nil {
		u.Object["status"].(map[string]any)["networkGroups"] = have
	}
	if cond != "" {
		u.Object["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "NetworkGroups", "status": cond}}
	}
	return u
}

func membership(ref, id, host string) map[string]any {
	return map[string]any{"ref": ref, "id": id, "member": "postgresql_x", "privateHost": host}
}

func TestNetworkGroupsPending(t *testing.T) {
	for _, tc := range []struct {
		name    string
		u       *unstructured.Unstructured
		pending bool
	}{
		{"nothing asked", ngObject(nil, nil, ""), false},
		{"asked, not joined", ngObject([]any{"a"}, nil, ""), true},
		{"joined", ngObject([]any{"a"}, []any{membership("a", "ng_1", "h")}, "True"), false},
		{"joined, then failed", ngObject([]any{"a"}, []any{membership("a", "ng_1", "h")}, "False"), true},
		{"entry removed", ngObject(nil, []any{membership("a", "ng_1", "h")}, "True"), true},
		{"entry replaced", ngObject([]any{"b"}, []any{membership("a", "ng_1", "h")}, "True"), true},
		{"unknown group reported", ngObject([]any{"a"}, nil, "False"), true},
	} {
		st := kinds.StatusOf(tc.u)
		if got := Pending(tc.u, &st, status.Conditions(tc.u)); got != tc.pending {
			t.Errorf("%s: pending = %v, want %v", tc.name, got, tc.pending)
		}
	}
}

func TestWithPrivateHost(t *testing.T) {
	pg, mb, generic := kinds.MustNamed("PostgreSql"), kinds.MustNamed("Metabase"), kinds.MustNamed("Addon")
	joined := ngObject([]any{"a", "b"}, []any{membership("a", "ng_1", "first.host"), membership("b", "ng_2", "second.host")}, "True")
	data := map[string]string{"POSTGRESQL_ADDON_HOST": "h"}
	for _, tc := range []struct {
		name string
		k    *kinds.Kind
		u    *unstructured.Unstructured
		key  string
		want string
	}{
		{"first membership", pg, joined, "POSTGRESQL_ADDON_PRIVATE_HOST", "first.host"},
		{"no membership", pg, ngObject(nil, nil, ""), "POSTGRESQL_ADDON_PRIVATE_HOST", ""},
		{"kind that cannot join", mb, joined, "METABASE_PRIVATE_HOST", ""},
	} {
		out := withPrivateHost(tc.k, tc.u, data)
		if out[tc.key] != tc.want {
			t.Errorf("%s: %s = %q, want %q", tc.name, tc.key, out[tc.key], tc.want)
		}
		if out["POSTGRESQL_ADDON_HOST"] != "h" {
			t.Errorf("%s: the add-on's keys are kept", tc.name)
		}
	}
	if data["POSTGRESQL_ADDON_PRIVATE_HOST"] != "" {
		t.Error("the input map is not changed")
	}
	// The generic kind takes the provider from spec.providerId.
	u := ngObject([]any{"a"}, []any{membership("a", "ng_1", "r.host")}, "True")
	u.Object["spec"].(map[string]any)["providerId"] = "redis-addon"
	if got := withPrivateHost(generic, u, map[string]string{})["REDIS_PRIVATE_HOST"]; got != "r.host" {
		t.Errorf("generic Addon of redis-addon: REDIS_PRIVATE_HOST = %q", got)
	}
	if kinds.PrivateHostKey("es-addon") != "ES_ADDON_PRIVATE_HOST" || kinds.PrivateHostKey("azimutt") != "" {
		t.Error("kinds.PrivateHostKey")
	}
	// Only the group listed first in spec.networkGroups counts, whatever status's order.
	reordered := ngObject([]any{"b", "a"}, []any{membership("a", "ng_1", "first.host"), membership("b", "ng_2", "second.host")}, "True")
	if got := withPrivateHost(pg, reordered, map[string]string{})["POSTGRESQL_ADDON_PRIVATE_HOST"]; got != "second.host" {
		t.Errorf("spec order: %q", got)
	}
	// A join Clever Cloud has not finished has no host yet: the next group's is published.
	joining := ngObject([]any{"a", "b"}, []any{membership("a", "ng_1", ""), membership("b", "ng_2", "second.host")}, "False")
	if got := withPrivateHost(pg, joining, map[string]string{})["POSTGRESQL_ADDON_PRIVATE_HOST"]; got != "second.host" {
		t.Errorf("joining: %q", got)
	}
	// The key a previous pass published goes when the membership goes.
	if _, ok := withPrivateHost(pg, ngObject(nil, nil, ""), map[string]string{"POSTGRESQL_ADDON_PRIVATE_HOST": "old"})["POSTGRESQL_ADDON_PRIVATE_HOST"]; ok {
		t.Error("a stale private host is kept")
	}
}

func TestJoinsNetworkGroups(t *testing.T) {
	want := map[string]bool{"PostgreSql": true, "MySql": true, "MongoDb": true, "Redis": true, "ElasticSearch": true, "Addon": true}
	for i := range kinds.Kinds {
		k := &kinds.Kinds[i]
		if got := k.JoinsNetworkGroups(); got != want[k.GVK.Kind] {
			t.Errorf("%s: JoinsNetworkGroups = %v", k.GVK.Kind, got)
		}
	}
}

func TestChangedRefs(t *testing.T) {
	a := []shared.NetworkGroupMembership{{Ref: "x", ID: "ng_1", Member: "m"}, {Ref: "y", ID: "ng_2", Member: "m", PrivateHost: "h"}}
	b := []shared.NetworkGroupMembership{{Ref: "x", ID: "ng_1", Member: "m", PrivateHost: "h1"}, {Ref: "z", ID: "ng_3", Member: "m"}}
	got := changedRefs(a, b)
	slices.Sort(got)
	if !slices.Equal(got, []string{"x", "y", "z"}) {
		t.Errorf("changedRefs = %v", got)
	}
	if got := changedRefs(a, a); len(got) != 0 {
		t.Errorf("no change: %v", got)
	}
}

// withPrivateHost is k.WithPrivateHost with u's memberships.
func withPrivateHost(k *kinds.Kind, u *unstructured.Unstructured, data map[string]string) map[string]string {
	return k.WithPrivateHost(u, kinds.StatusOf(u).NetworkGroups, data)
}
