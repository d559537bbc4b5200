package hybrid

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/intern"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// LabelRelease marks the Helm release Secrets the operator writes, for its index of them.
// (Not kinds.LabelManagedBy: the manager's cache holds every Secret carrying that one, and
// release Secrets are whole charts and manifests, gzipped: the index keeps their metadata only.)
const LabelRelease = kinds.Group + "/helm-release"

// Helm's release Secrets: labels its Secrets driver writes and queries by.
const (
	helmOwnerLabel   = "owner"
	helmOwnerValue   = "helm"
	helmNameLabel    = "name"
	helmVersionLabel = "version"
)

// ReleaseIndex is where the Helm side's release storage reads from. Helm's Secrets driver
// finds a release with a LIST of Secrets by label (owner=helm,name=<release>), which
// kube-apiserver answers by going through every Secret of the namespace: with 20,000
// unrelated Secrets beside the operator's, that LIST (several per install or upgrade) was
// what made time per resource grow with the namespace (docs/performance.md, P6).
//
// The index keeps the names and labels of the operator's release Secrets (labelled
// LabelRelease when written, see indexedSecrets) in a metadata-only informer — a few
// hundred bytes each, never their data — and answers Helm's query with a GET of each
// matching Secret by name, which costs kube-apiserver the same whatever the namespace
// holds. It falls back to the LIST when it cannot vouch for its answer: a query it does not
// know, an informer that has not synced, a Secret it lists that is gone, or a revision this
// process wrote that the informer has not seen yet. A release this process never wrote and
// the informer does not list yet (written by another process a moment ago) reads as missing;
// Helm then refuses to install over it, and the next reconcile reads it.
//
// The records this process wrote last (recentRecords of them) are kept as kube-apiserver
// answered the write, and a query is answered with one of them instead of a GET while the
// informer lists its Secret at the very resourceVersion of that answer: nobody has written
// it since. That is the read of the release by the reconcile that follows every install and
// upgrade (the status write that reports it triggers one), and every read of a small
// install's releases.
type ReleaseIndex struct {
	meta    client.Reader
	secrets typedcorev1.SecretsGetter

	mu sync.Mutex
	// written is the highest revision this process wrote per release ("namespace/release").
	written map[types.NamespacedName]int
	// recent holds the last records written, by Secret (see ReleaseIndex); order is the
	// order they were written in, oldest first, to drop the oldest beyond recentRecords.
	recent map[types.NamespacedName]*corev1.Secret
	order  []types.NamespacedName

	// recorder records the refusal of a release record on its resource (nil: not recorded).
	recorder record.EventRecorder
}

// recentRecords is how many of the last records written the index keeps (a few KiB each:
// the release gzipped, with its labels; half a megabyte at most). 64 is two or three seconds
// of installs at full speed on 2 cores, far more than the moment between an install and the
// reconcile that follows it.
const recentRecords = 64

// NewReleaseIndex makes the index and registers its informer with mgr (started and synced
// with the manager's caches, before any controller). namespaces restricts it, as the
// manager's cache (nil: all namespaces). Release Secrets an earlier version wrote are
// labelled first (adopt).
func NewReleaseIndex(ctx context.Context, mgr ctrl.Manager, namespaces map[string]cache.Config, log logr.Logger) (*ReleaseIndex, error) {
	sel := labels.SelectorFromSet(labels.Set{helmOwnerLabel: helmOwnerValue, LabelRelease: kinds.ManagedByValue})
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:           mgr.GetHTTPClient(),
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultNamespaces:    namespaces,
		DefaultLabelSelector: sel,
		DefaultTransform:     slimAndIntern(intern.NewPool(0)),
	})
	if err != nil {
		return nil, fmt.Errorf("release index: %w", err)
	}
	if _, err := c.GetInformer(context.Background(), releaseMeta()); err != nil {
		return nil, fmt.Errorf("release index: %w", err)
	}
	if err := c.IndexField(context.Background(), releaseMeta(), releaseNameField, releaseName); err != nil {
		return nil, fmt.Errorf("release index: %w", err)
	}
	cs, err := typedcorev1.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("release index: %w", err)
	}
	x := &ReleaseIndex{meta: c, secrets: cs, written: map[types.NamespacedName]int{}, recorder: mgr.GetEventRecorderFor("clever-operator")}
	names := make([]string, 0, len(namespaces))
	for ns := range namespaces {
		names = append(names, ns)
	}
	n, err := x.adopt(ctx, names, "")
	if err != nil {
		return nil, err
	}
	if n > 0 {
		log.Info("labelled the Helm release Secrets of an earlier version", "count", n)
	}
	if err := mgr.Add(cacheRunnable{c}); err != nil {
		return nil, err
	}
	return x, nil
}

