package operatoraddons

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/step"
)

// readAPI answers the two reads an operator add-on's credentials may take and counts them.
type readAPI struct {
	credentials.API
	info       *clevercloud.OperatorInfo
	v4Err      error
	env        []clevercloud.Variable
	envErr     error
	v4, v2env  int
	lastOp     string
	lastRealID string
}

func (a *readAPI) GetOperator(_ context.Context, op, realID string) (*clevercloud.OperatorInfo, error) {
	a.v4++
	a.lastOp, a.lastRealID = op, realID
	return a.info, a.v4Err
}

func (a *readAPI) GetAddonEnv(context.Context, string, string) ([]clevercloud.Variable, error) {
	a.v2env++
	return a.env, a.envErr
}

// readPass is the pass as Source.Read sees it: the kind, the client, the organisation.
type readPass struct {
	step.Pass
	kind *kinds.Kind
	api  credentials.API
}

func (p readPass) Kind() *kinds.Kind    { return p.kind }
func (p readPass) API() credentials.API { return p.api }
func (p readPass) Org() string          { return "orga_1" }

func notFound() error {
	return &clevercloud.APIError{StatusCode: http.StatusNotFound, Message: "addon not found"}
}

// Full passes and refreshes read alike: the v4 answer alone for an add-on of today's API, the
// v2 env only when v4 lacks a required key, nothing more while v4 answers 404.
func TestSourceRead(t *testing.T) {
	kc := &clevercloud.OperatorInfo{AccessURL: "https://kc.example/", Version: "26.2.5",
		InitialCredentials: &clevercloud.BasicCredentials{User: "admin", Password: "pw"},
		Resources:          clevercloud.OperatorResources{Entrypoint: "app_1", PgsqlID: "postgresql_1", FsbucketID: "bucket_1"},
		EnvVars:            map[string]string{"CC_KEYCLOAK_VERSION": "26.2.5"}}
	noCreds := &clevercloud.OperatorInfo{AccessURL: "https://kc.example/", Version: "26.2.5"}
	legacyEnv := []clevercloud.Variable{{Name: "CC_KEYCLOAK_ADMIN", Value: "v2-admin"}, {Name: "CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD", Value: "v2-pw"},
		{Name: "CC_KEYCLOAK_URL", Value: "https://stale-v2/"}, {Name: "LEGACY_V2", Value: "kept"}}
	cases := []struct {
		name     string
		api      *readAPI
		v2env    int
		want     map[string]string // the whole Secret data
		pending  string
		err      bool
		recorded bool
	}{
		{name: "today's API: v4 alone, no v2 read, the keys they always had", api: &readAPI{info: kc}, want: map[string]string{
			"CC_KEYCLOAK_URL": "https://kc.example/", "CC_KEYCLOAK_ADMIN_URL": "https://kc.example/admin",
			"CC_KEYCLOAK_ADMIN": "admin", "CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD": "pw", "CC_KEYCLOAK_JAVA_APPID": "app_1",
			"CC_KEYCLOAK_POSTGRES_ID": "postgresql_1", "CC_KEYCLOAK_FSBUCKET_ID": "bucket_1"}, recorded: true},
		{name: "v4 404 while Clever Cloud creates it: pending, no v2 read", api: &readAPI{v4Err: notFound()},
			pending: "waiting for Clever Cloud to provision add-on addon_1 (GET /v4/addon-providers/addon-keycloak/addons/keycloak_1 does not answer yet)"},
		{name: "an add-on still on the v2 env: v2 fills what v4 lacks, v4 wins, other v2 variables kept",
			api: &readAPI{info: noCreds, env: legacyEnv}, v2env: 1, want: map[string]string{
				"CC_KEYCLOAK_URL": "https://kc.example/", "CC_KEYCLOAK_ADMIN_URL": "https://kc.example/admin",
				"CC_KEYCLOAK_ADMIN": "v2-admin", "CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD": "v2-pw", "LEGACY_V2": "kept"}, recorded: true},
		{name: "neither serves the credentials yet: pending, naming what is missing", api: &readAPI{info: noCreds, env: []clevercloud.Variable{}}, v2env: 1,
			pending: "waiting for Clever Cloud to provision add-on addon_1 (not served yet: CC_KEYCLOAK_ADMIN, CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD)"},
		{name: "v4 fails: its error, no v2 read", api: &readAPI{v4Err: &clevercloud.APIError{StatusCode: http.StatusServiceUnavailable}}, err: true},
		{name: "the v2 read fails: its error", api: &readAPI{info: noCreds, envErr: notFound()}, v2env: 1, err: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := readPass{kind: kinds.MustNamed("Keycloak"), api: c.api}
			rd, err := Source{}.Read(context.Background(), s, &clevercloud.Addon{ID: "addon_1", RealID: "keycloak_1"}, false)
			if (err != nil) != c.err {
				t.Fatalf("error %v, want one: %t", err, c.err)
			}
			if c.api.v4 != 1 || c.api.v2env != c.v2env {
				t.Errorf("reads: v4 %d, v2 env %d; want 1, %d", c.api.v4, c.api.v2env, c.v2env)
			}
			if c.api.lastOp != "addon-keycloak" || c.api.lastRealID != "keycloak_1" {
				t.Errorf("v4 read of %s/%s", c.api.lastOp, c.api.lastRealID)
			}
			if rd.Pending != c.pending {
				t.Errorf("pending %q, want %q", rd.Pending, c.pending)
			}
			if c.want != nil && !reflect.DeepEqual(rd.Data, c.want) {
				t.Errorf("data %v, want %v", rd.Data, c.want)
			}
			if c.want == nil && rd.Data != nil {
				t.Errorf("data %v, want none", rd.Data)
			}
			if (rd.Status != nil) != c.recorded {
				t.Fatalf("status recorded: %t, want %t", rd.Status != nil, c.recorded)
			}
			if rd.Status != nil {
				var st kinds.Status
				rd.Status(&st)
				if st.AccessURL != "https://kc.example/" || st.Version != "26.2.5" {
					t.Errorf("status: access URL %q, version %q", st.AccessURL, st.Version)
				}
			}
		})
	}
}

