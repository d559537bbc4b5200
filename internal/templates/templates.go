// Package templates renders spec.secret.templates, the Go templates a tenant writes to shape
// its credentials Secret, in a sandbox: no function reaches outside the add-on's values, and
// output, values, nesting and work are bounded (docs/security.md).
package templates

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	texttemplate "text/template"
	"text/template/parse"
	"time"

	"github.com/Masterminds/sprig/v3"
)

// Limits of spec.secret.templates rendering. A tenant writes these templates and the operator
// renders them (here, then the Helm side with the same functions): they must not read the
// operator's environment or the cluster, and must not exhaust its memory or CPU.
const (
	// MaxOutput is the most all the templates of one resource may render, in bytes:
	// a Secret holds at most 1 MiB.
	MaxOutput = 1 << 20
	// MaxValue is the largest value (string, list or dict, counted deeply) a
	// function may take or return while rendering.
	MaxValue = 1 << 20
	// MaxWork bounds the work of rendering all the templates of one resource: one
	// unit per range iteration and function call, plus the bytes (/256) and elements the
	// calls handle. Real templates use a few hundred units.
	MaxWork = 1_000_000
	// MaxTime is a backstop on the wall time of rendering all the templates of one
	// resource (the work budget normally stops a template much earlier).
	MaxTime = 2 * time.Second
	// maxTemplateCount bounds the count arguments (repeat, until, seq, indent, rand*).
	maxTemplateCount = 1 << 16
	// maxTemplateRegex bounds the length of a regular expression.
	maxTemplateRegex = 4096
	// maxTemplateDepth bounds the nesting of a value (lists and dicts).
	maxTemplateDepth = 64
	// stepFunc is called at the top of every range iteration (inserted by the operator).
	stepFunc = "cleverOperatorStep"
)

// forbiddenTemplateFuncs are functions a template may not call, with the reason. Helm's own
// extras (include, tpl, lookup, required, toYaml, …) are simply not offered; the ones that
// matter get a clear message here.
var forbiddenTemplateFuncs = map[string]string{
	"env":               "templates may not read the operator's environment",
	"expandenv":         "templates may not read the operator's environment",
	"lookup":            "templates have no access to the cluster",
	"getHostByName":     "templates may not make network (DNS) requests",
	"include":           "a template may not render other templates (each entry is one template)",
	"tpl":               "a template may not render other templates (each entry is one template)",
	"genPrivateKey":     "key generation is too expensive and gives a new value on every render",
	"genCA":             "key generation is too expensive and gives a new value on every render",
	"genSelfSignedCert": "key generation is too expensive and gives a new value on every render",
	"genSignedCert":     "key generation is too expensive and gives a new value on every render",
	"derivePassword":    "key derivation is too expensive",
	stepFunc:            "reserved for the operator",
}

// templateWeights is the extra work charged per call of the expensive functions.
var templateWeights = map[string]int{
	"bcrypt": 100_000, "htpasswd": 100_000,
	"genCAWithKey": 20_000, "genSelfSignedCertWithKey": 20_000, "genSignedCertWithKey": 20_000, "buildCustomCert": 2_000,
	"encryptAES": 100, "decryptAES": 100,
}

// Funcs are the functions spec.secret.templates may use: sprig's, as Helm offers them
// (without env and expandenv), minus the forbidden ones. Rendering goes through
// Render, which also bounds them.
func Funcs() texttemplate.FuncMap {
	f := sprig.TxtFuncMap()
	for name := range forbiddenTemplateFuncs {
		delete(f, name)
	}
	return f
}

