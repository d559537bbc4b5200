package monitoring

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const dashboardFile = "config/grafana/clever-operator-dashboard.json"

// query is one PromQL expression of the dashboard or of the alert rules, and where it is.
type query struct {
	where, expr string
}

type dashboard struct {
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int             `json:"id"`
	Type       string          `json:"type"`
	Title      string          `json:"title"`
	Datasource json.RawMessage `json:"datasource"`
	Targets    []struct {
		RefID      string          `json:"refId"`
		Expr       string          `json:"expr"`
		Datasource json.RawMessage `json:"datasource"`
	} `json:"targets"`
	// Panels are a collapsed row's.
	Panels []panel `json:"panels"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Definition string          `json:"definition"`
	Query      json.RawMessage `json:"query"`
	Datasource json.RawMessage `json:"datasource"`
}

// repoFile reads a file of the repository from a test (the working directory is the
// package's, or the repository root once the suite started the control plane).
func repoFile(path string) ([]byte, error) {
	for _, dir := range []string{".", filepath.Join("..", "..")} {
		if b, err := os.ReadFile(filepath.Join(dir, path)); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%s not found from %s", path, must(os.Getwd()))
}

func must[T any](v T, _ error) T { return v }

func loadDashboard(raw []byte) (*dashboard, error) {
	d := &dashboard{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(d); err != nil {
		return nil, err
	}
	return d, nil
}

// allPanels returns the panels, those of collapsed rows included.
func (d *dashboard) allPanels() []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// queries returns every PromQL expression of the dashboard: the panels' targets and the
// query variables' queries.
func (d *dashboard) queries() ([]query, error) {
	var qs []query
	for _, p := range d.allPanels() {
		for _, t := range p.Targets {
			qs = append(qs, query{where: fmt.Sprintf("panel %d %q target %s", p.ID, p.Title, t.RefID), expr: t.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q string
		if err := json.Unmarshal(v.Query, &q); err != nil {
			var obj struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &obj); err != nil {
				return nil, fmt.Errorf("variable %s: query is neither a string nor {query}", v.Name)
			}
			q = obj.Query
		}
		for _, text := range []string{q, v.Definition} {
			if text == "" {
				continue
			}
			expr, err := variableQueryExpr(text)
			if err != nil {
				return nil, fmt.Errorf("variable %s: %w", v.Name, err)
			}
			if expr != "" {
				qs = append(qs, query{where: "variable " + v.Name, expr: expr})
			}
		}
	}
	return qs, nil
}

// alertQueries returns the expressions of the alert rules of config/prometheus/alerts.yaml.
func alertQueries() ([]query, error) {
	raw, err := repoFile("config/prometheus/alerts.yaml")
	if err != nil {
		return nil, err
	}
	var r struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert string `json:"alert"`
					Expr  string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	var qs []query
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			qs = append(qs, query{where: "alert " + rule.Alert, expr: rule.Expr})
		}
	}
	return qs, nil
}

// unknownMetrics returns, for every query naming a metric that exported lacks, "<where>:
// <metric>", and the number of metric references checked.
func unknownMetrics(qs []query, exported map[string]bool) (unknown []string, checked int, err error) {
	for _, q := range qs {
		if strings.TrimSpace(q.expr) == "" {
			return nil, 0, fmt.Errorf("%s: empty expression", q.where)
		}
		names, err := metricNames(q.expr)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", q.where, err)
		}
		for _, n := range names {
			checked++
			if !exported[n] {
				unknown = append(unknown, q.where+": "+n)
			}
		}
	}
	return unknown, checked, nil
}

var dashboardVariable = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

// TestDashboardIsWellFormed checks the dashboard without Prometheus: unique panel ids, every
// panel and target on the data source variable, no empty query, every variable it uses
// defined, and the chart's copy identical.
func TestDashboardIsWellFormed(t *testing.T) {
	raw, err := repoFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	d, err := loadDashboard(raw)
	if err != nil {
		t.Fatal(err)
	}
	if d.UID != "clever-operator" {
		t.Errorf("uid %q, want clever-operator (stable: links and provisioning refer to it)", d.UID)
	}
	defined := map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}
	hasDatasource := false
	for _, v := range d.Templating.List {
		defined[v.Name] = true
		if v.Type == "datasource" && v.Name == "datasource" {
			hasDatasource = true
		}
		if v.Type == "query" && !strings.Contains(string(v.Datasource), `"${datasource}"`) {
			t.Errorf("variable %s does not query the data source variable: %s", v.Name, v.Datasource)
		}
	}
	if !hasDatasource {
		t.Error("no data source variable named datasource")
	}
	ids := map[int]string{}
	targets := 0
	for _, p := range d.allPanels() {
		if prev, ok := ids[p.ID]; ok || p.ID == 0 {
			t.Errorf("panel %q: id %d missing or also used by %q", p.Title, p.ID, prev)
		}
		ids[p.ID] = p.Title
		if p.Type == "row" {
			continue
		}
		if !strings.Contains(string(p.Datasource), `"${datasource}"`) {
			t.Errorf("panel %q does not use the data source variable: %s", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			targets++
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q target %s: empty expr", p.Title, tg.RefID)
			}
			if !strings.Contains(string(tg.Datasource), `"${datasource}"`) {
				t.Errorf("panel %q target %s does not use the data source variable", p.Title, tg.RefID)
			}
			for _, m := range dashboardVariable.FindAllStringSubmatch(tg.Expr, -1) {
				if !defined[m[1]] {
					t.Errorf("panel %q target %s uses $%s, which is not defined", p.Title, tg.RefID, m[1])
				}
			}
		}
	}
	if targets < 20 {
		t.Errorf("only %d queries", targets)
	}
	chart, err := repoFile("dist/chart/files/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(chart, raw) {
		t.Error("dist/chart/files/grafana-dashboard.json differs from " + dashboardFile + ": run hack/gen-chart.sh")
	}
}

// TestDashboardMetricsCoverage checks that the dashboard shows every metric the operator
// documents as its own (the clevercloud_* and clever_operator_* families of docs/operator.md's
// Metrics section): a new metric gets a panel, or this test says so.
func TestDashboardMetricsCoverage(t *testing.T) {
	raw, err := repoFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	d, err := loadDashboard(raw)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := d.queries()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, q := range qs {
		names, err := metricNames(q.expr)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				n = strings.TrimSuffix(n, suffix)
			}
			used[n] = true
		}
	}
	docs, err := repoFile("docs/operator.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(docs)
	start := strings.Index(section, "\n## Metrics\n")
	if start < 0 {
		t.Fatal("docs/operator.md has no Metrics section")
	}
	section = section[start:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`((?:clevercloud|clever_operator)_[a-z_]+)`").FindAllStringSubmatch(section, -1) {
		documented[m[1]] = true
	}
	if len(documented) < 10 {
		t.Fatalf("only %d operator metrics documented: %v", len(documented), documented)
	}
	var missing []string
	for m := range documented {
		if !used[m] {
			missing = append(missing, m)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("documented metrics the dashboard does not show: %v", missing)
	}
}
