package crstatus

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestTheDecisionIsWrittenOnlyWithAWrite(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	base := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "a", "uid": "u1", "resourceVersion": "7", "generation": int64(2)},
			"status": map[string]any{"phase": "Ready", "observedGeneration": int64(2),
				DecisionField: map[string]any{"id": "old"},
				"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": ReasonSucceeded,
					"message": "reconciled", "observedGeneration": int64(2), "lastTransitionTime": "2026-01-01T00:00:00Z"}}},
		}}
	}
	rec := map[string]any{"id": "new"}
	tests := []struct {
		name  string
		o     Outcome
		prune func(string) bool
		want  any // the lastDecision written; nil: no write at all or none of it
	}{
		{"converged: nothing written", Outcome{Success: true, Status: map[string]any{"phase": "Ready"}, Decision: rec}, keepAll, nil},
		{"a child written", Outcome{Success: true, Status: map[string]any{"phase": "Ready"}, Decision: rec, Wrote: true}, keepAll, rec},
		{"a stale record refreshed", Outcome{Success: true, Status: map[string]any{"phase": "Ready"}, Decision: rec, Refresh: true}, keepAll, rec},
		{"a status change", Outcome{Success: true, Status: map[string]any{"phase": "Degraded"}, Decision: rec}, keepAll, rec},
		{"a failure", Outcome{Reason: "X", Message: "boom", Decision: rec}, keepAll, rec},
		{"the answer's own lastDecision is not ork's", Outcome{Success: true, Status: map[string]any{DecisionField: "theirs"}}, keepAll, nil},
		{"pruned by the schema", Outcome{Success: true, Status: map[string]any{"phase": "Degraded"}, Decision: rec, Wrote: true},
			func(k string) bool { return k == DecisionField }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, _ := Patch(base(), tt.o, 2, now, tt.prune)
			var got any
			if patch != nil {
				got = patch["status"].(map[string]any)[DecisionField]
			}
			if tt.want == nil && got != nil || tt.want != nil && got == nil {
				t.Errorf("lastDecision written: %v, want %v (patch %v)", got, tt.want, patch)
			}
		})
	}
}

// The targets holding a CR's children are the engine's record: an answer's key of that name
// is not written.
func TestTheAnswerDoesNotWriteTheTargetsRecord(t *testing.T) {
	base := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "a", "uid": "u1", "resourceVersion": "7", "generation": int64(1)},
		"status":   map[string]any{TargetsField: []any{"ns/spoke[kubeconfig]"}},
	}}
	o := Outcome{Success: true, Status: map[string]any{TargetsField: []any{}, "phase": "Ready"}}
	patch, _ := Patch(base, o, 1, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), keepAll)
	if _, written := patch["status"].(map[string]any)[TargetsField]; written {
		t.Errorf("the patch writes the answer's %s: %v", TargetsField, patch)
	}
}
