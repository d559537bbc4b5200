package templates

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// FuzzRenderTemplates: whatever spec.secret.templates a tenant writes, over whatever the
// add-on's values are, Render never panics, returns within its time limit, renders
// at most MaxOutput bytes, and its error messages never carry a credential value.
// The seeds (below and testdata/fuzz/FuzzRenderTemplates/) run with `go test`; `make fuzz`
// explores.
func FuzzRenderTemplates(f *testing.F) {
	seeds := []string{
		"postgresql://{{ .USER }}:{{ .PASSWORD }}@{{ .HOST }}:5432/db",
		"{{ .PASSWORD | b64enc }}",
		"{{ fail .PASSWORD }}",
		"{{ fail (printf \"%s!\" .PASSWORD) }}",
		"{{ .NOPE }}",
		"{{ index .PASSWORD 99 }}",
		"{{ toDate \"2006\" .PASSWORD }}",
		"{{ mustRegexMatch .PASSWORD .HOST }}",
		"{{ .PASSWORD | atoi | add 1 }}",
		"{{ range $k, $v := . }}{{ $k }}={{ $v }};{{ end }}",
		"{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}",
		"{{ range 1000000000 }}{{ end }}",
		"{{ repeat 100000000 .PASSWORD }}",
		`{{ $s := .PASSWORD }}{{ range until 64 }}{{ $s = cat $s $s }}{{ end }}{{ $s }}`,
		`{{ $d := dict }}{{ $_ := set $d "d" $d }}{{ toJson $d }}`,
		`{{ define "r" }}{{ template "r" }}{{ end }}{{ template "r" }}`,
		`{{ env "HOME" }}{{ expandenv "$HOME" }}`,
		`{{ lookup "v1" "Secret" "kube-system" "x" }}`,
		`{{ include "x" . }}{{ tpl "{{ .HOST }}" . }}`,
		`{{ printf "%*d" 1000000000 1 }}`,
		`{{ indent 1000000000 .HOST }}`,
		`{{ replace "" .PASSWORD (repeat 1000 .PASSWORD) }}`,
		`{{ regexReplaceAll "" (repeat 1000 "x") (repeat 1000 "y") }}`,
		`{{ .PASSWORD | fromJson }}`,
		`{{ fromJson "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]" }}`,
		`{{ semver .PASSWORD }}`,
		`{{ .PASSWORD | urlParse }}`,
		`{{ b64dec .PASSWORD }}`,
		`{{ slice .PASSWORD 3 1 }}`,
		`{{ .HOST.x }}`,
		`{{ cleverOperatorStep }}`,
		`{{`,
		`{{ "x" | `,
	}
	for _, s := range seeds {
		f.Add(s, "s3cr3t-password", "db.example")
	}
	f.Add("{{ fail .PASSWORD }}", "red", "act")
	f.Add("{{ fail .PASSWORD }}", "[redacted]", "")
	f.Add("{{ .HOST | fail }}", "spec.secret", "templates")
	f.Fuzz(func(t *testing.T, tmpl, password, host string) {
		// The values carry a fixed high-entropy part, so that they are secrets the template
		// source cannot contain by chance, while the fuzzer still shapes them.
		data := map[string]string{
			"PASSWORD": password + "-Pw7Zq1x",
			"HOST":     host,
			"USER":     "fz-user-K8d2m",
		}
		watchdog := time.AfterFunc(MaxTime+10*time.Second, func() {
			panic(fmt.Sprintf("Render did not return within %s", MaxTime+10*time.Second))
		})
		defer watchdog.Stop()
		start := time.Now()
		out, err := Render(map[string]string{"K": tmpl, "URL": "{{ .HOST }}"}, data)
		if d := time.Since(start); d > MaxTime+3*time.Second {
			t.Fatalf("took %s", d)
		}
		if err == nil {
			n := 0
			for _, v := range out {
				n += len(v)
			}
			if n > MaxOutput {
				t.Fatalf("rendered %d bytes", n)
			}
			return
		}
		msg := err.Error()
		for _, v := range []string{data["PASSWORD"], data["USER"]} {
			if strings.Contains(msg, v) {
				t.Fatalf("message carries a credential: %q", msg)
			}
		}
		if !strings.HasPrefix(msg, "spec.secret.templates[") {
			t.Fatalf("message does not name the key: %q", msg)
		}
	})
}