// cacheRunnable puts the index's cache in the manager's group of caches, which are synced
// before the controllers start.
type cacheRunnable struct{ cache.Cache }

func (c cacheRunnable) GetCache() cache.Cache { return c.Cache }

// slimReleaseMeta keeps of a release Secret's metadata what the index reads: its name and
// the two labels its key is made of (releaseName; a query reads each revision whole, so
// Helm's other labels are not needed here), a fraction of what the informer would otherwise
// hold per release: no other label, no owner references, UID, timestamps or managedFields.
func slimReleaseMeta(o any) (any, error) {
	m, ok := o.(*metav1.PartialObjectMetadata)
	if !ok {
		return o, nil
	}
	out := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta}
	out.Name, out.Namespace, out.ResourceVersion = m.Name, m.Namespace, m.ResourceVersion
	out.Labels = make(map[string]string, 2)
	for _, k := range []string{helmOwnerLabel, helmNameLabel} {
		if v, ok := m.Labels[k]; ok {
			out.Labels[k] = v
		}
	}
	return out, nil
}

// slimAndIntern is slimReleaseMeta, then the pool's sharing of the strings release Secrets
// repeat (namespace, label keys, "helm").
func slimAndIntern(p *intern.Pool) func(any) (any, error) {
	return func(o any) (any, error) {
		o, err := slimReleaseMeta(o)
		if err != nil {
			return nil, err
		}
		return p.Transform(o)
	}
}

// releaseNameField indexes the release Secrets by release (namespaced, as every field index
// of the cache): a query reads the few Secrets of its release instead of going through every
// release Secret of the namespace (at 5,000 resources in one namespace, 5,000 label matches
// per Helm reconcile).
const releaseNameField = "helm.release"

// releaseName is the index's key of a release Secret: its release's name.
func releaseName(o client.Object) []string {
	l := o.GetLabels()
	if l[helmOwnerLabel] != helmOwnerValue || l[helmNameLabel] == "" {
		return nil
	}
	return []string{l[helmNameLabel]}
}

func releaseMeta() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// StorageDriver is helm-operator-plugins' storage driver mapper with the index in front of
// the Secrets driver. Like the library's default, the release Secrets live in the resource's
// namespace and carry a controller reference to it.
func (x *ReleaseIndex) StorageDriver(ctx context.Context, obj client.Object, _ *rest.Config) (driver.Driver, error) {
	ns := obj.GetNamespace()
	sc := x.secrets.Secrets(ns)
	owner := metav1.NewControllerRef(obj, obj.GetObjectKind().GroupVersionKind())
	sc = helmclient.NewOwnerRefSecretClient(sc, []metav1.OwnerReference{*owner}, helmclient.MatchAllSecrets)
	h := newInstallHold(&indexedSecrets{SecretInterface: sc, ns: ns, x: x}, ns, logr.FromContextOrDiscard(ctx))
	if x.recorder != nil {
		h.refused = func(err error) {
			x.recorder.Event(obj, corev1.EventTypeWarning, status.ReasonReleaseRecordRefused, err.Error())
		}
	}
	return h, nil
}

