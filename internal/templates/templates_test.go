package templates

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

var tmplData = map[string]string{
	"HOST": "db.example", "PORT": "5432", "USER": "u-admin",
	"PASSWORD": "pw-Sup3r-S3cret-value", "URI": "postgresql://u-admin:pw-Sup3r-S3cret-value@db.example:5432/db",
}

// TestRenderTemplatesAllowsOrdinaryTemplates: what users write keeps working.
func TestRenderTemplatesAllowsOrdinaryTemplates(t *testing.T) {
	cases := map[string]struct{ tmpl, want string }{
		"url":          {"postgresql://{{ .USER }}:{{ .PASSWORD | urlquery }}@{{ .HOST }}:{{ .PORT }}/db", "postgresql://u-admin:pw-Sup3r-S3cret-value@db.example:5432/db"},
		"sprig":        {`{{ .HOST | upper | replace "." "_" }}`, "DB_EXAMPLE"},
		"printf":       {`{{ printf "%s:%s" .HOST .PORT }}`, "db.example:5432"},
		"range":        {`{{ range $k, $v := . }}{{ if eq $k "PORT" }}{{ $v }}{{ end }}{{ end }}`, "5432"},
		"range int":    {`{{ range $i := until 3 }}{{ $i }}{{ end }}`, "012"},
		"range 3":      {`{{ range 3 }}x{{ end }}`, "xxx"},
		"else":         {`{{ range $x := list }}{{ $x }}{{ else }}none{{ end }}`, "none"},
		"b64":          {`{{ .USER | b64enc }}`, "dS1hZG1pbg=="},
		"default":      {`{{ .NOPE | default "x" }}`, ""}, // missing key: refused below, not here
		"json":         {`{{ dict "h" .HOST | toJson }}`, `{"h":"db.example"}`},
		"repeat small": {`{{ repeat 3 "ab" }}`, "ababab"},
		"indent":       {`{{ indent 2 "a\nb" }}`, "  a\n  b"},
		"regex":        {`{{ regexReplaceAll "[^a-z]" .HOST "-" }}`, "db-example"},
		"break":        {`{{ range $i := until 10 }}{{ if eq $i 2 }}{{ break }}{{ end }}{{ $i }}{{ end }}`, "01"},
		"seq":          {`{{ seq 1 3 }}`, "1 2 3"},
	}
	for name, c := range cases {
		if name == "default" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			out, err := Render(map[string]string{"K": c.tmpl}, tmplData)
			if err != nil {
				t.Fatal(err)
			}
			if out["K"] != c.want {
				t.Fatalf("got %q, want %q", out["K"], c.want)
			}
		})
	}
}

