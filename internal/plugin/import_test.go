package plugin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A minimal Clever Cloud answering what import reads (the envtest suite test/plugin runs it
// against the full fake API and the operator): three add-ons, one of a provider no kind
// handles.
func importServer(t *testing.T) *httptest.Server {
	t.Helper()
	addons := []map[string]any{
		{"id": "addon_r1", "name": "cache", "realId": "redis_r1", "region": "par", "provider": map[string]any{"id": "redis-addon"}, "plan": map[string]any{"id": "plan_r", "slug": "s_mono"}},
		{"id": "addon_p1", "name": "Billing DB", "realId": "postgresql_p1", "region": "rbx", "provider": map[string]any{"id": "postgresql-addon"}, "plan": map[string]any{"id": "plan_p", "slug": "xs_sml"}},
		{"id": "addon_j1", "name": "ci", "realId": "jenkins_j1", "region": "par", "provider": map[string]any{"id": "jenkins"}, "plan": map[string]any{"id": "plan_j", "slug": "s"}},
	}
	env := map[string][]map[string]string{
		"addon_r1": {{"name": "REDIS_VERSION", "value": "7.2.4"}, {"name": "REDIS_PASSWORD", "value": "redis-password-value"}},
		"addon_p1": {{"name": "POSTGRESQL_ADDON_VERSION", "value": "16.4"}, {"name": "POSTGRESQL_ADDON_PASSWORD", "value": "pg-password-value"}},
	}
	mux := http.NewServeMux()
	write := func(w http.ResponseWriter, v any) { _ = json.NewEncoder(w).Encode(v) }
	mux.HandleFunc("GET /v2/self", func(w http.ResponseWriter, r *http.Request) { write(w, map[string]any{"id": "user_me"}) })
	mux.HandleFunc("GET /v2/organisations/{owner}/addons", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("owner") != "user_me" && r.PathValue("owner") != "orga_1" {
			w.WriteHeader(http.StatusNotFound)
			write(w, map[string]any{"id": 404, "message": "not found"})
			return
		}
		write(w, addons)
	})
	mux.HandleFunc("GET /v2/organisations/{owner}/addons/{id}/env", func(w http.ResponseWriter, r *http.Request) { write(w, env[r.PathValue("id")]) })
	mux.HandleFunc("GET /v4/addon-providers/{provider}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("provider") == "postgresql-addon" {
			write(w, map[string]any{"providerId": "postgresql-addon", "dedicated": map[string]any{"15": map[string]any{}, "16": map[string]any{}}, "defaultDedicatedVersion": "16"})
			return
		}
		write(w, map[string]any{"providerId": r.PathValue("provider")})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("import called %s %s", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusTeapot)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestImport(t *testing.T) {
	srv := importServer(t)
	vars := map[string]string{"CLEVER_OPERATOR_API_BEARER_TOKEN": "bearer-value-never-printed", "CLEVER_OPERATOR_API_ENDPOINT": srv.URL}
	for _, tc := range []struct {
		name       string
		args       []string
		err        string
		want       []string // in stdout
		notWant    []string
		wantStderr []string
	}{
		{name: "all, the user's own organisation by default", args: nil,
			want:       []string{"kind: Redis", "name: cache", "addonId: addon_r1", "version: 724", "kind: PostgreSql", "name: billing-db", "region: rbx", "plan: xs_sml", "version: 16", "organisation: user_me", "deletionPolicy: Orphan"},
			notWant:    []string{"jenkins", "password-value", "bearer-value"},
			wantStderr: []string{`skipped addon_j1 "ci": provider jenkins has no clever-operator kind`, "2 add-ons of user_me imported"}},
		{name: "one by name", args: []string{"cache", "--org", "orga_1"},
			want: []string{"kind: Redis", "organisation: orga_1"}, notWant: []string{"PostgreSql", "---"}},
		{name: "one by id, flags after", args: []string{"addon_p1", "-n", "team-a", "--deletion-policy", "Delete"},
			want: []string{"kind: PostgreSql", "namespace: team-a", "deletionPolicy: Delete"}, notWant: []string{"Redis"}},
		{name: "by kind", args: []string{"--kind", "postgresql"}, want: []string{"kind: PostgreSql"}, notWant: []string{"kind: Redis"}},
		{name: "by name regex", args: []string{"--name-regex", "^ca"}, want: []string{"kind: Redis"}, notWant: []string{"kind: PostgreSql"}},
		{name: "credentials reference", args: []string{"--credentials-ref", "ClusterCleverCredentials/import"},
			want: []string{"credentialsRef:\n    kind: ClusterCleverCredentials\n    name: import"}, notWant: []string{"kind: CleverCredentials"}},
		{name: "grant", args: []string{"--grant", "imported", "--grant-secret", "my-clever", "-n", "team-a"},
			want: []string{"kind: CleverCredentials", "- addon_r1", "- addon_p1", "name: my-clever", "credentialsRef:\n    kind: CleverCredentials\n    name: imported"}, notWant: []string{"addon_j1"}},
		{name: "unknown add-on", args: []string{"nope"}, err: `no add-on "nope" in user_me`},
		{name: "unknown kind", args: []string{"--kind", "Jenkins"}, err: `--kind: unknown kind "Jenkins"`},
		{name: "bad deletion policy", args: []string{"--deletion-policy", "Never"}, err: "--deletion-policy must be Orphan or Delete"},
		{name: "grant without its Secret", args: []string{"--grant", "x"}, err: "--grant needs --grant-secret"},
		{name: "bad credentials reference", args: []string{"--credentials-ref", "Secret/x"}, err: "--credentials-ref must be"},
		{name: "bad regex", args: []string{"--name-regex", "("}, err: "--name-regex"},
		{name: "organisation not reachable", args: []string{"--org", "orga_2"}, err: "listing the add-ons of orga_2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut strings.Builder
			err := Run(context.Background(), append([]string{"import"}, tc.args...), &Env{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return vars[k] }})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans lines: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v (stderr %s)", err, errOut.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out.String(), w) {
					t.Errorf("stdout has %q:\n%s", w, out.String())
				}
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut.String())
				}
			}
		})
	}

	t.Run("one file per resource", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		err := Run(context.Background(), []string{"import", "-o", dir, "--grant", "g", "--grant-secret", "s"}, &Env{Getenv: func(k string) string { return vars[k] }})
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(dir)
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		if strings.Join(got, " ") != "clevercredentials-g.yaml postgresql-billing-db.yaml redis-cache.yaml" {
			t.Errorf("files = %v", got)
		}
	})
}
