package hybrid

import (
	"errors"
	"testing"
	"time"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

// conflictErr is Helm's refusal to take over an object it does not own.
var conflictErr = errors.New(`Secret "db-secrets" in namespace "ns" exists and cannot be imported into the current release: invalid ownership metadata`)

func TestConflictHold(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	holdNow = func() time.Time { return now }
	t.Cleanup(func() { holdNow = time.Now })
	key := "ns/hold-test"
	t.Cleanup(func() { conflictHolds.Delete(key) })
	chrt := &chart.Chart{Metadata: &chart.Metadata{Name: "clever-addon", Version: "1.0.0"}}
	vals := map[string]any{"secret": map[string]any{"name": "db-secrets"}}
	renamed := map[string]any{"secret": map[string]any{"name": "db-other"}}

	calls, outcome := 0, conflictErr
	do := func() (*release.Release, error) {
		calls++
		if outcome != nil {
			return nil, outcome
		}
		return &release.Release{Name: "hold-test"}, nil
	}
	try := func(action string, v map[string]any) error {
		_, err := withConflictHold(key, actionDigest(action, chrt, v), do)
		return err
	}
	steps := []struct {
		name    string
		advance time.Duration
		action  string
		vals    map[string]any
		calls   int // Helm calls so far
	}{
		{"first install is refused", 0, "install", vals, 1},
		{"retried at once: held, same error, no Helm call", 10 * time.Millisecond, "install", vals, 1},
		{"still held just before 5 s", 4900 * time.Millisecond, "install", vals, 1},
		{"hold over: Helm is asked again, refused again", 100 * time.Millisecond, "install", vals, 2},
		{"the second hold is 10 s: held at 9 s", 9 * time.Second, "install", vals, 2},
		{"over at 10 s", time.Second, "install", vals, 3},
		{"new values try at once", 0, "install", renamed, 4},
		{"another action on the same values tries at once", 0, "upgrade", renamed, 5},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		err := try(s.action, s.vals)
		if !errors.Is(err, conflictErr) {
			t.Fatalf("%s: error %v, want the conflict", s.name, err)
		}
		if calls != s.calls {
			t.Fatalf("%s: %d Helm calls, want %d", s.name, calls, s.calls)
		}
	}
	// The conflict goes away: the next try after the hold succeeds and the hold is forgotten.
	outcome = nil
	now = now.Add(conflictHoldMin)
	if err := try("upgrade", renamed); err != nil || calls != 6 {
		t.Fatalf("after the conflict went: %v, %d calls", err, calls)
	}
	if _, ok := conflictHolds.Load(key); ok {
		t.Fatal("a success keeps no hold")
	}
	// Any other error is never held.
	outcome = errors.New("the API server is unavailable")
	for i := 0; i < 3; i++ {
		_ = try("install", vals)
	}
	if calls != 9 {
		t.Fatalf("other errors: %d calls, want 9 (each retried)", calls)
	}
}

func TestConflictHoldCapped(t *testing.T) {
	now := time.Unix(2_000_000, 0)
	holdNow = func() time.Time { return now }
	t.Cleanup(func() { holdNow = time.Now })
	key := "ns/hold-cap"
	t.Cleanup(func() { conflictHolds.Delete(key) })
	digest := actionDigest("install", nil, map[string]any{"a": "b"})
	for i := 0; i < 20; i++ {
		_, _ = withConflictHold(key, digest, func() (*release.Release, error) { return nil, conflictErr })
		v, _ := conflictHolds.Load(key)
		h := v.(conflictHold)
		if h.wait > conflictHoldMax || h.wait < conflictHoldMin {
			t.Fatalf("hold %d: %s out of [%s, %s]", i, h.wait, conflictHoldMin, conflictHoldMax)
		}
		now = h.until
	}
	v, _ := conflictHolds.Load(key)
	if v.(conflictHold).wait != conflictHoldMax {
		t.Fatalf("after 20 refusals the hold is %s, want the cap %s", v.(conflictHold).wait, conflictHoldMax)
	}
}

// missingActions is a Helm with no release: it counts the reads.
type missingActions struct {
	helmclient.ActionInterface
	gets int
}

func (a *missingActions) Get(string, ...helmclient.GetOption) (*release.Release, error) {
	a.gets++
	return nil, driver.ErrReleaseNotFound
}

func (a *missingActions) Install(string, string, *chart.Chart, map[string]any, ...helmclient.InstallOption) (*release.Release, error) {
	return nil, conflictErr
}

// Before an install helm-operator-plugins reads the missing release twice per reconcile; the
// second read is answered from the first, and an install forgets the answer.
func TestMissingReleaseReadOnce(t *testing.T) {
	inner := &missingActions{}
	p := &prefixedActionClient{ActionInterface: inner, kind: &kinds.Kinds[0], namespace: "ns"}
	t.Cleanup(func() { conflictHolds.Delete(releaseKey("ns", p.kind.ReleaseName("missing"))) })
	for i := 0; i < 2; i++ {
		if _, err := p.Get("missing"); !errors.Is(err, driver.ErrReleaseNotFound) {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if inner.gets != 1 {
		t.Fatalf("%d reads of the release, want 1", inner.gets)
	}
	if _, err := p.Install("missing", "ns", &chart.Chart{Metadata: &chart.Metadata{Name: "c"}}, nil); !errors.Is(err, conflictErr) {
		t.Fatalf("install: %v", err)
	}
	if _, err := p.Get("missing"); !errors.Is(err, driver.ErrReleaseNotFound) || inner.gets != 2 {
		t.Fatalf("after an install the release is read again: %v, %d reads", err, inner.gets)
	}
}
