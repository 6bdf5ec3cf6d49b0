package run

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Condition and event vocabulary (SPEC §3).
const (
	ConditionReady          = "Ready"
	ReasonSucceeded         = "ReconcileSucceeded"
	ReasonError             = "ReconcileError"
	EventReconciled         = "Reconciled"
	EventReconcileError     = "ReconcileError"
	reasonApplyFailed       = "ApplyFailed"
	reasonPanic             = "ReconcilePanic"
	reasonInvalidResource   = "InvalidResource"
	reasonRenderFailed      = "RenderFailed"
	maxConditionMessageSize = 1024
)

// report writes the outcome to the CR: status merged with observedGeneration and the Ready
// condition through the status subresource, and an Event.
func (c *controller) report(ctx context.Context, cr *unstructured.Unstructured, d decision) {
	cond := metav1.Condition{
		Type: ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonSucceeded,
		Message: "reconciled", ObservedGeneration: cr.GetGeneration(),
	}
	if !d.success {
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonError
		cond.Message = truncate(d.reason+": "+d.message, maxConditionMessageSize)
	}
	if err := c.writeStatus(ctx, cr, d, cond); err != nil {
		c.log.Warn("status update failed", "key", cr.GetNamespace()+"/"+cr.GetName(), "err", err)
	}
	if d.success {
		c.e.recorder.Event(cr, corev1.EventTypeNormal, EventReconciled, "reconciled successfully")
	} else {
		c.e.recorder.Event(cr, corev1.EventTypeWarning, EventReconcileError, cond.Message)
	}
}

func (c *controller) writeStatus(ctx context.Context, cr *unstructured.Unstructured, d decision, cond metav1.Condition) error {
	current, _ := cr.Object["status"].(map[string]any)
	next, _ := normalise(current).(map[string]any) // a copy: the cache is never mutated
	if next == nil {
		next = map[string]any{}
	}
	if d.success {
		for k, v := range d.status {
			next[k] = normalise(v)
		}
		next["observedGeneration"] = cr.GetGeneration()
	}
	var conds []metav1.Condition
	if raw, ok := next["conditions"]; ok {
		b, _ := json.Marshal(raw)
		_ = json.Unmarshal(b, &conds) // foreign or malformed conditions are replaced below
	}
	meta.SetStatusCondition(&conds, cond)
	rawConds, err := toJSONValue(conds)
	if err != nil {
		return err
	}
	next["conditions"] = rawConds
	if reflect.DeepEqual(normalise(current), normalise(next)) {
		return nil // nothing changed: no write, no echo event
	}
	patch, err := json.Marshal(map[string]any{"status": next})
	if err != nil {
		return fmt.Errorf("encode status: %w", err)
	}
	_, err = c.e.dyn.Resource(c.gvr).Namespace(cr.GetNamespace()).Patch(ctx, cr.GetName(),
		types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if err != nil {
		return fmt.Errorf("patch status: %w", err)
	}
	return nil
}

// normalise round-trips a value through JSON so that int/int64/float64 compare equal.
func normalise(v any) any {
	out, err := toJSONValue(v)
	if err != nil {
		return v
	}
	return out
}

func toJSONValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
