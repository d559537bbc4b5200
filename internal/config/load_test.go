package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mapEnv returns an Env function backed by m (HOME unset unless in m).
func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

const (
	tomlHyphen = `
[api]
endpoint = "https://fake.test"
token = "tok-7f3a9c1e"
secret = "sec-b2d4e6f8"
consumer-key = "ck-0a1b2c3d"
consumer-secret = "cs-9e8d7c6b"
bearer-token = "bearer-5a5b5c5d"
`
	tomlCamel = `
[api]
endpoint = "https://fake.test"
token = "tok-7f3a9c1e"
secret = "sec-b2d4e6f8"
consumerKey = "ck-0a1b2c3d"
consumerSecret = "cs-9e8d7c6b"
bearerToken = "bearer-5a5b5c5d"
`
	yamlHyphen = `
api:
  endpoint: https://fake.test
  token: tok-7f3a9c1e
  secret: "sec-b2d4e6f8"
  consumer-key: ck-0a1b2c3d
  consumer-secret: 'cs-9e8d7c6b'
  bearer-token: bearer-5a5b5c5d
`
	yamlCamel = `
api:
  endpoint: https://fake.test
  token: tok-7f3a9c1e
  secret: sec-b2d4e6f8
  consumerKey: ck-0a1b2c3d
  consumerSecret: cs-9e8d7c6b
  bearerToken: bearer-5a5b5c5d
`
	jsonHyphen = `{"api": {"endpoint": "https://fake.test", "token": "tok-7f3a9c1e", "secret": "sec-b2d4e6f8",
  "consumer-key": "ck-0a1b2c3d", "consumer-secret": "cs-9e8d7c6b", "bearer-token": "bearer-5a5b5c5d"}}`
	jsonCamel = `{"api": {"endpoint": "https://fake.test", "token": "tok-7f3a9c1e", "secret": "sec-b2d4e6f8",
  "consumerKey": "ck-0a1b2c3d", "consumerSecret": "cs-9e8d7c6b", "bearerToken": "bearer-5a5b5c5d"}}`
)

func wantFull() APIConfig {
	c := fullConfig()
	c.Endpoint = "https://fake.test"
	return c
}

func TestLoadFormats(t *testing.T) {
	tests := []struct {
		name, file, content string
		want                APIConfig
	}{
		{"toml hyphenated", "config.toml", tomlHyphen, wantFull()},
		{"toml camelCase", "config.toml", tomlCamel, wantFull()},
		{"yaml hyphenated", "config.yaml", yamlHyphen, wantFull()},
		{"yml camelCase", "config.yml", yamlCamel, wantFull()},
		{"json hyphenated", "config.json", jsonHyphen, wantFull()},
		{"json camelCase", "config.json", jsonCamel, wantFull()},
		{"uppercase extension", "CONFIG.TOML", tomlHyphen, wantFull()},
		{"no extension toml", "config", tomlHyphen, wantFull()},
		{"no extension yaml", "config", yamlCamel, wantFull()},
		{"no extension json", "config", jsonHyphen, wantFull()},
		{"unknown extension sniffed", "config.conf", tomlCamel, wantFull()},
		{"toml dotted keys", "c.toml", "api.token = \"t\"\napi.bearer-token = \"b\"\n", APIConfig{Token: "t", BearerToken: "b"}},
		{"toml inline table", "c.toml", "api = { token = \"t\", consumerKey = \"k\" }\n", APIConfig{Token: "t", ConsumerKey: "k"}},
		{"reference sample with operator section", "c.toml", "[api]\ntoken = \"t\"\nsecret = \"s\"\nconsumer-key = \"\"\nconsumer-secret = \"\"\n\n[operator]\nlisten = \"0.0.0.0:8000\"\n", APIConfig{Token: "t", Secret: "s"}},
		{"unknown keys ignored", "c.yaml", "api:\n  token: t\n  username: u\n  retries: 3\nother:\n  x: [1, 2]\n", APIConfig{Token: "t"}},
		{"values trimmed", "c.json", `{"api": {"token": "  t\n", "secret": "\ts "}}`, APIConfig{Token: "t", Secret: "s"}},
		{"same value under both spellings", "c.toml", "[api]\nconsumer-key = \"k\"\nconsumerKey = \"k\"\n", APIConfig{ConsumerKey: "k"}},
		{"empty under one spelling", "c.toml", "[api]\nconsumer-key = \"\"\nconsumerKey = \"k\"\n", APIConfig{ConsumerKey: "k"}},
		{"yaml null values", "c.yaml", "api:\n  token:\n  secret: s\n", APIConfig{Secret: "s"}},
		{"yaml empty api", "c.yaml", "api:\n", APIConfig{}},
		{"empty file", "c.toml", "", APIConfig{}},
		{"empty yaml file", "c.yaml", "", APIConfig{}},
		{"no api section", "c.json", `{"operator": {"listen": ":8000"}}`, APIConfig{}},
		{"utf-8 BOM", "c.toml", "\uFEFF[api]\ntoken = \"t\"\n", APIConfig{Token: "t"}},
		{"crlf line endings", "c.toml", "[api]\r\ntoken = \"t\"\r\n", APIConfig{Token: "t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), tt.file), tt.content)
			cfg, err := Load(LoadOptions{ConfigFile: path, Env: mapEnv(nil)})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cfg.API != tt.want {
				t.Errorf("API = %s, want %s", describe(cfg.API), describe(tt.want))
			}
			if want := []string{"file " + path}; !slices.Equal(cfg.Sources, want) {
				t.Errorf("Sources = %q, want %q", cfg.Sources, want)
			}
		})
	}
}

func TestLoadConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, file, content string // content "" with file "" => use path as is
		path                string // explicit path (missing file, directory)
		contains            []string
	}{
		{name: "missing file", path: filepath.Join(dir, "nope.toml"), contains: []string{"nope.toml", "does not exist"}},
		{name: "directory", path: dir, contains: []string{"not a regular file"}},
		{name: "bad toml", file: "bad.toml", content: "[api]\ntoken = \"tok-7f3a9c1e\"\nsecret = sec-b2d4e6f8\n", contains: []string{"bad.toml", "invalid TOML at line 3", `after key "api.secret"`}},
		{name: "unterminated toml string", file: "bad2.toml", content: "[api]\n\ntoken = \"tok-7f3a9c1e\n", contains: []string{"invalid TOML at line 3"}},
		{name: "bad yaml", file: "bad.yaml", content: "api:\n  token: tok-7f3a9c1e\n secret: sec-b2d4e6f8\n  x: [\n", contains: []string{"bad.yaml", "invalid YAML at line"}},
		{name: "bad json", file: "bad.json", content: "{\"api\": {\n\"token\": \"tok-7f3a9c1e\",\n\"secret\" \"sec-b2d4e6f8\"}}", contains: []string{"bad.json", "invalid JSON at line 3"}},
		{name: "json trailing garbage", file: "bad2.json", content: `{"api": {"token": "tok-7f3a9c1e"}} sec-b2d4e6f8`, contains: []string{"invalid JSON at line 1"}},
		{name: "yaml given toml content", file: "wrong.yaml", content: tomlHyphen, contains: []string{"wrong.yaml", "YAML"}},
		{name: "json given toml content", file: "wrong.json", content: tomlHyphen, contains: []string{"wrong.json", "invalid JSON"}},
		{name: "sniffed garbage", file: "config", content: "tok-7f3a9c1e sec-b2d4e6f8 ck-0a1b2c3d", contains: []string{"not a TOML, YAML or JSON document"}},
		{name: "sniffed broken toml", file: "config", content: "[api]\ntoken = \"tok-7f3a9c1e\"\nsecret = = \"sec-b2d4e6f8\"\n", contains: []string{"invalid TOML at line 3"}},
		{name: "yaml scalar", file: "s.yaml", content: "tok-7f3a9c1e\n", contains: []string{"not a TOML, YAML or JSON document"}},
		{name: "number value", file: "n.toml", content: "[api]\ntoken = 12345\n", contains: []string{"api.token must be a string"}},
		{name: "yaml bool value", file: "n.yaml", content: "api:\n  secret: yes\n", contains: []string{"api.secret must be a string"}},
		{name: "api not a table", file: "a.json", content: `{"api": "tok-7f3a9c1e"}`, contains: []string{"api must be a table"}},
		{name: "conflicting spellings", file: "c.yaml", content: "api:\n  consumer-key: ck-0a1b2c3d\n  consumerKey: cs-9e8d7c6b\n", contains: []string{"api.consumer-key and api.consumerKey are both set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if path == "" {
				path = writeFile(t, filepath.Join(t.TempDir(), tt.file), tt.content)
			}
			_, err := Load(LoadOptions{ConfigFile: path, Env: mapEnv(nil)})
			if err == nil {
				t.Fatal("Load succeeded, want error")
			}
			msg := err.Error()
			if !strings.Contains(msg, path) {
				t.Errorf("error %q does not name the file %q", msg, path)
			}
			for _, c := range tt.contains {
				if !strings.Contains(msg, c) {
					t.Errorf("error %q does not contain %q", msg, c)
				}
			}
			assertNoSecrets(t, "error", msg)
			assertNoSecrets(t, "error %+v", fmt.Sprintf("%+v %#v", err, err))
		})
	}
}

