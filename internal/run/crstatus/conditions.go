package crstatus

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/run/relatedwatch"
)

// The Ready condition's vocabulary (docs/remote-reconciler.md#the-answer-remotereconcileresult).
const (
	ConditionReady  = "Ready"
	ReasonSucceeded = "ReconcileSucceeded"
	ReasonError     = "ReconcileError"
	// ConditionProgressing is True while an operation is held, False once it ended.
	ConditionProgressing = "Progressing"
	// OperationField is the status key of a held operation.
	OperationField = "operation"
	// MaxMessageSize bounds a condition's message, in bytes.
	MaxMessageSize = 1024
)

// Message is the Ready condition's message for o.
func Message(o Outcome) string {
	switch {
	case o.Success && !o.Pending:
		return "reconciled"
	case o.PlainMessage:
		return Truncate(o.Message, MaxMessageSize)
	}
	return Truncate(o.Reason+": "+o.Message, MaxMessageSize)
}

func readyCondition(o Outcome, generation int64, now time.Time) map[string]any {
	status, reason := metav1.ConditionTrue, ReasonSucceeded
	if o.Pending {
		status, reason = metav1.ConditionFalse, o.Reason
	} else if !o.Success {
		status, reason = metav1.ConditionFalse, ReasonError
		if o.OwnReason {
			reason = o.Reason
		}
	}
	return map[string]any{
		"type": ConditionReady, "status": string(status), "reason": reason, "message": Message(o),
		"observedGeneration": generation, "lastTransitionTime": now.UTC().Format(time.RFC3339),
	}
}

// truncated sets relatedwatch.ConditionTruncated while a selector entry is cut, and removes
// it once a pass read every entry whole; a pass that did not read them leaves it.
func truncated(conds []any, o Outcome, generation int64, now time.Time) []any {
	if !o.RelatedRead {
		return conds
	}
	if len(o.RelatedCut) == 0 {
		return slices.DeleteFunc(conds, func(c any) bool {
			m, ok := c.(map[string]any)
			return ok && m["type"] == relatedwatch.ConditionTruncated
		})
	}
	cond := map[string]any{
		"type": relatedwatch.ConditionTruncated, "status": string(metav1.ConditionTrue), "reason": relatedwatch.EventTooManyObjects,
		"message": strings.Join(o.RelatedCut, "; "), "observedGeneration": generation, "lastTransitionTime": now.UTC().Format(time.RFC3339),
	}
	if prev := Find(conds, relatedwatch.ConditionTruncated); prev != nil && prev["status"] == cond["status"] {
		cond["lastTransitionTime"] = prev["lastTransitionTime"]
	}
	return Set(conds, cond)
}

// progressing sets the Progressing condition as o says, keeping its lastTransitionTime while
// its status stays.
func progressing(conds []any, o Outcome, generation int64, now time.Time) []any {
	p := o.Progressing
	if p == nil {
		return conds
	}
	status := metav1.ConditionFalse
	if p.Status {
		status = metav1.ConditionTrue
	}
	cond := map[string]any{
		"type": ConditionProgressing, "status": string(status), "reason": p.Reason,
		"message": Truncate(p.Message, MaxMessageSize), "observedGeneration": generation, "lastTransitionTime": now.UTC().Format(time.RFC3339),
	}
	if prev := Find(conds, ConditionProgressing); prev != nil && prev["status"] == cond["status"] {
		cond["lastTransitionTime"] = prev["lastTransitionTime"]
	}
	return Set(conds, cond)
}

// Find is the condition of type typ in conds, or nil.
func Find(conds []any, typ string) map[string]any {
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

// Set replaces the condition of cond's type in conds, or appends it. Other conditions keep
// every field they have (lastProbeTime, lastUpdateTime...).
func Set(conds []any, cond map[string]any) []any {
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

// Truncate cuts s to at most n bytes on a UTF-8 boundary, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
