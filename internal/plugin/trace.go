package plugin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

const traceHelp = `Usage: kubectl clever trace NAME [--kind KIND] [-n NAMESPACE] [flags]

Shows a resource's conditions, its events, and the Clever Cloud calls the operator made for it
(method, route template, status, duration, attempt), read from the operator's logs: the
operator logs one line per Clever Cloud HTTP attempt, with the resource it works for. Writes
(POST, PUT, DELETE) and failed attempts are logged at info level; successful reads only at
debug level (--zap-log-level=debug, the chart's logging.level), so by default the table shows
what changed and what failed. Logs come from the operator's pods (pods/log, --operator-namespace
and --operator-selector), or from --logs FILE ("-": stdin), JSON or console encoded.

Flags:
`

// Call is one Clever Cloud HTTP attempt the operator logged.
type Call struct {
	Time       time.Time
	Method     string
	Route      string
	Status     int
	DurationMs int64
	Attempt    int
	Failure    string
}

func runTrace(ctx context.Context, args []string, env *Env) error {
	var kf kubeFlags
	var kind, logs, opNS, opSel string
	fs := newFlags("trace", env)
	kf.bind(fs)
	fs.StringVar(&kind, "kind", "", "kind of the resource (default: the only kind with a resource of that name)")
	fs.StringVar(&logs, "logs", "", "read the operator's logs from this file (\"-\": stdin) instead of its pods")
	fs.StringVar(&opNS, "operator-namespace", "clever-operator-system", "namespace of the operator's pods")
	fs.StringVar(&opSel, "operator-selector", "app.kubernetes.io/name=clever-operator", "label selector of the operator's pods")
	pos, err := parse(fs, args, traceHelp, env)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("trace takes one resource name (got %d arguments)", len(pos))
	}
	name := pos[0]
	if kind != "" && kindByName(kind) == nil {
		return fmt.Errorf("--kind: unknown kind %q (%s)", kind, strings.Join(kindNames(), ", "))
	}
	cfg, ns, err := kf.config(env)
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("connecting to the cluster: %w", err)
	}
	k, obj, err := findResource(ctx, c, ns, name, kind)
	if err != nil {
		return err
	}
	var events corev1.EventList
	sel := fields.Set{"involvedObject.name": name, "involvedObject.kind": k.GVK.Kind}.AsSelector()
	if err := c.List(ctx, &events, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		return fmt.Errorf("listing events: %w", err)
	}
	var calls []Call
	var logErr error
	if logs != "" {
		var r io.Reader = env.Stdin
		if logs != "-" {
			fh, err := os.Open(logs)
			if err != nil {
				return err
			}
			defer fh.Close()
			r = fh
		}
		calls, logErr = ParseCalls(r, k.Lower(), ns, name)
	} else {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		calls, logErr = podCalls(ctx, cs, opNS, opSel, k.Lower(), ns, name)
	}
	printTrace(env.Stdout, k, obj, events.Items, calls, env.now())
	if logErr != nil {
		return fmt.Errorf("reading the operator's logs: %w", logErr)
	}
	return nil
}

// findResource gets NAME of kind, or looks it up in every kind.
func findResource(ctx context.Context, c client.Client, ns, name, kind string) (*kinds.Kind, *unstructured.Unstructured, error) {
	var found []*kinds.Kind
	var objs []*unstructured.Unstructured
	for i := range kinds.Kinds {
		k := &kinds.Kinds[i]
		if kind != "" && !strings.EqualFold(kind, k.GVK.Kind) {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.GVK)
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
		switch {
		case err == nil:
			found, objs = append(found, k), append(objs, u)
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		default:
			return nil, nil, fmt.Errorf("reading %s %s/%s: %w", k.GVK.Kind, ns, name, err)
		}
	}
	switch len(found) {
	case 0:
		if kind != "" {
			return nil, nil, fmt.Errorf("no %s %s in namespace %s", kind, name, ns)
		}
		return nil, nil, fmt.Errorf("no clever-operator resource %s in namespace %s", name, ns)
	case 1:
		return found[0], objs[0], nil
	}
	ks := make([]string, 0, len(found))
	for _, k := range found {
		ks = append(ks, k.GVK.Kind)
	}
	return nil, nil, fmt.Errorf("%s names resources of several kinds in %s (%s): choose one with --kind", name, ns, strings.Join(ks, ", "))
}

