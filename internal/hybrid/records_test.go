package hybrid

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/kube"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/secrets"
)

const ownSecret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\n  namespace: ns\ntype: Opaque\ndata:\n  K: dg==\n"

func TestRecordProblem(t *testing.T) {
	base := func(manifest string) *release.Release {
		r := rel("postgresql-db", 1, release.StatusDeployed)
		r.Manifest = manifest
		return r
	}
	ok := map[string]*release.Release{
		"empty manifest":  base(""),
		"own Secret":      base("---\n# Source: c/templates/secret.yaml\n" + ownSecret),
		"no namespace":    base("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\n"),
		"empty documents": base("---\n---\n" + ownSecret + "---\nnull\n---\n"),
		"JSON":            base(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"ns"}}`),
		"no release namespace": func() *release.Release {
			r := base(ownSecret)
			r.Namespace = ""
			return r
		}(),
	}
	for name, r := range ok {
		if p := recordProblem("ns", r); p != "" {
			t.Errorf("%s: refused (%s); want accepted", name, p)
		}
	}
	bad := map[string]struct {
		rls  *release.Release
		want string // in the problem
	}{
		"other namespace's Secret": {base(ownSecret + "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: victim\n  namespace: team-a\n"), "Secret team-a/victim"},
		"kube-system ConfigMap":    {base("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: coredns\n  namespace: kube-system\n---\n" + ownSecret), "ConfigMap kube-system/coredns"},
		"cluster-scoped":           {base(ownSecret + "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: admin\n"), "ClusterRole (rbac.authorization.k8s.io/v1) ns/admin"},
		"other kind in namespace":  {base("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"), "Deployment (apps/v1) ns/web"},
		"v1 other kind":            {base("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n"), "ServiceAccount ns/sa"},
		"other group's Secret":     {base("apiVersion: example.com/v1\nkind: Secret\nmetadata:\n  name: s\n"), "Secret (example.com/v1) ns/s"},
		"list":                     {base("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: victim\n    namespace: team-a\n"), "list"},
		"Secret with items": {base("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: victim\n    namespace: team-a\n"),
			"list"},
		"JSON other namespace": {base(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"victim","namespace":"team-a"}}`), "Secret team-a/victim"},
		"namespace not a string": {base("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: [team-a]\n"),
			"Secret ?/s"},
		"unreadable": {base(ownSecret + "---\n{{ not yaml\n"), "cannot"},
		"no kind":    {base("apiVersion: v1\nmetadata:\n  name: s\n"), "cannot be decoded"},
		// A separator inside a quoted value: whichever way it is read, refused.
		"separator in a value": {base("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  a: \"x\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: admin\n  x: \"\n"),
			""},
		"separator with text": {base(ownSecret + "---apiVersion: v1\nkind: Secret\nmetadata:\n  name: victim\n  namespace: team-a\n"), ""},
		"hook": {func() *release.Release {
			r := base(ownSecret)
			r.Hooks = []*release.Hook{{Name: "pre", Kind: "Job", Path: "x", Manifest: "apiVersion: batch/v1\nkind: Job\n", Events: []release.HookEvent{release.HookPreDelete}}}
			return r
		}(), "hooks (Job pre first)"},
		"release namespace": {func() *release.Release {
			r := base(ownSecret)
			r.Namespace = "team-a"
			return r
		}(), `release namespace is "team-a"`},
		"no info": {func() *release.Release {
			r := base(ownSecret)
			r.Info = nil
			return r
		}(), "incomplete"},
	}
	for name, c := range bad {
		p := recordProblem("ns", c.rls)
		if p == "" || !strings.Contains(p, c.want) {
			t.Errorf("%s: problem %q; want one naming %q", name, p, c.want)
		}
	}
}