// newInstallHold is the release storage over impl, the Secrets of namespace ns: Helm's
// Secrets driver, with the install hold and the record writing below in front of it.
func newInstallHold(impl typedcorev1.SecretInterface, ns string, log logr.Logger) *installHold {
	d := driver.NewSecrets(impl)
	d.Log = driverLog(log)
	return &installHold{Secrets: d, impl: impl, ns: ns}
}

// installHold is the release storage one action configuration (one reconcile) writes through.
// An install's first record of its release (status pending-install) is kept here and written
// as the outcome Helm records next (deployed, or failed): one write per install instead of a
// create and an update, and one encoding of the release instead of two (Helm's Secrets driver
// gzips every record it writes at its best compression, setting up a compressor of about a
// megabyte each time: a seventh of the operator's CPU while installing, before this). Nothing
// else reads a release while it is being installed (one reconcile per resource at a time,
// under leader election). An install that never records its outcome (the process died) leaves
// no release behind: the next reconcile installs again, and Helm takes back the Secret it had
// applied (it carries the release's annotations), instead of a pending release to repair.
//
// Its records are written as Helm's Secrets driver writes them (recordSecret), with a
// compressor reused from one record to the next instead of one set up per record; they are
// read as the driver reads them, each checked before Helm acts on it (records.go: release
// records are Secrets the namespace's editors can write).
type installHold struct {
	*driver.Secrets
	impl typedcorev1.SecretInterface
	held map[string]*release.Release
	// ns is the resource's namespace: the only one its records may name (verifyRecord).
	ns string
	// refused reports a refused record (a Warning event on the resource; nil: not reported).
	refused func(error)
}

// Create holds an install's pending record; any other record is written.
func (h *installHold) Create(key string, rls *release.Release) error {
	if rls.Info != nil && rls.Info.Status == release.StatusPendingInstall {
		if h.held == nil {
			h.held = map[string]*release.Release{}
		}
		h.held[key] = rls
		return nil
	}
	return h.create(key, rls)
}

// Update writes a held record, with its outcome, as the release's first revision.
func (h *installHold) Update(key string, rls *release.Release) error {
	if _, ok := h.held[key]; ok {
		delete(h.held, key)
		return h.create(key, rls)
	}
	obj, err := recordSecret(key, rls, "modifiedAt")
	if err != nil {
		return fmt.Errorf("update: failed to encode release %q: %w", rls.Name, err)
	}
	if _, err := h.impl.Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update: failed to update: %w", err)
	}
	return nil
}

func heldCopy(r *release.Release) *release.Release {
	cp := *r
	if r.Info != nil {
		info := *r.Info
		cp.Info = &info
	}
	return &cp
}

// create is the Secrets driver's Create.
func (h *installHold) create(key string, rls *release.Release) error {
	obj, err := recordSecret(key, rls, "createdAt")
	if err != nil {
		return fmt.Errorf("create: failed to encode release %q: %w", rls.Name, err)
	}
	if _, err := h.impl.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return driver.ErrReleaseExists
		}
		return fmt.Errorf("create: failed to create: %w", err)
	}
	return nil
}

// recordSecret is the Secret Helm's Secrets driver (helm v3) writes for a release record:
// the release's own labels, a timestamp label (createdAt for a new record, modifiedAt for
// an update), name, owner, status and version; type helm.sh/release.v1; the release as
// JSON, gzipped at the best compression and base64-encoded, under "release". Byte for byte
// the same (TestRecordSecretIsHelms), so Helm, helm-operator-plugins and an earlier version
// of this operator read it as their own.
func recordSecret(key string, rls *release.Release, stamp string) (*corev1.Secret, error) {
	lbs := make(map[string]string, len(rls.Labels)+6)
	maps.Copy(lbs, rls.Labels)
	lbs[stamp] = strconv.FormatInt(time.Now().Unix(), 10)
	maps.Copy(lbs, rls.Labels) // again, as the driver does: a release label of the stamp's name wins
	lbs[helmNameLabel] = rls.Name
	lbs[helmOwnerLabel] = helmOwnerValue
	lbs["status"] = rls.Info.Status.String()
	lbs[helmVersionLabel] = strconv.Itoa(rls.Version)
	data, err := encodeRecord(rls)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key, Labels: lbs},
		Type:       "helm.sh/release.v1",
		Data:       map[string][]byte{"release": data},
	}, nil
}

