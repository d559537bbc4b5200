package kinds

import (
	"strings"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

// operatorKey is one Secret key of an operator add-on and where v4 has its value.
type operatorKey struct {
	key string
	get func(*clevercloud.OperatorInfo) string
}

func accessURL(i *clevercloud.OperatorInfo) string { return i.AccessURL }

func initialUser(i *clevercloud.OperatorInfo) string {
	if i.InitialCredentials == nil {
		return ""
	}
	return i.InitialCredentials.User
}

func initialPassword(i *clevercloud.OperatorInfo) string {
	if i.InitialCredentials == nil {
		return ""
	}
	return i.InitialCredentials.Password
}

func otoroshiAPI(f func(*clevercloud.OtoroshiAPI) string) func(*clevercloud.OperatorInfo) string {
	return func(i *clevercloud.OperatorInfo) string {
		if i.API == nil {
			return ""
		}
		return f(i.API)
	}
}

// operatorKeys maps each operator add-on's Secret keys (the names its v2 env used) to the v4
// field holding the value; a nil get means only the env has it. The Keycloak admin console
// is Keycloak's /admin path of the access URL. Otoroshi's management API client id and
// secret are api.user and api.secret, which the Terraform provider publishes as
// CC_OTOROSHI_API_CLIENT_ID / CC_OTOROSHI_API_CLIENT_SECRET
// (pkg/resources/software/otoroshi/crud.go).
var operatorKeys = map[string][]operatorKey{
	"addon-metabase": {{"METABASE_URL", accessURL}},
	"addon-matomo":   {{"MATOMO_URL", accessURL}},
	"addon-keycloak": {
		{"CC_KEYCLOAK_URL", accessURL},
		{"CC_KEYCLOAK_ADMIN_URL", func(i *clevercloud.OperatorInfo) string {
			if i.AccessURL == "" {
				return ""
			}
			return strings.TrimRight(i.AccessURL, "/") + "/admin"
		}},
		{"CC_KEYCLOAK_ADMIN", initialUser},
		{"CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD", initialPassword},
		{"CC_KEYCLOAK_JAVA_APPID", func(i *clevercloud.OperatorInfo) string { return i.Resources.Entrypoint }},
		{"CC_KEYCLOAK_FSBUCKET_ID", func(i *clevercloud.OperatorInfo) string { return i.Resources.FsbucketID }},
		{"CC_KEYCLOAK_POSTGRES_ID", func(i *clevercloud.OperatorInfo) string { return i.Resources.PgsqlID }},
	},
	"addon-otoroshi": {
		{"CC_OTOROSHI_URL", accessURL},
		{"CC_OTOROSHI_API_URL", otoroshiAPI(func(a *clevercloud.OtoroshiAPI) string { return a.URL })},
		{"CC_OTOROSHI_API_CLIENT_ID", otoroshiAPI(func(a *clevercloud.OtoroshiAPI) string { return a.User })},
		{"CC_OTOROSHI_API_CLIENT_SECRET", otoroshiAPI(func(a *clevercloud.OtoroshiAPI) string { return a.Secret })},
		{"CC_OTOROSHI_INITIAL_ADMIN_LOGIN", initialUser},
		{"CC_OTOROSHI_INITIAL_ADMIN_PASSWORD", initialPassword},
		{"CC_OTOROSHI_SSO_URL", nil},
	},
}

// operatorRequired are the keys without which the add-on is not provisioned yet (Ready waits
// for them, not for the v2 configKeys, which these add-ons no longer publish).
var operatorRequired = map[string][]string{
	"addon-metabase": {"METABASE_URL"},
	"addon-matomo":   {"MATOMO_URL"},
	"addon-keycloak": {"CC_KEYCLOAK_URL", "CC_KEYCLOAK_ADMIN", "CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"},
	"addon-otoroshi": {"CC_OTOROSHI_URL", "CC_OTOROSHI_INITIAL_ADMIN_LOGIN", "CC_OTOROSHI_INITIAL_ADMIN_PASSWORD"},
}

// OperatorData is the Secret data of an operator add-on: for each of the kind's keys the v4
// field, else the same name in v4's envVars, else env. env is the v2 env of an add-on still on
// it (read only when v4 lacks a required key; nil otherwise): its other variables are kept as
// they are. missing lists the required keys that have no value yet.
func OperatorData(segment string, info *clevercloud.OperatorInfo, env map[string]string) (data map[string]string, missing []string) {
	data = make(map[string]string, len(env)+8)
	for k, v := range env {
		data[k] = v
	}
	for _, ok := range operatorKeys[segment] {
		v := ""
		if ok.get != nil && info != nil {
			v = ok.get(info)
		}
		if v == "" && info != nil {
			v = info.EnvVars[ok.key]
		}
		if v == "" {
			v = env[ok.key]
		}
		if v != "" {
			data[ok.key] = v
		}
	}
	for _, k := range operatorRequired[segment] {
		if data[k] == "" {
			missing = append(missing, k)
		}
	}
	return data, missing
}

// OperatorKeys are the Secret keys of the operator add-on of v4 segment (nil: not one).
func OperatorKeys(segment string) []string {
	var keys []string
	for _, ok := range operatorKeys[segment] {
		keys = append(keys, ok.key)
	}
	return keys
}

// OperatorRequired are the keys without which an operator add-on is not provisioned yet.
func OperatorRequired(segment string) []string { return operatorRequired[segment] }