// TestLoadConfigFileIgnoresSearchPaths: with --config, no other file is read.
func TestLoadConfigFileIgnoresSearchPaths(t *testing.T) {
	dir := t.TempDir()
	other := writeFile(t, filepath.Join(dir, "other.toml"), "[api]\nsecret = \"from-search\"\n")
	explicit := writeFile(t, filepath.Join(dir, "explicit.toml"), "[api]\ntoken = \"t\"\n")
	cfg, err := Load(LoadOptions{ConfigFile: explicit, SearchPaths: []string{other}, Env: mapEnv(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.API.Secret != "" || cfg.API.Token != "t" {
		t.Errorf("API = %s", describe(cfg.API))
	}
}

// TestPrecedenceMatrix checks, for every field and every combination of sources
// setting it, that flags > env > later file > earlier file, and that a source
// holding an empty (or blank) value never overrides a lower one.
func TestPrecedenceMatrix(t *testing.T) {
	type source int
	const (
		file1 source = iota
		file2
		env
		flags
	)
	names := []string{"file1", "file2", "env", "flags"}
	for _, f := range fields {
		for mask := 0; mask < 16; mask++ {
			for _, explicitEmpty := range []bool{false, true} {
				var label []string
				for s := file1; s <= flags; s++ {
					if mask&(1<<s) != 0 {
						label = append(label, names[s])
					}
				}
				name := fmt.Sprintf("%s/%s/explicit-empty=%v", f.key, strings.Join(label, "+"), explicitEmpty)
				t.Run(name, func(t *testing.T) {
					value := func(s source) string {
						if f.name == "Endpoint" {
							return "https://" + names[s] + ".test"
						}
						return f.key + "-from-" + names[s]
					}
					sets := func(s source) bool { return mask&(1<<s) != 0 }
					// file1: TOML with the canonical key; file2: JSON with the camelCase alias when there is one.
					dir := t.TempDir()
					f1 := filepath.Join(dir, "a", "config.toml")
					f2 := filepath.Join(dir, "b", "config.json")
					key2 := f.key
					if len(f.aliases) > 0 {
						key2 = f.aliases[0]
					}
					switch {
					case sets(file1):
						writeFile(t, f1, fmt.Sprintf("[api]\n%s = %q\n", f.key, value(file1)))
					case explicitEmpty:
						writeFile(t, f1, fmt.Sprintf("[api]\n%s = \"\"\n", f.key))
					}
					switch {
					case sets(file2):
						writeFile(t, f2, fmt.Sprintf(`{"api": {%q: %q}}`, key2, value(file2)))
					case explicitEmpty:
						writeFile(t, f2, fmt.Sprintf(`{"api": {%q: "  "}}`, key2))
					}
					envMap := map[string]string{}
					if sets(env) {
						envMap[f.env] = value(env)
					} else if explicitEmpty {
						envMap[f.env] = " \n"
					}
					var fl APIConfig
					if sets(flags) {
						*f.ptr(&fl) = value(flags)
					} else if explicitEmpty {
						*f.ptr(&fl) = "  "
					}

					cfg, err := Load(LoadOptions{SearchPaths: []string{f1, filepath.Join(dir, "missing.toml"), f2}, Env: mapEnv(envMap), Flags: fl})
					if err != nil {
						t.Fatal(err)
					}
					want := ""
					for s := flags; s >= file1; s-- {
						if sets(s) {
							want = value(s)
							break
						}
					}
					if got := *f.ptr(&cfg.API); got != want {
						t.Errorf("%s = %q, want %q", f.name, got, want)
					}
					// Only this field may be set.
					other := cfg.API
					*f.ptr(&other) = ""
					if other != (APIConfig{}) {
						t.Errorf("other fields set: %s", describe(other))
					}
				})
			}
		}
	}
}

// TestPrecedenceMixed: several fields from several sources at once.
func TestPrecedenceMixed(t *testing.T) {
	dir := t.TempDir()
	f1 := writeFile(t, filepath.Join(dir, "etc", "config.toml"), "[api]\nendpoint = \"https://file1.test\"\ntoken = \"t-file1\"\nsecret = \"s-file1\"\nconsumer-key = \"k-file1\"\nconsumer-secret = \"c-file1\"\n")
	f2 := writeFile(t, filepath.Join(dir, "home", "config.yaml"), "api:\n  token: t-file2\n  consumerKey: k-file2\n  secret: \"\"\n")
	env := mapEnv(map[string]string{EnvToken: "t-env", EnvSecret: "", EnvConsumerSecret: "c-env"})
	cfg, err := Load(LoadOptions{SearchPaths: []string{f1, f2}, Env: env, Flags: APIConfig{Token: "t-flag", Endpoint: "  "}})
	if err != nil {
		t.Fatal(err)
	}
	want := APIConfig{Endpoint: "https://file1.test", Token: "t-flag", Secret: "s-file1", ConsumerKey: "k-file2", ConsumerSecret: "c-env"}
	if cfg.API != want {
		t.Errorf("API = %s, want %s", describe(cfg.API), describe(want))
	}
	wantSources := []string{"file " + f1, "file " + f2, "env", "flags"}
	if !slices.Equal(cfg.Sources, wantSources) {
		t.Errorf("Sources = %q, want %q", cfg.Sources, wantSources)
	}
}

func TestLoadSources(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "config.toml"), "[api]\n")
	tests := []struct {
		name  string
		opts  LoadOptions
		want  []string
		wantA APIConfig
	}{
		{"nothing", LoadOptions{SearchPaths: []string{}, Env: mapEnv(nil)}, nil, APIConfig{}},
		{"blank env and flags are not sources", LoadOptions{SearchPaths: []string{}, Env: mapEnv(map[string]string{EnvToken: " "}), Flags: APIConfig{Secret: "\t"}}, nil, APIConfig{}},
		{"file read even if empty", LoadOptions{SearchPaths: []string{f, filepath.Join(dir, "none.json")}, Env: mapEnv(nil)}, []string{"file " + f}, APIConfig{}},
		{"env only", LoadOptions{SearchPaths: []string{}, Env: mapEnv(map[string]string{EnvBearerToken: "b"})}, []string{"env"}, APIConfig{BearerToken: "b"}},
		{"flags only", LoadOptions{SearchPaths: []string{}, Env: mapEnv(nil), Flags: APIConfig{BearerToken: " b "}}, []string{"flags"}, APIConfig{BearerToken: "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.Sources, tt.want) {
				t.Errorf("Sources = %q, want %q", cfg.Sources, tt.want)
			}
			if cfg.API != tt.wantA {
				t.Errorf("API = %s, want %s", describe(cfg.API), describe(tt.wantA))
			}
		})
	}
}

