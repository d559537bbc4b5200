package catalog

import (
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// Alphabets of the made-up secrets.
const (
	LowerAlnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	Alnum      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	UpperAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	hexDigits  = "0123456789abcdef"
)

// Rand is the random source the made-up values are drawn from: the server's
// seeded generator (a *math/rand/v2.Rand), so that a seed makes them
// deterministic. Callers serialise the draws (the server holds its state lock).
type Rand interface {
	IntN(n int) int
	Uint64() uint64
}

// RandString returns n characters of alphabet drawn from r.
func RandString(r Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// RandUUID returns a random (v4) UUID string drawn from r.
func RandUUID(r Rand) string {
	var u uuid.UUID
	binary.LittleEndian.PutUint64(u[:8], r.Uint64())
	binary.LittleEndian.PutUint64(u[8:], r.Uint64())
	u[6] = (u[6] & 0x0f) | 0x40
	u[8] = (u[8] & 0x3f) | 0x80
	return u.String()
}

// planPort returns a plausible port: the well-known one on dedicated plans,
// a random high port on shared (dev) plans.
func planPort(r Rand, slug string, wellKnown int) string {
	if slug == "dev" {
		return fmt.Sprint(20000 + r.IntN(40000))
	}
	return fmt.Sprint(wellKnown)
}

// GenerateEnv builds the environment of a new add-on of kind k (or of one
// just migrated to plan, region and version), drawing its secrets from r.
// The result always has exactly k.Spec.EnvKeys, sorted by name.
func GenerateEnv(k *Kind, r Rand, ownerID, realID string, plan *wire.Plan, region, version string) []wire.Variable {
	cluster := "b" + RandString(r, LowerAlnum, 19) // like bj7r4vwd0dlrdfezv7ry
	user := "u" + RandString(r, LowerAlnum, 19)
	password := RandString(r, Alnum, 24)
	slug := plan.Slug
	m := map[string]string{}

	dbEnv := func(prefix, scheme, service string, wellKnown int) {
		host := cluster + "-" + service + ".services.clever-cloud.com"
		port := planPort(r, slug, wellKnown)
		m[prefix+"_HOST"] = host
		m[prefix+"_PORT"] = port
		m[prefix+"_DB"] = cluster
		m[prefix+"_USER"] = user
		m[prefix+"_PASSWORD"] = password
		m[prefix+"_VERSION"] = version
		m[prefix+"_URI"] = scheme + "://" + url.UserPassword(user, password).String() + "@" + host + ":" + port + "/" + cluster
	}

	switch k.Spec.ProviderID {
	case "postgresql-addon":
		dbEnv("POSTGRESQL_ADDON", "postgresql", "postgresql", 5432)
	case "mysql-addon":
		dbEnv("MYSQL_ADDON", "mysql", "mysql", 3306)
	case "mongodb-addon":
		dbEnv("MONGODB_ADDON", "mongodb", "mongodb", 27017)
	case "redis-addon":
		host := cluster + "-redis.services.clever-cloud.com"
		port := fmt.Sprint(2000 + r.IntN(8000))
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
		m["ES_ADDON_APM_PASSWORD"] = RandString(r, Alnum, 24)
		m["ES_ADDON_APM_AUTH_TOKEN"] = RandString(r, Alnum, 32)
	case "addon-pulsar":
		host := "materia-pulsar-" + region + ".services.clever-cloud.com"
		m["ADDON_PULSAR_HOSTNAME"] = host
		m["ADDON_PULSAR_BINARY_PORT"] = "6651"
		m["ADDON_PULSAR_HTTP_PORT"] = "443"
		m["ADDON_PULSAR_BINARY_URL"] = "pulsar+ssl://" + host + ":6651"
		m["ADDON_PULSAR_HTTP_URL"] = "https://" + host + ":443"
		m["ADDON_PULSAR_TENANT"] = ownerID
		m["ADDON_PULSAR_NAMESPACE"] = realID
		m["ADDON_PULSAR_TOKEN"] = fakeJWT(RandString(r, Alnum, 43))
	case "kv":
		host := "materiakv.eu-fr-1.services.clever-cloud.com"
		token := fakeJWT(RandString(r, Alnum, 43))
		m["KV_HOST"] = host
		m["KV_PORT"] = "6379"
		m["KV_TOKEN"] = token
		m["KV_TOKEN_ID"] = RandUUID(r)
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
		m["CC_KEYCLOAK_FSBUCKET_ID"] = "bucket_" + RandUUID(r)
		m["CC_KEYCLOAK_JAVA_APPID"] = "app_" + RandUUID(r)
		m["CC_KEYCLOAK_POSTGRES_ID"] = "postgresql_" + RandUUID(r)
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
		m["CELLAR_ADDON_KEY_ID"] = RandString(r, UpperAlnum, 20)
		m["CELLAR_ADDON_KEY_SECRET"] = RandString(r, Alnum, 40)
	case "fs-bucket":
		// The names are documented (Terraform, Clever Cloud's env var reference); the
		// shapes of the values are not: a host per bucket, its realId as FTP user.
		_, id, _ := strings.Cut(realID, "_")
		m["BUCKET_HOST"] = "bucket-" + id + "-fsbucket.services.clever-cloud.com"
		m["BUCKET_FTP_USERNAME"] = realID
		m["BUCKET_FTP_PASSWORD"] = password
	}

	env := make([]wire.Variable, 0, len(k.Spec.EnvKeys))
	for _, key := range k.Spec.EnvKeys {
		v, ok := m[key]
		if !ok {
			panic("fakeapi: no generated value for " + key) // catalog and generator out of sync
		}
		env = append(env, wire.Variable{Name: key, Value: v})
	}
	wire.SortVars(env)
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
