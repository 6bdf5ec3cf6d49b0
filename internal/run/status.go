package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/precondition"
	"github.com/orkspace/ork/internal/run/apiwarnings"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/crstatus"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/target"
)

// Condition and event vocabulary (docs/remote-reconciler.md#the-answer-remotereconcileresult).
const (
	ConditionReady          = crstatus.ConditionReady
	ReasonSucceeded         = crstatus.ReasonSucceeded
	ReasonError             = crstatus.ReasonError
	EventReconciled         = "Reconciled"
	EventReconcileError     = "ReconcileError"
	EventNoStatus           = "NoStatusSubresource"
	reasonApplyFailed       = planner.ReasonApplyFailed
	reasonAlreadyOwned      = planner.ReasonAlreadyOwned
	reasonPanic             = "ReconcilePanic"
	reasonInvalidResource   = planner.ReasonInvalidResource
	reasonRenderFailed      = "RenderFailed"
	reasonStatusRejected    = "StatusRejected"
	reasonStatusWriteFailed = "StatusWriteFailed"
	// reasonOperationWriteFailed: the operation annotation could not be written.
	reasonOperationWriteFailed = "OperationWriteFailed"
	// reasonOperationUnreadable: the operation persisted on a CR does not decode.
	reasonOperationUnreadable = "OperationUnreadable"
	// reasonOperationReadFailed: the CR could not be read for its held operation.
	reasonOperationReadFailed = "OperationReadFailed"
	// reasonOperationCompleted: the Progressing condition once a held operation ended.
	reasonOperationCompleted = "OperationCompleted"
	// statusWriteAttempts bounds the re-read and retry of a status write on 409.
	statusWriteAttempts = 5
)

// statusResult says what a status write changed, for the Event.
type statusResult = crstatus.Result

// report writes the outcome to the CR (status through the status subresource) and records
// an Event when something changed, or on failure. It returns the decision as it stands after
// the write: a status the apiserver refuses turns a success into a failure.
func (c *controller) report(ctx context.Context, in input, d decision, changes childwrite.Report) (decision, error) {
	var res statusResult
	if c.cfg.hasStatus {
		var err error
		res, err = c.writeStatus(ctx, in, d)
		switch {
		case err == nil:
		case errors.Is(err, errNotLeader):
			return d, err
		case d.success && crstatus.RejectedFields(err) != "":
			d = failure(reasonStatusRejected, "the CRD's schema rejects the status the reconciler returned: %s", crstatus.RejectedFields(err))
			if _, err := c.writeStatus(ctx, in, d); err != nil && errors.Is(err, errNotLeader) {
				return d, err
			} else if err != nil {
				c.cfg.log.Warn("status update failed", "key", in.key, "err", err)
			}
		default:
			d = failure(reasonStatusWriteFailed, "write status: %v", err)
		}
	} else if c.ledger.WarnNoStatus(in.key, in.cr.GetUID()) {
		c.event(in.cr, corev1.EventTypeWarning, EventNoStatus, fmt.Sprintf(
			"%s has no status subresource: ork writes no status (add subresources: {status: {}} to the CRD)", c.cfg.gvr.GroupResource()))
	}
	switch {
	case !d.success:
		c.event(in.cr, corev1.EventTypeWarning, failureEvent(d), crstatus.Message(d.outcome(c.operationPlace())))
	case res.ReadyTurnedTrue || res.NewGeneration || changes.Created+changes.Changed+changes.Pruned > 0:
		c.event(in.cr, corev1.EventTypeNormal, EventReconciled, reconciledMessage(in.cr.GetGeneration(), res, changes))
	}
	return d, nil
}

func reconciledMessage(gen int64, res statusResult, ch childwrite.Report) string {
	parts := []string{fmt.Sprintf("reconciled generation %d", gen)}
	if res.ReadyTurnedTrue {
		parts = append(parts, "Ready")
	}
	if ch.Created > 0 {
		parts = append(parts, fmt.Sprintf("%d created", ch.Created))
	}
	if ch.Changed > 0 {
		parts = append(parts, fmt.Sprintf("%d changed", ch.Changed))
	}
	if ch.Pruned > 0 {
		parts = append(parts, fmt.Sprintf("%d pruned", ch.Pruned))
	}
	return strings.Join(parts, ", ")
}

// outcome is d as the status shows it; place is where the CRD keeps a held operation.
func (d decision) outcome(place operation.Where) crstatus.Outcome {
	o := crstatus.Outcome{Success: d.success, Status: d.status, Reason: d.reason, Message: d.message,
		OwnReason: d.reason == ReasonRelatedObjectMissing || d.reason == operation.ReasonTimedOut ||
			d.reason == target.ReasonTargetUnreachable || d.reason == target.ReasonTargetNamespaceMissing || d.reason == reasonTargetInvalid,
		RelatedRead: d.relatedRead, RelatedCut: d.relatedCut,
		Pending: d.pending, HoldGeneration: d.holdGeneration, Progressing: d.progress,
		PlainMessage: d.pending || d.reason == operation.ReasonTimedOut,
		Decision:     d.lastDecision, Wrote: d.wrote, Refresh: d.refresh}
	switch s := d.op; {
	case !s.writes():
	case place == operation.InStatus:
		o.SetOperation = true
		if s.next != nil {
			o.Operation = operation.StatusValue(*s.next)
		}
	case s.held != nil && s.heldAt == operation.InStatus:
		o.SetOperation = true // moved to the annotation: removed here
	}
	return o
}

