// Command demo runs the whole operator locally on an embedded default: a real kube-apiserver
// and etcd (built into bin/ by `make envtest-bins`), the fake Clever Cloud API, the operator
// binary as its own process, and one sample resource of every kind. It prints the table of
// Ready resources and the Secret key names (never values), then keeps running until Ctrl-C
// when attached to a terminal (so kubectl can be pointed at it), or exits otherwise.
//
// Usage: make demo  (or: go run ./hack/demo [--timeout 3m] [--exit] [--keep])
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

// Demo credentials of the fake API (public; the fake accepts only these).
var demoCreds = fakeapi.Credential{ConsumerKey: "demo-consumer-key", ConsumerSecret: "demo-consumer-secret", Token: "demo-token", Secret: "demo-secret"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	timeout := flag.Duration("timeout", 3*time.Minute, "how long to wait for every resource to be Ready")
	exitAfter := flag.Bool("exit", false, "exit after printing the table (default when not attached to a terminal)")
	keep := flag.Bool("keep", false, "keep running after the table even without a terminal (stop with Ctrl-C / SIGTERM)")
	assets := flag.String("assets", envOr("KUBEBUILDER_ASSETS", "bin/envtest/1.35.4"), "directory with kube-apiserver and etcd")
	delay := flag.Duration("provisioning-delay", 2*time.Second, "fake API: time before a new add-on's credentials appear")
	wholeCluster := flag.Bool("cluster", false, "a whole cluster (controller-manager, scheduler, KWOK) with the operator installed through OLM from catalog/ (make cluster-demo)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var (
		k8s              client.Client
		kcPath, endpoint string
		fake             *fakeapi.Server
		logPath          string
		opDone           <-chan struct{}
		opErr            = func() error { return nil }
	)
	step("starting a local S3 server (gofakes3) for the Cellar bucket")
	s3 := kube.NewS3Server("") // any Cellar's keys
	defer s3.Close()
	if *wholeCluster {
		f, srv := fakeapi.NewTestServer(fakeapi.Options{Credentials: []fakeapi.Credential{demoCreds}, ProvisioningDelay: *delay})
		defer srv.Close()
		fake, endpoint = f, srv.URL
		c, cl, log, stopAll, err := installThroughOLM(ctx, *assets, demoCreds, endpoint, s3.URL)
		if err != nil {
			return err
		}
		defer stopAll()
		k8s, kcPath, logPath = c, cl.KubeconfigPath, log
	} else {
		h, err := kube.StartHarness(ctx, kube.HarnessOptions{
			Assets:  *assets,
			WorkDir: ".demo",
			Build:   true,
			Fake:    fakeapi.Options{Credentials: []fakeapi.Credential{demoCreds}, ProvisioningDelay: *delay},
			Log:     step,
		})
		if err != nil {
			return err
		}
		defer h.Stop()
		k8s, kcPath, endpoint, fake = h.Client, h.Kubeconfig, h.Endpoint, h.Fake()

		step("starting the operator (bin/manager) against them")
		op := h.NewOperator(kube.OperatorOptions{Name: "operator", Args: []string{"--cellar-endpoint=" + s3.URL}})
		logPath = op.LogPath
		if err := op.Start(); err != nil {
			return err
		}
		opDone, opErr = op.Done(), op.ExitErr
		defer func() { _ = op.Stop(10 * time.Second) }()
	}

	step("applying config/samples (one resource of every kind, an Addon of a provider with no typed kind, and a bucket in the Cellar)")
	samples, err := clusterSamples() // every kind, an FS Bucket through the generic kind, a bucket in the Cellar
	if err != nil {
		return err
	}
	for _, s := range samples {
		s.SetNamespace("default")
		if err := k8s.Create(ctx, s); err != nil {
			return fmt.Errorf("creating %s/%s: %w", s.GetKind(), s.GetName(), err)
		}
	}

	step(fmt.Sprintf("waiting for %d resources to be Ready (operator log: %s)", len(samples), logPath))
	deadline := time.Now().Add(*timeout)
	start := time.Now()
	var rows []row
	for {
		rows, err = table(ctx, k8s, samples)
		if err != nil {
			return err
		}
		if allReady(rows) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return errors.New("interrupted")
		case <-opDone:
			return fmt.Errorf("the operator exited early (%v); see %s", opErr(), logPath)
		case <-time.After(500 * time.Millisecond):
		}
	}
	fmt.Println()
	printTable(rows)
	fmt.Printf("\n%d/%d resources Ready after %s; %d add-ons at the fake Clever Cloud API.\n", countReady(rows), len(rows), time.Since(start).Round(100*time.Millisecond), countAddons(fake))
	if !allReady(rows) {
		return fmt.Errorf("not every resource became Ready within %s; see %s", *timeout, logPath)
	}
	if err := showKeycloak(ctx, k8s, fake); err != nil {
		return err
	}

	interactive := isTerminal(os.Stdin)
	if *exitAfter || (!interactive && !*keep) {
		return nil
	}
	fmt.Printf("\nThe demo keeps running. Try:\n  export KUBECONFIG=%s\n  kubectl get clever\n  kubectl describe postgresql postgresql\n  kubectl delete redis redis   # the add-on is deleted at the fake API\nFake API: %s (admin: %s/admin/addons). Press Ctrl-C to stop and tear everything down.\n", kcPath, endpoint, endpoint)
	select {
	case <-ctx.Done():
	case <-opDone:
		return fmt.Errorf("the operator exited (%v); see %s", opErr(), logPath)
	}
	fmt.Println("\ntearing down")
	return nil
}