// Error is a spec.secret.templates entry that cannot be rendered. Its message names
// the key and the cause and never carries a credential value.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// limitError is a limit hit while rendering; its message is ours (no value in it).
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// Render renders spec.secret.templates over the add-on's raw keys, failing on a
// template that does not parse, names a key the add-on does not have, uses a forbidden
// function or define/template/block, fails to execute, or exceeds the limits above (output,
// value sizes, work, time). Any credential value an error message would quote is redacted.
func Render(templates, data map[string]string) (map[string]string, error) {
	if len(templates) == 0 {
		return map[string]string{}, nil
	}
	keys := make([]string, 0, len(templates))
	for k := range templates {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make(map[string]any, len(data))
	for k, v := range data {
		vals[k] = v
	}
	g := &templateGuard{start: time.Now()}
	funcs := g.funcs()
	out := make(map[string]string, len(templates))
	w := &limitedWriter{g: g}
	for _, key := range keys {
		fail := func(what string, err error) error {
			var le *limitError
			if errors.As(err, &le) {
				return &Error{Msg: fmt.Sprintf("spec.secret.templates[%s] %s", key, le.msg)}
			}
			return &Error{Msg: fmt.Sprintf("spec.secret.templates[%s] %s: %s", key, what, redact(err.Error(), data))}
		}
		t, err := texttemplate.New(key).Option("missingkey=error").Funcs(funcs).Parse(templates[key])
		if err != nil {
			return nil, fail("does not parse", err)
		}
		if err := g.prepare(t); err != nil {
			return nil, fail("is refused", err)
		}
		w.b.Reset()
		if err := t.Execute(w, vals); err != nil {
			msg := err.Error()
			var le *limitError
			if errors.As(err, &le) {
				return nil, fail("", err)
			}
			var ee texttemplate.ExecError
			if errors.As(err, &ee) && strings.Contains(msg, "map has no entry for key") {
				msg += fmt.Sprintf(" (the add-on's keys are: %s)", strings.Join(sortedKeys(data), ", "))
			}
			return nil, fail("cannot be rendered", errors.New(msg))
		}
		out[key] = w.b.String()
	}
	return out, nil
}

// templateGuard holds the budget of one Render call.
type templateGuard struct {
	start  time.Time
	work   int
	output int
}

func (g *templateGuard) charge(n int) {
	g.work += n
	if g.work > MaxWork {
		panic(&limitError{fmt.Sprintf("takes too much work to render (more than %d steps: loops or functions over too much data)", MaxWork)})
	}
	if time.Since(g.start) > MaxTime {
		panic(&limitError{fmt.Sprintf("takes more than %s to render", MaxTime)})
	}
}

// limitedWriter collects one template's output and fails once all the templates together
// wrote more than MaxOutput.
type limitedWriter struct {
	g *templateGuard
	b strings.Builder
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	w.g.output += len(p)
	if w.g.output > MaxOutput {
		return 0, &limitError{fmt.Sprintf("renders more than %d bytes in all (a Secret holds at most 1 MiB)", MaxOutput)}
	}
	w.g.work += len(p) / 256
	return w.b.Write(p)
}

// prepare refuses define, block, template and the forbidden functions, and puts a call of the
// step function at the top of every range body so that loops are charged.
func (g *templateGuard) prepare(t *texttemplate.Template) error {
	for _, tt := range t.Templates() {
		if tt.Name() != t.Name() {
			return fmt.Errorf("define and block are not allowed (each entry is one template)")
		}
	}
	if t.Tree == nil || t.Tree.Root == nil {
		return nil
	}
	return walkTemplate(t.Tree, t.Tree.Root)
}

func walkTemplate(tree *parse.Tree, n parse.Node) error {
	switch n := n.(type) {
	case nil:
		return nil
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := walkTemplate(tree, c); err != nil {
				return err
			}
		}
	case *parse.ActionNode:
		return walkTemplate(tree, n.Pipe)
	case *parse.PipeNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Cmds {
			if err := walkTemplate(tree, c); err != nil {
				return err
			}
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			if err := walkTemplate(tree, a); err != nil {
				return err
			}
		}
	case *parse.ChainNode:
		return walkTemplate(tree, n.Node)
	case *parse.IdentifierNode:
		if why, ok := forbiddenTemplateFuncs[n.Ident]; ok {
			return fmt.Errorf("uses %q: %s", n.Ident, why)
		}
	case *parse.TemplateNode:
		return fmt.Errorf("uses template %q: a template may not render other templates (each entry is one template)", n.Name)
	case *parse.IfNode:
		return walkBranch(tree, &n.BranchNode)
	case *parse.WithNode:
		return walkBranch(tree, &n.BranchNode)
	case *parse.RangeNode:
		if err := walkBranch(tree, &n.BranchNode); err != nil {
			return err
		}
		step := &parse.ActionNode{NodeType: parse.NodeAction, Pos: n.Pos, Line: n.Line, Pipe: &parse.PipeNode{
			NodeType: parse.NodePipe, Pos: n.Pos, Line: n.Line,
			Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand, Pos: n.Pos,
				Args: []parse.Node{parse.NewIdentifier(stepFunc).SetTree(tree).SetPos(n.Pos)}}},
		}}
		if n.List == nil {
			n.List = &parse.ListNode{NodeType: parse.NodeList, Pos: n.Pos}
		}
		n.List.Nodes = append([]parse.Node{step}, n.List.Nodes...)
	}
	return nil
}

func walkBranch(tree *parse.Tree, b *parse.BranchNode) error {
	if err := walkTemplate(tree, b.Pipe); err != nil {
		return err
	}
	if b.List != nil {
		if err := walkTemplate(tree, b.List); err != nil {
			return err
		}
	}
	if b.ElseList != nil {
		return walkTemplate(tree, b.ElseList)
	}
	return nil
}

