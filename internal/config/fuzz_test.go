package config

import (
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Fuzz tests of what a namespace controls: the override Secret's `config` document and
// `clever-tools.json`, and how ApplyOverride combines them with the operator's credentials.
// Properties: never panic; bounded time; no error message carries any secret of the input;
// the operator's credentials never go to an endpoint the namespace chose.
//
// The seeds (f.Add and testdata/fuzz/<Target>/) run as ordinary tests with `go test`;
// `make fuzz` explores for FUZZTIME per target.

// marker stands for a secret: every "@@" of a fuzzed input becomes it, so that the fuzzer
// puts secrets wherever it likes (values, keys, broken syntax) and the test knows them.
const marker = "fz-S3cr3t-Q7x1-d40b9c"

func withSecrets(s string) string { return strings.ReplaceAll(s, "@@", marker) }

// leaks reports whether msg carries the secret marker or its base64 forms.
func leaks(msg string) bool {
	if strings.Contains(msg, marker) || strings.Contains(msg, "S3cr3t-Q7x1") {
		return true
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding} {
		if strings.Contains(msg, strings.TrimRight(enc.EncodeToString([]byte(marker)), "=")[:16]) {
			return true
		}
	}
	return false
}

const fuzzMaxTime = 5 * time.Second

// timed runs f and fails when it takes longer than fuzzMaxTime; a watchdog panics (a crash
// the fuzzer records with its input) when f does not return at all.
func timed(t *testing.T, what string, f func()) {
	t.Helper()
	watchdog := time.AfterFunc(2*fuzzMaxTime, func() { panic(fmt.Sprintf("%s did not return within %s", what, 2*fuzzMaxTime)) })
	defer watchdog.Stop()
	start := time.Now()
	f()
	if d := time.Since(start); d > fuzzMaxTime {
		t.Fatalf("%s took %s", what, d)
	}
}

var documentSeeds = []string{
	"[api]\ntoken = \"@@\"\nsecret = \"@@\"\n",
	"[api]\nbearer-token = \"@@\"\nendpoint = \"https://api.example.com\"\n",
	"[api]\ntoken = \"@@\nsecret = \"@@\"\n", // unterminated string
	"[api]\n@@ = \"x\"\n",
	"[api\ntoken = \"@@\"\n",
	"api:\n  token: @@\n  secret: @@\n",
	"api:\n  token: @@\n secret: [@@\n",
	"api:\n  token: &a [*a, @@]\n",
	"{\"api\": {\"token\": \"@@\", \"secret\": \"@@\"}}",
	"{\"api\": {\"token\": \"@@\", \"secret\": @@}}",
	"{\"api\": [\"@@\"]}",
	"@@",
	"[api]\ntoken-expiration = \"@@\"\ntoken = \"t\"\n",
	"[api]\nendpoint = \"https://u:@@@example.com/\"\ntoken = \"@@\"\nsecret = \"x\"\n",
	"[api]\nconsumer-key = 1\nconsumerSecret = \"@@\"\n",
	"W2FwaV0KdG9rZW4gPSAiQEAiCg==", // base64 of a TOML document
	"\xef\xbb\xbf[api]\ntoken = \"@@\"\n",
	"a: &a [\"@@\",\"@@\"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n",
	"[api]\ntoken = '''@@\n",
	"[[api]]\ntoken = \"@@\"\n",
	"[api.token]\n@@ = 1\n",
}

func FuzzParseDocument(f *testing.F) {
	for _, s := range documentSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		doc = withSecrets(doc)
		var err error
		timed(t, "ParseDocument", func() { _, err = ParseDocument([]byte(doc)) })
		if err != nil && leaks(err.Error()) {
			t.Fatalf("error carries a secret: %s", err)
		}
		// The Rust operator's base64 form of the same document.
		timed(t, "ParseDocument(base64)", func() {
			_, err = ParseDocument([]byte(base64.StdEncoding.EncodeToString([]byte(doc))))
		})
		if err != nil && leaks(err.Error()) {
			t.Fatalf("error (base64 document) carries a secret: %s", err)
		}
	})
}

var cleverToolsSeeds = []string{
	`{"token": "@@", "secret": "@@"}`,
	`{"token": "@@", "secret": "@@", "expirationDate": "@@"}`,
	`{"version": 1, "profiles": [{"token": "@@", "secret": "@@", "overrides": {"API_HOST": "https://@@.example.com", "OAUTH_CONSUMER_KEY": "@@", "OAUTH_CONSUMER_SECRET": "@@"}}]}`,
	`{"version": 1, "profiles": []}`,
	`{"version": 1, "profiles": [{"token": "@@"}]}`,
	`{"token": "@@", "secret": @@}`,
	`{"token": ["@@"]}`,
	`@@`,
	`{"version": "@@"}`,
	"{\"token\": \"@@\"\n",
}

func FuzzParseCleverTools(f *testing.F) {
	for _, s := range cleverToolsSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, file string) {
		file = withSecrets(file)
		var err error
		timed(t, "ParseCleverTools", func() { _, err = ParseCleverTools([]byte(file)) })
		if err != nil && leaks(err.Error()) {
			t.Fatalf("error carries a secret: %s", err)
		}
	})
}

