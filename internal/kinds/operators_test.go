package kinds

import (
	"strings"
	"testing"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

func TestOperatorData(t *testing.T) {
	kc := &clevercloud.OperatorInfo{AccessURL: "https://kc.example/", Version: "26.2.5",
		InitialCredentials: &clevercloud.BasicCredentials{User: "admin", Password: "pw"},
		Resources:          clevercloud.OperatorResources{Entrypoint: "app_1", PgsqlID: "postgresql_1", FsbucketID: "bucket_1"}}
	oto := &clevercloud.OperatorInfo{AccessURL: "https://oto.example",
		InitialCredentials: &clevercloud.BasicCredentials{User: "root", Password: "pw2"},
		API:                &clevercloud.OtoroshiAPI{URL: "https://api.oto.example", User: "cid", Secret: "csecret"},
		EnvVars:            map[string]string{"CC_OTOROSHI_SSO_URL": "https://sso.from-v4-env"}}
	cases := []struct {
		name, segment string
		info          *clevercloud.OperatorInfo
		env           map[string]string
		want          map[string]string
		missing       string
	}{
		{"keycloak from v4 alone (v2 env empty, as the real API today)", "addon-keycloak", kc, nil, map[string]string{
			"CC_KEYCLOAK_URL": "https://kc.example/", "CC_KEYCLOAK_ADMIN_URL": "https://kc.example/admin",
			"CC_KEYCLOAK_ADMIN": "admin", "CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD": "pw", "CC_KEYCLOAK_JAVA_APPID": "app_1",
			"CC_KEYCLOAK_POSTGRES_ID": "postgresql_1", "CC_KEYCLOAK_FSBUCKET_ID": "bucket_1"}, ""},
		{"legacy v2 env: v4 wins over a stale value; other v2 keys kept", "addon-keycloak", kc,
			map[string]string{"CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD": "stale", "CC_KEYCLOAK_URL": "https://old", "EXTRA": "x"},
			map[string]string{"CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD": "pw", "CC_KEYCLOAK_URL": "https://kc.example/", "EXTRA": "x"}, ""},
		{"otoroshi: api and initialCredentials, SSO from v4 envVars", "addon-otoroshi", oto, map[string]string{"CC_OTOROSHI_SSO_URL": "https://sso.v2"},
			map[string]string{"CC_OTOROSHI_URL": "https://oto.example", "CC_OTOROSHI_API_URL": "https://api.oto.example",
				"CC_OTOROSHI_API_CLIENT_ID": "cid", "CC_OTOROSHI_API_CLIENT_SECRET": "csecret",
				"CC_OTOROSHI_INITIAL_ADMIN_LOGIN": "root", "CC_OTOROSHI_INITIAL_ADMIN_PASSWORD": "pw2", "CC_OTOROSHI_SSO_URL": "https://sso.from-v4-env"}, ""},
		{"legacy v2 env: fills what v4 lacks", "addon-otoroshi", &clevercloud.OperatorInfo{AccessURL: "https://o"},
			map[string]string{"CC_OTOROSHI_INITIAL_ADMIN_LOGIN": "l", "CC_OTOROSHI_INITIAL_ADMIN_PASSWORD": "p", "CC_OTOROSHI_SSO_URL": "https://sso"},
			map[string]string{"CC_OTOROSHI_URL": "https://o", "CC_OTOROSHI_INITIAL_ADMIN_LOGIN": "l", "CC_OTOROSHI_INITIAL_ADMIN_PASSWORD": "p", "CC_OTOROSHI_SSO_URL": "https://sso"}, ""},
		{"metabase", "addon-metabase", &clevercloud.OperatorInfo{AccessURL: "https://mb"}, nil, map[string]string{"METABASE_URL": "https://mb"}, ""},
		{"matomo", "addon-matomo", &clevercloud.OperatorInfo{AccessURL: "https://mt"}, nil, map[string]string{"MATOMO_URL": "https://mt"}, ""},
		{"keycloak not served yet: waits for its URL and admin", "addon-keycloak", &clevercloud.OperatorInfo{}, nil, nil,
			"CC_KEYCLOAK_URL,CC_KEYCLOAK_ADMIN,CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, missing := OperatorData(c.segment, c.info, c.env)
			if got := strings.Join(missing, ","); got != c.missing {
				t.Fatalf("missing %q, want %q", got, c.missing)
			}
			for k, v := range c.want {
				if data[k] != v {
					t.Errorf("%s = %q, want %q", k, data[k], v)
				}
			}
		})
	}
	for _, k := range Kinds {
		if k.Operator != "" && (OperatorKeys(k.Operator) == nil || OperatorRequired(k.Operator) == nil) {
			t.Errorf("%s: no key table for %s", k.GVK.Kind, k.Operator)
		}
		if k.Operator != "" && clevercloud.OperatorProviders[k.ProviderID] != k.Operator {
			t.Errorf("%s: v4 segment %s, client table says %s", k.GVK.Kind, k.Operator, clevercloud.OperatorProviders[k.ProviderID])
		}
	}
}
