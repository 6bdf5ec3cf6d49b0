package run

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/run/keyledger"
	"github.com/orkspace/ork/internal/runplan"
)

// crWrites are what a run's mode makes of the writes to a custom resource itself (its
// status, ork's finalizer, the Suspended condition) and of the pass's own memory of its
// applies (lastApply), chosen once per controller (newCRWrites). A real run remembers what
// it wrote in the ledger, so that its echo is not news and the next request carries it; a
// dry run changed nothing, so it remembers nothing and notes for the plan what would have
// changed. The write functions call this and never ask which mode they run in; the child
// writes have their own, in run/childwrite.
type crWrites interface {
	// options are the DryRun values of every write.
	options() []string
	// writesSuspended says whether the Suspended condition is written at all. A dry run
	// sends nothing for it: the plan shows the CR as suspended, and the condition is ork's
	// bookkeeping, not a change the reconciler asked for.
	writesSuspended() bool
	// records says whether a pass is recorded as a decision (its id on the children it
	// writes, status.lastDecision). A dry run decides nothing that stays: its plan shows
	// what the reconciler asked for, not ork's bookkeeping.
	records() bool
	// wroteStatus follows a status patch that answered out.
	wroteStatus(in input, patch map[string]any, out metav1.Object)
	// wroteOperation follows a write of the operation annotation that answered out. A dry
	// run notes nothing for it: like the Suspended condition, it is ork's bookkeeping.
	wroteOperation(in input, out metav1.Object)
	// finalized follows the end of a delete: ork's finalizer is lifted, the CR is done.
	finalized(key string, uid types.UID)
	// applied follows the child writes of a pass whose answer listed them: what each did.
	applied(key string, uid types.UID, report []remote.AppliedResource)
}

// newCRWrites are c's CR writes: the dry run's in a dry run, the real ones otherwise.
func newCRWrites(c *controller) crWrites {
	if c.e.dry != nil {
		return dryCRWrites{note: c.note}
	}
	return realCRWrites{ledger: c.ledger}
}

// realCRWrites write for real and remember it in the ledger.
type realCRWrites struct{ ledger *keyledger.Ledger }

func (realCRWrites) options() []string     { return nil }
func (realCRWrites) writesSuspended() bool { return true }
func (realCRWrites) records() bool         { return true }

func (r realCRWrites) wroteStatus(in input, _ map[string]any, out metav1.Object) {
	r.ledger.WroteStatus(in.key, out.GetUID(), out.GetResourceVersion())
}

func (r realCRWrites) wroteOperation(in input, out metav1.Object) {
	r.ledger.WroteStatus(in.key, out.GetUID(), out.GetResourceVersion())
}

func (r realCRWrites) finalized(key string, uid types.UID) { r.ledger.MarkFinalized(key, uid) }

func (r realCRWrites) applied(key string, uid types.UID, report []remote.AppliedResource) {
	r.ledger.SetLastApply(key, uid, report)
}

// dryCRWrites send every write as a server-side dry run, note the status it would write and
// remember nothing: a later pass must not take a dry run's write for ork's own.
type dryCRWrites struct {
	note func(cr metav1.Object, ch runplan.Change)
}

func (dryCRWrites) options() []string     { return []string{metav1.DryRunAll} }
func (dryCRWrites) writesSuspended() bool { return false }
func (dryCRWrites) records() bool         { return false }

func (d dryCRWrites) wroteStatus(in input, patch map[string]any, _ metav1.Object) {
	d.note(in.cr, runplan.Change{Action: runplan.Status, Ref: "status", Fields: statusFields(patch)})
}

func (dryCRWrites) wroteOperation(input, metav1.Object)                 {}
func (dryCRWrites) finalized(string, types.UID)                         {}
func (dryCRWrites) applied(string, types.UID, []remote.AppliedResource) {}