func FuzzParseOverrideSecret(f *testing.F) {
	f.Add(documentSeeds[0], cleverToolsSeeds[0], true, true)
	f.Add(documentSeeds[1], "", true, false)
	f.Add("", cleverToolsSeeds[2], false, true)
	f.Add(documentSeeds[2], cleverToolsSeeds[5], true, true)
	f.Add("", "", false, false)
	f.Fuzz(func(t *testing.T, doc, ct string, hasDoc, hasCT bool) {
		data := map[string][]byte{}
		if hasDoc {
			data["config"] = []byte(withSecrets(doc))
		}
		if hasCT {
			data[CleverToolsFileName] = []byte(withSecrets(ct))
		}
		var err error
		timed(t, "ParseOverrideSecret", func() { _, err = ParseOverrideSecret(data, "config") })
		if err != nil && leaks(err.Error()) {
			t.Fatalf("error carries a secret: %s", err)
		}
	})
}

// The operator's credentials in FuzzApplyOverride: distinct values, none "@@"-made.
var fuzzBase = APIConfig{Token: "base-token-9f8e7d", Secret: "base-secret-6c5b4a", ConsumerKey: "base-ck-3b2a19",
	ConsumerSecret: "base-cs-0f1e2d", BearerToken: "base-bearer-8a7b6c"}

func FuzzApplyOverride(f *testing.F) {
	f.Add("", "", "", "", "", "", "", "", "", false)
	f.Add("", "", "https://evil.example.com", "@@", "", "", "", "", "", false)
	f.Add("", "", "https://evil.example.com", "@@", "@@", "", "", "", "", false)
	f.Add("", "", "https://evil.example.com", "", "", "", "", "@@", "", false)
	f.Add("https://api.example.com", "", "HTTPS://API.EXAMPLE.COM/", "@@", "", "", "", "", "", false)
	f.Add("", "", "https://api.clever-cloud.com", "@@", "", "", "", "", "", true)
	f.Add("", "", "", "", "", "", "", "", "https://evil-bridge.example.com", false)
	f.Add("", "https://bridge.example.com", "", "", "", "", "", "@@", "https://bridge.example.com/", false)
	f.Add("https://api.example.com", "", "https://api.example.com:443", "@@", "@@", "@@", "@@", "", "", true)
	f.Fuzz(func(t *testing.T, baseEndpoint, baseBridge, endpoint, token, secret, ck, cs, bearer, bridge string, baseBearerOnly bool) {
		base := fuzzBase
		base.Endpoint, base.BridgeEndpoint = baseEndpoint, baseBridge
		if baseBearerOnly {
			base = APIConfig{Endpoint: baseEndpoint, BridgeEndpoint: baseBridge, BearerToken: fuzzBase.BearerToken}
		}
		over := APIConfig{Endpoint: withSecrets(endpoint), Token: withSecrets(token), Secret: withSecrets(secret),
			ConsumerKey: withSecrets(ck), ConsumerSecret: withSecrets(cs), BearerToken: withSecrets(bearer), BridgeEndpoint: withSecrets(bridge)}
		var res APIConfig
		var err error
		timed(t, "ApplyOverride", func() { res, err = ApplyOverride(base, over) })
		if err != nil {
			for _, s := range []string{fuzzBase.Token, fuzzBase.Secret, fuzzBase.ConsumerSecret, fuzzBase.BearerToken} {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("error carries the operator's secret: %s", err)
				}
			}
			if leaks(err.Error()) {
				t.Fatalf("error carries the override's secret: %s", err)
			}
			return
		}
		// Where the result sends credentials, against where the operator's go.
		foreignAPI := !sameEndpoint(orDefault(res.Endpoint, DefaultEndpoint), orDefault(base.normalized().Endpoint, DefaultEndpoint))
		foreignBridge := !sameEndpoint(res.bridge(), base.normalized().bridge())
		if !foreignAPI && !foreignBridge {
			return
		}
		overVals := strings.Join([]string{over.Token, over.Secret, over.ConsumerKey, over.ConsumerSecret, over.BearerToken}, "\x00")
		for name, s := range map[string]string{"token": fuzzBase.Token, "secret": fuzzBase.Secret, "consumer secret": fuzzBase.ConsumerSecret, "bearer token": fuzzBase.BearerToken} {
			for _, v := range []string{res.Token, res.Secret, res.ConsumerKey, res.ConsumerSecret, res.BearerToken} {
				if v != "" && strings.Contains(v, s) && !strings.Contains(overVals, s) {
					t.Fatalf("the operator's %s goes to %q / bridge %q chosen by the namespace (base endpoint %q, bridge %q)", name, res.Endpoint, res.bridge(), base.Endpoint, base.BridgeEndpoint)
				}
			}
		}
	})
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// TestFuzzTargetsRunInCI: every fuzz target of the repository is in the Makefile's
// FUZZ_TARGETS (which `make fuzz`, and so .ci/run, explores).
func TestFuzzTargetsRunInCI(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)
	n := 0
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || d.Name() == "vendor" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			n++
			pkg := "./" + filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, "../../")))
			if !strings.Contains(string(mk), pkg+":"+m[1]) {
				t.Errorf("%s:%s is not in the Makefile's FUZZ_TARGETS", pkg, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Fatalf("found only %d fuzz targets", n)
	}
}
