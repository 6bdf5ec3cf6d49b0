package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/finalizer"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/precondition"
	"github.com/orkspace/ork/internal/run/crstatus"
	"github.com/orkspace/ork/internal/run/suspensions"
)

// Suspend: a CR annotated SuspendAnnotation: SuspendValue is left alone.
const (
	SuspendAnnotation = naming.SuspendAnnotation
	SuspendValue      = naming.SuspendValue
	// ConditionSuspended is True on a suspended CR, and absent otherwise.
	ConditionSuspended = suspensions.Condition
	// ReasonSuspended is the Suspended condition's reason, and a suspended pass's in the
	// dry-run plan.
	ReasonSuspended = suspensions.Reason
	// ReasonResumed is the reason of Suspended=False on a custom resource being deleted
	// that was resumed (suspensions.ResumedAtOf).
	ReasonResumed = suspensions.ReasonResumed
	// EventDeleteSuspended is the Warning Event of a delete held while the CR is suspended.
	EventDeleteSuspended = "DeleteWaitsSuspended"
	// EventInvalidSuspend is the Warning Event of SuspendAnnotation with another value.
	EventInvalidSuspend = "InvalidSuspendAnnotation"
)

// setSuspended records whether in's CR is suspended at this pass, in memory and in the
// metric, and returns whether it was at its last pass.
func (c *controller) setSuspended(ctx context.Context, in *input, on bool) (was bool) {
	was, _ = c.suspended.Set(ctx, in.key, in.cr.GetUID(), on)
	return was
}

// forgetSuspensions drops what c remembers of the suspended CRs for which gone is true (a
// released bucket's: they are the next holder's to count and to pass).
func (c *controller) forgetSuspensions(gone func(types.UID) bool) {
	c.suspended.Forget(gone)
}

// suspension decides a pass over a suspended CR: held is true when the CR is suspended,
// and d is then the pass's decision: no call, no apply, no prune, no status write but the
// Suspended condition, once. A CR no longer suspended loses its Suspended condition and
// goes on with its pass (held false); a deleting one resumed is marked so, and
// finalizeTimeout counts from the resume (finalizeDeadline). ok is false when a write was refused because this replica may no longer
// lead.
func (c *controller) suspension(ctx context.Context, in *input) (d decision, held, ok bool) {
	value, annotated := in.cr.GetAnnotations()[SuspendAnnotation]
	suspended := annotated && value == SuspendValue && !in.gone
	// A gone CR is forgotten here (its last pass), as is one resumed.
	was := c.setSuspended(ctx, in, suspended)
	if in.gone {
		c.suspended.ForgetResumed(in.key)
	}
	switch {
	case in.gone || !annotated:
		c.suspended.ForgetWarning(in.key)
	case value != SuspendValue:
		if c.suspended.WarnOnce(in.key, in.cr.GetUID(), value) {
			c.event(in.cr, corev1.EventTypeWarning, EventInvalidSuspend, fmt.Sprintf(
				"annotation %s has the value %q: only %q means anything (suspend); ignored", SuspendAnnotation, value, SuspendValue))
		}
	}
	if in.gone && annotated && value == SuspendValue {
		// Deleted while suspended, with no finalizer of ork's to hold it: no call either.
		return decision{success: true, action: actionDone, quiet: true, reason: ReasonSuspended, message: suspensions.Message}, true, true
	}
	if !suspended {
		// The first pass since the CR was resumed: a delete that waited gets a whole
		// finalizeTimeout from now, so its call is made (and retried) even when the
		// deletionTimestamp is long past. ork's memory says so, and so does the Suspended
		// condition, True until this pass, then False with reason Resumed on a CR being
		// deleted, which a restart or another replica reads (finalizeDeadline).
		resumed := func() {
			if in.deleting {
				c.suspended.MarkResumed(ctx, in.key, in.cr.GetUID(), time.Now())
			}
		}
		// Read in place (NestedSlice would deep-copy the conditions on every pass).
		status, _ := in.cr.Object["status"].(map[string]any)
		conds, _ := status["conditions"].([]any)
		cond := crstatus.Find(conds, ConditionSuspended)
		if was || (cond != nil && cond["status"] == string(metav1.ConditionTrue)) {
			// Before the condition's write: a write that fails still leaves the mark.
			resumed()
		}
		if cond == nil || (in.deleting && cond["status"] == string(metav1.ConditionFalse)) {
			// Nothing to write, as nearly every pass: no status read for it. The object
			// of the pass is at least as new as ork's Suspended write whenever the
			// annotation's removal is: the user's edit came after it.
			return decision{}, false, true
		}
		if _, err := c.setSuspendedCondition(ctx, *in, false); err != nil {
			return decision{}, false, !errors.Is(err, errNotLeader)
		}
		return decision{}, false, true
	}
	if in.deleting && finalizer.Has(in.cr) {
		c.event(in.cr, corev1.EventTypeWarning, EventDeleteSuspended, fmt.Sprintf(
			"the delete waits: the custom resource is suspended (annotation %s: %s), so ork neither calls the reconciler nor removes its finalizer %s, "+
				"and finalizeTimeout does not act; remove the annotation to let the delete go on, or run ork finalizers release",
			SuspendAnnotation, SuspendValue, finalizer.Name))
	}
	d = decision{success: true, action: actionDone, quiet: true, reason: ReasonSuspended, message: suspensions.Message}
	if _, err := c.setSuspendedCondition(ctx, *in, true); err != nil {
		if errors.Is(err, errNotLeader) {
			return d, true, false
		}
		c.cfg.log.Warn("writing the Suspended condition failed", "key", in.key, "err", err)
		d.action = actionBackoff // try again later
	}
	return d, true, true
}

// setSuspendedCondition adds (on) or removes the Suspended condition (on a CR being
// deleted: sets it False, reason Resumed), when the status does not say so already; nothing else in the status changes. changed says it was written. A
// dry run writes nothing, nor does a write onto an object (fresh after a conflict) whose
// annotation no longer says what on does.
func (c *controller) setSuspendedCondition(ctx context.Context, in input, on bool) (changed bool, err error) {
	if !c.cfg.hasStatus || in.gone || !c.crw.writesSuspended() {
		return false, nil
	}
	base, err := c.statusBase(ctx, in)
	if err != nil || base == nil {
		return false, err
	}
	for range statusWriteAttempts {
		if (base.GetAnnotations()[SuspendAnnotation] == SuspendValue) != on {
			// The annotation changed since the pass began (the write that moved the
			// resourceVersion, maybe): the pass of that update, queued, writes what it says.
			return false, nil
		}
		patch := suspensions.Patch(base, on, time.Now())
		if patch == nil {
			return false, nil
		}
		if err := c.e.fence.mayWrite(in.key, in.cr.GetUID()); err != nil {
			return false, err
		}
		body, err := json.Marshal(patch)
		if err != nil {
			return false, fmt.Errorf("encode status: %w", err)
		}
		out, err := c.e.meta.Resource(c.cfg.gvr).Namespace(base.GetNamespace()).Patch(ctx, base.GetName(),
			types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager, DryRun: c.crw.options()}, "status")
		if err == nil {
			c.crw.wroteStatus(in, patch, out)
			return true, nil
		}
		if apierrors.IsNotFound(err) {
			return false, nil // deleted meanwhile: its delete is queued
		}
		if !precondition.Failed(err) {
			return false, fmt.Errorf("write the Suspended condition: %w", err)
		}
		if base, err = c.freshCR(ctx, in); err != nil || base == nil {
			return false, err
		}
	}
	return false, fmt.Errorf("the custom resource changed under %d status writes in a row", statusWriteAttempts)
}
