package crstatus

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func keepAll(string) bool { return false }

func TestTruncateCutsOnARuneBoundary(t *testing.T) {
	s := strings.Repeat("é", 600) // 2 bytes each
	got := Truncate(s, 1024)
	if len(got) > 1024 || !utf8.ValidString(got) || !strings.HasSuffix(got, "...") {
		t.Errorf("truncate gave %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}

func TestStatusPatchWritesOnlyWhatThePassDecided(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	base := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "a", "uid": "u1", "resourceVersion": "7", "generation": int64(2)},
		"status": map[string]any{
			"phase": "Ready", "other": "kept", "observedGeneration": int64(2),
			"conditions": []any{
				map[string]any{"type": "Backup", "status": "True", "lastProbeTime": "2026-01-01T00:00:00Z"},
				map[string]any{"type": "Ready", "status": "True", "reason": ReasonSucceeded, "message": "reconciled",
					"observedGeneration": int64(2), "lastTransitionTime": "2026-01-01T00:00:00Z"},
			},
		},
	}}
	ok := Outcome{Success: true, Status: map[string]any{"phase": "Ready"}}
	if patch, _ := Patch(base, ok, 2, now, keepAll); patch != nil {
		t.Errorf("an idle pass patches %v, want nothing written", patch)
	}
	ok.Status = map[string]any{"phase": "Degraded"}
	patch, _ := Patch(base, ok, 2, now, keepAll)
	want := map[string]any{
		"metadata": map[string]any{"uid": "u1", "resourceVersion": "7"},
		"status":   map[string]any{"phase": "Degraded"},
	}
	if diff := cmp.Diff(want, patch); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	patch, res := Patch(base, Outcome{Reason: "X", Message: "boom"}, 2, now, keepAll)
	conds := patch["status"].(map[string]any)["conditions"].([]any)
	if len(conds) != 2 || conds[0].(map[string]any)["lastProbeTime"] != "2026-01-01T00:00:00Z" {
		t.Errorf("conditions = %v, want Backup kept whole beside Ready", conds)
	}
	if _, has := patch["status"].(map[string]any)["phase"]; has || res.ReadyTurnedTrue {
		t.Errorf("a failed pass patches %v, want only the Ready condition", patch)
	}
}
