package monitoring

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The metric names a PromQL expression (or a Grafana variable query) reads, found by a small
// lexer rather than Prometheus' parser (github.com/prometheus/prometheus is not a dependency
// of this module): strings and label matchers ({…}), ranges ([…]), the label lists of
// by/without/on/ignoring/group_left/group_right, keywords, numbers and function calls are not
// metric names; every other identifier is.

// promqlKeywords are the identifiers that are never metric names: binary and set operators,
// modifiers, aggregation operators (which may be followed by by/without before their
// parenthesis) and number literals.
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
	"inf": true, "nan": true,
}

// labelListKeywords are followed by a parenthesised list of label names.
var labelListKeywords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// grafanaVariable matches Grafana's variables ($var, ${var}, ${var:format}, $__rate_interval).
var grafanaVariable = regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*`)

// metricNames returns the metric names expr reads, in order of appearance, without repeats.
func metricNames(expr string) ([]string, error) {
	// Variables only stand for durations (in ranges) or inside label values (strings), where
	// "5m" is as good as any value.
	s := grafanaVariable.ReplaceAllString(expr, "5m")
	var names []string
	depthBrace, depthBracket := 0, 0
	skipParen := -1 // paren depth whose contents are label names (by (...), on (...))
	depthParen := 0
	expectLabelList := false
	isIdentStart := func(c byte) bool { return c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
	isIdent := func(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#': // comment to the end of the line
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' && c != '`' {
					j++
				}
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string in %q", expr)
			}
			i = j + 1
		case c == '{':
			depthBrace++
			i++
		case c == '}':
			depthBrace--
			i++
		case c == '[':
			depthBracket++
			i++
		case c == ']':
			depthBracket--
			i++
		case c == '(':
			depthParen++
			if expectLabelList && skipParen < 0 {
				skipParen = depthParen
			}
			expectLabelList = false
			i++
		case c == ')':
			if depthParen == skipParen {
				skipParen = -1
			}
			depthParen--
			i++
		case (c >= '0' && c <= '9') || (c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9'):
			// Numbers, hexadecimal numbers, exponents and durations (5m, 1h30m, 1e3, 0x1F).
			for i < len(s) && (isIdent(s[i]) || s[i] == '.') {
				i++
			}
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			word := s[i:j]
			i = j
			if depthBrace > 0 || depthBracket > 0 || skipParen >= 0 {
				continue // a label name, or inside a range
			}
			lower := strings.ToLower(word)
			if labelListKeywords[lower] {
				expectLabelList = true
				continue
			}
			if promqlKeywords[lower] {
				continue
			}
			k := j
			for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n') {
				k++
			}
			if k < len(s) && s[k] == '(' {
				continue // a function call
			}
			if !slices.Contains(names, word) {
				names = append(names, word)
			}
		default:
			i++ // operators, commas, @
		}
		if depthBrace < 0 || depthBracket < 0 || depthParen < 0 {
			return nil, fmt.Errorf("unbalanced brackets in %q", expr)
		}
	}
	if depthBrace != 0 || depthBracket != 0 || depthParen != 0 {
		return nil, fmt.Errorf("unbalanced brackets in %q", expr)
	}
	return names, nil
}

// variableQueryExpr returns the PromQL expression of a Grafana Prometheus variable query:
// label_values(<expr>, <label>) and query_result(<expr>) read <expr>; label_values(<label>),
// label_names() and metrics(<regexp>) read no metric ("" and no error).
func variableQueryExpr(q string) (string, error) {
	q = strings.TrimSpace(q)
	inner := func(prefix string) (string, bool) {
		if !strings.HasPrefix(q, prefix+"(") || !strings.HasSuffix(q, ")") {
			return "", false
		}
		return strings.TrimSpace(q[len(prefix)+1 : len(q)-1]), true
	}
	if in, ok := inner("label_values"); ok {
		// The label is after the last comma outside braces, brackets and strings.
		depth, last, quote := 0, -1, byte(0)
		for i := 0; i < len(in); i++ {
			switch c := in[i]; {
			case quote != 0:
				if c == '\\' {
					i++
				} else if c == quote {
					quote = 0
				}
			case c == '"' || c == '\'' || c == '`':
				quote = c
			case c == '{' || c == '(' || c == '[':
				depth++
			case c == '}' || c == ')' || c == ']':
				depth--
			case c == ',' && depth == 0:
				last = i
			}
		}
		if last < 0 {
			return "", nil // label_values(label): every series
		}
		return in[:last], nil
	}
	if in, ok := inner("query_result"); ok {
		return in, nil
	}
	if _, ok := inner("label_names"); ok {
		return "", nil
	}
	if _, ok := inner("metrics"); ok {
		return "", nil
	}
	return "", fmt.Errorf("unknown Grafana variable query %q", q)
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (kind, ready) (clever_operator_resources{namespace=~"$namespace", kind=~"$kind", ready!="True"})`:                {"clever_operator_resources"},
		`histogram_quantile(0.95, sum by (le, route) (rate(clevercloud_api_request_duration_seconds_bucket[$__rate_interval])))`: {"clevercloud_api_request_duration_seconds_bucket"},
		`sum(rate(a_total{code=~"5..|429|error"}[10m])) / sum(rate(a_total[10m])) > 0.2`:                                         {"a_total"},
		`clever_operator_credentials_expiry_timestamp_seconds - time() < 7 * 86400 > 0`:                                          {"clever_operator_credentials_expiry_timestamp_seconds"},
		`x / on (instance) group_left (version) build_info offset 5m`:                                                            {"x", "build_info"},
		`sum without (pod) (up) or vector(0) unless absent(foo{bar="sum(baz)"})`:                                                 {"up", "foo"},
		`max_over_time(g[5m:1m]) > bool 1e3 and h > 0x1F or Inf > NaN`:                                                           {"g", "h"},
		`topk(3, sum by (name) (workqueue_depth{name=~"redis-.*"}))`:                                                             {"workqueue_depth"},
		`time()`: nil,
		`sum by(kind)(m1) + count without(x)(m2)`: {"m1", "m2"},
	} {
		got, err := metricNames(expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("metricNames(%s) = %q, want %q", expr, got, want)
		}
	}
	for _, bad := range []string{`sum(rate(x[5m])`, `x{a="b"`, `x{a="b}`} {
		if _, err := metricNames(bad); err == nil {
			t.Errorf("metricNames(%s): no error", bad)
		}
	}
}

func TestVariableQueryExpr(t *testing.T) {
	for q, want := range map[string]string{
		`label_values(clever_operator_resources, namespace)`:                            "clever_operator_resources",
		`label_values(clever_operator_resources{namespace=~"$namespace", a=","}, kind)`: `clever_operator_resources{namespace=~"$namespace", a=","}`,
		`label_values(namespace)`:         "",
		`query_result(sum by (kind) (m))`: "sum by (kind) (m)",
		`label_names()`:                   "",
	} {
		got, err := variableQueryExpr(q)
		if err != nil || got != want {
			t.Errorf("variableQueryExpr(%s) = %q, %v; want %q", q, got, err, want)
		}
	}
	if _, err := variableQueryExpr(`up`); err == nil {
		t.Error("a plain expression is not a Grafana variable query")
	}
}
