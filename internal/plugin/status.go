package plugin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

const statusHelp = `Usage: kubectl clever status [-n NAMESPACE | -A] [flags]

One table over every clever-operator kind: READY and REASON (the Ready condition), ADDON
(status.addon), PLAN (spec.instance.plan, else status.plan), LAST BACKUP (age of
status.backups.last.time) and CREDENTIALS AGE (age of status.credentials.lastChangedAt, when
the published credentials last changed). "-" where a resource has no such value yet.

Flags:
`

// StatusRow is one line of kubectl clever status.
type StatusRow struct {
	Kind, Namespace, Name, Ready, Reason, Addon, Plan, LastBackup, CredentialsAge string
}

func runStatus(ctx context.Context, args []string, env *Env) error {
	var kf kubeFlags
	var all bool
	fs := newFlags("status", env)
	kf.bind(fs)
	fs.BoolVar(&all, "all-namespaces", false, "every namespace")
	fs.BoolVar(&all, "A", false, "shorthand for --all-namespaces")
	pos, err := parse(fs, args, statusHelp, env)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("status takes no argument (got %q)", pos[0])
	}
	cfg, ns, err := kf.config(env)
	if err != nil {
		return err
	}
	if all {
		ns = ""
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("connecting to the cluster: %w", err)
	}
	rows, err := StatusRows(ctx, c, ns, env.now())
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		where := "namespace " + ns
		if all {
			where = "any namespace"
		}
		fmt.Fprintf(env.Stderr, "No clever-operator resources in %s.\n", where)
		return nil
	}
	return PrintStatus(env.Stdout, rows, all)
}

// StatusRows lists every kind of the kind table in namespace ns ("" all), sorted by kind,
// namespace and name. A kind whose CRD is not installed is left out.
func StatusRows(ctx context.Context, c client.Client, ns string, now time.Time) ([]StatusRow, error) {
	var rows []StatusRow
	for i := range kinds.Kinds {
		k := &kinds.Kinds[i]
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		var opts []client.ListOption
		if ns != "" {
			opts = append(opts, client.InNamespace(ns))
		}
		if err := c.List(ctx, list, opts...); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return nil, fmt.Errorf("listing %s: %w", k.GVK.Kind, err)
		}
		for j := range list.Items {
			rows = append(rows, statusRow(k, &list.Items[j], now))
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return rows, nil
}

func statusRow(k *kinds.Kind, u *unstructured.Unstructured, now time.Time) StatusRow {
	r := StatusRow{Kind: k.GVK.Kind, Namespace: u.GetNamespace(), Name: u.GetName(), Ready: "Unknown", Reason: "-"}
	if c, ok := status.Find(status.Conditions(u), status.TypeReady); ok {
		r.Ready = c.Status
		if c.Reason != "" {
			r.Reason = c.Reason
		}
	}
	if u.GetDeletionTimestamp() != nil {
		r.Ready += " (Terminating)"
	}
	r.Addon = orDash(nested(u, "status", "addon"))
	r.Plan = nested(u, "spec", "instance", "plan")
	if r.Plan == "" {
		r.Plan = nested(u, "status", "plan")
	}
	r.Plan = orDash(r.Plan)
	r.LastBackup = ageOf(nested(u, "status", "backups", "last", "time"), now)
	r.CredentialsAge = ageOf(nested(u, "status", "credentials", "lastChangedAt"), now)
	return r
}

// PrintStatus writes the table.
func PrintStatus(w io.Writer, rows []StatusRow, withNamespace bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	if withNamespace {
		fmt.Fprintln(tw, "KIND\tNAMESPACE\tNAME\tREADY\tREASON\tADDON\tPLAN\tLAST BACKUP\tCREDENTIALS AGE")
	} else {
		fmt.Fprintln(tw, "KIND\tNAME\tREADY\tREASON\tADDON\tPLAN\tLAST BACKUP\tCREDENTIALS AGE")
	}
	for _, r := range rows {
		if withNamespace {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Kind, r.Namespace, r.Name, r.Ready, r.Reason, r.Addon, r.Plan, r.LastBackup, r.CredentialsAge)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Kind, r.Name, r.Ready, r.Reason, r.Addon, r.Plan, r.LastBackup, r.CredentialsAge)
		}
	}
	return tw.Flush()
}

func nested(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

// ageOf is the age of an RFC 3339 time ("-" when absent or unreadable).
func ageOf(ts string, now time.Time) string {
	if ts == "" {
		return "-"
	}
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return "-"
	}
	return age(now.Sub(t))
}
