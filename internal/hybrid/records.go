package hybrid

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Release records are Secrets of the resource's namespace, which that namespace's editors
// (the built-in edit role) can write, and Helm acts on what a record says: an upgrade
// deletes each object of the deployed record's manifest that the new render lacks, an
// uninstall deletes all of them, a rollback re-creates a record's manifest, hooks are created
// — in whatever namespace the record names (issue #43). So every record Helm reads through
// the operator's storage is checked first (verifyRecord), whoever wrote it: it may only say
// what the operator's chart renders, v1 Secrets and ConfigMaps of the resource's namespace
// and no hooks. Whatever such a record makes the operator do, the tenant's edit role could do
// itself; a record saying anything else is refused with a ForgedRecordError, and Helm never
// sees it.

// ForgedRecordError is the refusal of a release record that says more than the operator's
// chart renders. Its message names the record Secret and the first offending object (kind,
// namespace and name, never data) and how to recover.
type ForgedRecordError struct {
	// Namespace and Secret name the record Secret.
	Namespace, Secret string
	// Problem says what is wrong with it.
	Problem string
}

func (e *ForgedRecordError) Error() string {
	return fmt.Sprintf("Helm release record Secret %s/%s refused: %s; the operator writes only v1 Secrets and ConfigMaps of this namespace, without hooks. "+
		"Delete that record Secret to recover (the operator then writes a new one)", e.Namespace, e.Secret, e.Problem)
}

// IsForgedRecord says whether err is (or wraps) a ForgedRecordError.
func IsForgedRecord(err error) bool {
	var f *ForgedRecordError
	return errors.As(err, &f)
}

// recordProblem says what, if anything, makes rls unacceptable as a record of a release of
// namespace ns: a release namespace other than ns, hooks, or a manifest object that is not a
// v1 Secret or ConfigMap of ns. "" when it is acceptable.
func recordProblem(ns string, rls *release.Release) string {
	switch {
	case rls == nil:
		return "it holds no release"
	case rls.Namespace != "" && rls.Namespace != ns:
		return fmt.Sprintf("its release namespace is %q", clip(rls.Namespace))
	case rls.Info == nil || rls.Chart == nil || rls.Chart.Metadata == nil:
		return "it is incomplete (no release info or chart)"
	case len(rls.Hooks) > 0:
		h := rls.Hooks[0]
		if h == nil {
			return "it has hooks"
		}
		return fmt.Sprintf("it has hooks (%s %s first)", clip(h.Kind), clip(h.Name))
	}
	return manifestProblem(ns, rls.Manifest)
}

// manifestProblem checks each object of a release manifest as Helm reads it: the manifest
// whole, as its kube client builds it for an upgrade, a rollback or the drift repair (one
// YAML or JSON stream, lists flattened into their items), and each document as
// releaseutil.SplitManifests cuts it, as an uninstall does. An object that cannot be read is
// refused too: Helm would fail on it, or read it otherwise.
func manifestProblem(ns, manifest string) string {
	if strings.TrimSpace(manifest) == "" {
		return ""
	}
	if p := streamProblem(ns, manifest); p != "" {
		return p
	}
	docs := releaseutil.SplitManifests(manifest)
	if len(docs) == 1 {
		return "" // the same text as the stream above
	}
	for _, d := range docs {
		if p := streamProblem(ns, d); p != "" {
			return p
		}
	}
	return ""
}

// streamProblem reads a YAML or JSON stream as cli-runtime's resource builder does
// (StreamVisitor, then the unstructured decoder) and checks each object.
func streamProblem(ns, text string) string {
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if err == io.EOF {
				return ""
			}
			return "its manifest cannot be parsed"
		}
		raw := bytes.TrimSpace(ext.Raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode(raw, nil, nil)
		if err != nil {
			return "its manifest holds an object that cannot be decoded"
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			// A list (an object with items): the builder acts on each item.
			return fmt.Sprintf("its manifest holds a list (%s)", clip(obj.GetObjectKind().GroupVersionKind().Kind))
		}
		if p := objectProblem(ns, u); p != "" {
			return p
		}
	}
}

// objectProblem: only a v1 Secret or ConfigMap whose namespace is ns or unset (Helm puts it
// in the release's namespace, the resource's).
func objectProblem(ns string, u *unstructured.Unstructured) string {
	kind, _, _ := unstructured.NestedFieldNoCopy(u.Object, "kind")
	apiVersion, _, _ := unstructured.NestedFieldNoCopy(u.Object, "apiVersion")
	objNS, hasNS, err := unstructured.NestedFieldNoCopy(u.Object, "metadata", "namespace")
	k, _ := kind.(string)
	av, _ := apiVersion.(string)
	s, isString := objNS.(string)
	okNS := err == nil && (!hasNS || objNS == nil || (isString && (s == "" || s == ns)))
	if av == "v1" && (k == "Secret" || k == "ConfigMap") && okNS {
		return ""
	}
	where := s
	if !isString && hasNS && objNS != nil {
		where = "?"
	}
	if where == "" {
		where = ns
	}
	kindName := clip(k)
	if av != "v1" && av != "" {
		kindName = clip(k) + " (" + clip(av) + ")"
	}
	return fmt.Sprintf("its manifest holds %s %s/%s", kindName, clip(where), clip(u.GetName()))
}

