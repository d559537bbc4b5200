package config

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// wrap76 mimics the output of `base64` (lines of 76 characters, trailing newline).
func wrap76(s string) string {
	var b strings.Builder
	for len(s) > 76 {
		b.WriteString(s[:76])
		b.WriteString("\n")
		s = s[76:]
	}
	b.WriteString(s)
	b.WriteString("\n")
	return b.String()
}

func TestParseDocument(t *testing.T) {
	// The Rust operator's override: TOML with the four OAuth1 keys.
	rustTOML := "[api]\ntoken = \"tok-7f3a9c1e\"\nsecret = \"sec-b2d4e6f8\"\nconsumer-key = \"ck-0a1b2c3d\"\nconsumer-secret = \"cs-9e8d7c6b\"\n"
	rustWant := APIConfig{Token: secToken, Secret: secSecret, ConsumerKey: secConsumerKey, ConsumerSecret: secConsumerSecret}
	b64 := base64.StdEncoding.EncodeToString

	tests := []struct {
		name string
		doc  string
		want APIConfig
	}{
		{"plain toml", rustTOML, rustWant},
		{"plain toml camelCase", tomlCamel, wantFull()},
		{"plain yaml", yamlHyphen, wantFull()},
		{"plain yaml camelCase", yamlCamel, wantFull()},
		{"plain json", jsonHyphen, wantFull()},
		{"plain json camelCase", jsonCamel, wantFull()},
		{"json with leading whitespace", "\n\t  " + jsonHyphen + "\n", wantFull()},
		{"flow yaml", "{api: {token: t, bearerToken: b}}", APIConfig{Token: "t", BearerToken: "b"}},
		{"yaml document marker", "---\napi:\n  token: t\n", APIConfig{Token: "t"}},
		{"yaml values that look like toml", "api:\n  token: \"[api]\"\n  secret: \"x = y\"\n", APIConfig{Token: "[api]", Secret: "x = y"}},
		{"yaml block scalar with toml inside", "api:\n  token: |\n    [api]\n    token = \"t\"\n", APIConfig{Token: "[api]\ntoken = \"t\""}},
		{"toml values that look like yaml/json", "[api]\ntoken = \"a: b\"\nsecret = \"{x}\"\n", APIConfig{Token: "a: b", Secret: "{x}"}},
		{"toml comment first", "# generated\n[api] # creds\nbearer-token = 'b'\n", APIConfig{BearerToken: "b"}},
		{"toml empty api table", "[api]\n", APIConfig{}},
		{"base64 of toml (Rust operator form)", b64([]byte(rustTOML)), rustWant},
		{"base64 of toml with trailing newline", b64([]byte(rustTOML)) + "\n", rustWant},
		{"base64 of toml with CRLF", b64([]byte(rustTOML)) + "\r\n", rustWant},
		{"base64 wrapped at 76 columns", wrap76(b64([]byte(tomlHyphen))), wantFull()},
		{"base64 without padding", base64.RawStdEncoding.EncodeToString([]byte("[api]\ntoken = \"t\"\n")), APIConfig{Token: "t"}},
		{"base64 url alphabet", base64.URLEncoding.EncodeToString([]byte("[api]\ntoken = \"t??>\"\n")), APIConfig{Token: "t??>"}},
		{"base64 of yaml", b64([]byte(yamlCamel)), wantFull()},
		{"base64 of json", b64([]byte(jsonCamel)), wantFull()},
		{"utf-8 BOM", "\uFEFF" + rustTOML, rustWant},
		{"base64 of BOM toml", b64([]byte("\uFEFF" + rustTOML)), rustWant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDocument([]byte(tt.doc))
			if err != nil {
				t.Fatalf("ParseDocument: %v", err)
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", describe(got), describe(tt.want))
			}
		})
	}
}

