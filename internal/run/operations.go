package run

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/run/crstatus"
	"github.com/orkspace/ork/internal/run/inflight"
	"github.com/orkspace/ork/internal/run/kobj"
)

// opStep is what a pass does to the long-running operation a reconciler holds for its CR
// (docs/remote-reconciler.md#operations): the rules are internal/operation's; this is
// where the engine persists them.
type opStep struct {
	// held is the operation the request carried (nil: none), found at heldAt.
	held   *operation.State
	heldAt operation.Where
	// next is the operation to persist; nil with clear removes it.
	next  *operation.State
	clear bool
	// ended says how the held operation ended for ork_operation_duration_seconds
	// ("done", "timedOut", "replaced"); "" while it goes on.
	ended string
}

// writes reports whether the step changes what is persisted.
func (s *opStep) writes() bool { return s != nil && (s.next != nil || s.clear) }

// operationPlace is where c persists a held operation now: status.operation while the CRD's
// status schema keeps it, else the annotation (a status subresource-less CRD, a schema
// without the key, or one seen pruning it).
func (c *controller) operationPlace() operation.Where {
	if c.cfg.hasStatus && c.cfg.operationInStatus && !c.pruned.Has(crstatus.OperationField) {
		return operation.InStatus
	}
	return operation.InAnnotation
}

// heldOperation reads the operation persisted on in's CR. The pass's object is read, unless
// this replica holds an operation for the key and knows a newer write of its own to the CR
// (a poll must never miss the operation it wrote): then the CR is read from the apiserver.
// The place ork writes to is read first. An error is an I/O error; a value that does not
// decode is bad, at where.
func (c *controller) heldOperation(ctx context.Context, in input) (held *operation.State, where operation.Where, bad, err error) {
	obj := in.cr
	if uid, rv := c.ledger.StatusWrite(in.key); !in.gone && hasOp(c.ops, in.key) && uid == in.cr.GetUID() && rv != "" &&
		kobj.CompareRV(rv, in.cr.GetResourceVersion()) > 0 {
		fresh, err := c.freshCR(ctx, in)
		if err != nil {
			return nil, operation.InStatus, nil, &passError{reason: reasonOperationReadFailed, msg: fmt.Sprintf("read the held operation: %v", err)}
		}
		if fresh != nil {
			obj = fresh
		}
	}
	from := obj.Object
	if c.operationPlace() == operation.InAnnotation {
		// The annotation alone: a status.operation ork does not write is not its.
		from = map[string]any{"metadata": obj.Object["metadata"]}
	}
	held, where, bad = operation.Read(from)
	return held, where, bad, nil
}

// persistOperation writes the annotation form of d's operation step; the status form goes
// with the status write (decision.outcome). It also clears the other place when the
// operation moved from it.
func (c *controller) persistOperation(ctx context.Context, in input, s *opStep) error {
	if !s.writes() || in.gone {
		return nil
	}
	place := c.operationPlace()
	switch {
	case place == operation.InAnnotation:
		return c.patchOperationAnnotation(ctx, in, s.next)
	case s.heldAt == operation.InAnnotation && (s.held != nil || s.clear):
		return c.patchOperationAnnotation(ctx, in, nil) // moved to status.operation, or unreadable
	}
	return nil
}

// patchOperationAnnotation sets (or, for nil, removes) the operation annotation on in's CR,
// under the fence, on that very object (its uid).
func (c *controller) patchOperationAnnotation(ctx context.Context, in input, s *operation.State) error {
	if err := c.e.fence.mayWrite(in.key, in.cr.GetUID()); err != nil {
		return err
	}
	patch := operation.Patch(operation.InAnnotation, s)
	patch["metadata"].(map[string]any)["uid"] = string(in.cr.GetUID())
	body, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encode the operation annotation: %w", err)
	}
	out, err := c.e.meta.Resource(c.cfg.gvr).Namespace(in.cr.GetNamespace()).Patch(ctx, in.cr.GetName(),
		types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager, DryRun: c.crw.options()})
	switch {
	case apierrors.IsNotFound(err):
		return nil // deleted meanwhile: its delete is queued
	case err != nil:
		return &passError{reason: reasonOperationWriteFailed, msg: fmt.Sprintf("write the operation annotation: %v", err)}
	}
	// The next read of the operation must see at least this write (heldOperation).
	c.crw.wroteOperation(in, out)
	return nil
}

