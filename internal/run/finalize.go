package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/finalizer"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/run/suspensions"
	"github.com/orkspace/ork/internal/runplan"
)

// Finalizer vocabulary.
const (
	// EventFinalizeTimeout is the Warning Event of a finalizer lifted at finalizeTimeout.
	EventFinalizeTimeout = "FinalizeTimeout"
	reasonFinalizeFailed = "FinalizerWriteFailed"
)

// finalizeBefore brings ork's finalizer in line with reconcile.remote.finalize before the
// call: on every CR that is not being deleted when finalize is on, on none when it is off
// (turning finalize off frees existing CRs at their next reconcile). A write replaces in.cr
// with what it returned, so the call and the status write see ork's own change.
//
// skip is the pass's decision when no call is to be made: a CR whose delete the reconciler
// has already answered ok (in this process), or one past finalizeTimeout, whose finalizer
// goes with a Warning Event.
func (c *controller) finalizeBefore(ctx context.Context, in *input) (skip *decision, err error) {
	if in.gone {
		if c.cfg.finalize && c.ledger.Finalized(in.key, in.cr.GetUID()) {
			return &decision{success: true, action: actionDone, reason: ReasonSucceeded, message: "delete already answered ok"}, nil
		}
		return nil, nil
	}
	has := finalizer.Has(in.cr)
	switch {
	case !c.cfg.finalize && has:
		return c.setFinalizer(ctx, in, false)
	case !c.cfg.finalize:
		return nil, nil
	case !in.deleting && !has:
		return c.setFinalizer(ctx, in, true)
	case !in.deleting:
		return nil, nil
	case !has && c.ledger.Finalized(in.key, in.cr.GetUID()):
		// Answered ok and lifted; another controller's finalizer keeps it for now.
		return &decision{success: true, action: actionDone, reason: ReasonSucceeded, message: "delete already answered ok"}, nil
	case has && c.finalizeDeadline(*in).Before(time.Now()):
		msg := fmt.Sprintf("the reconciler did not answer ok within finalizeTimeout (%s since the delete): finalizer %s removed without its clean-up",
			c.cfg.finalizeTimeout, finalizer.Name)
		if s, err := c.setFinalizer(ctx, in, false); err != nil || s != nil {
			return s, err
		}
		c.crw.finalized(in.key, in.cr.GetUID())
		c.event(in.cr, corev1.EventTypeWarning, EventFinalizeTimeout, msg)
		return &decision{success: true, action: actionDone, reason: EventFinalizeTimeout, message: msg}, nil
	}
	return nil, nil
}

// finalizeAfter lifts ork's finalizer once the reconciler has answered ok to a deleting call
// and asked for nothing more.
func (c *controller) finalizeAfter(ctx context.Context, in *input, d decision) error {
	if !c.cfg.finalize || !in.deleting || in.gone || !d.success || d.action != actionDone {
		return nil
	}
	if finalizer.Has(in.cr) {
		if s, err := c.setFinalizer(ctx, in, false); err != nil || s != nil {
			return err
		}
	}
	c.crw.finalized(in.key, in.cr.GetUID())
	return nil
}

// setFinalizer writes ork's finalizer on or off in.cr. A CR gone (or replaced) meanwhile
// ends the pass: its delete, or the new object's create, comes next.
func (c *controller) setFinalizer(ctx context.Context, in *input, present bool) (*decision, error) {
	return c.setFinalizerNamed(ctx, in, finalizer.Name, present)
}

