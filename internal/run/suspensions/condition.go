package suspensions

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/crstatus"
)

// The Suspended condition, ork's on a suspended CR.
const (
	// Condition is True on a suspended CR, and absent otherwise.
	Condition = "Suspended"
	// Reason is the condition's reason while suspended.
	Reason = "Suspended"
	// ReasonResumed is the reason of Suspended=False on a custom resource being deleted
	// that was resumed: its lastTransitionTime is the resume, from which finalizeTimeout
	// counts, on the object itself so that a restart or another replica knows it.
	ReasonResumed = "Resumed"
	// Message is the condition's message while suspended; ResumedMessage Suspended=False's.
	Message        = "reconciling is suspended by the annotation " + naming.SuspendAnnotation + ": " + naming.SuspendValue + "; remove it to resume"
	ResumedMessage = "resumed while being deleted: finalizeTimeout counts from this condition's lastTransitionTime"
)

// Patch is the merge patch that adds or removes the Suspended condition of base
// (on a CR being deleted, sets it False with reason Resumed and the resume's time), nil
// when the status says so already. Other conditions, Ready's among them, stay as they are.
func Patch(base *unstructured.Unstructured, on bool, now time.Time) map[string]any {
	status, _ := base.Object["status"].(map[string]any)
	oldConds, _ := status["conditions"].([]any)
	prev := crstatus.Find(oldConds, Condition)
	var conds []any
	switch {
	case on && prev != nil && prev["status"] == string(metav1.ConditionTrue):
		return nil
	case on:
		conds = crstatus.Set(append([]any(nil), oldConds...), map[string]any{
			"type": Condition, "status": string(metav1.ConditionTrue), "reason": Reason,
			"message": Message, "lastTransitionTime": now.UTC().Format(time.RFC3339),
		})
	case prev == nil:
		return nil
	case base.GetDeletionTimestamp() != nil && prev["status"] == string(metav1.ConditionFalse):
		return nil
	case base.GetDeletionTimestamp() != nil:
		conds = crstatus.Set(append([]any(nil), oldConds...), map[string]any{
			"type": Condition, "status": string(metav1.ConditionFalse), "reason": ReasonResumed,
			"message": ResumedMessage, "lastTransitionTime": now.UTC().Format(time.RFC3339),
		})
	default:
		conds = []any{}
		for _, c := range oldConds {
			if m, ok := c.(map[string]any); !ok || m["type"] != Condition {
				conds = append(conds, c)
			}
		}
	}
	return map[string]any{
		"metadata": map[string]any{"uid": string(base.GetUID()), "resourceVersion": base.GetResourceVersion()},
		"status":   map[string]any{"conditions": conds},
	}
}

// ResumedAtOf is the lastTransitionTime of cr's Suspended=False condition of reason
// Resumed: when its delete was resumed. Zero without one.
func ResumedAtOf(cr *unstructured.Unstructured) time.Time {
	status, _ := cr.Object["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	cond := crstatus.Find(conds, Condition)
	if cond == nil || cond["status"] != string(metav1.ConditionFalse) || cond["reason"] != ReasonResumed {
		return time.Time{}
	}
	s, _ := cond["lastTransitionTime"].(string)
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
