package plugin

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func k8sObject(kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	k := kindByName(kind)
	u.SetGroupVersionKind(k.GVK)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func TestStatusRow(t *testing.T) {
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	ready := k8sObject("PostgreSql", "ns", "db")
	ready.Object["spec"] = map[string]any{"instance": map[string]any{"plan": "xs_sml"}}
	ready.Object["status"] = map[string]any{
		"addon":       "addon_1",
		"plan":        "plan_x",
		"conditions":  []any{map[string]any{"type": "Ready", "status": "True", "reason": "Provisioned"}},
		"credentials": map[string]any{"lastChangedAt": "2026-11-25T12:00:00Z"},
		"backups":     map[string]any{"last": map[string]any{"time": "2026-11-25T14:30:00Z"}},
	}
	fixed := k8sObject("KV", "ns", "kv")
	fixed.Object["status"] = map[string]any{"plan": "plan_kv", "conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "BindingNotAllowed"}}}
	fresh := k8sObject("Redis", "ns", "new")

	for _, tc := range []struct {
		u    *unstructured.Unstructured
		want StatusRow
	}{
		{ready, StatusRow{Kind: "PostgreSql", Namespace: "ns", Name: "db", Ready: "True", Reason: "Provisioned", Addon: "addon_1", Plan: "xs_sml", LastBackup: "30m", CredentialsAge: "3h"}},
		{fixed, StatusRow{Kind: "KV", Namespace: "ns", Name: "kv", Ready: "False", Reason: "BindingNotAllowed", Addon: "-", Plan: "plan_kv", LastBackup: "-", CredentialsAge: "-"}},
		{fresh, StatusRow{Kind: "Redis", Namespace: "ns", Name: "new", Ready: "Unknown", Reason: "-", Addon: "-", Plan: "-", LastBackup: "-", CredentialsAge: "-"}},
	} {
		k := kindByName(tc.u.GetKind())
		if got := statusRow(k, tc.u, now); got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.u.GetName(), got, tc.want)
		}
	}
	var b strings.Builder
	if err := PrintStatus(&b, []StatusRow{statusRow(kindByName("PostgreSql"), ready, now)}, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "KIND") || !strings.Contains(lines[0], "CREDENTIALS AGE") || strings.Join(strings.Fields(lines[1]), " ") != "PostgreSql ns db True Provisioned addon_1 xs_sml 30m 3h" {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestAge(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{-time.Second, "0s"}, {45 * time.Second, "45s"}, {5 * time.Minute, "5m"}, {3 * time.Hour, "3h"}, {72 * time.Hour, "3d"}} {
		if got := age(tc.d); got != tc.want {
			t.Errorf("age(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