func TestLoadEnvDefaultsToOSGetenv(t *testing.T) {
	t.Setenv(EnvBearerToken, "from-os-env")
	cfg, err := Load(LoadOptions{SearchPaths: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.API.BearerToken != "from-os-env" {
		t.Errorf("BearerToken = %q", cfg.API.BearerToken)
	}
}

func TestDefaultSearchPaths(t *testing.T) {
	exts := []string{"toml", "yaml", "yml", "json"}
	expand := func(dirs ...string) []string {
		var out []string
		for _, d := range dirs {
			for _, e := range exts {
				if d == "." {
					out = append(out, "./config."+e)
				} else {
					out = append(out, d+"/config."+e)
				}
			}
		}
		return out
	}
	tests := []struct {
		name string
		home string
		want []string
	}{
		{"with HOME", "/home/op", expand("/usr/share/clever-operator", "/etc/clever-operator", "/home/op/.config/clever-operator", "/home/op/.local/share/clever-operator", ".")},
		{"HOME unset", "", expand("/usr/share/clever-operator", "/etc/clever-operator", ".")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.home == "" {
				t.Setenv("HOME", "")
				os.Unsetenv("HOME")
			} else {
				t.Setenv("HOME", tt.home)
			}
			if got := DefaultSearchPaths(); !slices.Equal(got, tt.want) {
				t.Errorf("DefaultSearchPaths() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestLoadDefaultSearchPaths runs Load with the default search path against a
// temporary HOME and working directory.
func TestLoadDefaultSearchPaths(t *testing.T) {
	for _, p := range defaultSearchPaths("") {
		if strings.HasPrefix(p, "/") {
			if _, err := os.Stat(p); err == nil {
				t.Skipf("%s exists on this machine; the default search path is not hermetic", p)
			}
		}
	}
	home := t.TempDir()
	work := t.TempDir()
	t.Chdir(work)
	h1 := writeFile(t, filepath.Join(home, ".config", "clever-operator", "config.toml"), "[api]\ntoken = \"t-config\"\nsecret = \"s-config\"\n")
	h2 := writeFile(t, filepath.Join(home, ".local", "share", "clever-operator", "config.yaml"), "api:\n  token: t-local\n  consumerKey: k-local\n")
	h3 := writeFile(t, filepath.Join(home, ".local", "share", "clever-operator", "config.json"), `{"api": {"consumer-secret": "c-local-json"}}`)
	writeFile(t, filepath.Join(work, "config.yml"), "api:\n  consumer-key: k-cwd\n")
	if err := os.Mkdir(filepath.Join(work, "config.toml"), 0o755); err != nil { // a directory is skipped
		t.Fatal(err)
	}

	t.Run("HOME set", func(t *testing.T) {
		cfg, err := Load(LoadOptions{Env: mapEnv(map[string]string{"HOME": home})})
		if err != nil {
			t.Fatal(err)
		}
		want := APIConfig{Token: "t-local", Secret: "s-config", ConsumerKey: "k-cwd", ConsumerSecret: "c-local-json"}
		if cfg.API != want {
			t.Errorf("API = %s, want %s", describe(cfg.API), describe(want))
		}
		wantSources := []string{"file " + h1, "file " + h2, "file " + h3, "file ./config.yml"}
		if !slices.Equal(cfg.Sources, wantSources) {
			t.Errorf("Sources = %q, want %q", cfg.Sources, wantSources)
		}
		if cfg.API.Mode() != ModeOAuth1 || cfg.API.Validate() != nil {
			t.Errorf("Mode = %q, Validate = %v", cfg.API.Mode(), cfg.API.Validate())
		}
	})
	t.Run("HOME unset", func(t *testing.T) {
		cfg, err := Load(LoadOptions{Env: mapEnv(nil)})
		if err != nil {
			t.Fatalf("Load without HOME: %v", err)
		}
		want := APIConfig{ConsumerKey: "k-cwd"}
		if cfg.API != want {
			t.Errorf("API = %s, want %s", describe(cfg.API), describe(want))
		}
	})
	t.Run("bad file in search path is an error", func(t *testing.T) {
		bad := writeFile(t, filepath.Join(work, "config.json"), "{\"api\": ")
		defer os.Remove(bad)
		_, err := Load(LoadOptions{Env: mapEnv(nil)})
		if err == nil || !strings.Contains(err.Error(), "./config.json") || !strings.Contains(err.Error(), "invalid JSON") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestLoadSearchPathErrors(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permission bits are not enforced")
	}
	dir := t.TempDir()
	p := writeFile(t, filepath.Join(dir, "config.toml"), "[api]\ntoken = \"t\"\n")
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	_, err := Load(LoadOptions{SearchPaths: []string{p}, Env: mapEnv(nil)})
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("unreadable file: err = %v, want an error naming it", err)
	}
}