func TestForgedRecordErrorMessage(t *testing.T) {
	r := rel("postgresql-db", 2, release.StatusDeployed)
	r.Manifest = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: victim\n  namespace: team-a\nstringData:\n  password: pw-S3cr3t-value\n"
	err := verifyRecord("ns", "sh.helm.release.v1.postgresql-db.v2", r)
	var f *ForgedRecordError
	if !errors.As(err, &f) || !IsForgedRecord(err) {
		t.Fatalf("%v; want a ForgedRecordError", err)
	}
	msg := err.Error()
	for _, want := range []string{"ns/sh.helm.release.v1.postgresql-db.v2", "Secret team-a/victim", "Delete that record Secret"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	// Never data; and the record's name within the first 300 characters (what the Ready
	// condition shows of Helm's), and nothing Helm's storage reads as "not found".
	if strings.Contains(msg, "pw-S3cr3t") || strings.Contains(msg, "not found") || strings.Index(msg, "sh.helm.release") > 200 {
		t.Fatalf("message %q", msg)
	}
}

// recordingKube is Helm's printing fake kube client, recording what Helm asks it to build
// (every manifest it acts on goes through Build) and act on.
type recordingKube struct {
	kubefake.PrintingKubeClient
	built []string
	acted []string
}

func (k *recordingKube) Build(r io.Reader, v bool) (kube.ResourceList, error) {
	b, _ := io.ReadAll(r)
	k.built = append(k.built, string(b))
	return k.PrintingKubeClient.Build(bytes.NewReader(b), v)
}

func (k *recordingKube) Create(l kube.ResourceList) (*kube.Result, error) {
	k.acted = append(k.acted, "create")
	return k.PrintingKubeClient.Create(l)
}

func (k *recordingKube) Update(o, m kube.ResourceList, f bool) (*kube.Result, error) {
	k.acted = append(k.acted, "update")
	return k.PrintingKubeClient.Update(o, m, f)
}

func (k *recordingKube) Delete(l kube.ResourceList) (*kube.Result, []error) {
	k.acted = append(k.acted, "delete")
	return k.PrintingKubeClient.Delete(l)
}

// sawForged: Helm was given the forged objects to build.
func (k *recordingKube) sawForged() bool {
	for _, b := range k.built {
		if strings.Contains(b, "team-a") || strings.Contains(b, "kube-system") {
			return true
		}
	}
	return false
}

// realRelease installs the real chart for a PostgreSql through the hold (over a fake
// clientset, namespace ns), then upgrades it once: two records Helm and the operator wrote.
type realRelease struct {
	cs    *k8sfake.Clientset
	hold  *installHold
	cfg   *action.Configuration
	kube  *recordingKube
	chart *chart.Chart
	vals  map[string]any
}

const realName = "postgresql-db"

func newRealRelease(t *testing.T) *realRelease {
	t.Helper()
	ch, err := loader.Load("../../helm-charts/clever-addon")
	if err != nil {
		t.Fatal(err)
	}
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kinds.AnnotationAddonID: "addon_1", secrets.AnnotationCredentialsHash: secrets.Hash(pgData)}}}
	vals, err := Values(pgKind(t), pgObject(nil), src, pgData)
	if err != nil {
		t.Fatal(err)
	}
	cs := k8sfake.NewClientset()
	h := newInstallHold(cs.CoreV1().Secrets("ns"), "ns", logr.Discard())
	r := &realRelease{cs: cs, hold: h, chart: ch, vals: vals, kube: &recordingKube{PrintingKubeClient: kubefake.PrintingKubeClient{Out: io.Discard}}}
	r.cfg = &action.Configuration{Releases: storage.Init(h), KubeClient: r.kube, Capabilities: chartutil.DefaultCapabilities, Log: func(string, ...any) {}}
	in := action.NewInstall(r.cfg)
	in.ReleaseName, in.Namespace = realName, "ns"
	if _, err := in.Run(ch, vals); err != nil {
		t.Fatalf("installing the real chart: %v", err)
	}
	if _, err := r.upgrade(map[string]any{"a": "b"}); err != nil {
		t.Fatalf("upgrading the real release: %v", err)
	}
	r.kube.built, r.kube.acted = nil, nil
	return r
}

func (r *realRelease) upgrade(labels map[string]any) (*release.Release, error) {
	vals, err := Values(pgKindOf(), pgObject(map[string]any{"labels": labels}), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kinds.AnnotationAddonID: "addon_1", secrets.AnnotationCredentialsHash: secrets.Hash(pgData)}}}, pgData)
	if err != nil {
		return nil, err
	}
	up := action.NewUpgrade(r.cfg)
	up.Namespace, up.MaxHistory = "ns", MaxReleaseHistory
	return up.Run(realName, r.chart, vals)
}

func pgKindOf() *kinds.Kind {
	k, _ := kinds.KindFor(pgObject(nil).GroupVersionKind())
	return k
}

