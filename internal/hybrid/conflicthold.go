package hybrid

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/clever-operator/clever-operator/internal/status"
)

// Holds on a refused install or upgrade: the first lasts conflictHoldMin, each next one twice
// the last, up to conflictHoldMax.
const (
	conflictHoldMin = 5 * time.Second
	conflictHoldMax = 5 * time.Minute
)

// conflictHolds remembers, per release, an install or upgrade Helm refused because an object
// it would write already exists and belongs to someone else (a person's Secret, another
// resource's release). Trying again with the same chart and values can only be refused
// again until that object goes, and each try reads the release history and every rendered
// object from the API server: with controller-runtime's backoff starting at 5 ms, that was
// about fifty requests in the first seconds of every such resource. Within the hold, the same
// action returns the same error without calling Helm; new values (spec.secret.name renamed)
// or a new chart try at once. Only a digest and Helm's error (object kind, name and
// namespace: no values) are kept.
var conflictHolds sync.Map // namespace/release name -> conflictHold

type conflictHold struct {
	digest string
	until  time.Time
	wait   time.Duration
	err    error
}

// holdNow is the clock of the holds (tests move it).
var holdNow = time.Now

// actionDigest identifies an action on a release: what it is ("install", "upgrade",
// "dry-run"), the chart and the values ("" when the values cannot be encoded).
func actionDigest(action string, chrt *chart.Chart, vals map[string]any) string {
	b, err := json.Marshal(vals)
	if err != nil {
		return ""
	}
	h := sha256.New()
	_, _ = h.Write([]byte(action + "\x00"))
	if chrt != nil && chrt.Metadata != nil {
		_, _ = h.Write([]byte(chrt.Metadata.Name + "\x00" + chrt.Metadata.Version + "\x00"))
	}
	_, _ = h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// withConflictHold runs do unless the same action (digest) on the release (key) was refused
// for a conflict and its hold has not expired; it starts or lengthens the hold when do is
// refused for a conflict, and forgets it on any other outcome.
func withConflictHold(key, digest string, do func() (*release.Release, error)) (*release.Release, error) {
	var prev conflictHold
	if v, ok := conflictHolds.Load(key); ok {
		prev = v.(conflictHold)
		if digest != "" && prev.digest == digest && holdNow().Before(prev.until) {
			return nil, prev.err
		}
	}
	rel, err := do()
	if err == nil || digest == "" || !status.IsSecretConflict(err.Error()) {
		conflictHolds.Delete(key)
		return rel, err
	}
	wait := conflictHoldMin
	if prev.digest == digest && prev.wait > 0 {
		wait = min(2*prev.wait, conflictHoldMax)
	}
	conflictHolds.Store(key, conflictHold{digest: digest, until: holdNow().Add(wait), wait: wait, err: err})
	return rel, err
}