// TestRenderTemplatesRefusesHostileTemplates: the templates a tenant could write to read the
// operator's environment or the cluster, render other templates, or exhaust the operator's
// memory or CPU are refused with a Error naming the key and the cause, quickly, with
// bounded memory, and without a credential value in the message.
func TestRenderTemplatesRefusesHostileTemplates(t *testing.T) {
	t.Setenv("CLEVER_OPERATOR_TEST_ENV_SECRET", "operator-env-S3cret")
	big := `{{ $s := "x" }}`
	cases := []struct{ name, tmpl, want string }{
		{"lookup", `{{ (lookup "v1" "Secret" "other" "creds").data }}`, `uses "lookup": templates have no access to the cluster`},
		{"env", `{{ env "CLEVER_OPERATOR_TEST_ENV_SECRET" }}`, `uses "env": templates may not read the operator's environment`},
		{"expandenv", `{{ expandenv "$CLEVER_OPERATOR_TEST_ENV_SECRET" }}`, `uses "expandenv"`},
		{"env in a pipeline", `{{ "CLEVER_OPERATOR_TEST_ENV_SECRET" | env | b64enc }}`, `uses "env"`},
		{"include", `{{ include "clever-addon.labels" . }}`, `uses "include"`},
		{"tpl", `{{ tpl "{{ .HOST }}" . }}`, `uses "tpl"`},
		{"template of the chart", `{{ template "clever-addon.annotations" . }}`, `uses template "clever-addon.annotations"`},
		{"define", `{{ define "x" }}a{{ end }}b`, "define and block are not allowed"},
		{"self recursion", `{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}`, "define and block are not allowed"},
		{"block", `{{ block "b" . }}{{ .HOST }}{{ end }}`, "define and block are not allowed"},
		{"recursion through the key", `{{ template "K" . }}`, `uses template "K"`},
		{"getHostByName", `{{ getHostByName "example.com" }}`, `uses "getHostByName"`},
		{"genPrivateKey", `{{ genPrivateKey "rsa" }}`, `uses "genPrivateKey"`},
		{"reserved step", `{{ cleverOperatorStep }}`, `uses "cleverOperatorStep"`},
		{"huge repeat", `{{ repeat 100000000 "x" }}`, "repeat would produce more than 1048576 bytes"},
		{"huge repeat of a value", `{{ repeat 60000 .URI }}`, "repeat would produce more than"},
		{"huge until", `{{ until 1000000000 }}`, "until would produce more than"},
		{"huge untilStep", `{{ untilStep 0 1000000000 1 }}`, "untilStep would produce more than"},
		{"huge seq", `{{ seq 1 1000000000 }}`, "seq would produce more than"},
		{"huge indent", `{{ indent 1000000000 "x" }}`, "indent would produce more than"},
		{"huge rand", `{{ randAlphaNum 1000000000 }}`, "randAlphaNum would produce more than"},
		{"huge printf width", `{{ printf "%999999d%999999d%999999d" 1 2 3 }}`, "printf would produce more than"},
		{"replace explosion", `{{ $s := repeat 1100 "x" }}{{ replace "" $s $s }}`, "replace would produce more than"},
		{"regexReplaceAll explosion", `{{ $s := repeat 2000 "x" }}{{ regexReplaceAll "" $s $s }}`, "regexReplaceAll would produce more than"},
		{"doubling string", big + `{{ range until 40 }}{{ $s = cat $s $s }}{{ end }}{{ $s }}`, "produced more than 1048576 bytes"},
		{"doubling print", big + `{{ range until 40 }}{{ $s = print $s $s }}{{ end }}`, "produced more than 1048576 bytes"},
		{"doubling list", `{{ $l := list 1 }}{{ range until 40 }}{{ $l = concat $l $l }}{{ end }}`, "concat produced more than"},
		{"output over 1 MiB", `{{ range until 100 }}{{ repeat 60000 "x" }}{{ end }}`, "renders more than 1048576 bytes in all"},
		{"nested range", `{{ range until 60000 }}{{ range until 60000 }}{{ end }}{{ end }}`, "takes too much work to render"},
		{"range over a huge int", `{{ range 1000000000000 }}{{ end }}`, "takes too much work to render"},
		{"nested range over data", `{{ $l := until 65536 }}{{ range $l }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}{{ end }}`, "takes too much work to render"},
		{"quadratic append", `{{ $s := "" }}{{ range 100000 }}{{ $s = print $s "xxxxxxxxxxxxxxxx" }}{{ end }}`, "takes too much work"},
		{"uniq of a large list", `{{ $l := until 60000 }}{{ range until 20 }}{{ $_ := uniq $l }}{{ end }}`, "takes too much work"},
		{"cyclic dict", `{{ $d := dict }}{{ $_ := set $d "self" $d }}{{ $d }}`, "nested more than 64 levels"},
		{"bcrypt loop", `{{ range until 1000 }}{{ bcrypt "x" }}{{ end }}`, "takes too much work"},
		{"long regex", `{{ regexMatch (repeat 5000 "a?") .HOST }}`, "the regular expression given to regexMatch is longer than 4096 bytes"},
		{"fail quoting a value", `{{ fail .PASSWORD }}`, "cannot be rendered"},
		{"missing key", `{{ .NOPE }}`, "the add-on's keys are: HOST, PASSWORD, PORT, URI, USER"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			out, err := Render(map[string]string{"K": c.tmpl, "OK": "{{ .HOST }}"}, tmplData)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("want a Error, got %v (output %d bytes)", err, len(out["K"]))
			}
			msg := err.Error()
			// Work and time are two bounds on the same loop: on a loaded machine (the tests of
			// other packages running beside) the time bound can come first; either refusal is
			// the one the user must get.
			said := strings.Contains(msg, c.want) ||
				strings.HasPrefix(c.want, "takes too much work") && strings.Contains(msg, fmt.Sprintf("takes more than %s to render", MaxTime))
			if !strings.HasPrefix(msg, "spec.secret.templates[K] ") || !said {
				t.Fatalf("message %q does not say %q", msg, c.want)
			}
			for _, v := range append(values(tmplData), "operator-env-S3cret") {
				if strings.Contains(msg, v) {
					t.Fatalf("message quotes a secret: %s", msg)
				}
			}
			if took > MaxTime+time.Second {
				t.Fatalf("took %s", took)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
				t.Fatalf("allocated %d MiB", alloc>>20)
			}
			t.Logf("%s in %s, %d KiB allocated", msg, took, (after.TotalAlloc-before.TotalAlloc)>>10)
		})
	}
}

// TestRenderTemplatesBudgetIsShared: the limits hold for all the templates of a resource
// together, not per key (64 keys do not get 64 budgets).
func TestRenderTemplatesBudgetIsShared(t *testing.T) {
	tmpls := map[string]string{}
	for _, k := range []string{"A", "B", "C", "D"} {
		tmpls[k] = `{{ range until 5 }}{{ repeat 60000 "x" }}{{ end }}`
	}
	_, err := Render(tmpls, tmplData)
	if err == nil || !strings.Contains(err.Error(), "renders more than 1048576 bytes in all") {
		t.Fatalf("got %v", err)
	}
	tmpls = map[string]string{}
	for _, k := range []string{"A", "B", "C", "D", "E", "F"} {
		tmpls[k] = `{{ range until 60000 }}{{ $x := 1 }}{{ end }}`
	}
	tmpls["A"] = `{{ range 500000 }}{{ end }}`
	// Each key alone is far within both bounds; together they exceed the work budget. On a
	// loaded machine the time bound, shared the same way, can come first (as above).
	_, err = Render(tmpls, tmplData)
	if err == nil || !strings.Contains(err.Error(), "too much work") && !strings.Contains(err.Error(), fmt.Sprintf("takes more than %s to render", MaxTime)) {
		t.Fatalf("got %v", err)
	}
}

// TestTemplateFuncsHaveNoEnvironmentOrNetwork: the function map itself.
func TestTemplateFuncsHaveNoEnvironmentOrNetwork(t *testing.T) {
	f := Funcs()
	for _, name := range []string{"env", "expandenv", "getHostByName", "lookup", "include", "tpl", "genPrivateKey", "derivePassword"} {
		if _, ok := f[name]; ok {
			t.Errorf("Funcs offers %s", name)
		}
	}
}

func values(m map[string]string) []string {
	out := []string{}
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
