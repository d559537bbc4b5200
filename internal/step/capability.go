package step

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Capability is something some kinds do beyond the generic pass: backups, migrations, Network
// Group memberships, the operator add-ons' actions. The engine turns a kind's row into its
// list of capabilities once, in one place (addon's capabilitiesOf), and the pass calls every
// capability of the list, in order, at each of these hook points; it tests no flag of the row.
// A capability embeds Hooks and implements only the hooks it has.
type Capability interface {
	// Watch is what else wakes the kind's resources (k): objects of another kind, and the
	// resources one of them wakes (nil: nothing).
	Watch(k *kinds.Kind) (client.Object, handler.MapFunc)
	// Due says whether obj (of status st and conditions conds) needs a full pass though its
	// generation was handled and it is Ready (an action asked for by annotation, memberships
	// not settled).
	Due(obj *unstructured.Unstructured, st *kinds.Status, conds []status.Condition) bool
	// Check re-evaluates from status, without a call, what the capability reports, in the
	// passes that read nothing of it (nothing due at Clever Cloud, a refresh reading
	// something else).
	Check(s Pass)
	// Refresh takes the periodic refresh's read (read) when it is the capability's: it then
	// reports took, and the pass ends (err: how).
	Refresh(ctx context.Context, s Pass, read kinds.RefreshRead, realID string) (took bool, err error)
	// Existing acts on the add-on of a full pass that did not create it, before its
	// credentials are read (a migration, an action); its error ends the pass.
	Existing(ctx context.Context, s Pass, addon *clevercloud.Addon) error
	// Provisioned runs in a full pass once the credentials are read, before they are
	// published; soon > 0 asks for the next pass sooner than the resync.
	Provisioned(ctx context.Context, s Pass, addon *clevercloud.Addon) (soon time.Duration)
	// Soon is when the next pass should run (0: at the resync) after a pass that did not run
	// Provisioned (a wait or a refresh).
	Soon(obj *unstructured.Unstructured, st *kinds.Status, conds []status.Condition) time.Duration
}

// Hooks is the Capability that does nothing at every hook point: capabilities embed it.
type Hooks struct{}

func (Hooks) Watch(*kinds.Kind) (client.Object, handler.MapFunc) { return nil, nil }
func (Hooks) Due(*unstructured.Unstructured, *kinds.Status, []status.Condition) bool {
	return false
}
func (Hooks) Check(Pass) {}
func (Hooks) Refresh(context.Context, Pass, kinds.RefreshRead, string) (bool, error) {
	return false, nil
}
func (Hooks) Existing(context.Context, Pass, *clevercloud.Addon) error { return nil }
func (Hooks) Provisioned(context.Context, Pass, *clevercloud.Addon) time.Duration {
	return 0
}
func (Hooks) Soon(*unstructured.Unstructured, *kinds.Status, []status.Condition) time.Duration {
	return 0
}

// Source is where a kind's Secret data comes from, one per kind: the add-on's env (the
// engine's own), an operator add-on's v4 answer, a configuration provider's variables.
type Source interface {
	// Read reads the data, in a full pass or a periodic refresh (created: this pass created
	// the add-on; its ConfigKeys, when known, are the variables Clever Cloud will publish; a
	// refresh's addon holds its ids only).
	Read(ctx context.Context, s Pass, addon *clevercloud.Addon, created bool) (Read, error)
	// NeedsRealID: reading needs the add-on's real id (a refresh without it is a full pass).
	NeedsRealID() bool
	// Waited: a pending read means provisioning, waited for on the board (internal/waits).
	Waited() bool
	// ReportsVersion: status.version is what the source reads, not the version asked for
	// when the add-on was created.
	ReportsVersion() bool
}

// Read is what a Source read: the Secret data, or why it is not served yet (Pending), and
// what it records in status when the data is published (nil: nothing).
type Read struct {
	Data    map[string]string
	Pending string
	Status  func(*kinds.Status)
}