// clip bounds a string of a record in a message (names and kinds; never data).
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// verifyRecord refuses a record of namespace ns that says more than the chart renders (see
// recordProblem); key is its Secret's name.
func verifyRecord(ns, key string, rls *release.Release) error {
	if p := recordProblem(ns, rls); p != "" {
		return &ForgedRecordError{Namespace: ns, Secret: key, Problem: p}
	}
	return nil
}

// recordKey is the name of the Secret holding revision rls.Version of release rls.Name (Helm's
// storage key).
func recordKey(rls *release.Release) string {
	if rls == nil {
		return "sh.helm.release.v1.?"
	}
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", rls.Name, rls.Version)
}

// decodeRecord is Helm's decoding of a release record Secret (base64, gzip when it starts
// with gzip's magic, JSON), as its Secrets driver does it, without the driver's labels.
func decodeRecord(sec *corev1.Secret) (*release.Release, error) {
	data := sec.Data["release"]
	b := make([]byte, base64.StdEncoding.DecodedLen(len(data)))
	n, err := base64.StdEncoding.Decode(b, data)
	if err != nil {
		return nil, err
	}
	b = b[:n]
	if len(b) > 3 && bytes.Equal(b[:3], gzipMagic) {
		r, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		defer r.Close()
		if b, err = io.ReadAll(r); err != nil {
			return nil, err
		}
	}
	var rls release.Release
	if err := json.Unmarshal(b, &rls); err != nil {
		return nil, err
	}
	return &rls, nil
}

var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// withoutSystemLabels is a record Secret's labels less those Helm's storage sets itself, as
// its Secrets driver gives them to a release read by name.
func withoutSystemLabels(l map[string]string) map[string]string {
	out := make(map[string]string, len(l))
	for k, v := range l {
		if !slices.Contains(driver.GetSystemLabels(), k) {
			out[k] = v
		}
	}
	return out
}

// The reads of installHold: those of Helm's Secrets driver (the same requests, the same
// answers), each record checked (verifyRecord) before Helm gets it. A refusal fails the
// whole read: Helm never sees a release's history without the refused record either.

// verify checks a record read from the Secret named key, reporting a refusal once per
// storage (once per reconcile).
func (h *installHold) verify(key string, rls *release.Release) error {
	err := verifyRecord(h.ns, key, rls)
	if err != nil && h.refused != nil {
		h.refused(err)
		h.refused = nil
	}
	return err
}

// Get answers a held record from memory (a copy of the record and its info, as a decoded one
// would be); any other is read and checked.
func (h *installHold) Get(key string) (*release.Release, error) {
	if r, ok := h.held[key]; ok {
		return heldCopy(r), nil
	}
	obj, err := h.impl.Get(context.Background(), key, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, driver.ErrReleaseNotFound
		}
		return nil, fmt.Errorf("get: failed to get %q: %w", key, err)
	}
	rls, err := decodeRecord(obj)
	if err != nil {
		return nil, fmt.Errorf("get: failed to decode data %q: %w", key, err)
	}
	if err := h.verify(obj.Name, rls); err != nil {
		return nil, err
	}
	rls.Labels = withoutSystemLabels(obj.Labels)
	return rls, nil
}

// Query reads the records matching the labels (Helm's queries of one release: its history,
// its deployed revision), each checked. Records that cannot be decoded are skipped, as
// Helm's driver does.
func (h *installHold) Query(lbls map[string]string) ([]*release.Release, error) {
	ls := labels.Set{}
	for k, v := range lbls {
		if errs := validation.IsValidLabelValue(v); len(errs) != 0 {
			return nil, fmt.Errorf("invalid label value: %q: %s", v, strings.Join(errs, "; "))
		}
		ls[k] = v
	}
	list, err := h.impl.List(context.Background(), metav1.ListOptions{LabelSelector: ls.AsSelector().String()})
	if err != nil {
		return nil, fmt.Errorf("query: failed to query with labels: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return h.decodeAll("query", list.Items, nil)
}

// List reads every release record of the namespace and returns those filter keeps, each
// checked. (Helm's upgrades, rollbacks and uninstalls read by Query and Get; no reconcile
// lists.)
func (h *installHold) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	list, err := h.impl.List(context.Background(), metav1.ListOptions{LabelSelector: labels.Set{helmOwnerLabel: helmOwnerValue}.AsSelector().String()})
	if err != nil {
		return nil, fmt.Errorf("list: failed to list: %w", err)
	}
	return h.decodeAll("list", list.Items, filter)
}

func (h *installHold) decodeAll(op string, items []corev1.Secret, filter func(*release.Release) bool) ([]*release.Release, error) {
	var out []*release.Release
	for i := range items {
		item := &items[i]
		rls, err := decodeRecord(item)
		if err != nil {
			h.Log("%s: failed to decode release %s: %s", op, item.Name, err)
			continue
		}
		rls.Labels = item.Labels
		if filter != nil && !filter(rls) {
			continue
		}
		if err := h.verify(item.Name, rls); err != nil {
			return nil, err
		}
		out = append(out, rls)
	}
	return out, nil
}

// Delete drops a held record (an install rolled back before recording its outcome); any
// other is read (and checked: a refused one is left in place) and deleted.
func (h *installHold) Delete(key string) (*release.Release, error) {
	if r, ok := h.held[key]; ok {
		delete(h.held, key)
		return heldCopy(r), nil
	}
	rls, err := h.Get(key)
	if err != nil {
		return nil, err
	}
	return rls, h.impl.Delete(context.Background(), key, metav1.DeleteOptions{})
}