type row struct {
	kind, name, ready, reason, addon, secret string
	keys                                     []string
}

func table(ctx context.Context, k8s client.Client, samples []*unstructured.Unstructured) ([]row, error) {
	var rows []row
	for _, s := range samples {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(s.GroupVersionKind())
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(s), cur); err != nil {
			return nil, err
		}
		r := row{kind: s.GetKind(), name: s.GetName(), ready: "Unknown"}
		conds, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
				r.ready, _ = m["status"].(string)
				r.reason, _ = m["reason"].(string)
			}
		}
		r.addon, _, _ = unstructured.NestedString(cur.Object, "status", "addon")
		if r.addon == "" { // a CellarBucket: its bucket
			r.addon, _, _ = unstructured.NestedString(cur.Object, "status", "bucketName")
		}
		r.secret, _, _ = unstructured.NestedString(cur.Object, "status", "secretName")
		if r.secret != "" {
			sec := &corev1.Secret{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: s.GetNamespace(), Name: r.secret}, sec); err == nil {
				for k := range sec.Data {
					r.keys = append(r.keys, k)
				}
				sort.Strings(r.keys)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func printTable(rows []row) {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tNAME\tREADY\tREASON\tADDON\tSECRET\tKEYS (names only)")
	for _, r := range rows {
		keys := strings.Join(r.keys, ",")
		if len(keys) > 80 {
			keys = keys[:77] + "..."
		}
		if keys == "" {
			keys = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.kind, r.name, r.ready, r.reason, r.addon, r.secret, keys)
	}
	_ = w.Flush()
}

func allReady(rows []row) bool { return countReady(rows) == len(rows) }

func countReady(rows []row) int {
	n := 0
	for _, r := range rows {
		if r.ready == "True" {
			n++
		}
	}
	return n
}

func countAddons(f *fakeapi.Server) int {
	n := 0
	for _, l := range f.AllAddons() {
		n += len(l)
	}
	return n
}

func step(s string) { fmt.Println("==> " + s) }

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// showKeycloak prints what the operator published for the Keycloak sample: Clever Cloud serves
// its URL and initial admin credentials only at v4 (its v2 env is empty, as the fake serves it
// by default, like the real API today). The password is never printed.
func showKeycloak(ctx context.Context, k8s client.Client, fake *fakeapi.Server) error {
	kc := &unstructured.Unstructured{}
	kc.SetAPIVersion("api.clever-cloud.com/v1")
	kc.SetKind("Keycloak")
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "keycloak"}, kc); err != nil {
		return fmt.Errorf("reading the Keycloak sample: %w", err)
	}
	addonID, _, _ := unstructured.NestedString(kc.Object, "status", "addon")
	sec := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "keycloak-secrets"}, sec); err != nil {
		return fmt.Errorf("reading Secret keycloak-secrets: %w", err)
	}
	v4 := map[string]any{}
	for _, list := range fake.AllAddons() {
		for _, a := range list {
			if a.ID == addonID {
				v4, _ = fake.OperatorAddon(a.RealID)
			}
		}
	}
	creds, _ := v4["initialCredentials"].(map[string]any)
	fmt.Printf("\nKeycloak %s (from GET /v4/addon-providers/addon-keycloak/addons/<realId>; its v2 env has %d variables):\n", addonID, len(fake.Env(addonID)))
	fmt.Printf("  CC_KEYCLOAK_URL   = %s   (v4 accessUrl: %v)\n", sec.Data["CC_KEYCLOAK_URL"], v4["accessUrl"])
	fmt.Printf("  CC_KEYCLOAK_ADMIN = %s   (v4 initialCredentials.user: %v)\n", sec.Data["CC_KEYCLOAK_ADMIN"], creds["user"])
	fmt.Printf("  CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD: %d characters in Secret keycloak-secrets (not shown)\n", len(sec.Data["CC_KEYCLOAK_ADMIN_DEFAULT_PASSWORD"]))
	ver, _, _ := unstructured.NestedString(kc.Object, "status", "version")
	avail, _, _ := unstructured.NestedStringSlice(kc.Object, "status", "availableVersions")
	fmt.Printf("  status.version = %s, status.availableVersions = %s\n", ver, strings.Join(avail, ", "))
	if len(sec.Data["CC_KEYCLOAK_URL"]) == 0 || string(sec.Data["CC_KEYCLOAK_URL"]) != fmt.Sprint(v4["accessUrl"]) ||
		string(sec.Data["CC_KEYCLOAK_ADMIN"]) != fmt.Sprint(creds["user"]) {
		return errors.New("the Keycloak Secret does not hold the URL and admin user Clever Cloud serves at v4")
	}
	return nil
}
