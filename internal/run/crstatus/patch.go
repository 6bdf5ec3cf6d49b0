// Package crstatus computes what one pass writes to a custom resource's status: the
// answer's keys, observedGeneration and ork's conditions, as a merge patch with the
// preconditions that keep it from landing on a newer or another object. It is pure: the
// engine reads the base, sends the patch and reports (docs/architecture.md).
package crstatus

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/run/kobj"
)

// Outcome is what one pass decided, as the status shows it.
type Outcome struct {
	// Success merges Status (the answer's keys) and advances observedGeneration; Ready is
	// True. Otherwise Ready is False with Reason and Message.
	Success bool
	Status  map[string]any
	Reason  string
	Message string
	// PlainMessage: Message names its reason itself (an operation's), so the Ready
	// condition's message is Message alone.
	PlainMessage bool
	// OwnReason: a failure's Reason is the Ready condition's own (nothing failed in the
	// reconciler: it was not called), not ReasonError.
	OwnReason bool
	// RelatedRead: every payload.related entry was read, and RelatedCut names those cut
	// (ConditionRelatedTruncated); a pass that did not read them leaves the condition.
	RelatedRead bool
	RelatedCut  []string
	// Pending: a success whose work goes on (an operation the reconciler holds): the
	// answer's keys are merged, but Ready is False with Reason and Message, and
	// observedGeneration stays where it is.
	Pending bool
	// HoldGeneration keeps observedGeneration where it is on a success: the work that
	// finished was an older generation's.
	HoldGeneration bool
	// Progressing sets the Progressing condition (True while an operation is held, False
	// once it ended); nil leaves it as it is, so that a reconciler that never holds one
	// never sees it.
	Progressing *Progress
	// Unreported writes nothing but the operation: no Ready, no other condition, no key
	// (the generation moved on under the pass; the next pass reports).
	Unreported bool
	// SetOperation writes Operation at status.operation (nil removes it).
	SetOperation bool
	Operation    map[string]any
	// Decision is the pass's status.lastDecision (decision.LastDecision.Status); nil writes
	// none. It is written only with a write the pass makes anyway: another status key that
	// changed, or Wrote. Alone it never makes a status write, so a converged custom resource
	// costs no write per resync.
	Decision map[string]any
	// Wrote: the pass wrote a child (created, applied, pruned or deleted one).
	Wrote bool
	// Refresh: the record on the custom resource no longer describes what Decision does (its
	// inputs, children or requeue, or its age: reconcile.remote.skipUnchanged, which trusts it
	// without a call), so Decision is written even alone.
	Refresh bool
}

// Progress is the Progressing condition of a pass.
type Progress struct {
	Status          bool
	Reason, Message string
}

// Result says what a status write changed, for the Event.
type Result struct {
	ReadyTurnedTrue bool
	NewGeneration   bool
}

// Patch computes the merge patch of one pass onto base for the custom resource's
// generation, or nil when it would change nothing. pruned names the top-level status keys
// the CRD's schema drops: they are never written. Maps of base are only read.
func Patch(base *unstructured.Unstructured, o Outcome, generation int64, now time.Time, pruned func(string) bool) (map[string]any, Result) {
	current, _ := base.Object["status"].(map[string]any)
	if current == nil {
		current = map[string]any{}
	}
	var res Result
	patch := map[string]any{}
	if o.Success {
		for k, v := range o.Status {
			if k == "conditions" || k == "observedGeneration" || k == OperationField || k == DecisionField || k == TargetsField || pruned(k) {
				continue // ork's own keys (set below), or keys the schema drops
			}
			if kobj.MergeChanges(current, map[string]any{k: v}) {
				patch[k] = v
			}
		}
		if og, ok := kobj.Number(current["observedGeneration"]); !o.Pending && !o.HoldGeneration && !pruned("observedGeneration") && (!ok || int64(og) != generation) {
			patch["observedGeneration"] = generation
			res.NewGeneration = true
		}
	}
	if o.SetOperation && !pruned(OperationField) {
		if cur, ok := current[OperationField]; o.Operation != nil && !kobj.EqualJSON(cur, o.Operation) || o.Operation == nil && ok {
			var v any // nil: a merge patch's null removes it
			if o.Operation != nil {
				v = o.Operation
			}
			patch[OperationField] = v
		}
	}
	if pruned("conditions") || o.Unreported {
		// Nowhere to write a condition to: no Ready either.
		return finish(base, withDecision(patch, o, pruned), res)
	}
	oldConds, _ := current["conditions"].([]any)
	conds := append([]any(nil), oldConds...)
	if o.Success {
		if theirs, ok := o.Status["conditions"].([]any); ok {
			for _, cond := range theirs {
				if m, ok := cond.(map[string]any); ok && m["type"] != nil && m["type"] != ConditionReady {
					conds = Set(conds, m)
				}
			}
		}
	}
	conds = truncated(conds, o, generation, now)
	conds = progressing(conds, o, generation, now)
	ready := readyCondition(o, generation, now)
	prev := Find(conds, ConditionReady)
	if prev != nil && prev["status"] == ready["status"] {
		ready["lastTransitionTime"] = prev["lastTransitionTime"] // a transition only when status changes
	}
	res.ReadyTurnedTrue = ready["status"] == "True" && (prev == nil || prev["status"] != ready["status"])
	conds = Set(conds, ready)
	if !kobj.EqualJSON(oldConds, conds) {
		patch["conditions"] = conds
	}
	return finish(base, withDecision(patch, o, pruned), res)
}

// DecisionField is the status key of the pass's decision record.
const DecisionField = "lastDecision"

// TargetsField is the status key of the targets that may hold a custom resource's children
// (docs/multicluster.md, target.StatusField), which the engine writes on its own: never from
// an answer.
const TargetsField = "childTargets"

// withDecision adds the pass's decision to a patch that writes something, or to any patch
// when the pass wrote a child or the record must be refreshed.
func withDecision(patch map[string]any, o Outcome, pruned func(string) bool) map[string]any {
	if o.Decision != nil && (len(patch) > 0 || o.Wrote || o.Refresh) && !pruned(DecisionField) {
		patch[DecisionField] = o.Decision
	}
	return patch
}

// finish wraps the status keys to write into the merge patch, with the preconditions; nil
// when there is nothing to write.
func finish(base *unstructured.Unstructured, patch map[string]any, res Result) (map[string]any, Result) {
	if len(patch) == 0 {
		return nil, res
	}
	return map[string]any{
		"metadata": map[string]any{"uid": string(base.GetUID()), "resourceVersion": base.GetResourceVersion()},
		"status":   patch,
	}, res
}