// gzipWriters are compressors at Helm's level, reused: setting one up allocates about a
// megabyte of tables, more than compressing a release record costs.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestCompression)
	return w
}}

// encodeRecord is Helm's encoding of a release record: JSON, gzip (best compression), base64.
func encodeRecord(rls *release.Release) ([]byte, error) {
	b, err := json.Marshal(rls)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	out := make([]byte, base64.StdEncoding.EncodedLen(buf.Len()))
	base64.StdEncoding.Encode(out, buf.Bytes())
	return out, nil
}

// driverLog is the Secrets driver's debug logger. The driver passes a whole release Secret
// when it cannot decode one (its data is the release: values and rendered manifest, with the
// credentials): such an argument is logged by name only.
func driverLog(log logr.Logger) func(string, ...any) {
	return func(format string, v ...any) {
		for i, a := range v {
			switch sec := a.(type) {
			case corev1.Secret:
				v[i] = "Secret " + sec.Namespace + "/" + sec.Name
			case *corev1.Secret:
				v[i] = "Secret " + sec.Namespace + "/" + sec.Name
			}
		}
		log.V(1).Info(fmt.Sprintf(format, v...))
	}
}

// noteWritten records that this process wrote revision rev of a release.
func (x *ReleaseIndex) noteWritten(ns, release string, rev int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	k := types.NamespacedName{Namespace: ns, Name: release}
	if rev > x.written[k] {
		x.written[k] = rev
	}
}

// noteDeleted forgets a release whose highest written revision was deleted (uninstalled).
func (x *ReleaseIndex) noteDeleted(ns, release string, rev int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	k := types.NamespacedName{Namespace: ns, Name: release}
	if x.written[k] <= rev {
		delete(x.written, k)
	}
}

// remember keeps the record kube-apiserver answered a write with (its name, resourceVersion,
// labels, type and data: what a read of it gives Helm's driver), forgetting the oldest one
// beyond recentRecords.
func (x *ReleaseIndex) remember(sec *corev1.Secret) {
	if sec == nil || sec.ResourceVersion == "" {
		return
	}
	k := types.NamespacedName{Namespace: sec.Namespace, Name: sec.Name}
	kept := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: sec.Name, Namespace: sec.Namespace, ResourceVersion: sec.ResourceVersion, Labels: sec.Labels},
		Type:       sec.Type,
		Data:       sec.Data,
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.recent == nil {
		x.recent = map[types.NamespacedName]*corev1.Secret{}
	}
	if _, ok := x.recent[k]; !ok {
		x.order = append(x.order, k)
	}
	x.recent[k] = kept
	for len(x.order) > recentRecords {
		delete(x.recent, x.order[0])
		x.order = x.order[1:]
	}
}

// forget drops a record from the recent ones (deleted, or a write of it failed).
func (x *ReleaseIndex) forget(ns, name string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	k := types.NamespacedName{Namespace: ns, Name: name}
	if _, ok := x.recent[k]; !ok {
		return
	}
	delete(x.recent, k)
	x.order = slices.DeleteFunc(x.order, func(o types.NamespacedName) bool { return o == k })
}

