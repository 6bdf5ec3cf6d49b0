package suspensions

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/run/kobj"
)

func TestSuspendedPatch(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ready := map[string]any{"type": "Ready", "status": "True", "reason": "ReconcileSucceeded"}
	suspended := map[string]any{"type": "Suspended", "status": "True", "reason": "Suspended", "message": Message,
		"lastTransitionTime": "2026-01-02T03:04:05Z"}
	resumed := map[string]any{"type": "Suspended", "status": "False", "reason": "Resumed", "message": ResumedMessage,
		"lastTransitionTime": "2026-01-02T03:04:05Z"}
	deleting := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		ts := metav1.NewTime(now.Add(-time.Hour))
		u.SetDeletionTimestamp(&ts)
		return u
	}
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
		{name: "a delete's resume sets it False, Resumed, at the resume", base: deleting(cr(suspended, ready)), on: false, want: []any{resumed, ready}},
		{name: "a delete resumed already: no write", base: deleting(cr(resumed, ready)), on: false},
		{name: "never suspended: no write", base: cr(ready), on: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Patch(tc.base, tc.on, now)
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
			if len(status) != 1 || !kobj.EqualJSON(status["conditions"], tc.want) {
				t.Fatalf("status patch = %v, want conditions %v only", status, tc.want)
			}
			md := p["metadata"].(map[string]any)
			if md["uid"] != "u1" || md["resourceVersion"] != "7" {
				t.Fatalf("patch preconditions = %v", md)
			}
		})
	}
}