// setFinalizerNamed is setFinalizer for any of ork's finalizers (name): ork's own, or
// naming.TargetCleanupFinalizer.
func (c *controller) setFinalizerNamed(ctx context.Context, in *input, name string, present bool) (*decision, error) {
	out, err := finalizer.SetNamed(ctx, c.e.dyn.Resource(c.cfg.gvr).Namespace(in.cr.GetNamespace()), in.cr, name, present,
		finalizer.Options{FieldManager: FieldManager, BeforeWrite: func() error { return c.e.fence.mayWrite(in.key, in.cr.GetUID()) }, DryRun: c.crw.options()})
	if errors.Is(err, errNotLeader) {
		return nil, err
	}
	if err != nil {
		return nil, failed(reasonFinalizeFailed, "%v", err)
	}
	if out == nil {
		return &decision{success: true, action: actionDone, reason: ReasonSucceeded, message: "deleted meanwhile"}, nil
	}
	if out == in.cr {
		// Nothing was written; in.cr may be the informer's cached object, which is shared
		// and never mutated (it already has no managedFields).
		return nil, nil
	}
	_, _ = kobj.StripManagedFields(out)
	if present && !slices.Contains(out.GetFinalizers(), name) {
		// Deleted between the read and the add (the apiserver forbids new finalizers then):
		// the delete's own pass comes with its update event. Quiet: nothing was reconciled,
		// so no Ready condition and no Event.
		return &decision{quiet: true, action: actionDone, reason: ReasonSucceeded, message: "being deleted meanwhile"}, nil
	}
	action := runplan.RemoveFinalizer
	if present {
		action = runplan.AddFinalizer
	}
	c.note(in.cr, runplan.Change{Action: action, Ref: name})
	in.cr, in.written = out, true
	return nil, nil
}

// finalizeDeadline is when ork stops waiting for an ok: finalizeTimeout after the CR's
// deletionTimestamp, or after the resume of a delete that waited while the CR was suspended
// (suspend.go: ork's memory, or the Suspended=False condition of reason Resumed). Nothing
// else moves it, so a restart does not extend it.
func (c *controller) finalizeDeadline(in input) time.Time {
	ts := in.cr.GetDeletionTimestamp()
	if ts == nil {
		return time.Time{}
	}
	start := ts.Time
	if r := c.suspended.ResumedAt(in.key, in.cr.GetUID()); r.After(start) {
		start = r
	}
	if r := suspensions.ResumedAtOf(in.cr); r.After(start) {
		start = r
	}
	return start.Add(c.cfg.finalizeTimeout)
}

// armFinalizeDeadline queues the key again at its finalize deadline when the pass left the
// CR held by ork's finalizer: a reconciler that keeps failing (or asks again only much
// later) cannot hold it past the timeout. Every such pass arms it anew, since whichever
// queued add comes first takes the pending trigger.
func (c *controller) armFinalizeDeadline(in input, d decision) {
	if !c.cfg.finalize || !in.deleting || in.gone || !finalizer.Has(in.cr) || (d.success && d.action == actionDone) {
		return
	}
	if d.reason == ReasonSuspended {
		// Held by the suspend annotation: finalizeTimeout does not act while it holds, and
		// the pass's own schedule (a backoff when its condition write failed) paces it. An
		// immediate Add past the deadline would spin on the key.
		return
	}
	if wait := time.Until(c.finalizeDeadline(in)); wait > 0 {
		c.add(in.key, addOpts{trigger: TriggerRequeue, after: wait})
	} else if d.success {
		// The deadline passed during this pass, which asked to be called later (maybe much
		// later): lift the finalizer now. A failure comes back with its backoff anyway.
		c.add(in.key, addOpts{trigger: TriggerRequeue})
	} else {
		c.ledger.Note(in.key, TriggerRequeue) // its backoff's add comes with the schedule
	}
}

// onlyOrkFinalizerChanged reports whether two versions of a CR differ in nothing but ork's
// own finalizer entry (and status, resourceVersion, managedFields), in the direction ork
// writes it (added while finalize is on, removed while it is off): ork's finalizer write
// coming back, no reason to call. Someone else removing it while finalize is on is news:
// the next pass puts it back.
func onlyOrkFinalizerChanged(a, b *unstructured.Unstructured, finalize bool) bool {
	if finalizer.Has(b) != finalize {
		return false
	}
	if !kobj.SameExcept(a.Object, b.Object, "status", "metadata") ||
		!kobj.SameExcept(kobj.NestedMap(a.Object, "metadata"), kobj.NestedMap(b.Object, "metadata"), "resourceVersion", "managedFields", "finalizers") {
		return false
	}
	without := func(fs []string) []string {
		return slices.DeleteFunc(slices.Clone(fs), func(f string) bool { return f == finalizer.Name })
	}
	fa, fb := a.GetFinalizers(), b.GetFinalizers()
	return finalizer.Has(a) != finalizer.Has(b) && slices.Equal(without(fa), without(fb))
}
