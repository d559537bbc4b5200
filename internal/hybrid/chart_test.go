package hybrid

import (
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/internal/templates"
)

// pgData are a PostgreSQL add-on's keys as the fake API shapes them.
var pgData = map[string]string{
	"POSTGRESQL_ADDON_HOST": "bx-postgresql.services.example", "POSTGRESQL_ADDON_PORT": "5432",
	"POSTGRESQL_ADDON_DB": "bxdb", "POSTGRESQL_ADDON_USER": "ux", "POSTGRESQL_ADDON_PASSWORD": "pw-S3cr3t-value",
	"POSTGRESQL_ADDON_URI": "postgresql://ux:pw-S3cr3t-value@bx-postgresql.services.example:5432/bxdb", "POSTGRESQL_ADDON_VERSION": "17",
}

func pgKind(t *testing.T) *kinds.Kind {
	k, ok := kinds.KindFor(schema.GroupVersionKind{Group: kinds.Group, Version: "v1", Kind: "PostgreSql"})
	if !ok {
		t.Fatal("no PostgreSql kind")
	}
	return k
}

func pgObject(secret map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	u.SetAPIVersion("api.clever-cloud.com/v1")
	u.SetKind("PostgreSql")
	u.SetName("db")
	u.SetNamespace("ns")
	if secret != nil {
		u.Object["spec"].(map[string]any)["secret"] = secret
	}
	return u
}

// render runs the real chart through Helm's engine with the translator's values and returns
// the rendered objects by kind/name.
func render(t *testing.T, kind *kinds.Kind, obj *unstructured.Unstructured, data map[string]string) map[string]map[string]any {
	t.Helper()
	ch, err := loader.Load("../../helm-charts/clever-addon")
	if err != nil {
		t.Fatal(err)
	}
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kinds.AnnotationAddonID: "addon_1", secrets.AnnotationCredentialsHash: secrets.Hash(data)}}}
	vals, err := Values(kind, obj, src, data)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "r", Namespace: "ns"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for name, content := range files {
		if strings.TrimSpace(content) == "" || strings.HasSuffix(name, ".tpl") {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(content), &m); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, content)
		}
		md := m["metadata"].(map[string]any)
		out[m["kind"].(string)+"/"+md["name"].(string)] = m
	}
	return out
}

func decoded(t *testing.T, obj map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	raw, _ := obj["data"].(map[string]any)
	for k, v := range raw {
		b, err := base64.StdEncoding.DecodeString(v.(string))
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(b)
	}
	return out
}

func TestChartDefaultIsTheRustOperatorsSecret(t *testing.T) {
	kind := pgKind(t)
	objs := render(t, kind, pgObject(nil), pgData)
	sec, ok := objs["Secret/db-secrets"]
	if !ok {
		t.Fatalf("no db-secrets in %v", keysOf(objs))
	}
	if sec["type"] != "Opaque" {
		t.Fatalf("type %v", sec["type"])
	}
	got := decoded(t, sec)
	if len(got) != len(pgData) {
		t.Fatalf("keys %v", got)
	}
	for k, v := range pgData {
		if got[k] != v {
			t.Fatalf("%s differs", k)
		}
	}
	if _, ok := objs["Secret/db-secrets-binding"]; !ok {
		t.Fatalf("no binding Secret in %v", keysOf(objs))
	}
	if len(objs) != 2 {
		t.Fatalf("unexpected objects %v", keysOf(objs))
	}
}