// Every operator kind's Secret comes from v4 alone when v4 serves its required keys: the
// Secret keys are the kind's (v4 fields, else v4 envVars), no v2 read.
func TestEveryOperatorKindFromV4(t *testing.T) {
	infos := map[string]*clevercloud.OperatorInfo{
		"addon-keycloak": {AccessURL: "https://kc", InitialCredentials: &clevercloud.BasicCredentials{User: "u", Password: "p"}},
		"addon-metabase": {AccessURL: "https://mb"},
		"addon-matomo":   {AccessURL: "https://mt"},
		"addon-otoroshi": {AccessURL: "https://oto", InitialCredentials: &clevercloud.BasicCredentials{User: "u", Password: "p"},
			API: &clevercloud.OtoroshiAPI{URL: "https://api.oto", User: "cid", Secret: "cs"}},
	}
	n := 0
	for i := range kinds.Kinds {
		k := &kinds.Kinds[i]
		if k.Operator == "" {
			continue
		}
		n++
		info := infos[k.Operator]
		if info == nil {
			t.Fatalf("%s: no v4 answer for %s in this test", k.GVK.Kind, k.Operator)
		}
		api := &readAPI{info: info}
		rd, err := Source{}.Read(context.Background(), readPass{kind: k, api: api}, &clevercloud.Addon{ID: "addon_1", RealID: "r_1"}, true)
		if err != nil || rd.Pending != "" || api.v2env != 0 || api.v4 != 1 {
			t.Errorf("%s: %v, pending %q, v4 %d, v2 env %d reads", k.GVK.Kind, err, rd.Pending, api.v4, api.v2env)
		}
		for _, key := range kinds.OperatorRequired(k.Operator) {
			if rd.Data[key] == "" {
				t.Errorf("%s: %s not filled", k.GVK.Kind, key)
			}
		}
		for key := range rd.Data {
			if !slices.Contains(kinds.OperatorKeys(k.Operator), key) {
				t.Errorf("%s: key %s is not one of the kind's", k.GVK.Kind, key)
			}
		}
	}
	if n != 4 {
		t.Errorf("%d operator kinds, want 4", n)
	}
}
