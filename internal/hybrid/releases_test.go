package hybrid

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/clever-operator/clever-operator/internal/intern"
	"github.com/clever-operator/clever-operator/internal/kinds"
)

// releaseFixture: kube-apiserver is a client-go fake clientset; the index's informer is a
// controller-runtime fake client seeded separately, so a test decides how far behind it is.
type releaseFixture struct {
	cs    *k8sfake.Clientset
	x     *ReleaseIndex
	store *storage.Storage
}

func newReleaseFixture(t *testing.T, indexed ...*corev1.Secret) *releaseFixture {
	t.Helper()
	objs := make([]client.Object, 0, len(indexed))
	for _, s := range indexed {
		objs = append(objs, s.DeepCopy())
	}
	cs := k8sfake.NewClientset()
	x := &ReleaseIndex{meta: crfake.NewClientBuilder().WithObjects(objs...).WithIndex(releaseMeta(), releaseNameField, releaseName).Build(), secrets: cs.CoreV1(), written: map[types.NamespacedName]int{}}
	return &releaseFixture{cs: cs, x: x, store: storage.Init(newInstallHold(&indexedSecrets{SecretInterface: cs.CoreV1().Secrets("ns"), ns: "ns", x: x}, "ns", logr.Discard()))}
}

// newSyncedFixture: the Secrets are in kube-apiserver and in the index (written by another
// process, not in the ledger); the clientset's record of requests starts empty.
func newSyncedFixture(t *testing.T, secs ...*corev1.Secret) *releaseFixture {
	t.Helper()
	f := newReleaseFixture(t, secs...)
	for _, s := range secs {
		if _, err := f.cs.CoreV1().Secrets("ns").Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.cs.ClearActions()
	return f
}

// requests counts the requests with that verb on Secrets kube-apiserver received.
func (f *releaseFixture) requests(verb string) int {
	n := 0
	for _, a := range f.cs.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == "secrets" {
			n++
		}
	}
	return n
}

// lists counts the LISTs of Secrets kube-apiserver received.
func (f *releaseFixture) lists() int { return f.requests("list") }

// gets counts the GETs of Secrets kube-apiserver received.
func (f *releaseFixture) gets() int { return f.requests("get") }

func rel(name string, rev int, st release.Status) *release.Release {
	return &release.Release{Name: name, Namespace: "ns", Version: rev, Info: &release.Info{Status: st},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "0.1.0"}}}
}