// funcs are the template functions of one render, each wrapped to charge the budget, check
// its arguments before the call (for those whose result can be much larger than their
// arguments) and the size of its result after it. text/template turns the panics of a
// function into an execution error, so a limit stops the render cleanly.
func (g *templateGuard) funcs() texttemplate.FuncMap {
	f := Funcs()
	// The builtins that can make large strings, so they are bounded too.
	f["print"] = fmt.Sprint
	f["printf"] = fmt.Sprintf
	f["println"] = fmt.Sprintln
	f["html"] = texttemplate.HTMLEscaper
	f["js"] = texttemplate.JSEscaper
	f["urlquery"] = texttemplate.URLQueryEscaper
	for name, fn := range f {
		f[name] = g.wrap(name, fn)
	}
	// Stubs so that templates naming a forbidden function parse and get a clear refusal
	// (prepare refuses them before anything runs).
	for name := range forbiddenTemplateFuncs {
		f[name] = func(...any) (string, error) { return "", errors.New("forbidden") }
	}
	f[stepFunc] = func() string { g.charge(1); return "" }
	return f
}

func (g *templateGuard) wrap(name string, fn any) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	weight := templateWeights[name]
	return reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
		in := 0
		for _, a := range args {
			in += g.size(a, 0)
		}
		if in > 2*MaxValue {
			panic(&limitError{fmt.Sprintf("cannot be rendered: the arguments of %s are larger than %d bytes", name, 2*MaxValue)})
		}
		g.charge(1 + weight + in/256)
		if strings.HasPrefix(name, "regex") || strings.HasPrefix(name, "mustRegex") {
			if len(args) > 0 && args[0].Kind() == reflect.String && args[0].Len() > maxTemplateRegex {
				panic(&limitError{fmt.Sprintf("cannot be rendered: the regular expression given to %s is longer than %d bytes", name, maxTemplateRegex)})
			}
		}
		if est, work := estimate(name, args); est > MaxValue {
			panic(&limitError{fmt.Sprintf("cannot be rendered: %s would produce more than %d bytes", name, MaxValue)})
		} else if work > 0 {
			g.charge(work)
		}
		var out []reflect.Value
		if t.IsVariadic() {
			out = v.CallSlice(args)
		} else {
			out = v.Call(args)
		}
		if len(out) > 0 {
			if n := g.size(out[0], 0); n > MaxValue {
				panic(&limitError{fmt.Sprintf("cannot be rendered: %s produced more than %d bytes", name, MaxValue)})
			} else {
				g.charge(n / 256)
			}
		}
		return out
	}).Interface()
}

// size is a value's deep size in bytes (strings count their length, elements at least 8),
// charging one unit per element visited; it stops counting past MaxValue.
func (g *templateGuard) size(v reflect.Value, depth int) int {
	if depth > maxTemplateDepth {
		panic(&limitError{fmt.Sprintf("cannot be rendered: a value is nested more than %d levels deep", maxTemplateDepth)})
	}
	if !v.IsValid() {
		return 0
	}
	switch v.Kind() {
	case reflect.String:
		return v.Len()
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return 8
		}
		return 8 + g.size(v.Elem(), depth+1)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Len()
		}
		n := 0
		for i := 0; i < v.Len(); i++ {
			g.work++
			n += 8 + g.size(v.Index(i), depth+1)
			if n > MaxValue {
				return n
			}
		}
		return n
	case reflect.Map:
		n := 0
		it := v.MapRange()
		for it.Next() {
			g.work++
			n += 16 + g.size(it.Key(), depth+1) + g.size(it.Value(), depth+1)
			if n > MaxValue {
				return n
			}
		}
		return n
	case reflect.Struct:
		n := 0
		for i := 0; i < v.NumField(); i++ {
			n += 8 + g.size(v.Field(i), depth+1)
		}
		return n
	default:
		return 8
	}
}