func TestParseDocumentErrors(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name     string
		doc      string
		contains string
	}{
		{"empty", "", "no [api] table"},
		{"whitespace", " \n\t\n", "no [api] table"},
		{"garbage words", "tok-7f3a9c1e sec-b2d4e6f8 bearer-5a5b5c5d", "not a TOML, YAML or JSON document"},
		{"garbage single base64-ish word", "tok7f3a9c1e", "config document"},
		{"binary", "\x00\x01\x02tok-7f3a9c1e\xff\xfe", "config document"},
		{"no api table toml", "[operator]\nlisten = \"tok-7f3a9c1e\"\n", "no [api] table"},
		{"no api table yaml", "token: tok-7f3a9c1e\nsecret: sec-b2d4e6f8\n", "no [api] table"},
		{"no api table json", `{"token": "tok-7f3a9c1e"}`, "no [api] table"},
		{"api not a table", "api = \"tok-7f3a9c1e\"\n", "api must be a table"},
		{"bad toml", "[api]\ntoken = \"tok-7f3a9c1e\"\nsecret = sec-b2d4e6f8\n", "invalid TOML at line 3"},
		{"secret typed as a toml key", "[api]\ntok-7f3a9c1e = 1 2\n", "invalid TOML at line 2"},
		{"secret typed as a toml table", "[api]\ntoken = \"x\"\n[api.tok-7f3a9c1e]\nx = = 1\n", "invalid TOML at line 4"},
		{"bad toml unterminated", "[api]\ntoken = \"tok-7f3a9c1e\n", "invalid TOML at line 2"},
		{"bad yaml", "api:\n  token: tok-7f3a9c1e\n secret: sec-b2d4e6f8\n", "invalid YAML at line"},
		{"bad json", "{\"api\": {\"token\": \"tok-7f3a9c1e\",\n\"secret\" \"sec-b2d4e6f8\"}}", "invalid JSON at line 2"},
		{"json array", `["tok-7f3a9c1e"]`, "config document"},
		{"non-string value", "{\"api\": {\"token\": 42}}", "api.token must be a string"},
		{"conflicting spellings", "[api]\nbearer-token = \"bearer-5a5b5c5d\"\nbearerToken = \"tok-7f3a9c1e\"\n", "are both set"},
		{"base64 of bad toml", b64("[api]\ntoken = \"tok-7f3a9c1e\"\nsecret = sec-b2d4e6f8\n"), "config document (base64-decoded): invalid TOML at line 3"},
		{"base64 of text without api", b64("token = \"tok-7f3a9c1e\"\n"), "(base64-decoded) has no [api] table"},
		{"base64 of garbage text", b64("tok-7f3a9c1e sec-b2d4e6f8"), "base64-decoded"},
		{"double base64", b64(b64("[api]\ntoken = \"tok-7f3a9c1e\"\n")), "base64-decoded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDocument([]byte(tt.doc))
			if err == nil {
				t.Fatalf("ParseDocument succeeded (%s), want error", describe(got))
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.contains) {
				t.Errorf("error %q does not contain %q", msg, tt.contains)
			}
			assertNoSecrets(t, "error", fmt.Sprintf("%v %+v %#v", err, err, err))
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

// TestDecodeAnyFormat checks which parser the sniffer picks.
func TestDecodeAnyFormat(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want format
	}{
		{"toml", tomlHyphen, formatTOML},
		{"toml dotted", "api.token = \"t\"", formatTOML},
		{"yaml", yamlHyphen, formatYAML},
		{"yaml with toml-like value", "api:\n  token: \"a = b\"\n", formatYAML},
		{"json", jsonHyphen, formatJSON},
		{"flow yaml", "{api: {token: t}}", formatYAML},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got, err := decodeAny([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("format = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSniffAgreesWithExtension: for every sample, sniffing yields the same
// configuration as the parser chosen by the extension.
func TestSniffAgreesWithExtension(t *testing.T) {
	samples := []struct {
		f   format
		doc string
	}{
		{formatTOML, tomlHyphen}, {formatTOML, tomlCamel},
		{formatYAML, yamlHyphen}, {formatYAML, yamlCamel},
		{formatJSON, jsonHyphen}, {formatJSON, jsonCamel},
		{formatYAML, "api:\n  token: \"[api]\\ntoken = 'x'\"\n"},
		{formatTOML, "[api]\ntoken = \"api:\\n  token: y\"\n"},
	}
	for i, s := range samples {
		t.Run(fmt.Sprintf("%d-%v", i, s.f), func(t *testing.T) {
			byExt, err := decode([]byte(s.doc), s.f)
			if err != nil {
				t.Fatal(err)
			}
			sniffed, err := decode([]byte(s.doc), formatUnknown)
			if err != nil {
				t.Fatal(err)
			}
			a, _, err1 := extractAPI(byExt)
			b, _, err2 := extractAPI(sniffed)
			if err1 != nil || err2 != nil || a != b {
				t.Errorf("by extension %s (%v), sniffed %s (%v)", describe(a), err1, describe(b), err2)
			}
		})
	}
}
