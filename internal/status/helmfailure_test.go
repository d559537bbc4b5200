package status

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestHelmFailureShown(t *testing.T) {
	obj := func(conds ...Condition) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		SetConditions(u, conds)
		return u
	}
	addonReady := Condition{Type: TypeAddonReady, Status: "True", Reason: ReasonProvisioned}
	conflict := Condition{Type: TypeReady, Status: "False", Reason: ReasonSecretConflict, Message: "in the way"}
	for _, c := range []struct {
		name      string
		was, next *unstructured.Unstructured
		want      bool
	}{
		{"Provisioning to SecretConflict", obj(Condition{Type: TypeReady, Status: "False", Reason: ReasonProvisioning}), obj(addonReady, conflict), true},
		{"no Ready before", obj(), obj(addonReady, conflict), true},
		{"RenderFailed", obj(), obj(addonReady, Condition{Type: TypeReady, Status: "False", Reason: ReasonRenderFailed, Message: "m"}), true},
		{"already shown", obj(addonReady, conflict), obj(addonReady, conflict), false},
		{"another message", obj(addonReady, conflict), obj(addonReady, Condition{Type: TypeReady, Status: "False", Reason: ReasonSecretConflict, Message: "other"}), true},
		{"the engine's own reason (add-on not ready)", obj(), obj(Condition{Type: TypeAddonReady, Status: "False", Reason: ReasonSecretConflict}, conflict), false},
		{"another reason", obj(), obj(addonReady, Condition{Type: TypeReady, Status: "False", Reason: ReasonProvisioning}), false},
		{"Ready", obj(conflict), obj(addonReady, Condition{Type: TypeReady, Status: "True", Reason: ReasonProvisioned}), false},
	} {
		if _, got := HelmFailureShown(c.was, c.next); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