// cachedGeneration is the generation of key's CR in the cache; ok is false when it is not
// there.
func (c *controller) cachedGeneration(key string) (int64, bool) {
	cr := c.cached(key)
	if cr == nil {
		return 0, false
	}
	return cr.GetGeneration(), true
}

// inflight is s as the in-flight book records it.
func (s *opStep) inflight() inflight.Step {
	if s == nil {
		return inflight.Step{}
	}
	return inflight.Step{Held: s.held, Next: s.next, Wrote: s.writes(), Ended: s.ended}
}

// readOperation is the operation held for in's CR. One that does not decode is reported and
// treated as none (the reconciler's stable key finds its work again); a bad annotation is
// replaced or removed by the pass's write. err is a failed read: the pass backs off.
func readOperation(ctx context.Context, env passEnv, in input) (held *operation.State, at operation.Where, unreadable bool, err error) {
	held, at, bad, err := env.operation(ctx, in)
	if err != nil {
		return nil, at, false, err
	}
	if bad != nil {
		env.event(in.cr, corev1.EventTypeWarning, reasonOperationUnreadable,
			fmt.Sprintf("the long-running operation persisted on this object is not readable, so ork holds none: %v", bad))
	}
	return held, at, bad != nil, nil
}

// timedOut is the decision of a pass that finds its held operation past its deadline: no
// call; the operation is kept marked timed out, so that the next call tells the reconciler.
func timedOut(held *operation.State, at operation.Where, now time.Time) decision {
	next, msg := operation.TimeOut(*held, now)
	d := failure(operation.ReasonTimedOut, "%s", msg)
	d.op = &opStep{held: held, heldAt: at, next: &next, ended: "timedOut"}
	d.progress = &crstatus.Progress{Reason: operation.ReasonTimedOut, Message: msg}
	return d
}

// pending makes d a pending answer's: the operation persisted, Ready False, polled after
// its pollAfter (in the slow lane: a requeue is no news).
func pending(d *decision, held *operation.State, at operation.Where, res *remote.Result, in input, now time.Time) {
	next, change := operation.Pending(held, *res.Operation, string(in.cr.GetUID()), in.cr.GetGeneration(), now)
	d.pending, d.after = true, max(next.NextPoll(now), operation.MinPollAfter)
	d.op = &opStep{held: held, heldAt: at, next: &next}
	if change == operation.Replaced {
		d.op.ended = "replaced"
	}
	d.progress = &crstatus.Progress{Status: true, Reason: operation.ReasonPending, Message: d.message}
}

// finished makes d a final answer's while an operation was held: the operation goes;
// observedGeneration moves only when the finished work is the CR's current generation's,
// and otherwise the reconciler is asked again for that one.
func finished(d *decision, env passEnv, held *operation.State, at operation.Where, in input) {
	current, ok := env.generation(in.key)
	if !ok {
		current = in.cr.GetGeneration()
	}
	f := operation.Finish(held, in.cr.GetGeneration(), current)
	d.op = &opStep{held: held, heldAt: at, clear: f.Clear}
	if held.Held() {
		d.op.ended = "done"
	}
	d.holdGeneration = !f.AdvanceObserved
	if f.CallAgain && d.action == actionDone {
		d.action, d.after = actionRequeueAfter, minRequeueAfter
	}
	d.progress = &crstatus.Progress{Reason: reasonOperationCompleted, Message: fmt.Sprintf("operation %q ended", held.ID)}
}

func hasOp(b *inflight.Book, key string) bool {
	_, ok := b.Get(key)
	return ok
}
