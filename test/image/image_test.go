// Package image checks the Dockerfile without a Docker engine: every COPY source exists, the
// build stage copies every package the binary needs, and the runtime paths match what main.go
// and the Deployment expect.
package image

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const module = "github.com/clever-operator/clever-operator"

type instruction struct {
	cmd  string
	args []string
	line int
}

func parse(t *testing.T) []instruction {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cont strings.Builder
	n, start := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if cont.Len() == 0 {
			start = n
		}
		if strings.HasSuffix(line, "\\") {
			cont.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cont.WriteString(line)
		fields := strings.Fields(cont.String())
		cont.Reset()
		out = append(out, instruction{cmd: strings.ToUpper(fields[0]), args: fields[1:], line: start})
	}
	return out
}

func stages(ins []instruction) [][]instruction {
	var st [][]instruction
	for _, i := range ins {
		if i.cmd == "FROM" {
			st = append(st, nil)
		}
		if len(st) > 0 {
			st[len(st)-1] = append(st[len(st)-1], i)
		}
	}
	return st
}

func TestCopySourcesExist(t *testing.T) {
	for _, i := range parse(t) {
		if i.cmd != "COPY" {
			continue
		}
		var srcs []string
		from := false
		for _, a := range i.args {
			if strings.HasPrefix(a, "--from") {
				from = true
			}
			if !strings.HasPrefix(a, "--") {
				srcs = append(srcs, a)
			}
		}
		if from {
			continue
		}
		for _, s := range srcs[:len(srcs)-1] {
			if _, err := os.Stat(filepath.Join("..", "..", s)); err != nil {
				t.Errorf("Dockerfile line %d: COPY source %s does not exist", i.line, s)
			}
		}
	}
}

func TestPinnedBaseImages(t *testing.T) {
	var args = map[string]string{}
	for _, i := range parse(t) {
		if i.cmd == "ARG" && strings.Contains(i.args[0], "=") {
			kv := strings.SplitN(i.args[0], "=", 2)
			args[kv[0]] = kv[1]
		}
	}
	if !regexp.MustCompile(`^golang:\d+\.\d+\.\d+`).MatchString(args["GO_IMAGE"]) {
		t.Errorf("builder image %q is not an exact Go release", args["GO_IMAGE"])
	}
	if !regexp.MustCompile(`@sha256:[0-9a-f]{64}$`).MatchString(args["RUNTIME_IMAGE"]) {
		t.Errorf("runtime image %q is not pinned by digest", args["RUNTIME_IMAGE"])
	}
}

// TestBuildStageCopiesEveryPackage: the builder copies go.mod, main.go, api/ and internal/;
// every package of this module that the binary imports must live under what is copied.
func TestBuildStageCopiesEveryPackage(t *testing.T) {
	st := stages(parse(t))
	if len(st) < 2 {
		t.Fatalf("want a multi-stage build, got %d stages", len(st))
	}
	copied := map[string]bool{}
	for _, i := range st[0] {
		if i.cmd == "COPY" {
			for _, a := range i.args[:len(i.args)-1] {
				copied[strings.TrimSuffix(a, "/")] = true
			}
		}
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == module {
			if !copied["main.go"] {
				t.Error("main.go not copied")
			}
			continue
		}
		rel, ok := strings.CutPrefix(p, module+"/")
		if !ok {
			continue
		}
		top := strings.SplitN(rel, "/", 2)[0]
		if !copied[top] {
			t.Errorf("the binary imports %s but the build stage does not copy %s/", p, top)
		}
	}
}

// TestRuntimeLayout: the binary, watches.yaml and the charts it names are where the operator
// looks for them (watches.yaml and its chart paths are relative to the working directory).
func TestRuntimeLayout(t *testing.T) {
	final := stages(parse(t))
	runtime := final[len(final)-1]
	workdir, entry, user := "/", "", ""
	dest := map[string]string{}
	for _, i := range runtime {
		switch i.cmd {
		case "WORKDIR":
			workdir = i.args[0]
		case "ENTRYPOINT":
			entry = strings.Trim(strings.Join(i.args, ""), `[]"`)
		case "USER":
			user = i.args[0]
		case "COPY":
			var plain []string
			for _, a := range i.args {
				if !strings.HasPrefix(a, "--") {
					plain = append(plain, a)
				}
			}
			dest[plain[0]] = plain[len(plain)-1]
		}
	}
	if workdir != "/" {
		t.Fatalf("WORKDIR %q: watches.yaml and charts are resolved from /", workdir)
	}
	if user == "" || strings.HasPrefix(user, "0") || strings.HasPrefix(user, "root") {
		t.Errorf("runtime USER %q must be non-root", user)
	}
	if dest["watches.yaml"] != "/watches.yaml" {
		t.Errorf("watches.yaml copied to %q, main.go reads ./watches.yaml from WORKDIR /", dest["watches.yaml"])
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "watches.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		Chart string `json:"chart"`
	}
	if err := yaml.Unmarshal(raw, &entries); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		top := strings.SplitN(e.Chart, "/", 2)[0] + "/"
		if dest[top] != "/"+top {
			t.Errorf("watches.yaml uses chart %s but %s is copied to %q", e.Chart, top, dest[top])
		}
	}
	// The Deployment runs the same binary path.
	mgr, err := os.ReadFile(filepath.Join("..", "..", "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatalf("config/manager/manager.yaml: %v", err)
	}
	if !strings.Contains(string(mgr), entry) {
		t.Errorf("config/manager/manager.yaml does not run %s (the image's ENTRYPOINT)", entry)
	}
	if entry != "/manager" || dest["/out/manager"] != "/manager" {
		t.Errorf("ENTRYPOINT %q / binary at %q", entry, dest["/out/manager"])
	}
}