// estimate is, before the call, an upper bound of the size of what the functions whose
// result can be much larger than their arguments would produce, and the extra work of the
// ones whose cost is more than linear. Arguments of the wrong type are left to the call.
func estimate(name string, args []reflect.Value) (size, work int) {
	str := func(i int) string {
		if i < len(args) && args[i].Kind() == reflect.String {
			return args[i].String()
		}
		if i < len(args) && args[i].Kind() == reflect.Interface && !args[i].IsNil() && args[i].Elem().Kind() == reflect.String {
			return args[i].Elem().String()
		}
		return ""
	}
	num := func(i int) float64 {
		if i >= len(args) {
			return 0
		}
		a := args[i]
		if a.Kind() == reflect.Interface && !a.IsNil() {
			a = a.Elem()
		}
		switch {
		case a.CanInt():
			return float64(a.Int())
		case a.CanUint():
			return float64(a.Uint())
		case a.CanFloat():
			return a.Float()
		}
		return 0
	}
	count := func(n float64) int {
		n = math.Abs(n)
		if n > maxTemplateCount {
			return MaxValue + 1
		}
		return int(n)
	}
	switch name {
	case "repeat":
		c := count(num(0))
		if c > MaxValue {
			return c, 0
		}
		return c * len(str(1)), 0
	case "until":
		return 8 * count(num(0)), 0
	case "untilStep":
		step := num(2)
		if step == 0 {
			return 0, 0
		}
		return 8 * count((num(1)-num(0))/step), 0
	case "seq":
		var first, incr, last float64 = 1, 1, 0
		switch len(args) {
		case 1:
			if args[0].Kind() == reflect.Slice {
				switch args[0].Len() {
				case 1:
					last = num0(args[0], 0)
				case 2:
					first, last = num0(args[0], 0), num0(args[0], 1)
				case 3:
					first, incr, last = num0(args[0], 0), num0(args[0], 1), num0(args[0], 2)
				}
			}
		}
		if incr == 0 {
			incr = 1
		}
		return 12 * count((last-first)/incr), 0
	case "indent", "nindent":
		s := str(1)
		c := count(num(0))
		if c > MaxValue {
			return c, 0
		}
		return len(s) + c*(strings.Count(s, "\n")+2), 0
	case "randAlphaNum", "randAlpha", "randAscii", "randNumeric":
		return count(num(0)), 0
	case "randBytes":
		return 2 * count(num(0)), 0
	case "wrapWith":
		l := int(math.Max(1, num(0)))
		s := str(2)
		return len(s) + (len(s)/l+1)*len(str(1)), 0
	case "wrap":
		return 2*len(str(1)) + 1, 0
	case "replace":
		oldS, newS, src := str(0), str(1), str(2)
		if len(newS) <= len(oldS) {
			return len(src), 0
		}
		return len(src) + strings.Count(src, oldS)*(len(newS)-len(oldS)), len(src) / 256
	case "regexReplaceAll", "mustRegexReplaceAll", "regexReplaceAllLiteral", "mustRegexReplaceAllLiteral":
		re, s, repl := str(0), str(1), str(2)
		return len(s) + (len(s)+1)*len(repl) + strings.Count(repl, "$")*len(s), 1 + len(re)*len(s)/64
	case "regexMatch", "mustRegexMatch", "regexFindAll", "mustRegexFindAll", "regexFind", "mustRegexFind", "regexSplit", "mustRegexSplit":
		re, s := str(0), str(1)
		return 0, 1 + len(re)*len(s)/64
	case "printf":
		format := str(0)
		size = len(format)
		for i := 1; i < len(args); i++ {
			size += 8
		}
		// Widths and precisions (fmt caps each at 1e6): count every number in the format.
		n := 0
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c >= '0' && c <= '9' {
				n = n*10 + int(c-'0')
				if n > MaxValue {
					return n, 0
				}
				continue
			}
			size += n
			if c == '*' {
				size += MaxValue // a width from the arguments: only allowed alone
			}
			n = 0
			if size > MaxValue {
				return size, 0
			}
		}
		return size + n, 0
	case "uniq", "mustUniq":
		if l := listLen(args, 0); l > 0 {
			return 0, l * l / 16
		}
	case "without", "mustWithout":
		if l := listLen(args, 0); l > 0 {
			k := 1
			if len(args) > 1 && args[1].Kind() == reflect.Slice {
				k = args[1].Len()
			}
			return 0, l * k / 16
		}
	}
	return 0, 0
}

func num0(s reflect.Value, i int) float64 {
	if i >= s.Len() {
		return 0
	}
	a := s.Index(i)
	if a.Kind() == reflect.Interface && !a.IsNil() {
		a = a.Elem()
	}
	switch {
	case a.CanInt():
		return float64(a.Int())
	case a.CanUint():
		return float64(a.Uint())
	case a.CanFloat():
		return a.Float()
	}
	return 0
}

func listLen(args []reflect.Value, i int) int {
	if i >= len(args) {
		return 0
	}
	a := args[i]
	if a.Kind() == reflect.Interface && !a.IsNil() {
		a = a.Elem()
	}
	if a.Kind() == reflect.Slice || a.Kind() == reflect.Array {
		return a.Len()
	}
	return 0
}

// redact replaces every credential value (of at least 3 bytes) found in a message's details.
// If one is still there afterwards (a value that is part of the replacement text), the
// details are withheld altogether.
func redact(msg string, data map[string]string) string {
	vals := make([]string, 0, len(data))
	for _, v := range data {
		if len(v) >= 3 {
			vals = append(vals, v)
		}
	}
	// Longest first, so a value containing another is redacted whole.
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		msg = strings.ReplaceAll(msg, v, "[redacted]")
	}
	for _, v := range vals {
		if strings.Contains(msg, v) {
			return "details withheld (they would quote a credential)"
		}
	}
	const maxLen = 500
	if len(msg) > maxLen {
		msg = msg[:maxLen] + "…"
	}
	return strings.ToValidUTF8(msg, "\uFFFD")
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