func TestChartShapesTheSecret(t *testing.T) {
	kind := pgKind(t)
	obj := pgObject(map[string]any{
		"name":        "app-db",
		"labels":      map[string]any{"team": "payments"},
		"annotations": map[string]any{"reloader.example/match": "true"},
		"keyPrefix":   "APP_",
		"templates": map[string]any{
			"DATABASE_URL": "postgresql://{{ .POSTGRESQL_ADDON_USER }}:{{ .POSTGRESQL_ADDON_PASSWORD | urlquery }}@{{ .POSTGRESQL_ADDON_HOST }}:{{ .POSTGRESQL_ADDON_PORT }}/{{ .POSTGRESQL_ADDON_DB }}",
			"JDBC_URL":     "jdbc:postgresql://{{ .POSTGRESQL_ADDON_HOST }}:{{ .POSTGRESQL_ADDON_PORT }}/{{ .POSTGRESQL_ADDON_DB }}?user={{ .POSTGRESQL_ADDON_USER | upper }}",
		},
		"configMap": map[string]any{},
	})
	objs := render(t, kind, obj, pgData)
	sec := objs["Secret/app-db"]
	if sec == nil {
		t.Fatalf("no app-db Secret in %v", keysOf(objs))
	}
	md := sec["metadata"].(map[string]any)
	labels := md["labels"].(map[string]any)
	if labels["team"] != "payments" || labels["api.clever-cloud.com/managed-by"] != "clever-operator" || labels["api.clever-cloud.com/role"] != "credentials" {
		t.Fatalf("labels %v", labels)
	}
	if md["annotations"].(map[string]any)["reloader.example/match"] != "true" {
		t.Fatalf("annotations %v", md["annotations"])
	}
	got := decoded(t, sec)
	if got["APP_POSTGRESQL_ADDON_PASSWORD"] != pgData["POSTGRESQL_ADDON_PASSWORD"] || got["POSTGRESQL_ADDON_PASSWORD"] != "" {
		t.Fatalf("prefix not applied: %v", keysOfS(got))
	}
	if got["DATABASE_URL"] != "postgresql://ux:pw-S3cr3t-value@bx-postgresql.services.example:5432/bxdb" {
		t.Fatalf("DATABASE_URL rendered wrong")
	}
	if got["JDBC_URL"] != "jdbc:postgresql://bx-postgresql.services.example:5432/bxdb?user=UX" {
		t.Fatalf("JDBC_URL rendered wrong: %q", got["JDBC_URL"])
	}
	cm := objs["ConfigMap/db-config"]
	if cm == nil {
		t.Fatalf("no ConfigMap in %v", keysOf(objs))
	}
	cmData := cm["data"].(map[string]any)
	want := map[string]any{"APP_POSTGRESQL_ADDON_HOST": pgData["POSTGRESQL_ADDON_HOST"], "APP_POSTGRESQL_ADDON_PORT": "5432", "APP_POSTGRESQL_ADDON_DB": "bxdb", "APP_POSTGRESQL_ADDON_VERSION": "17"}
	if len(cmData) != len(want) {
		t.Fatalf("ConfigMap keys %v", cmData)
	}
	for k, v := range want {
		if cmData[k] != v {
			t.Fatalf("ConfigMap %s = %v", k, cmData[k])
		}
	}
	if _, ok := objs["Secret/app-db-binding"]; !ok {
		t.Fatalf("binding follows the Secret name: %v", keysOf(objs))
	}
}

func TestChartBindingSecretFollowsTheSpec(t *testing.T) {
	// Well-known entries of the Service Binding specification per binding type.
	wellKnown := map[string]bool{"type": true, "provider": true, "host": true, "port": true, "uri": true, "uris": true, "username": true, "password": true, "database": true}
	cases := map[string]struct {
		data map[string]string
		want []string
	}{
		"PostgreSql": {pgData, []string{"type", "provider", "host", "port", "username", "password", "database", "uri"}},
		"MySql": {map[string]string{"MYSQL_ADDON_HOST": "h", "MYSQL_ADDON_PORT": "3306", "MYSQL_ADDON_USER": "u", "MYSQL_ADDON_PASSWORD": "p", "MYSQL_ADDON_DB": "d", "MYSQL_ADDON_URI": "mysql://u:p@h:3306/d"},
			[]string{"type", "provider", "host", "port", "username", "password", "database", "uri"}},
		"MongoDb": {map[string]string{"MONGODB_ADDON_HOST": "h", "MONGODB_ADDON_PORT": "27017", "MONGODB_ADDON_USER": "u", "MONGODB_ADDON_PASSWORD": "p", "MONGODB_ADDON_DB": "d", "MONGODB_ADDON_URI": "mongodb://u:p@h:27017/d"},
			[]string{"type", "provider", "host", "port", "username", "password", "database", "uri"}},
		"Redis": {map[string]string{"REDIS_HOST": "h", "REDIS_PORT": "6379", "REDIS_PASSWORD": "p", "REDIS_URL": "redis://:p@h:6379", "REDIS_TOKEN": "t"},
			[]string{"type", "provider", "host", "port", "password", "uri"}},
		"ElasticSearch": {map[string]string{"ES_ADDON_HOST": "h", "ES_ADDON_USER": "u", "ES_ADDON_PASSWORD": "p", "ES_ADDON_URI": "https://u:p@h"},
			[]string{"type", "provider", "host", "username", "password", "uri", "uris"}},
		"KV": {map[string]string{"KV_HOST": "h", "KV_PORT": "6379", "KV_TOKEN": "t", "REDIS_URL": "rediss://:t@h:6379"},
			[]string{"type", "provider", "host", "port", "password", "uri"}},
	}
	for _, k := range kinds.Kinds {
		k := k
		c, ok := cases[k.GVK.Kind]
		if !ok {
			if k.Binding != nil {
				t.Errorf("%s has a binding but no case here", k.GVK.Kind)
			}
			continue
		}
		t.Run(k.GVK.Kind, func(t *testing.T) {
			obj := pgObject(nil)
			obj.SetAPIVersion(k.GVK.GroupVersion().String())
			obj.SetKind(k.GVK.Kind)
			objs := render(t, &k, obj, c.data)
			b := objs["Secret/db-secrets-binding"]
			if b == nil {
				t.Fatalf("no binding Secret: %v", keysOf(objs))
			}
			if b["type"] != "servicebinding.io/"+k.Binding.Type {
				t.Fatalf("type %v", b["type"])
			}
			got := decoded(t, b)
			if len(got) != len(c.want) {
				t.Fatalf("entries %v, want %v", keysOfS(got), c.want)
			}
			for _, e := range c.want {
				if got[e] == "" || !wellKnown[e] {
					t.Fatalf("entry %s missing or not well-known", e)
				}
			}
			if got["type"] != k.Binding.Type || got["provider"] != kinds.BindingProvider {
				t.Fatalf("type/provider %q %q", got["type"], got["provider"])
			}
		})
	}
}

