package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Samples loads config/samples/api_*.yaml: one resource of every typed add-on kind (the 14),
// sorted by file name. The credentials kinds' samples are left out (IsCredentialsSample), and
// so is the generic Addon's (IsGenericSample, AddonSample): Resources, which the bench and
// chaos round-robin over, stays the 14 typed kinds it was measured with.
func Samples() ([]*unstructured.Unstructured, error) {
	dir := filepath.Join("config", "samples")
	files, err := filepath.Glob(filepath.Join(dir, "api_*.yaml"))
	if err != nil {
		return nil, err
	}
	files = slices.DeleteFunc(files, func(f string) bool { return IsCredentialsSample(f) || IsGenericSample(f) || IsNetworkGroupSample(f) })
	sort.Strings(files)
	return loadSamples(dir, files)
}

// AddonSample loads the generic Addon's sample (an FS Bucket), which Samples leaves out.
func AddonSample() (*unstructured.Unstructured, error) {
	dir := filepath.Join("config", "samples")
	out, err := loadSamples(dir, []string{filepath.Join(dir, genericSample)})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// CellarBucketSampleObject loads the CellarBucket's sample (a bucket in the Cellar sample),
// which Samples leaves out.
func CellarBucketSampleObject() (*unstructured.Unstructured, error) {
	dir := filepath.Join("config", "samples")
	out, err := loadSamples(dir, []string{filepath.Join(dir, CellarBucketSample)})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// ReadSample loads config/samples/<file> (paths relative to the repository root) into
// namespace ns.
func ReadSample(file, ns string) (*unstructured.Unstructured, error) {
	dir := filepath.Join("config", "samples")
	out, err := loadSamples(dir, []string{filepath.Join(dir, file)})
	if err != nil {
		return nil, err
	}
	out[0].SetNamespace(ns)
	return out[0], nil
}

func loadSamples(dir string, files []string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no samples in %s", dir)
	}
	return out, nil
}

// Kinds returns the GVK of every sample of Samples: the 14 typed kinds (not the generic Addon,
// so the bench and chaos, which watch and list through it, are unchanged).
func Kinds() ([]schema.GroupVersionKind, error) {
	s, err := Samples()
	if err != nil {
		return nil, err
	}
	out := make([]schema.GroupVersionKind, len(s))
	for i, u := range s {
		out[i] = u.GroupVersionKind()
	}
	return out, nil
}

// Resources returns n resources in namespace ns spread round-robin over the 14 typed kinds (from the
// samples), named <prefix>-<kind>-<i>, with the default Secret name <name>-secrets.
func Resources(ns, prefix string, n int) ([]*unstructured.Unstructured, error) {
	samples, err := Samples()
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, n)
	for i := range n {
		u := samples[i%len(samples)].DeepCopy()
		u.SetNamespace(ns)
		u.SetName(fmt.Sprintf("%s-%s-%d", prefix, strings.ToLower(u.GetKind()), i))
		unstructured.RemoveNestedField(u.Object, "spec", "secret")
		delete(u.Object, "status")
		out = append(out, u)
	}
	return out, nil
}

