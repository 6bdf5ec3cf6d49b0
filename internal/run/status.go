package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/precondition"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/kobj"
)

// Condition and event vocabulary (docs/remote-reconciler.md#the-answer-remotereconcileresult).
const (
	ConditionReady          = "Ready"
	ReasonSucceeded         = "ReconcileSucceeded"
	ReasonError             = "ReconcileError"
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
	maxConditionMessageSize = 1024
	// statusWriteAttempts bounds the re-read and retry of a status write on 409.
	statusWriteAttempts = 5
)

// statusResult says what a status write changed, for the Event.
type statusResult struct {
	readyTurnedTrue bool
	newGeneration   bool
}

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
		case d.success && rejectedFields(err) != "":
			d = failure(reasonStatusRejected, "the CRD's schema rejects the status the reconciler returned: %s", rejectedFields(err))
			if _, err := c.writeStatus(ctx, in, d); err != nil && errors.Is(err, errNotLeader) {
				return d, err
			} else if err != nil {
				c.cfg.log.Warn("status update failed", "key", in.key, "err", err)
			}
		default:
			d = failure(reasonStatusWriteFailed, "write status: %v", err)
		}
	} else if c.ledger.warnNoStatus(in.key, in.cr.GetUID()) {
		c.event(in.cr, corev1.EventTypeWarning, EventNoStatus, fmt.Sprintf(
			"%s has no status subresource: ork writes no status (add subresources: {status: {}} to the CRD)", c.cfg.gvr.GroupResource()))
	}
	switch {
	case !d.success:
		c.event(in.cr, corev1.EventTypeWarning, EventReconcileError, conditionMessage(d))
	case res.readyTurnedTrue || res.newGeneration || changes.Created+changes.Changed+changes.Pruned > 0:
		c.event(in.cr, corev1.EventTypeNormal, EventReconciled, reconciledMessage(in.cr.GetGeneration(), res, changes))
	}
	return d, nil
}