// recalled is the record this process wrote last under that name, if kube-apiserver still
// holds it at resourceVersion rv (the informer's): a copy with its own labels (Helm's driver
// hands them to the release it decodes), the data shared (only read).
func (x *ReleaseIndex) recalled(ns, name, rv string) (*corev1.Secret, bool) {
	if rv == "" {
		return nil, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	sec, ok := x.recent[types.NamespacedName{Namespace: ns, Name: name}]
	if !ok || sec.ResourceVersion != rv {
		return nil, false
	}
	cp := *sec
	cp.Labels = maps.Clone(sec.Labels)
	return &cp, true
}

func (x *ReleaseIndex) highestWritten(ns, release string) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.written[types.NamespacedName{Namespace: ns, Name: release}]
}

// indexedSecrets is the Secrets client Helm's driver is given: writes go to kube-apiserver
// (labelled as the operator's), release queries are answered through the index. One is made
// per action configuration, that is per reconcile.
type indexedSecrets struct {
	typedcorev1.SecretInterface
	ns string
	x  *ReleaseIndex
}

func labelled(s *corev1.Secret) *corev1.Secret {
	s = s.DeepCopy()
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels[LabelRelease] = kinds.ManagedByValue
	return s
}

func revisionOf(l map[string]string) int {
	v, _ := strconv.Atoi(l[helmVersionLabel])
	return v
}

func (s *indexedSecrets) Create(ctx context.Context, sec *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error) {
	out, err := s.SecretInterface.Create(ctx, labelled(sec), opts)
	switch {
	case err == nil:
		s.x.noteWritten(s.ns, out.Labels[helmNameLabel], revisionOf(out.Labels))
		s.x.remember(out)
	case apierrors.IsAlreadyExists(err) && sec.Labels[helmNameLabel] != "":
		// A revision the index did not list: a release Secret of an earlier version restored
		// from a backup while this process runs (those present at start-up are labelled
		// then). Its revisions are labelled now, so the next reconcile reads the release;
		// this write fails as it would have without the index.
		if _, aerr := s.x.adopt(ctx, []string{s.ns}, helmNameLabel+"="+sec.Labels[helmNameLabel]); aerr != nil {
			logr.FromContextOrDiscard(ctx).Error(aerr, "labelling a restored Helm release", "release", sec.Labels[helmNameLabel])
		}
	}
	return out, err
}

func (s *indexedSecrets) Update(ctx context.Context, sec *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error) {
	out, err := s.SecretInterface.Update(ctx, labelled(sec), opts)
	if err == nil {
		s.x.noteWritten(s.ns, out.Labels[helmNameLabel], revisionOf(out.Labels))
		s.x.remember(out)
	} else {
		s.x.forget(s.ns, sec.Name)
	}
	return out, err
}

// Get answers a record this process wrote from memory while the index lists it at the
// version written (see ReleaseIndex): Helm's driver reads a record by name before deleting it.
func (s *indexedSecrets) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	if opts.ResourceVersion == "" {
		m := releaseMeta()
		if err := s.x.meta.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: name}, m); err == nil {
			if sec, ok := s.x.recalled(s.ns, name, m.ResourceVersion); ok {
				return sec, nil
			}
		}
	}
	return s.SecretInterface.Get(ctx, name, opts)
}

// releaseOfSecret splits Helm's Secret name, sh.helm.release.v1.<release>.v<revision>.
func releaseOfSecret(secretName string) (string, int, bool) {
	rest, ok := strings.CutPrefix(secretName, "sh.helm.release.v1.")
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndex(rest, ".v")
	if i <= 0 {
		return "", 0, false
	}
	rev, err := strconv.Atoi(rest[i+2:])
	if err != nil {
		return "", 0, false
	}
	return rest[:i], rev, true
}

func (s *indexedSecrets) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	err := s.SecretInterface.Delete(ctx, name, opts)
	s.x.forget(s.ns, name)
	if err == nil || apierrors.IsNotFound(err) {
		if rel, rev, ok := releaseOfSecret(name); ok {
			s.x.noteDeleted(s.ns, rel, rev)
		}
	}
	return err
}