func TestChartHasNoNotes(t *testing.T) {
	// helm-operator-plugins copies the rendered NOTES.txt into the Deployed condition's message.
	ch, err := loader.Load("../../helm-charts/clever-addon")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ch.Templates {
		if strings.HasSuffix(f.Name, "NOTES.txt") {
			t.Fatalf("%s would put rendered text in the resource's status", f.Name)
		}
	}
}

func TestChartDisabledPublishesNoSecret(t *testing.T) {
	objs := render(t, pgKind(t), pgObject(map[string]any{"disabled": true, "configMap": map[string]any{"name": "db-public"}}), pgData)
	if len(objs) != 1 || objs["ConfigMap/db-public"] == nil {
		t.Fatalf("want only the ConfigMap, got %v", keysOf(objs))
	}
}

func TestValuesRejectBadTemplatesWithoutValues(t *testing.T) {
	cases := map[string]string{
		"does not parse":       "{{ .POSTGRESQL_ADDON_HOST ",
		"unknown key":          "{{ .POSTGRESQL_ADDON_NOPE }}",
		"unknown function":     "{{ .POSTGRESQL_ADDON_HOST | nope }}",
		"env is forbidden":     `{{ env "HOME" }}`,
		"execution fails":      "{{ index .POSTGRESQL_ADDON_HOST 999 }}",
		"error quotes a value": "{{ fail .POSTGRESQL_ADDON_PASSWORD }}",
	}
	for name, tmpl := range cases {
		t.Run(name, func(t *testing.T) {
			obj := pgObject(map[string]any{"templates": map[string]any{"BAD": tmpl}})
			_, err := Values(pgKind(t), obj, &corev1.Secret{}, pgData)
			var te *templates.Error
			if !errors.As(err, &te) {
				t.Fatalf("want a Error, got %v", err)
			}
			if !strings.Contains(err.Error(), "spec.secret.templates[BAD]") {
				t.Fatalf("message does not name the key: %s", err)
			}
			for _, v := range pgData {
				if len(v) >= 3 && strings.Contains(err.Error(), v) {
					t.Fatalf("message leaks a value: %s", err)
				}
			}
		})
	}
}

func keysOf(m map[string]map[string]any) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	return out
}

func keysOfS(m map[string]string) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The premise of seedDryRun, with real Helm and the real chart: a dry-run upgrade of the
// installed revision with the same values renders the install's manifest.
func TestChartRendersAlikeOnInstallAndUpgrade(t *testing.T) {
	ch, err := loader.Load("../../helm-charts/clever-addon")
	if err != nil {
		t.Fatal(err)
	}
	if !rendersAlikeOnUpgrade(ch) {
		t.Fatal("the chart reads something that differs between an install and an upgrade: installs are not remembered as rendered")
	}
	for _, secret := range []map[string]any{nil, {"keyPrefix": "APP_", "annotations": map[string]any{"a": "b"}}} {
		obj := pgObject(secret)
		src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kinds.AnnotationAddonID: "addon_1", secrets.AnnotationCredentialsHash: secrets.Hash(pgData)}}}
		vals, err := Values(pgKind(t), obj, src, pgData)
		if err != nil {
			t.Fatal(err)
		}
		cfg := &action.Configuration{Releases: storage.Init(driver.NewMemory()), KubeClient: &kubefake.PrintingKubeClient{Out: io.Discard},
			Capabilities: chartutil.DefaultCapabilities, Log: func(string, ...any) {}}
		in := action.NewInstall(cfg)
		in.ReleaseName, in.Namespace = "postgresql-db", "ns"
		rel, err := in.Run(ch, vals)
		if err != nil {
			t.Fatal(err)
		}
		up := action.NewUpgrade(cfg)
		up.Namespace, up.DryRun, up.DryRunOption = "ns", true, "server"
		dry, err := up.Run("postgresql-db", ch, vals)
		if err != nil {
			t.Fatal(err)
		}
		if rel.Manifest == "" || dry.Manifest != rel.Manifest {
			t.Fatalf("install rendered\n%s\na dry-run upgrade rendered\n%s", rel.Manifest, dry.Manifest)
		}
	}
}