// failureEvent is the reason of a failed pass's Warning Event.
func failureEvent(d decision) string {
	if d.reason == operation.ReasonTimedOut {
		return operation.ReasonTimedOut
	}
	return EventReconcileError
}

// writeStatus merges what this pass decided into the CR's status: the result's keys,
// observedGeneration and the Ready condition, nothing else (other keys and other writers'
// conditions stay as they are). The merge patch carries the uid and resourceVersion it was
// computed on, so it never lands on a newer or a different object; on a conflict the object
// is read again and the patch recomputed. The base is ork's cache, unless the cache is older
// than ork's own last write: then a fresh read, so that "unchanged" is never decided from a
// state ork has itself already replaced.
func (c *controller) writeStatus(ctx context.Context, in input, d decision) (statusResult, error) {
	base, err := c.statusBase(ctx, in)
	if err != nil || base == nil {
		return statusResult{}, err
	}
	o := d.outcome(c.operationPlace())
	for range statusWriteAttempts {
		patch, res := crstatus.Patch(base, o, in.cr.GetGeneration(), time.Now(), c.pruned.Has)
		if patch == nil {
			return res, nil
		}
		if err := c.e.fence.mayWrite(in.key, in.cr.GetUID()); err != nil {
			return res, err
		}
		body, err := json.Marshal(patch)
		if err != nil {
			return res, fmt.Errorf("encode status: %w", err)
		}
		// The answer's metadata is all ork needs (the uid and resourceVersion it wrote). Its
		// warnings name the keys the CRD's schema pruned.
		wctx, warned := apiwarnings.Collect(ctx)
		out, err := c.e.meta.Resource(c.cfg.gvr).Namespace(base.GetNamespace()).Patch(wctx, base.GetName(),
			types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager, DryRun: c.crw.options()}, "status")
		if err == nil {
			res = c.notePruned(in, res, warned.UnknownFields("status"))
			c.crw.wroteStatus(in, patch, out)
			return res, nil
		}
		if !precondition.Failed(err) {
			if apierrors.IsNotFound(err) {
				return res, nil // deleted meanwhile: its delete is queued
			}
			return res, err
		}
		if base, err = c.freshCR(ctx, in); err != nil || base == nil {
			return res, err
		}
		if base.GetGeneration() != in.cr.GetGeneration() {
			// The spec moved on while this pass ran: its update is queued, and the pass for
			// it writes the status (and its Event). Fighting an update storm for an older one
			// helps no one. The operation is the exception: the reconciler started it, and
			// the next call must carry it (superseded) rather than have a second one started.
			if !o.SetOperation {
				return statusResult{}, nil
			}
			o = crstatus.Outcome{SetOperation: true, Operation: o.Operation, Unreported: true}
		}
	}
	return statusResult{}, fmt.Errorf("the custom resource changed under %d status writes in a row", statusWriteAttempts)
}

// statusBase is the object the status patch is computed on: the cached one, or a fresh read
// when the cache has not caught up with ork's own last write. nil means there is nothing to
// write to (deleted, or replaced by a new incarnation that gets its own pass).
func (c *controller) statusBase(ctx context.Context, in input) (*unstructured.Unstructured, error) {
	obj, exists, err := c.informer.GetIndexer().GetByKey(in.key)
	if err != nil || !exists {
		return c.freshCR(ctx, in)
	}
	cached := obj.(*unstructured.Unstructured)
	if cached.GetUID() != in.cr.GetUID() {
		return nil, nil
	}
	// This pass's own finalizer write, newer than the cache: its answer is the base.
	if in.written && kobj.CompareRV(in.cr.GetResourceVersion(), cached.GetResourceVersion()) > 0 {
		cached = in.cr
	}
	// Not known to be at least as new as ork's own last write (older, or not comparable):
	// read it.
	if uid, rv := c.ledger.StatusWrite(in.key); uid == cached.GetUID() && rv != "" &&
		kobj.CompareRV(rv, cached.GetResourceVersion()) > 0 {
		return c.freshCR(ctx, in)
	}
	return cached, nil
}

// freshCR reads the CR from the apiserver; nil when it is gone or is another incarnation.
func (c *controller) freshCR(ctx context.Context, in input) (*unstructured.Unstructured, error) {
	u, err := c.e.dyn.Resource(c.cfg.gvr).Namespace(in.cr.GetNamespace()).Get(ctx, in.cr.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", in.key, err)
	}
	if u.GetUID() != in.cr.GetUID() {
		return nil, nil
	}
	return u, nil
}
