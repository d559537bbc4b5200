package addon

import (
	"context"
	"testing"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

// credsReadAPI answers the two credentials reads of an operator add-on and counts them.
type credsReadAPI struct {
	API
	info      *clevercloud.OperatorInfo
	env       []clevercloud.Variable
	v4, v2env int
}

func (a *credsReadAPI) GetOperator(context.Context, string, string) (*clevercloud.OperatorInfo, error) {
	a.v4++
	return a.info, nil
}

func (a *credsReadAPI) GetAddonEnv(context.Context, string, string) ([]clevercloud.Variable, error) {
	a.v2env++
	return a.env, nil
}

// A refresh reads v4 or the v2 env, never both; the half it does not read is what was
// published last, and v4's keys win over the v2 env's as in a full pass.
func TestOperatorRefreshTurns(t *testing.T) {
	k := kind(t, "Keycloak")
	prev := map[string]string{"CC_KEYCLOAK_URL": "https://kc.old/", "CC_KEYCLOAK_ADMIN": "admin", "CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD": "pw",
		"CC_KEYCLOAK_ADMIN_URL": "https://kc.old/admin", "LEGACY_V2": "old"}
	api := &credsReadAPI{
		info: &clevercloud.OperatorInfo{AccessURL: "https://kc.new/", InitialCredentials: &clevercloud.BasicCredentials{User: "admin", Password: "pw"}},
		env:  []clevercloud.Variable{{Name: "NEW_V2", Value: "v"}, {Name: "CC_KEYCLOAK_URL", Value: "https://stale-v2/"}},
	}
	r := &Reconciler{Kind: k}
	s := &pass{api: api}

	// n%4 == 2: the v2 env, with v4's keys as published.
	data, pending, err := r.operatorRefresh(context.Background(), s, "addon_1", "keycloak_1", prev, 2)
	if err != nil || pending != "" {
		t.Fatalf("v2 turn: %v, %q", err, pending)
	}
	if api.v4 != 0 || api.v2env != 1 {
		t.Fatalf("v2 turn read v4 %d, v2 %d times; want 0, 1", api.v4, api.v2env)
	}
	for key, want := range map[string]string{"NEW_V2": "v", "CC_KEYCLOAK_URL": "https://kc.old/", "CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD": "pw", "LEGACY_V2": ""} {
		if data[key] != want {
			t.Errorf("v2 turn: %s = %q, want %q", key, data[key], want)
		}
	}
	if s.info != nil {
		t.Error("v2 turn set the v4 answer")
	}

	// n%4 == 0: v4, with the rest as published.
	data, pending, err = r.operatorRefresh(context.Background(), s, "addon_1", "keycloak_1", prev, 4)
	if err != nil || pending != "" {
		t.Fatalf("v4 turn: %v, %q", err, pending)
	}
	if api.v4 != 1 || api.v2env != 1 {
		t.Fatalf("v4 turn read v4 %d, v2 %d times in all; want 1, 1", api.v4, api.v2env)
	}
	for key, want := range map[string]string{"CC_KEYCLOAK_URL": "https://kc.new/", "CC_KEYCLOAK_ADMIN_URL": "https://kc.new/admin", "LEGACY_V2": "old", "NEW_V2": ""} {
		if data[key] != want {
			t.Errorf("v4 turn: %s = %q, want %q", key, data[key], want)
		}
	}
	if s.info != api.info {
		t.Error("v4 turn did not keep the v4 answer for status")
	}

	// A required key no longer served: pending (the refresh then runs a full pass).
	api.info = &clevercloud.OperatorInfo{}
	if _, pending, _ := r.operatorRefresh(context.Background(), s, "addon_1", "keycloak_1", map[string]string{}, 8); pending == "" {
		t.Error("v4 turn with nothing served is not pending")
	}
}
