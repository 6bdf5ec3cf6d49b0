package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/finalizer"
	"github.com/orkspace/ork/internal/precondition"
)

// Suspend (SPEC §6): a CR annotated SuspendAnnotation: SuspendValue is left alone.
const (
	SuspendAnnotation = "orkestra.orkspace.io/reconcile"
	SuspendValue      = "suspended"
	// ConditionSuspended is True on a suspended CR, and absent otherwise.
	ConditionSuspended = "Suspended"
	// ReasonSuspended is the Suspended condition's reason, and a suspended pass's in the
	// dry-run plan.
	ReasonSuspended = "Suspended"
	// EventDeleteSuspended is the Warning Event of a delete held while the CR is suspended.
	EventDeleteSuspended = "DeleteWaitsSuspended"
	// EventInvalidSuspend is the Warning Event of SuspendAnnotation with another value.
	EventInvalidSuspend = "InvalidSuspendAnnotation"
)

// suspendMessage is the Suspended condition's message.
const suspendMessage = "reconciling is suspended by the annotation " + SuspendAnnotation + ": " + SuspendValue + "; remove it to resume"

// suspensions is what a controller remembers of suspended CRs: which are suspended (the
// metric), and which annotation values it has already warned about.
type suspensions struct {
	mu        sync.Mutex
	suspended map[string]bool
	// warned is the uid and value of the last invalid annotation reported, by key.
	warned map[string]string
}

func newSuspensions() *suspensions {
	return &suspensions{suspended: map[string]bool{}, warned: map[string]string{}}
}

// set records whether key is suspended and returns how many are.
func (s *suspensions) set(key string, on bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		s.suspended[key] = true
	} else {
		delete(s.suspended, key)
	}
	return len(s.suspended)
}

// warnOnce reports whether the invalid value of uid's annotation is still to be reported,
// and marks it reported.
func (s *suspensions) warnOnce(key string, uid types.UID, value string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := string(uid) + "\x00" + value
	if s.warned[key] == id {
		return false
	}
	s.warned[key] = id
	return true
}

func (s *suspensions) forgetWarning(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.warned, key)
}

// suspension decides a pass over a suspended CR: held is true when the CR is suspended,
// and d is then the pass's decision: no call, no apply, no prune, no status write but the
// Suspended condition, once. A CR no longer suspended loses its Suspended condition and
// goes on with its pass (held false). ok is false when a write was refused because this
// replica may no longer lead.
func (c *controller) suspension(ctx context.Context, in *input) (d decision, held, ok bool) {
	value, annotated := in.cr.GetAnnotations()[SuspendAnnotation]
	suspended := annotated && value == SuspendValue && !in.gone
	c.e.opts.Metrics.SuspendedCRs.WithLabelValues(c.crd.Name).Set(float64(c.suspended.set(in.key, suspended)))
	switch {
	case annotated && value != SuspendValue:
		if c.suspended.warnOnce(in.key, in.cr.GetUID(), value) {
			c.event(in.cr, corev1.EventTypeWarning, EventInvalidSuspend, fmt.Sprintf(
				"annotation %s has the value %q: only %q means anything (suspend); ignored", SuspendAnnotation, value, SuspendValue))
		}
	case !annotated:
		c.suspended.forgetWarning(in.key)
	}
	if in.gone && annotated && value == SuspendValue {
		// Deleted while suspended, with no finalizer of ork's to hold it: no call either.
		return decision{success: true, action: actionDone, quiet: true, reason: ReasonSuspended, message: suspendMessage}, true, true
	}
	if !suspended {
		// Read in place (NestedSlice would deep-copy the conditions on every pass).
		status, _ := in.cr.Object["status"].(map[string]any)
		conds, _ := status["conditions"].([]any)
		if findCondition(conds, ConditionSuspended) == nil {
			// Nothing to remove, as nearly every pass: no status read for it. The object
			// of the pass is at least as new as ork's Suspended write whenever the
			// annotation's removal is: the user's edit came after it.
			return decision{}, false, true
		}
		// The pass that removes the condition is the first since the CR was resumed: a
		// delete that waited gets its call even when finalizeTimeout has passed meanwhile.
		removed, err := c.setSuspendedCondition(ctx, *in, false)
		in.resumed = removed
		if err != nil {
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
	d = decision{success: true, action: actionDone, quiet: true, reason: ReasonSuspended, message: suspendMessage}
	if _, err := c.setSuspendedCondition(ctx, *in, true); err != nil {
		if errors.Is(err, errNotLeader) {
			return d, true, false
		}
		c.log.Warn("writing the Suspended condition failed", "key", in.key, "err", err)
		d.action = actionBackoff // try again later
	}
	return d, true, true
}

// setSuspendedCondition adds (on) or removes the Suspended condition, when the status does
// not say so already; nothing else in the status changes. changed says it was written. A
// dry run writes nothing.
func (c *controller) setSuspendedCondition(ctx context.Context, in input, on bool) (changed bool, err error) {
	if !c.hasStatus || in.gone || c.e.dry != nil {
		return false, nil
	}
	base, err := c.statusBase(ctx, in)
	if err != nil || base == nil {
		return false, err
	}
	for range statusWriteAttempts {
		patch := suspendedPatch(base, on, time.Now())
		if patch == nil {
			return false, nil
		}
		if err := c.e.mayWrite(in.key, in.cr.GetUID()); err != nil {
			return false, err
		}
		body, err := json.Marshal(patch)
		if err != nil {
			return false, fmt.Errorf("encode status: %w", err)
		}
		out, err := c.e.meta.Resource(c.gvr).Namespace(base.GetNamespace()).Patch(ctx, base.GetName(),
			types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager}, "status")
		if err == nil {
			c.ledger.wroteStatus(in.key, out.GetUID(), out.GetResourceVersion())
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

// suspendedPatch is the merge patch that adds or removes the Suspended condition of base,
// nil when the status says so already. Other conditions, Ready's among them, stay as they are.
func suspendedPatch(base *unstructured.Unstructured, on bool, now time.Time) map[string]any {
	status, _ := base.Object["status"].(map[string]any)
	oldConds, _ := status["conditions"].([]any)
	prev := findCondition(oldConds, ConditionSuspended)
	var conds []any
	switch {
	case on && prev != nil && prev["status"] == string(metav1.ConditionTrue):
		return nil
	case on:
		conds = setCondition(append([]any(nil), oldConds...), map[string]any{
			"type": ConditionSuspended, "status": string(metav1.ConditionTrue), "reason": ReasonSuspended,
			"message": suspendMessage, "lastTransitionTime": now.UTC().Format(time.RFC3339),
		})
	case prev == nil:
		return nil
	default:
		conds = []any{}
		for _, c := range oldConds {
			if m, ok := c.(map[string]any); !ok || m["type"] != ConditionSuspended {
				conds = append(conds, c)
			}
		}
	}
	return map[string]any{
		"metadata": map[string]any{"uid": string(base.GetUID()), "resourceVersion": base.GetResourceVersion()},
		"status":   map[string]any{"conditions": conds},
	}
}