// secretOf is the Secret Helm's driver writes for r (read back from the clientset).
func (f *releaseFixture) secretOf(t *testing.T, r *release.Release) *corev1.Secret {
	t.Helper()
	s, err := f.cs.CoreV1().Secrets("ns").Get(context.Background(), "sh.helm.release.v1."+r.Name+".v"+strconv.Itoa(r.Version), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestReleaseIndexAnswersWithGetsNotLists(t *testing.T) {
	// Written by "another process": in kube-apiserver and in the index, not in the ledger.
	seed := newReleaseFixture(t)
	if err := seed.store.Create(rel("postgresql-db", 1, release.StatusDeployed)); err != nil {
		t.Fatal(err)
	}
	sec := seed.secretOf(t, rel("postgresql-db", 1, ""))
	if sec.Labels[LabelRelease] != kinds.ManagedByValue {
		t.Fatalf("release Secret not labelled as the operator's: %v", sec.Labels)
	}
	f := newSyncedFixture(t, sec)

	got, err := f.store.Deployed("postgresql-db")
	if err != nil || got.Version != 1 {
		t.Fatalf("Deployed = %v, %v; want revision 1", got, err)
	}
	last, err := f.store.Last("postgresql-db")
	if err != nil || last.Version != 1 {
		t.Fatalf("Last = %v, %v; want revision 1", last, err)
	}
	if n := f.lists(); n != 0 {
		t.Fatalf("%d LISTs of Secrets; want the index to answer with GETs", n)
	}
	// A release nobody wrote: missing, still without a LIST.
	if _, err := f.store.Last("redis-other"); err == nil {
		t.Fatal("Last of an unknown release succeeded")
	}
	if n := f.lists(); n != 0 {
		t.Fatalf("%d LISTs for an unknown release; want 0", n)
	}
	// Any other query (helm list): kube-apiserver.
	if _, err := f.store.ListReleases(); err != nil {
		t.Fatal(err)
	}
	if n := f.lists(); n != 1 {
		t.Fatalf("%d LISTs for ListReleases; want 1", n)
	}
}

func TestReleaseIndexFallsBackWhenBehind(t *testing.T) {
	// The index has seen nothing yet: what this process writes is read back by a LIST.
	f := newReleaseFixture(t)
	if err := f.store.Create(rel("mysql-a", 1, release.StatusDeployed)); err != nil {
		t.Fatal(err)
	}
	f.cs.ClearActions()
	got, err := f.store.Last("mysql-a")
	if err != nil || got.Version != 1 {
		t.Fatalf("Last = %v, %v; want revision 1 through the fallback", got, err)
	}
	if n := f.lists(); n != 1 {
		t.Fatalf("%d LISTs; want 1 (the index is behind a revision this process wrote)", n)
	}

	// The index lists revision 1; this process wrote revision 2 and superseded 1.
	r1 := f.secretOf(t, rel("mysql-a", 1, ""))
	g := newReleaseFixture(t, r1)
	for _, r := range []*release.Release{rel("mysql-a", 1, release.StatusDeployed), rel("mysql-a", 2, release.StatusDeployed)} {
		if err := g.store.Create(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.store.Update(rel("mysql-a", 1, release.StatusSuperseded)); err != nil {
		t.Fatal(err)
	}
	g.cs.ClearActions()
	got, err = g.store.Deployed("mysql-a")
	if err != nil || got.Version != 2 {
		t.Fatalf("Deployed = %v, %v; want revision 2", got, err)
	}
	if n := g.lists(); n != 1 {
		t.Fatalf("%d LISTs; want 1", n)
	}

	// The index lists a revision that was deleted: LIST.
	h := newReleaseFixture(t, r1)
	h.cs.ClearActions()
	if _, err := h.store.Last("mysql-a"); err == nil {
		t.Fatal("Last found a deleted release")
	}
	if n := h.lists(); n != 1 {
		t.Fatalf("%d LISTs; want 1 (the index is behind a deletion)", n)
	}
}

func TestReleaseIndexQueryAppliesToFreshLabels(t *testing.T) {
	// The index saw revision 1 deployed; kube-apiserver now has it superseded by 2 (written
	// elsewhere, both indexed): status=deployed is matched against what the GETs answer.
	seed := newReleaseFixture(t)
	for _, r := range []*release.Release{rel("redis-r", 1, release.StatusDeployed), rel("redis-r", 2, release.StatusDeployed)} {
		if err := seed.store.Create(r); err != nil {
			t.Fatal(err)
		}
	}
	r1, r2 := seed.secretOf(t, rel("redis-r", 1, "")), seed.secretOf(t, rel("redis-r", 2, ""))
	f := newReleaseFixture(t, r1, r2)
	for _, s := range []*corev1.Secret{r1, r2} {
		s = s.DeepCopy()
		if s.Name == r1.Name {
			s.Labels["status"] = string(release.StatusSuperseded)
		}
		if _, err := f.cs.CoreV1().Secrets("ns").Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := f.store.DeployedAll("redis-r")
	if err != nil || len(all) != 1 || all[0].Version != 2 {
		t.Fatalf("DeployedAll = %v, %v; want revision 2 only", all, err)
	}
}

// versioned makes the clientset give every Secret it creates or updates a new
// resourceVersion, as kube-apiserver does (its tracker leaves them empty).
func (f *releaseFixture) versioned() {
	rv := 100
	f.cs.PrependReactor("*", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if o, ok := a.(interface{ GetObject() runtime.Object }); ok && (a.GetVerb() == "create" || a.GetVerb() == "update") {
			rv++
			o.GetObject().(*corev1.Secret).ResourceVersion = strconv.Itoa(rv)
		}
		return false, nil, nil
	})
}

// indexAt makes the index list the Secrets given, at their resourceVersions.
func (f *releaseFixture) indexAt(secs ...*corev1.Secret) {
	objs := make([]client.Object, 0, len(secs))
	for _, s := range secs {
		objs = append(objs, s.DeepCopy())
	}
	f.x.meta = crfake.NewClientBuilder().WithObjects(objs...).WithIndex(releaseMeta(), releaseNameField, releaseName).Build()
}

func TestReleaseIndexAnswersItsRecentRecordsFromMemory(t *testing.T) {
	f := newReleaseFixture(t)
	f.versioned()
	if err := f.store.Create(rel("kv-a", 1, release.StatusDeployed)); err != nil {
		t.Fatal(err)
	}
	s1 := f.secretOf(t, rel("kv-a", 1, ""))
	if s1.ResourceVersion == "" {
		t.Fatal("the fixture gave the record no resourceVersion")
	}
	f.indexAt(s1)
	f.cs.ClearActions()
	got, err := f.store.Last("kv-a")
	if err != nil || got.Version != 1 || got.Info.Status != release.StatusDeployed {
		t.Fatalf("Last = %v, %v; want revision 1 deployed", got, err)
	}
	if g, l := f.gets(), f.lists(); g != 0 || l != 0 {
		t.Fatalf("%d GETs, %d LISTs of a record this process wrote and the index lists at the same version; want none", g, l)
	}
	if !maps.Equal(got.Labels, s1.Labels) {
		t.Fatalf("labels %v; want the record's %v", got.Labels, s1.Labels)
	}
	// The labels are the read's own: a change to them is not in the next read.
	got.Labels["status"] = "edited"
	if again, err := f.store.Last("kv-a"); err != nil || again.Labels["status"] != string(release.StatusDeployed) {
		t.Fatalf("second read: %v, %v; want its own labels", again, err)
	}

	// Written since by someone else: the index lists another resourceVersion; a GET reads it.
	moved := s1.DeepCopy()
	moved.ResourceVersion = "9999"
	f.indexAt(moved)
	f.cs.ClearActions()
	if _, err := f.store.Last("kv-a"); err != nil {
		t.Fatal(err)
	}
	if g := f.gets(); g != 1 {
		t.Fatalf("%d GETs of a record the index lists at another version; want 1", g)
	}

	// An update is remembered as kube-apiserver answered it.
	if err := f.store.Update(rel("kv-a", 1, release.StatusSuperseded)); err != nil {
		t.Fatal(err)
	}
	s1 = f.secretOf(t, rel("kv-a", 1, ""))
	f.indexAt(s1)
	f.cs.ClearActions()
	if got, err := f.store.Last("kv-a"); err != nil || got.Info.Status != release.StatusSuperseded || f.gets() != 0 {
		t.Fatalf("after an update: %v, %v, %d GETs; want the superseded record from memory", got, err, f.gets())
	}

	// A deleted record is forgotten; Helm's driver reads it before deleting it: from memory.
	f.cs.ClearActions()
	if _, err := f.store.Delete("kv-a", 1); err != nil {
		t.Fatal(err)
	}
	if g := f.gets(); g != 0 {
		t.Fatalf("%d GETs to delete a record this process wrote and the index lists at the same version; want 0", g)
	}
	if _, ok := f.x.recalled("ns", s1.Name, s1.ResourceVersion); ok {
		t.Fatal("a deleted record is still remembered")
	}

	// Only the last recentRecords are kept.
	for i := range recentRecords + 1 {
		if err := f.store.Create(rel(fmt.Sprintf("kv-%d", i), 1, release.StatusDeployed)); err != nil {
			t.Fatal(err)
		}
	}
	first, last := f.secretOf(t, rel("kv-0", 1, "")), f.secretOf(t, rel(fmt.Sprintf("kv-%d", recentRecords), 1, ""))
	if _, ok := f.x.recalled("ns", first.Name, first.ResourceVersion); ok {
		t.Fatal("the oldest record is kept beyond recentRecords")
	}
	if _, ok := f.x.recalled("ns", last.Name, last.ResourceVersion); !ok {
		t.Fatal("the last record written is not remembered")
	}
	if len(f.x.recent) != recentRecords || len(f.x.order) != recentRecords {
		t.Fatalf("%d records kept (%d in order); want %d", len(f.x.recent), len(f.x.order), recentRecords)
	}
}

func TestReleaseIndexForgetsUninstalled(t *testing.T) {
	f := newReleaseFixture(t)
	if err := f.store.Create(rel("mongodb-m", 1, release.StatusDeployed)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Delete("mongodb-m", 1); err != nil {
		t.Fatal(err)
	}
	if n := f.x.highestWritten("ns", "mongodb-m"); n != 0 {
		t.Fatalf("ledger keeps revision %d of an uninstalled release", n)
	}
	f.cs.ClearActions()
	if _, err := f.store.Last("mongodb-m"); err == nil {
		t.Fatal("Last found an uninstalled release")
	}
	if n := f.lists(); n != 0 {
		t.Fatalf("%d LISTs after an uninstall; want 0", n)
	}
}

func TestReleaseOfSecret(t *testing.T) {
	for _, c := range []struct {
		in   string
		rel  string
		rev  int
		want bool
	}{
		{"sh.helm.release.v1.postgresql-db.v3", "postgresql-db", 3, true},
		{"sh.helm.release.v1.redis-a.v2.b.v12", "redis-a.v2.b", 12, true},
		{"sh.helm.release.v1.x.vz", "", 0, false},
		{"db-secrets", "", 0, false},
	} {
		rel, rev, ok := releaseOfSecret(c.in)
		if rel != c.rel || rev != c.rev || ok != c.want {
			t.Errorf("releaseOfSecret(%q) = %q, %d, %v; want %q, %d, %v", c.in, rel, rev, ok, c.rel, c.rev, c.want)
		}
	}
}

func TestAdoptReleases(t *testing.T) {
	mk := func(name, ns, apiVersion string, labels map[string]string) *corev1.Secret {
		l := map[string]string{"owner": "helm", "name": name}
		for k, v := range labels {
			l[k] = v
		}
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1." + name + ".v1", Namespace: ns, Labels: l,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: "K", Name: name, UID: "u", Controller: ptr.To(true)}}}}
	}
	cs := k8sfake.NewClientset(
		mk("ours", "a", kinds.Group+"/v1alpha1", nil),
		mk("ours-too", "b", kinds.Group+"/v1alpha1", nil),
		mk("theirs", "a", "apps/v1", nil),
		mk("done", "a", kinds.Group+"/v1alpha1", map[string]string{LabelRelease: kinds.ManagedByValue}),
	)
	// Namespace b is not watched; "theirs" is another controller's release; "done" is labelled.
	x := &ReleaseIndex{secrets: cs.CoreV1(), written: map[types.NamespacedName]int{}}
	n, err := x.adopt(context.Background(), []string{"a"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("adopted %d; want 1 (namespace a, ours only)", n)
	}
	var patched []string
	for _, a := range cs.Actions() {
		if p, ok := a.(k8stesting.PatchAction); ok {
			patched = append(patched, p.GetNamespace()+"/"+p.GetName())
		}
	}
	if len(patched) != 1 || patched[0] != "a/sh.helm.release.v1.ours.v1" {
		t.Fatalf("patched %v", patched)
	}
	s, _ := cs.CoreV1().Secrets("a").Get(context.Background(), "sh.helm.release.v1.ours.v1", metav1.GetOptions{})
	if s.Labels[LabelRelease] != kinds.ManagedByValue {
		t.Fatalf("labels after adoption: %v", s.Labels)
	}
}

// An install's pending record is written once, with its outcome: one create, no update.
func TestReleaseInstallWrittenOnce(t *testing.T) {
	for _, outcome := range []release.Status{release.StatusDeployed, release.StatusFailed} {
		t.Run(string(outcome), func(t *testing.T) {
			f := newReleaseFixture(t)
			r := rel("kv-k", 1, release.StatusPendingInstall)
			if err := f.store.Create(r); err != nil {
				t.Fatal(err)
			}
			if n := len(f.cs.Actions()); n != 0 {
				t.Fatalf("%d requests for the pending record; want 0 (held until the outcome)", n)
			}
			got, err := f.store.Get("kv-k", 1)
			if err != nil || got.Info.Status != release.StatusPendingInstall {
				t.Fatalf("held record: %v, %v", got, err)
			}
			// Held as the release itself, never encoded: a record read back from a Secret
			// would be a decoded chart, not the one the install holds.
			if got.Chart != r.Chart {
				t.Fatal("the held record was encoded and decoded; want it kept as the release")
			}
			if got.Info == r.Info {
				t.Fatal("Get returned the install's own info; want a copy")
			}
			r.Info.Status = outcome
			if err := f.store.Update(r); err != nil {
				t.Fatal(err)
			}
			var verbs []string
			for _, a := range f.cs.Actions() {
				verbs = append(verbs, a.GetVerb())
			}
			if len(verbs) != 1 || verbs[0] != "create" {
				t.Fatalf("requests %v; want one create", verbs)
			}
			if s := f.secretOf(t, r); s.Labels["status"] != string(outcome) || s.Labels[LabelRelease] != kinds.ManagedByValue {
				t.Fatalf("written labels %v", s.Labels)
			}
			// Later writes of the release are updates as usual.
			if err := f.store.Update(r); err != nil {
				t.Fatal(err)
			}
			if a := f.cs.Actions(); a[len(a)-1].GetVerb() != "update" {
				t.Fatalf("second record: %s; want an update", a[len(a)-1].GetVerb())
			}
		})
	}
	// A pending install deleted (rolled back) before its outcome: nothing was written.
	f := newReleaseFixture(t)
	if err := f.store.Create(rel("kv-z", 1, release.StatusPendingInstall)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Delete("kv-z", 1); err != nil {
		t.Fatal(err)
	}
	if n := len(f.cs.Actions()); n != 0 {
		t.Fatalf("requests %v; want none", f.cs.Actions())
	}
}

// A release Secret of an earlier version (no LabelRelease) restored while the operator runs:
// the index does not list it, so Helm installs; the record collides with it, and the
// release's Secrets are labelled so the next reconcile reads the release through the index.
func TestReleaseRestoredUnlabelledIsAdopted(t *testing.T) {
	f := newReleaseFixture(t)
	restored := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.redis-r.v1", Namespace: "ns",
		Labels:          map[string]string{"owner": "helm", "name": "redis-r", "status": "deployed", "version": "1"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: kinds.Group + "/v1", Kind: "Redis", Name: "r", UID: "old", Controller: ptr.To(true)}}}}
	if _, err := f.cs.CoreV1().Secrets("ns").Create(context.Background(), restored, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Last("redis-r"); err == nil {
		t.Fatal("the index listed a release Secret without its label")
	}
	r := rel("redis-r", 1, release.StatusPendingInstall)
	if err := f.store.Create(r); err != nil {
		t.Fatal(err)
	}
	r.Info.Status = release.StatusDeployed
	if err := f.store.Update(r); err == nil {
		t.Fatal("recording over the restored revision succeeded")
	}
	s, err := f.cs.CoreV1().Secrets("ns").Get(context.Background(), restored.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Labels[LabelRelease] != kinds.ManagedByValue {
		t.Fatalf("restored release Secret not labelled: %v", s.Labels)
	}
}

func TestSlimReleaseMeta(t *testing.T) {
	in := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.a.v1", Namespace: "ns", ResourceVersion: "7", UID: "u",
		Labels:          map[string]string{"owner": "helm", "name": "a", "version": "1", "status": "deployed", LabelRelease: "clever-operator", "modifiedAt": "1"},
		OwnerReferences: []metav1.OwnerReference{{Name: "a"}}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	out, err := slimReleaseMeta(in)
	if err != nil {
		t.Fatal(err)
	}
	m := out.(*metav1.PartialObjectMetadata)
	if m.Name != in.Name || m.Namespace != "ns" || m.ResourceVersion != "7" || len(m.Labels) != 2 || m.Labels["modifiedAt"] != "" ||
		m.UID != "" || m.OwnerReferences != nil || m.ManagedFields != nil {
		t.Fatalf("slimmed to %+v", m.ObjectMeta)
	}
	// What it keeps is what the index's key is made of.
	if got := releaseName(m); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("releaseName of the slimmed metadata = %v; want [a]", got)
	}
	if o, _ := slimReleaseMeta("tombstone"); o != "tombstone" {
		t.Fatal("other objects must pass unchanged")
	}
}

// The index's transform slims, then shares the strings release Secrets repeat.
func TestSlimAndIntern(t *testing.T) {
	tr := slimAndIntern(intern.NewPool(0))
	var got []*metav1.PartialObjectMetadata
	for _, rel := range []string{"a", "b"} {
		in := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1." + rel + ".v1", Namespace: string([]byte("ns")),
			Labels: map[string]string{string([]byte("owner")): string([]byte("helm")), "name": rel, "status": "deployed"}}}
		out, err := tr(in)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, out.(*metav1.PartialObjectMetadata))
	}
	if len(got[0].Labels) != 2 || got[1].Labels["name"] != "b" {
		t.Fatalf("not slimmed: %v", got[0].Labels)
	}
	if unsafe.StringData(got[0].Namespace) != unsafe.StringData(got[1].Namespace) ||
		unsafe.StringData(got[0].Labels["owner"]) != unsafe.StringData(got[1].Labels["owner"]) {
		t.Fatal("the namespace and the owner label's value are not shared")
	}
}

// The driver logs a Secret it cannot decode: by name, never its data.
func TestDriverLogNamesSecretsOnly(t *testing.T) {
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	sec := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.a.v1", Namespace: "ns"}, Data: map[string][]byte{"release": []byte("SECRET-PAYLOAD")}}
	driverLog(log)("list: failed to decode release: %v: %s", sec, "bad")
	driverLog(log)("x %v", &sec)
	if len(lines) != 2 {
		t.Fatalf("lines %v", lines)
	}
	for _, l := range lines {
		if strings.Contains(l, "SECRET-PAYLOAD") || strings.Contains(l, strings.Trim(fmt.Sprint([]byte("SECRET")), "[]")) ||
			!strings.Contains(l, "Secret ns/sh.helm.release.v1.a.v1") {
			t.Fatalf("logged %q", l)
		}
	}
}

// The index reads only the Secrets of the release asked for, however many other releases
// the namespace holds (it keys them by release, not by a scan of the namespace's).
func TestReleaseIndexReadsOnlyTheReleaseAsked(t *testing.T) {
	seed := newReleaseFixture(t)
	rels := []*release.Release{rel("postgresql-a", 1, release.StatusDeployed), rel("postgresql-b", 1, release.StatusSuperseded),
		rel("postgresql-b", 2, release.StatusDeployed), rel("redis-c", 1, release.StatusDeployed)}
	var secs []*corev1.Secret
	for _, r := range rels {
		if err := seed.store.Create(r); err != nil {
			t.Fatal(err)
		}
		secs = append(secs, seed.secretOf(t, r))
	}
	f := newSyncedFixture(t, secs...)
	last, err := f.store.Last("postgresql-b")
	if err != nil || last.Version != 2 {
		t.Fatalf("Last = %v, %v; want revision 2", last, err)
	}
	var got []string
	for _, a := range f.cs.Actions() {
		if g, ok := a.(k8stesting.GetAction); ok && a.GetResource().Resource == "secrets" {
			got = append(got, g.GetName())
		} else {
			t.Errorf("unexpected request %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
	slices.Sort(got)
	want := []string{"sh.helm.release.v1.postgresql-b.v1", "sh.helm.release.v1.postgresql-b.v2"}
	if !slices.Equal(got, want) {
		t.Fatalf("GETs %v; want only the release's own revisions %v", got, want)
	}
}

func TestReleaseNameKeysOnlyHelmReleases(t *testing.T) {
	m := releaseMeta()
	m.Labels = map[string]string{helmOwnerLabel: helmOwnerValue, helmNameLabel: "mysql-x"}
	if got := releaseName(m); !slices.Equal(got, []string{"mysql-x"}) {
		t.Fatalf("releaseName = %v; want [mysql-x]", got)
	}
	m.Labels[helmOwnerLabel] = "someone-else"
	if got := releaseName(m); got != nil {
		t.Fatalf("releaseName of a Secret Helm does not own = %v; want none", got)
	}
	m.Labels = map[string]string{helmOwnerLabel: helmOwnerValue}
	if got := releaseName(m); got != nil {
		t.Fatalf("releaseName without a release name = %v; want none", got)
	}
}

// BenchmarkInstallRecord: what recording one install costs the operator (pending record,
// then its outcome), in time and bytes allocated; the encoding of a record (gzip at Helm's
// best compression) is most of it.
func BenchmarkInstallRecord(b *testing.B) {
	f := newReleaseFixture(&testing.T{})
	manifest := strings.Repeat("apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\nstringData:\n  KEY: value\n", 20)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r := rel("kv-"+strconv.Itoa(i), 1, release.StatusPendingInstall)
		r.Manifest = manifest
		if err := f.store.Create(r); err != nil {
			b.Fatal(err)
		}
		r.Info.Status = release.StatusDeployed
		if err := f.store.Update(r); err != nil {
			b.Fatal(err)
		}
	}
}

// The operator writes release records as Helm's Secrets driver does, byte for byte (its
// compressor is reused, not the format changed): type, labels but the timestamp, and data;
// Helm's own driver reads them back.
func TestRecordSecretIsHelms(t *testing.T) {
	ctx := context.Background()
	r := rel("postgresql-db", 1, release.StatusDeployed)
	r.Manifest = strings.Repeat("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-secrets\n", 10)
	r.Config = map[string]any{"credentials": map[string]any{"USER": "u"}}
	r.Labels = map[string]string{"team": "a"}

	helmCS := k8sfake.NewClientset()
	helm := driver.NewSecrets(helmCS.CoreV1().Secrets("ns"))
	f := newReleaseFixture(t)
	key := "sh.helm.release.v1.postgresql-db.v1"
	for step, write := range []func(driver.Driver) error{
		func(d driver.Driver) error { return d.Create(key, r) },
		func(d driver.Driver) error { r.Info.Status = release.StatusSuperseded; return d.Update(key, r) },
	} {
		if err := write(helm); err != nil {
			t.Fatal(err)
		}
		if err := write(f.store.Driver); err != nil {
			t.Fatal(err)
		}
		want, err := helmCS.CoreV1().Secrets("ns").Get(ctx, key, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := f.secretOf(t, r)
		stamp := []string{"createdAt", "modifiedAt"}[step]
		if got.Labels[stamp] == "" || want.Labels[stamp] == "" {
			t.Fatalf("step %d: %s label: ours %q, Helm's %q", step, stamp, got.Labels[stamp], want.Labels[stamp])
		}
		gl, wl := maps.Clone(got.Labels), maps.Clone(want.Labels)
		delete(gl, stamp)
		delete(wl, stamp)
		delete(gl, LabelRelease)
		if !maps.Equal(gl, wl) || got.Type != want.Type || !maps.EqualFunc(got.Data, want.Data, bytes.Equal) || len(got.Data["release"]) == 0 {
			t.Fatalf("step %d: record differs from Helm's:\nours  %v %s %d bytes\nHelm's %v %s %d bytes", step, got.Labels, got.Type, len(got.Data["release"]), want.Labels, want.Type, len(want.Data["release"]))
		}
		back, err := driver.NewSecrets(f.cs.CoreV1().Secrets("ns")).Get(key)
		if err != nil || back.Name != r.Name || back.Info.Status != r.Info.Status || back.Manifest != r.Manifest || back.Labels["team"] != "a" {
			t.Fatalf("step %d: Helm's driver reads back %+v, %v", step, back, err)
		}
	}
	// A second record of the same key is refused as Helm refuses it.
	if err := f.store.Driver.Create(key, r); err != driver.ErrReleaseExists {
		t.Fatalf("Create over an existing record: %v; want driver.ErrReleaseExists", err)
	}
}