// forge rewrites revision rev's record Secret as a tenant would: decoded, changed, encoded.
func (r *realRelease) forge(t *testing.T, rev int, change func(*release.Release)) string {
	t.Helper()
	name := "sh.helm.release.v1." + realName + ".v" + strconv.Itoa(rev)
	sec, err := r.cs.CoreV1().Secrets("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rls, err := decodeRecord(sec)
	if err != nil {
		t.Fatal(err)
	}
	change(rls)
	if sec.Data["release"], err = encodeRecord(rls); err != nil {
		t.Fatal(err)
	}
	if _, err := r.cs.CoreV1().Secrets("ns").Update(context.Background(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

func appendVictims(rls *release.Release) {
	rls.Manifest += "\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: victim\n  namespace: team-a\n" +
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: victim\n  namespace: kube-system\n"
}

// refused: err is the refusal of that record, and Helm built and did nothing.
func (r *realRelease) refused(t *testing.T, what string, err error, record string) {
	t.Helper()
	var f *ForgedRecordError
	if !errors.As(err, &f) || f.Secret != record || f.Namespace != "ns" {
		t.Fatalf("%s: %v; want the refusal of %s", what, err, record)
	}
	if r.kube.sawForged() || len(r.kube.acted) > 0 {
		t.Fatalf("%s: Helm built %q and did %v; want nothing of the forged record", what, r.kube.built, r.kube.acted)
	}
}

// Our own records, of the real chart, are accepted on every path.
func TestRealRecordsAccepted(t *testing.T) {
	r := newRealRelease(t)
	for _, k := range []string{"sh.helm.release.v1." + realName + ".v1", "sh.helm.release.v1." + realName + ".v2"} {
		sec, err := r.cs.CoreV1().Secrets("ns").Get(context.Background(), k, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rls, err := decodeRecord(sec)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rls.Manifest, "kind: Secret") {
			t.Fatalf("%s: manifest %q; want the rendered Secret", k, rls.Manifest)
		}
		if err := verifyRecord("ns", k, rls); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.upgrade(map[string]any{"c": "d"}); err != nil {
		t.Fatal(err)
	}
	if _, err := action.NewGet(r.cfg).Run(realName); err != nil {
		t.Fatal(err)
	}
	rb := action.NewRollback(r.cfg)
	rb.Version = 2
	if err := rb.Run(realName); err != nil {
		t.Fatal(err)
	}
	if err := failPendingRelease(r.cfg.Releases, realName); err != nil {
		t.Fatal(err)
	}
	if _, err := r.cfg.Releases.ListReleases(); err != nil {
		t.Fatal(err)
	}
	if _, err := action.NewUninstall(r.cfg).Run(realName); err != nil {
		t.Fatal(err)
	}
	if l, _ := r.cs.CoreV1().Secrets("ns").List(context.Background(), metav1.ListOptions{}); len(l.Items) != 0 {
		t.Fatalf("%d records left after the uninstall", len(l.Items))
	}
}

// A forged deployed record: every Helm path that would act on it refuses it instead.
func TestForgedRecordRefusedOnEveryPath(t *testing.T) {
	paths := map[string]func(r *realRelease) error{
		// helm-operator-plugins' read of the release (Last: Query) and of a revision (Get).
		"get last": func(r *realRelease) error { _, err := action.NewGet(r.cfg).Run(realName); return err },
		"get revision": func(r *realRelease) error {
			g := action.NewGet(r.cfg)
			g.Version = 2
			_, err := g.Run(realName)
			return err
		},
		// An upgrade: Last and Deployed (Query), then deletes what the new render lacks.
		"upgrade": func(r *realRelease) error { _, err := r.upgrade(map[string]any{"x": "y"}); return err },
		// A rollback to the forged revision (Get), as after a failed upgrade.
		"rollback": func(r *realRelease) error {
			rb := action.NewRollback(r.cfg)
			rb.Version = 2
			return rb.Run(realName)
		},
		// The uninstall of a deleted resource (History: Query).
		"uninstall": func(r *realRelease) error { _, err := action.NewUninstall(r.cfg).Run(realName); return err },
		"history":   func(r *realRelease) error { _, err := action.NewHistory(r.cfg).Run(realName); return err },
		"deployed":  func(r *realRelease) error { _, err := r.cfg.Releases.Deployed(realName); return err },
		"list":      func(r *realRelease) error { _, err := r.cfg.Releases.ListReleases(); return err },
		"delete":    func(r *realRelease) error { _, err := r.cfg.Releases.Delete(realName, 2); return err },
		// The operator's repair of an interrupted release (Last).
		"fail pending": func(r *realRelease) error { return failPendingRelease(r.cfg.Releases, realName) },
	}
	forgeries := map[string]func(*release.Release){
		"victims appended": appendVictims,
		"cluster-scoped": func(rls *release.Release) {
			rls.Manifest += "\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: team-a\n"
		},
		"pre-delete hook": func(rls *release.Release) {
			rls.Hooks = []*release.Hook{{Name: "team-a", Kind: "Job", Events: []release.HookEvent{release.HookPreDelete}}}
		},
		"release namespace": func(rls *release.Release) { rls.Namespace = "team-a" },
	}
	for fname, change := range forgeries {
		for pname, run := range paths {
			t.Run(fname+"/"+pname, func(t *testing.T) {
				r := newRealRelease(t)
				var reported []error
				r.hold.refused = func(err error) { reported = append(reported, err) }
				record := r.forge(t, 2, change)
				r.refused(t, pname, run(r), record)
				if len(reported) != 1 {
					t.Fatalf("refusal reported %d times; want once", len(reported))
				}
				// The forged record is left as it is, for its owner to delete.
				if _, err := r.cs.CoreV1().Secrets("ns").Get(context.Background(), record, metav1.GetOptions{}); err != nil {
					t.Fatalf("the forged record: %v", err)
				}
			})
		}
	}
}

// An older revision forged (the one a rollback goes back to) is refused as well: Helm reads
// the history whole.
func TestForgedOldRevisionRefused(t *testing.T) {
	r := newRealRelease(t)
	record := r.forge(t, 1, appendVictims)
	rb := action.NewRollback(r.cfg)
	rb.Version = 1
	r.refused(t, "rollback", rb.Run(realName), record)
	_, err := r.upgrade(map[string]any{"x": "y"})
	r.refused(t, "upgrade", err, record)
}

// Deleting the forged record recovers: Helm goes on from the revisions left.
func TestForgedRecordDeletedRecovers(t *testing.T) {
	r := newRealRelease(t)
	record := r.forge(t, 2, appendVictims)
	if _, err := r.upgrade(map[string]any{"x": "y"}); !IsForgedRecord(err) {
		t.Fatalf("upgrade over the forged record: %v", err)
	}
	if err := r.cs.CoreV1().Secrets("ns").Delete(context.Background(), record, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.upgrade(map[string]any{"x": "y"}); err != nil {
		t.Fatalf("upgrade after the forged record was deleted: %v", err)
	}
	if r.kube.sawForged() {
		t.Fatalf("Helm built %q", r.kube.built)
	}
	if _, err := action.NewUninstall(r.cfg).Run(realName); err != nil {
		t.Fatal(err)
	}
}

// The index's read path (indexedSecrets, records recalled from memory) is checked too.
func TestForgedRecordRefusedThroughTheIndex(t *testing.T) {
	f := newReleaseFixture(t)
	r := rel("kv-k", 1, release.StatusDeployed)
	r.Manifest = ownSecret
	if err := f.store.Create(r); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Last("kv-k"); err != nil {
		t.Fatalf("own record: %v", err)
	}
	sec := f.secretOf(t, r)
	r.Manifest += "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: victim\n  namespace: team-a\n"
	data, err := encodeRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	sec.Data["release"] = data
	if _, err := f.cs.CoreV1().Secrets("ns").Update(context.Background(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.indexAt(f.secretOf(t, r))
	if _, err := f.store.Last("kv-k"); !IsForgedRecord(err) {
		t.Fatalf("Last: %v; want the refusal", err)
	}
	if _, err := f.store.Get("kv-k", 1); !IsForgedRecord(err) {
		t.Fatalf("Get: %v; want the refusal", err)
	}
}

// A record that cannot be decoded fails its read (Helm's driver panicked on it).
func TestUndecodableRecordFailsGet(t *testing.T) {
	cs := k8sfake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.x.v1", Namespace: "ns",
		Labels: map[string]string{"owner": "helm", "name": "x", "version": "1"}}, Data: map[string][]byte{"release": []byte("!!")}})
	h := newInstallHold(cs.CoreV1().Secrets("ns"), "ns", logr.Discard())
	if _, err := h.Get("sh.helm.release.v1.x.v1"); err == nil {
		t.Fatal("decoded garbage")
	}
	// Skipped by a query, as Helm's driver does.
	if l, err := h.Query(map[string]string{"owner": "helm", "name": "x"}); err != nil || len(l) != 0 {
		t.Fatalf("query: %v, %v", l, err)
	}
}
