package fakeapi

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

const (
	lowerAlnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	alnum      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upperAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	hexDigits  = "0123456789abcdef"
)

// randString returns n characters of alphabet. Caller holds s.mu.
func (s *Server) randString(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[s.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// port returns a plausible port: the well-known one on dedicated plans,
// a random high port on shared (dev) plans. Caller holds s.mu.
func (s *Server) port(slug string, wellKnown int) string {
	if slug == "dev" {
		return fmt.Sprint(20000 + s.rng.IntN(40000))
	}
	return fmt.Sprint(wellKnown)
}

// generateEnv builds the environment of a new add-on of kind k.
// The result always has exactly k.spec.envKeys. Caller holds s.mu.
func (s *Server) generateEnv(k *kind, ownerID, realID string, plan *Plan, region, version string) []Variable {
	if version == "" {
		version = s.defaultVersionOf(k)
	}
	cluster := "b" + s.randString(lowerAlnum, 19) // like bj7r4vwd0dlrdfezv7ry
	user := "u" + s.randString(lowerAlnum, 19)
	password := s.randString(alnum, 24)
	slug := plan.Slug
	m := map[string]string{}

	dbEnv := func(prefix, scheme, service string, wellKnown int) {
		host := cluster + "-" + service + ".services.clever-cloud.com"
		port := s.port(slug, wellKnown)
		m[prefix+"_HOST"] = host
		m[prefix+"_PORT"] = port
		m[prefix+"_DB"] = cluster
		m[prefix+"_USER"] = user
		m[prefix+"_PASSWORD"] = password
		m[prefix+"_VERSION"] = version
		m[prefix+"_URI"] = scheme + "://" + url.UserPassword(user, password).String() + "@" + host + ":" + port + "/" + cluster
	}

	switch k.spec.providerID {
	case "postgresql-addon":
		dbEnv("POSTGRESQL_ADDON", "postgresql", "postgresql", 5432)
	case "mysql-addon":
		dbEnv("MYSQL_ADDON", "mysql", "mysql", 3306)
	case "mongodb-addon":
		dbEnv("MONGODB_ADDON", "mongodb", "mongodb", 27017)
	case "redis-addon":
		host := cluster + "-redis.services.clever-cloud.com"
		port := fmt.Sprint(2000 + s.rng.IntN(8000))
		m["REDIS_HOST"] = host
		m["REDIS_PORT"] = port
		m["REDIS_PASSWORD"] = password
		m["REDIS_TOKEN"] = password
		m["REDIS_VERSION"] = version
		m["REDIS_URL"] = "redis://:" + password + "@" + host + ":" + port
	case "es-addon":
		host := cluster + "-elasticsearch.services.clever-cloud.com"
		m["ES_ADDON_HOST"] = host
		m["ES_ADDON_USER"] = user
		m["ES_ADDON_PASSWORD"] = password
		m["ES_ADDON_VERSION"] = version
		m["ES_ADDON_URI"] = "https://" + url.UserPassword(user, password).String() + "@" + host
		m["ES_ADDON_KIBANA_HOST"] = "kibana-" + cluster + "-elasticsearch.services.clever-cloud.com"
		m["ES_ADDON_KIBANA_USER"] = user
		m["ES_ADDON_APM_HOST"] = "apm-" + cluster + "-elasticsearch.services.clever-cloud.com"
		m["ES_ADDON_APM_USER"] = "apm-" + user
		m["ES_ADDON_APM_PASSWORD"] = s.randString(alnum, 24)
		m["ES_ADDON_APM_AUTH_TOKEN"] = s.randString(alnum, 32)
	case "addon-pulsar":
		host := "materia-pulsar-" + region + ".services.clever-cloud.com"
		m["ADDON_PULSAR_HOSTNAME"] = host
		m["ADDON_PULSAR_BINARY_PORT"] = "6651"
		m["ADDON_PULSAR_HTTP_PORT"] = "443"
		m["ADDON_PULSAR_BINARY_URL"] = "pulsar+ssl://" + host + ":6651"
		m["ADDON_PULSAR_HTTP_URL"] = "https://" + host + ":443"
		m["ADDON_PULSAR_TENANT"] = ownerID
		m["ADDON_PULSAR_NAMESPACE"] = realID
		m["ADDON_PULSAR_TOKEN"] = fakeJWT(s.randString(alnum, 43))
	case "kv":
		host := "materiakv.eu-fr-1.services.clever-cloud.com"
		token := fakeJWT(s.randString(alnum, 43))
		m["KV_HOST"] = host
		m["KV_PORT"] = "6379"
		m["KV_TOKEN"] = token
		m["KV_TOKEN_ID"] = s.newUUID()
		m["REDISCLI_AUTH"] = token
		m["REDIS_HOST"] = host
		m["REDIS_PORT"] = "6379"
		m["REDIS_PASSWORD"] = token
		m["REDIS_URL"] = "rediss://:" + token + "@" + host + ":6379"
		m["REDIS_CLI_URL"] = "rediss://default:" + token + "@" + host + ":6379"
	case "metabase":
		m["METABASE_URL"] = appURL(realID)
	case "addon-matomo":
		m["MATOMO_URL"] = appURL(realID)
	case "keycloak":
		u := appURL(realID)
		m["CC_KEYCLOAK_URL"] = u
		m["CC_KEYCLOAK_ADMIN_URL"] = u + "/admin"
		m["CC_KEYCLOAK_ADMIN"] = "cc-admin"
		m["CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"] = password
		m["CC_KEYCLOAK_FSBUCKET_ID"] = "bucket_" + s.newUUID()
		m["CC_KEYCLOAK_JAVA_APPID"] = "app_" + s.newUUID()
		m["CC_KEYCLOAK_POSTGRES_ID"] = "postgresql_" + s.newUUID()
	case "otoroshi":
		u := appURL(realID)
		m["CC_OTOROSHI_URL"] = u
		m["CC_OTOROSHI_API_URL"] = strings.Replace(u, "https://", "https://api-", 1)
		m["CC_OTOROSHI_SSO_URL"] = strings.Replace(u, "https://", "https://sso-", 1)
		m["CC_OTOROSHI_INITIAL_ADMIN_LOGIN"] = "cc-admin"
		m["CC_OTOROSHI_INITIAL_ADMIN_PASSWORD"] = password
	case "cellar-addon":
		host := "cellar-c2.services.clever-cloud.com"
		if region != "par" {
			host = "cellar-" + region + ".services.clever-cloud.com"
		}
		m["CELLAR_ADDON_HOST"] = host
		m["CELLAR_ADDON_KEY_ID"] = s.randString(upperAlnum, 20)
		m["CELLAR_ADDON_KEY_SECRET"] = s.randString(alnum, 40)
	case "fs-bucket":
		// The names are documented (Terraform, Clever Cloud's env var reference); the
		// shapes of the values are not: a host per bucket, its realId as FTP user.
		_, id, _ := strings.Cut(realID, "_")
		m["BUCKET_HOST"] = "bucket-" + id + "-fsbucket.services.clever-cloud.com"
		m["BUCKET_FTP_USERNAME"] = realID
		m["BUCKET_FTP_PASSWORD"] = password
	}

	env := make([]Variable, 0, len(k.spec.envKeys))
	for _, key := range k.spec.envKeys {
		v, ok := m[key]
		if !ok {
			panic("fakeapi: no generated value for " + key) // catalog and generator out of sync
		}
		env = append(env, Variable{Name: key, Value: v})
	}
	sortVars(env)
	return env
}

// appURL is the public URL of an operator-type add-on (Metabase, Keycloak...).
func appURL(realID string) string {
	_, id, _ := strings.Cut(realID, "_")
	return "https://" + strings.ReplaceAll(id, "-", "")[:16] + ".cleverapps.io"
}

// fakeJWT shapes a random string like a (non-verifiable) JWT.
func fakeJWT(sig string) string {
	return "eyJhbGciOiJIUzI1NiJ9.eyJmYWtlIjp0cnVlfQ." + sig
}

func sortVars(v []Variable) {
	slices.SortStableFunc(v, func(a, b Variable) int { return strings.Compare(a.Name, b.Name) })
}

func varNames(v []Variable) []string {
	out := make([]string, 0, len(v))
	for _, x := range v {
		out = append(out, x.Name)
	}
	return out
}