func reconciledMessage(gen int64, res statusResult, ch childwrite.Report) string {
	parts := []string{fmt.Sprintf("reconciled generation %d", gen)}
	if res.readyTurnedTrue {
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

func conditionMessage(d decision) string {
	if d.success {
		return "reconciled"
	}
	return truncate(d.reason+": "+d.message, maxConditionMessageSize)
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
	for range statusWriteAttempts {
		patch, res := statusPatch(base, d, in.cr.GetGeneration(), time.Now(), c.pruned.has)
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
		wctx, warned := collectWarnings(ctx)
		out, err := c.e.meta.Resource(c.cfg.gvr).Namespace(base.GetNamespace()).Patch(wctx, base.GetName(),
			types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager, DryRun: c.crw.options()}, "status")
		if err == nil {
			res = c.notePruned(in, res, warned.unknownFields("status"))
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
			// helps no one.
			return statusResult{}, nil
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
	if uid, rv := c.ledger.statusWrite(in.key); uid == cached.GetUID() && rv != "" &&
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

// statusPatch computes the merge patch of one pass onto base, or nil when it would change
// nothing. Maps of base are only read.
func statusPatch(base *unstructured.Unstructured, d decision, generation int64, now time.Time, pruned func(string) bool) (map[string]any, statusResult) {
	current, _ := base.Object["status"].(map[string]any)
	if current == nil {
		current = map[string]any{}
	}
	var res statusResult
	patch := map[string]any{}
	if d.success {
		for k, v := range d.status {
			if k == "conditions" || k == "observedGeneration" || pruned(k) {
				continue // ork's own keys (set below), or keys the schema drops
			}
			if kobj.MergeChanges(current, map[string]any{k: v}) {
				patch[k] = v
			}
		}
		if og, ok := kobj.Number(current["observedGeneration"]); !pruned("observedGeneration") && (!ok || int64(og) != generation) {
			patch["observedGeneration"] = generation
			res.newGeneration = true
		}
	}
	if pruned("conditions") {
		// Nowhere to write a condition to: no Ready either.
		return finishPatch(base, patch, res)
	}
	oldConds, _ := current["conditions"].([]any)
	conds := append([]any(nil), oldConds...)
	if d.success {
		if theirs, ok := d.status["conditions"].([]any); ok {
			for _, cond := range theirs {
				if m, ok := cond.(map[string]any); ok && m["type"] != nil && m["type"] != ConditionReady {
					conds = setCondition(conds, m)
				}
			}
		}
	}
	conds = truncatedCondition(conds, d, generation, now)
	ready := readyCondition(d, generation, now)
	prev := findCondition(conds, ConditionReady)
	if prev != nil && prev["status"] == ready["status"] {
		ready["lastTransitionTime"] = prev["lastTransitionTime"] // a transition only when status changes
	}
	res.readyTurnedTrue = ready["status"] == string(metav1.ConditionTrue) && (prev == nil || prev["status"] != ready["status"])
	conds = setCondition(conds, ready)
	if !kobj.EqualJSON(oldConds, conds) {
		patch["conditions"] = conds
	}
	return finishPatch(base, patch, res)
}

// finishPatch wraps the status keys to write into the merge patch, with the preconditions;
// nil when there is nothing to write.
func finishPatch(base *unstructured.Unstructured, patch map[string]any, res statusResult) (map[string]any, statusResult) {
	if len(patch) == 0 {
		return nil, res
	}
	return map[string]any{
		"metadata": map[string]any{"uid": string(base.GetUID()), "resourceVersion": base.GetResourceVersion()},
		"status":   patch,
	}, res
}

func readyCondition(d decision, generation int64, now time.Time) map[string]any {
	status, reason := metav1.ConditionTrue, ReasonSucceeded
	if !d.success {
		status, reason = metav1.ConditionFalse, ReasonError
		if d.reason == ReasonRelatedObjectMissing {
			reason = d.reason // not an error of the reconciler: it was not called
		}
	}
	return map[string]any{
		"type": ConditionReady, "status": string(status), "reason": reason, "message": conditionMessage(d),
		"observedGeneration": generation, "lastTransitionTime": now.UTC().Format(time.RFC3339),
	}
}

// truncatedCondition sets ConditionRelatedTruncated while a selector entry is cut, and
// removes it once a pass read every entry whole; a pass that did not read them leaves it.
func truncatedCondition(conds []any, d decision, generation int64, now time.Time) []any {
	if !d.relatedRead {
		return conds
	}
	if len(d.relatedCut) == 0 {
		return slices.DeleteFunc(conds, func(c any) bool {
			m, ok := c.(map[string]any)
			return ok && m["type"] == ConditionRelatedTruncated
		})
	}
	cond := map[string]any{
		"type": ConditionRelatedTruncated, "status": string(metav1.ConditionTrue), "reason": EventTooManyRelated,
		"message": strings.Join(d.relatedCut, "; "), "observedGeneration": generation, "lastTransitionTime": now.UTC().Format(time.RFC3339),
	}
	if prev := findCondition(conds, ConditionRelatedTruncated); prev != nil && prev["status"] == cond["status"] {
		cond["lastTransitionTime"] = prev["lastTransitionTime"]
	}
	return setCondition(conds, cond)
}

func findCondition(conds []any, typ string) map[string]any {
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

// setCondition replaces the condition of cond's type in conds, or appends it. Other
// conditions keep every field they have (lastProbeTime, lastUpdateTime...).
func setCondition(conds []any, cond map[string]any) []any {
	for i, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == cond["type"] {
			if kobj.EqualJSON(m, cond) {
				return conds
			}
			conds[i] = cond
			return conds
		}
	}
	return append(conds, cond)
}

// rejectedFields names the status fields of a 422 from the CRD's schema, or "" when err is
// not one.
func rejectedFields(err error) string {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return ""
	}
	var out []string
	if det := status.Status().Details; det != nil {
		for _, cause := range det.Causes {
			if strings.HasPrefix(cause.Field, "status") {
				out = append(out, cause.Field+": "+cause.Message)
			}
		}
	}
	if len(out) == 0 && !precondition.UIDMismatch(err) {
		return status.Status().Message
	}
	return strings.Join(out, "; ")
}

// truncate cuts s to at most n bytes on a UTF-8 boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
