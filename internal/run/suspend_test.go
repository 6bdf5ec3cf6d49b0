package run

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSuspendedPatch(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ready := map[string]any{"type": "Ready", "status": "True", "reason": "ReconcileSucceeded"}
	suspended := map[string]any{"type": "Suspended", "status": "True", "reason": "Suspended", "message": suspendMessage,
		"lastTransitionTime": "2026-01-02T03:04:05Z"}
	cr := func(conds ...any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a", "uid": "u1", "resourceVersion": "7"}}}
		if conds != nil {
			u.Object["status"] = map[string]any{"conditions": conds, "phase": "Running"}
		}
		return u
	}
	for _, tc := range []struct {
		name string
		base *unstructured.Unstructured
		on   bool
		want []any // nil: no patch
	}{
		{name: "suspend adds the condition, Ready stays", base: cr(ready), on: true, want: []any{ready, suspended}},
		{name: "suspend with no status", base: cr(), on: true, want: []any{suspended}},
		{name: "already suspended: no write", base: cr(ready, suspended), on: true},
		{name: "resume removes it, Ready stays", base: cr(suspended, ready), on: false, want: []any{ready}},
		{name: "never suspended: no write", base: cr(ready), on: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := suspendedPatch(tc.base, tc.on, now)
			if tc.want == nil {
				if p != nil {
					t.Fatalf("patch = %v, want none", p)
				}
				return
			}
			if p == nil {
				t.Fatal("no patch")
			}
			status := p["status"].(map[string]any)
			if len(status) != 1 || !equalJSON(status["conditions"], tc.want) {
				t.Fatalf("status patch = %v, want conditions %v only", status, tc.want)
			}
			md := p["metadata"].(map[string]any)
			if md["uid"] != "u1" || md["resourceVersion"] != "7" {
				t.Fatalf("patch preconditions = %v", md)
			}
		})
	}
}
