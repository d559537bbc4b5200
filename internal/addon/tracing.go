package addon

// What a pass turned out to be, as its trace span says (clever.reconcile.mode; the
// internal/tracing package, docs/operator.md "Tracing"): the plan's modes, a deletion, or a
// wait for an add-on being provisioned.
const (
	modeDelete = "delete"
	modeWait   = "wait"
)

// String names a plan's mode for trace spans.
func (m passMode) String() string {
	switch m {
	case upToDate:
		return "up-to-date"
	case refreshDue:
		return "refresh"
	default:
		return "full"
	}
}
