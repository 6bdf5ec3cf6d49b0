package crstatus

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestAPendingPassMergesItsKeysButIsNotReadyAndKeepsTheGeneration(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	base := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"uid": "u1", "resourceVersion": "7"},
		"status":   map[string]any{"observedGeneration": int64(1)},
	}}
	op := map[string]any{"id": "op-1"}
	o := Outcome{Success: true, Pending: true, Status: map[string]any{"phase": "Creating"}, Reason: "OperationPending", Message: "creating", PlainMessage: true,
		Progressing: &Progress{Status: true, Reason: "OperationPending", Message: "creating"}, SetOperation: true, Operation: op}
	patch, res := Patch(base, o, 2, now, keepAll)
	st := patch["status"].(map[string]any)
	if _, moved := st["observedGeneration"]; moved || res.NewGeneration || res.ReadyTurnedTrue {
		t.Errorf("a pending pass moved observedGeneration or turned Ready: %v %+v", st, res)
	}
	if st["phase"] != "Creating" || st["operation"].(map[string]any)["id"] != "op-1" {
		t.Errorf("status patch %v, want the answer's phase and the operation", st)
	}
	conds := st["conditions"].([]any)
	ready, prog := Find(conds, ConditionReady), Find(conds, ConditionProgressing)
	if ready["status"] != "False" || ready["reason"] != "OperationPending" || ready["message"] != "creating" {
		t.Errorf("Ready = %v, want False, OperationPending", ready)
	}
	if prog["status"] != "True" || prog["reason"] != "OperationPending" {
		t.Errorf("Progressing = %v, want True", prog)
	}

	// Done: the operation goes, Progressing turns False, Ready True and the generation moves.
	base.Object["status"] = map[string]any{"observedGeneration": int64(1), "operation": op, "conditions": conds}
	done := Outcome{Success: true, SetOperation: true, Progressing: &Progress{Reason: "OperationSucceeded"}}
	patch, res = Patch(base, done, 2, now.Add(time.Minute), keepAll)
	st = patch["status"].(map[string]any)
	if v, ok := st["operation"]; !ok || v != nil {
		t.Errorf("status.operation in the patch = %v (present %v), want null to remove it", v, ok)
	}
	if st["observedGeneration"] != int64(2) || !res.ReadyTurnedTrue {
		t.Errorf("done: %v %+v, want observedGeneration 2 and Ready turned True", st, res)
	}
	if prog := Find(st["conditions"].([]any), ConditionProgressing); prog["status"] != "False" {
		t.Errorf("Progressing after done = %v, want False", prog)
	}

	// Nothing held, nothing asked: no operation key and no Progressing condition appear.
	base.Object["status"] = map[string]any{}
	patch, _ = Patch(base, Outcome{Success: true}, 2, now, keepAll)
	st = patch["status"].(map[string]any)
	if _, has := st["operation"]; has || Find(st["conditions"].([]any), ConditionProgressing) != nil {
		t.Errorf("a reconciler that never holds an operation sees %v", st)
	}

	// A final answer for an older generation's work: the keys merge, the generation stays.
	patch, res = Patch(base, Outcome{Success: true, HoldGeneration: true}, 3, now, keepAll)
	if _, moved := patch["status"].(map[string]any)["observedGeneration"]; moved || res.NewGeneration {
		t.Errorf("HoldGeneration moved observedGeneration: %v", patch)
	}
}

// status.operation is ork's: an answer's own key of that name is not written, and a pass
// whose generation moved on under it writes the operation alone.
func TestTheOperationKeyIsOrks(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	base := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"uid": "u1", "resourceVersion": "7"}}}
	patch, _ := Patch(base, Outcome{Success: true, Status: map[string]any{"operation": "provisioning", "phase": "x"}}, 1, now, keepAll)
	if _, has := patch["status"].(map[string]any)["operation"]; has {
		t.Errorf("the answer's own status.operation was written: %v", patch)
	}
	op := map[string]any{"id": "op-1"}
	patch, _ = Patch(base, Outcome{SetOperation: true, Operation: op, Unreported: true}, 2, now, keepAll)
	want := map[string]any{"operation": op}
	if st := patch["status"].(map[string]any); len(st) != 1 || st["operation"] == nil {
		t.Errorf("an unreported pass patches %v, want only %v", st, want)
	}
}
