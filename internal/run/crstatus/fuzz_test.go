package crstatus

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"

	"github.com/orkspace/ork/internal/run/kobj"
)

// FuzzStatusMergeKeepsConditions: the status merge of one pass (Patch, applied as the
// JSON merge patch it is sent as) never drops what it was not asked to drop. After it:
//
//   - every condition of the CR whose type is neither Ready nor one the reconciler's status
//     sets is still there, unchanged (lastProbeTime and all);
//
//   - each condition the reconciler set on success is there as it sent it (the last of a type);
//
//   - Ready is there, True on success and False on failure;
//
//   - every other status key the reconciler did not send keeps its value, and on failure
//     nothing but the conditions changes.
//
//     go test ./internal/run/crstatus -run '^$' -fuzz FuzzStatusMergeKeepsConditions -fuzztime 5m
func FuzzStatusMergeKeepsConditions(f *testing.F) {
	for _, s := range []struct {
		current, theirs string
		success         bool
	}{
		{`{"phase":"Ready","other":"kept","observedGeneration":2,"conditions":[{"type":"Backup","status":"True","lastProbeTime":"2026-01-01T00:00:00Z"},{"type":"Ready","status":"True","reason":"ReconcileSucceeded"}]}`,
			`{"phase":"Degraded","conditions":[{"type":"Synced","status":"False"}]}`, true},
		{`{"conditions":[{"type":"A","status":"True"},{"type":"B","status":"False"},{"type":"A","status":"Unknown"}]}`,
			`{"conditions":[{"type":"B","status":"True"},{"type":"B","status":"Unknown"},{"type":"Ready","status":"False"}]}`, true},
		{`{"conditions":[{"type":"A"},"not a condition",{"status":"True"},null]}`, `{"conditions":[{"status":"x"},{"type":null},7]}`, true},
		{`{"conditions":[{"type":"A","status":"True"}],"phase":"Ready"}`, `{"phase":null,"nested":{"a":{"b":null}}}`, false},
		{`{"conditions":"not a list","observedGeneration":"x"}`, `{"conditions":{"type":"A"},"observedGeneration":9}`, true},
		{`{}`, `{}`, true},
	} {
		f.Add([]byte(s.current), []byte(s.theirs), s.success, int64(2))
	}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, currentJSON, theirsJSON []byte, success bool, generation int64) {
		var current, theirs map[string]any
		if sigsjson.UnmarshalCaseSensitivePreserveInts(currentJSON, &current) != nil ||
			sigsjson.UnmarshalCaseSensitivePreserveInts(theirsJSON, &theirs) != nil {
			return
		}
		base := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "a", "uid": "u1", "resourceVersion": "7", "generation": generation},
		}}
		if current != nil {
			base.Object["status"] = current
		}
		o := Outcome{Reason: "X", Message: "boom"}
		if success {
			o = Outcome{Success: true, Status: theirs}
		}
		before := deepCopyJSON(base.Object)
		patch, _ := Patch(base, o, generation, now, func(string) bool { return false })
		if !kobj.EqualJSON(before, base.Object) {
			t.Fatalf("Patch modified its base")
		}
		merged := map[string]any{}
		if current != nil {
			merged = deepCopyJSON(current).(map[string]any)
		}
		if patch != nil {
			merged = mergePatch(merged, patch["status"]).(map[string]any)
		}
		checkMergedStatus(t, current, theirs, success, merged)
	})
}

func checkMergedStatus(t *testing.T, current, theirs map[string]any, success bool, merged map[string]any) {
	t.Helper()
	asked := map[any]map[string]any{} // condition type -> the reconciler's last condition of it
	if success {
		list, _ := theirs["conditions"].([]any)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok && m["type"] != nil && m["type"] != ConditionReady && hashable(m["type"]) {
				asked[m["type"]] = m
			}
		}
	}
	got, _ := merged["conditions"].([]any)
	old, _ := current["conditions"].([]any)
	for i, c := range old {
		m, isMap := c.(map[string]any)
		if isMap && (m["type"] == ConditionReady || asked[m["type"]] != nil) {
			continue // replaced, as asked
		}
		if !containsJSON(got, c) {
			t.Errorf("condition %d %v was dropped or changed; conditions now %v", i, c, got)
		}
	}
	for typ, want := range asked {
		if !containsJSON(got, want) {
			t.Errorf("the reconciler's condition %v (type %v) is not in %v", want, typ, got)
		}
	}
	ready := Find(got, ConditionReady)
	if want := map[bool]string{true: "True", false: "False"}[success]; ready == nil || ready["status"] != want {
		t.Errorf("Ready is %v, want status %s", ready, want)
	}
	for k, v := range current {
		if _, sent := theirs[k]; k == "conditions" || k == "observedGeneration" || success && sent {
			continue
		}
		if !kobj.EqualJSON(merged[k], v) {
			t.Errorf("status.%s was %v and became %v, though the reconciler did not send it", k, v, merged[k])
		}
	}
	if !success {
		for k, v := range merged {
			if k != "conditions" && !kobj.EqualJSON(current[k], v) {
				t.Errorf("a failed pass changed status.%s to %v", k, v)
			}
		}
	}
}

// hashable reports whether v can be a map key: a condition type of {} or [] cannot.
func hashable(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func containsJSON(list []any, v any) bool {
	for _, e := range list {
		if kobj.EqualJSON(e, v) {
			return true
		}
	}
	return false
}

// mergePatch applies patch to target as RFC 7386 says, the way the apiserver applies ork's
// status patch: null removes a key, an object merges into an object, anything else replaces.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return deepCopyJSON(patch)
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

func deepCopyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyJSON(e)
		}
		return out
	}
	return v
}