// ForEach runs fn on every object with the given concurrency and returns the first error.
func ForEach(ctx context.Context, objs []*unstructured.Unstructured, workers int, fn func(context.Context, *unstructured.Unstructured) error) error {
	if workers < 1 {
		workers = 1
	}
	var (
		next  atomic.Int64
		first error
		once  sync.Once
		wg    sync.WaitGroup
	)
	for range min(workers, max(len(objs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(objs) || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, objs[i]); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// CreateAll creates every object (copies: the inputs are not modified).
func CreateAll(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, workers int) error {
	return ForEach(ctx, objs, workers, func(ctx context.Context, u *unstructured.Unstructured) error {
		if err := c.Create(ctx, u.DeepCopy()); err != nil {
			return fmt.Errorf("creating %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		return nil
	})
}

// DeleteAll deletes every object (already gone counts as deleted).
func DeleteAll(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, workers int) error {
	return ForEach(ctx, objs, workers, func(ctx context.Context, u *unstructured.Unstructured) error {
		if err := c.Delete(ctx, u.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		return nil
	})
}

// ListAll lists the resources of every kind in namespace ns ("" for all namespaces).
func ListAll(ctx context.Context, c client.Reader, ns string) ([]unstructured.Unstructured, error) {
	kinds, err := Kinds()
	if err != nil {
		return nil, err
	}
	var out []unstructured.Unstructured
	for _, gvk := range kinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		var opts []client.ListOption
		if ns != "" {
			opts = append(opts, client.InNamespace(ns))
		}
		if err := c.List(ctx, l, opts...); err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		out = append(out, l.Items...)
	}
	return out, nil
}

// IsReady says whether the resource's Ready condition is True.
func IsReady(u *unstructured.Unstructured) bool {
	status, _, _ := ConditionFields(u, "Ready")
	return status == "True"
}

// Key identifies a resource across kinds.
func Key(u *unstructured.Unstructured) string {
	return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
}

// CountReady lists namespace ns and returns how many of the wanted resources (by Key) exist
// and how many are Ready.
func CountReady(ctx context.Context, c client.Reader, ns string, want map[string]bool) (exist, ready int, err error) {
	items, err := ListAll(ctx, c, ns)
	if err != nil {
		return 0, 0, err
	}
	for i := range items {
		if want != nil && !want[Key(&items[i])] {
			continue
		}
		exist++
		if IsReady(&items[i]) {
			ready++
		}
	}
	return exist, ready, nil
}

// Keys returns the Key of every object.
func Keys(objs []*unstructured.Unstructured) map[string]bool {
	m := make(map[string]bool, len(objs))
	for _, u := range objs {
		m[Key(u)] = true
	}
	return m
}

// WaitReady polls namespace ns every interval until every wanted resource is Ready, the
// timeout passes or abort returns an error (e.g. the operator exited). progress, when set,
// is called after each poll.
func WaitReady(ctx context.Context, c client.Reader, ns string, objs []*unstructured.Unstructured, interval, timeout time.Duration, abort func() error) error {
	want := Keys(objs)
	return pollCounts(ctx, c, ns, want, interval, timeout, abort, func(_, ready int) error {
		if ready == len(want) {
			return nil
		}
		return fmt.Errorf("%d of %d resources Ready after %s", ready, len(want), timeout)
	})
}

// WaitGone polls until none of the objects exists any more.
func WaitGone(ctx context.Context, c client.Reader, ns string, objs []*unstructured.Unstructured, interval, timeout time.Duration, abort func() error) error {
	want := Keys(objs)
	return pollCounts(ctx, c, ns, want, interval, timeout, abort, func(exist, _ int) error {
		if exist == 0 {
			return nil
		}
		return fmt.Errorf("%d of %d resources still exist after %s", exist, len(want), timeout)
	})
}

// pollCounts polls CountReady every interval until done says nil (its error is returned once
// the timeout has passed), abort returns an error or ctx ends.
func pollCounts(ctx context.Context, c client.Reader, ns string, want map[string]bool, interval, timeout time.Duration, abort func() error, done func(exist, ready int) error) error {
	deadline := time.Now().Add(timeout)
	for {
		exist, ready, err := CountReady(ctx, c, ns, want)
		if err != nil {
			return err
		}
		notYet := done(exist, ready)
		if notYet == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return notYet
		}
		if abort != nil {
			if err := abort(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// Exited returns an abort function for WaitReady/WaitGone failing when op has exited.
func Exited(ops ...*Operator) func() error {
	return func() error {
		for _, op := range ops {
			if d := op.Done(); d != nil {
				select {
				case <-d:
					return fmt.Errorf("operator %s exited (%v); see %s", op.o.Name, op.ExitErr(), op.LogPath)
				default:
				}
			}
		}
		return nil
	}
}

// genericSample is the file name of the generic Addon kind's sample.
const genericSample = "api_v1alpha1_addon.yaml"

// IsGenericSample says whether a config/samples file is the generic Addon kind's.
func IsGenericSample(file string) bool { return filepath.Base(file) == genericSample }

// IsNetworkGroupSample says whether a config/samples file is one of the kinds that are not
// add-ons (NetworkGroup, CellarBucket: no add-on, no Helm release).
func IsNetworkGroupSample(file string) bool {
	return filepath.Base(file) == "api_v1alpha1_networkgroup.yaml" || filepath.Base(file) == CellarBucketSample
}

// CellarBucketSample is the CellarBucket kind's sample (a bucket in the Cellar sample).
const CellarBucketSample = "api_v1alpha1_cellarbucket.yaml"

// IsCredentialsSample says whether a config/samples file is one of the credentials kinds'
// (CleverCredentials, ClusterCleverCredentials), not an add-on kind's.
func IsCredentialsSample(file string) bool {
	return strings.HasSuffix(filepath.Base(file), "credentials.yaml")
}