// List answers Helm's queries of one release (owner=helm,name=<release>[,status=…]) from the
// index; any other list goes to kube-apiserver.
func (s *indexedSecrets) List(ctx context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	out, ok, err := s.fromIndex(ctx, opts)
	if err != nil || ok {
		return out, err
	}
	return s.SecretInterface.List(ctx, opts)
}

func (s *indexedSecrets) fromIndex(ctx context.Context, opts metav1.ListOptions) (*corev1.SecretList, bool, error) {
	if opts.FieldSelector != "" || opts.ResourceVersion != "" || opts.Limit != 0 || opts.Continue != "" {
		return nil, false, nil
	}
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, false, nil
	}
	release, ok := sel.RequiresExactMatch(helmNameLabel)
	if owner, _ := sel.RequiresExactMatch(helmOwnerLabel); !ok || owner != helmOwnerValue {
		return nil, false, nil
	}
	var metas metav1.PartialObjectMetadataList
	metas.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	// Every revision of the release, whatever else the query asks: the revisions are read
	// whole below and the query applied to what kube-apiserver answers, not to the index.
	if err := s.x.meta.List(ctx, &metas, client.InNamespace(s.ns), client.MatchingFields{releaseNameField: release}); err != nil {
		// Not synced, or not started: kube-apiserver answers.
		return nil, false, nil //nolint:nilerr // the LIST is the answer then
	}
	list := &corev1.SecretList{}
	top := 0
	for i := range metas.Items {
		m := &metas.Items[i]
		sec, ok := s.x.recalled(s.ns, m.Name, m.ResourceVersion)
		var err error
		if !ok {
			sec, err = s.SecretInterface.Get(ctx, m.Name, metav1.GetOptions{})
		}
		if apierrors.IsNotFound(err) {
			return nil, false, nil // the index is behind a deletion
		}
		if err != nil {
			return nil, false, err
		}
		top = max(top, revisionOf(sec.Labels))
		if sel.Matches(labels.Set(sec.Labels)) {
			list.Items = append(list.Items, *sec)
		}
	}
	if top < s.x.highestWritten(s.ns, release) {
		return nil, false, nil // the index is behind a revision this process wrote
	}
	return list, true, nil
}

// adopt labels as the operator's the release Secrets of its resources that carry no such
// label (written by a version before the index, or restored from its backup), so the index
// lists them: in namespaces (all when empty), those matching the label selector extra too
// when given. At start-up that is one LIST of the release Secrets without the label, then
// nothing once they are labelled.
func (x *ReleaseIndex) adopt(ctx context.Context, namespaces []string, extra string) (int, error) {
	sel := fmt.Sprintf("%s=%s,!%s", helmOwnerLabel, helmOwnerValue, LabelRelease)
	if extra != "" {
		sel += "," + extra
	}
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, LabelRelease, kinds.ManagedByValue)
	n := 0
	for _, ns := range namespaces {
		cont := ""
		for {
			l, err := x.secrets.Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: sel, Limit: 500, Continue: cont})
			if err != nil {
				return n, fmt.Errorf("listing Helm release Secrets to adopt: %w", err)
			}
			for i := range l.Items {
				s := &l.Items[i]
				if !ownedByOperator(s) {
					continue
				}
				_, err := x.secrets.Secrets(s.Namespace).Patch(ctx, s.Name, types.MergePatchType, patch, metav1.PatchOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					return n, fmt.Errorf("labelling Helm release Secret %s/%s: %w", s.Namespace, s.Name, err)
				}
				n++
			}
			if cont = l.Continue; cont == "" {
				break
			}
		}
	}
	return n, nil
}

// ownedByOperator: a release Secret whose controller is one of the operator's resources.
func ownedByOperator(s *corev1.Secret) bool {
	for _, o := range s.OwnerReferences {
		if g, _, _ := strings.Cut(o.APIVersion, "/"); g == kinds.Group && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}
