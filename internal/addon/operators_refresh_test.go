package addon

import (
	"context"
	"testing"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/operatoraddons"
)

// credsReadAPI answers the two credentials reads of an operator add-on and counts them.
type credsReadAPI struct {
	credentials.API
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
	s := &pass{api: api, kind: k}
	refresh := func(prev map[string]string, n int) (map[string]string, string, error) {
		rd, err := operatoraddons.Source{}.Refresh(context.Background(), s, &clevercloud.Addon{ID: "addon_1", RealID: "keycloak_1"}, prev, n, false)
		if rd.Status != nil {
			s.recorded = rd.Status
		}
		return rd.Data, rd.Pending, err
	}

	// turn runs refresh n and checks the reads made so far (v4, v2 in all) and the data.
	turn := func(name string, n, v4, v2 int, want map[string]string) {
		t.Helper()
		data, pending, err := refresh(prev, n)
		if err != nil || pending != "" {
			t.Fatalf("%s turn: %v, %q", name, err, pending)
		}
		if api.v4 != v4 || api.v2env != v2 {
			t.Fatalf("%s turn: v4 read %d, v2 %d times in all; want %d, %d", name, api.v4, api.v2env, v4, v2)
		}
		for key, w := range want {
			if data[key] != w {
				t.Errorf("%s turn: %s = %q, want %q", name, key, data[key], w)
			}
		}
	}

	// n%4 == 2: the v2 env, with v4's keys as published.
	turn("v2", 2, 0, 1, map[string]string{"NEW_V2": "v", "CC_KEYCLOAK_URL": "https://kc.old/", "CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD": "pw", "LEGACY_V2": ""})
	if s.recorded != nil {
		t.Error("v2 turn set the v4 answer")
	}
	// n%4 == 0: v4, with the rest as published.
	turn("v4", 4, 1, 1, map[string]string{"CC_KEYCLOAK_URL": "https://kc.new/", "CC_KEYCLOAK_ADMIN_URL": "https://kc.new/admin", "LEGACY_V2": "old", "NEW_V2": ""})
	var st kinds.Status
	if s.recorded == nil {
		t.Fatal("v4 turn did not keep the v4 answer for status")
	}
	if s.recorded(&st); st.AccessURL != api.info.AccessURL {
		t.Error("v4 turn did not keep the v4 answer for status")
	}

	// A required key no longer served: pending (the refresh then runs a full pass).
	api.info = &clevercloud.OperatorInfo{}
	if _, pending, _ := refresh(map[string]string{}, 8); pending == "" {
		t.Error("v4 turn with nothing served is not pending")
	}
}