// podCalls reads the logs of the operator's pods (every container named manager, else the
// first container) through the API server (pods/log).
func podCalls(ctx context.Context, cs kubernetes.Interface, opNS, sel, kindLower, ns, name string) ([]Call, error) {
	pods, err := cs.CoreV1().Pods(opNS).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing the operator's pods in %s: %w", opNS, err)
	}
	if len(pods.Items) == 0 {
		return nil, fmt.Errorf("no operator pod labelled %s in namespace %s (--operator-namespace, --operator-selector, or --logs FILE)", sel, opNS)
	}
	var out []Call
	for _, p := range pods.Items {
		if len(p.Spec.Containers) == 0 {
			continue
		}
		container := p.Spec.Containers[0].Name
		for _, c := range p.Spec.Containers {
			if c.Name == "manager" {
				container = c.Name
			}
		}
		stream, err := cs.CoreV1().Pods(opNS).GetLogs(p.Name, &corev1.PodLogOptions{Container: container}).Stream(ctx)
		if err != nil {
			return out, fmt.Errorf("reading the logs of pod %s/%s: %w", opNS, p.Name, err)
		}
		calls, err := ParseCalls(stream, kindLower, ns, name)
		_ = stream.Close()
		out = append(out, calls...)
		if err != nil {
			return out, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

// ParseCalls reads operator log lines (zap JSON, as the operator logs by default, or the
// console encoding) and returns the Clever Cloud calls logged for resource kindLower ns/name,
// oldest first. Unparsable lines are skipped.
func ParseCalls(r io.Reader, kindLower, ns, name string) ([]Call, error) {
	var out []Call
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		c, ok := parseLine(sc.Text(), kindLower, ns, name)
		if ok {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, sc.Err()
}

func parseLine(line, kindLower, ns, name string) (Call, bool) {
	line = strings.TrimSpace(line)
	if !strings.Contains(line, clevercloud.CallLogMessage) {
		return Call{}, false
	}
	var kv map[string]any
	var ts any
	if strings.HasPrefix(line, "{") {
		// JSON: {"level":"info","ts":…,"logger":…,"msg":…, fields…}
		if json.Unmarshal([]byte(line), &kv) != nil || kv["msg"] != clevercloud.CallLogMessage {
			return Call{}, false
		}
		ts = kv["ts"]
	} else {
		// Console: time \t level \t logger \t message \t {fields}
		parts := strings.Split(line, "\t")
		i := -1
		for j, p := range parts {
			if p == clevercloud.CallLogMessage {
				i = j
				break
			}
		}
		if i < 0 || i+1 >= len(parts) {
			return Call{}, false
		}
		if json.Unmarshal([]byte(strings.Join(parts[i+1:], "\t")), &kv) != nil {
			return Call{}, false
		}
		ts = parts[0]
	}
	if !sameResource(kv[kindLower], ns, name) {
		return Call{}, false
	}
	c := Call{Time: parseTime(ts), Method: fmt.Sprint(kv["method"]), Route: fmt.Sprint(kv["route"])}
	c.Status = int(num(kv["status"]))
	c.DurationMs = int64(num(kv["durationMs"]))
	c.Attempt = int(num(kv["attempt"]))
	if f, ok := kv["failure"].(string); ok {
		c.Failure = f
	}
	return c, true
}

// sameResource: the engine's key "<kind>" holds the resource as {"name","namespace"} (zap's
// encoding of a NamespacedName) or "namespace/name".
func sameResource(v any, ns, name string) bool {
	switch r := v.(type) {
	case map[string]any:
		return r["name"] == name && r["namespace"] == ns
	case string:
		return r == ns+"/"+name
	}
	return false
}

func num(v any) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	return 0
}

// parseTime reads zap's time encodings: epoch seconds (production default), RFC 3339 or ISO
// 8601 (console, development).
func parseTime(v any) time.Time {
	switch t := v.(type) {
	case float64:
		sec, frac := math.Modf(t)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC()
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05Z0700"} {
			if p, err := time.Parse(layout, t); err == nil {
				return p.UTC()
			}
		}
	}
	return time.Time{}
}

func printTrace(w io.Writer, k *kinds.Kind, u *unstructured.Unstructured, events []corev1.Event, calls []Call, now time.Time) {
	fmt.Fprintf(w, "%s %s/%s  add-on %s  organisation %s\n\n", k.GVK.Kind, u.GetNamespace(), u.GetName(),
		orDash(nested(u, "status", "addon")), orDash(nested(u, "spec", "organisation")))

	fmt.Fprintln(w, "Conditions:")
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "  TYPE\tSTATUS\tREASON\tAGE\tMESSAGE")
	for _, c := range status.Conditions(u) {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, orDash(c.Reason), ageOf(c.LastTransitionTime, now), oneLine(c.Message))
	}
	_ = tw.Flush()

	fmt.Fprintln(w, "\nEvents:")
	sort.SliceStable(events, func(i, j int) bool { return eventTime(&events[i]).Before(eventTime(&events[j])) })
	tw = tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "  LAST SEEN\tTYPE\tREASON\tCOUNT\tMESSAGE")
	for i := range events {
		e := &events[i]
		count := e.Count
		if count == 0 {
			count = 1
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\n", age(now.Sub(eventTime(e))), e.Type, e.Reason, count, oneLine(e.Message))
	}
	_ = tw.Flush()

	fmt.Fprintln(w, "\nClever Cloud calls (operator logs):")
	tw = tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "  TIME\tMETHOD\tROUTE\tSTATUS\tDURATION\tATTEMPT")
	for _, c := range calls {
		st := fmt.Sprint(c.Status)
		if c.Status == 0 {
			st = "-"
			if c.Failure != "" {
				st = "- (" + c.Failure + ")"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%dms\t%d\n", c.Time.Format(time.RFC3339), c.Method, c.Route, st, c.DurationMs, c.Attempt)
	}
	_ = tw.Flush()
	if len(calls) == 0 {
		fmt.Fprintln(w, "  (none logged: successful reads are logged at debug level only)")
	}
}

func eventTime(e *corev1.Event) time.Time {
	for _, t := range []metav1.Time{e.LastTimestamp, e.FirstTimestamp} {
		if !t.IsZero() {
			return t.Time
		}
	}
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
