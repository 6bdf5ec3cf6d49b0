package kobj

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A status write is no news; a spec or a label change is.
func TestOnlyStatusChanged(t *testing.T) {
	base := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "a", "resourceVersion": "1", "generation": int64(1)},
			"spec":     map[string]any{"replicas": int64(1)},
			"status":   map[string]any{"phase": "Pending"},
		}}
	}
	statusOnly := base()
	statusOnly.Object["status"] = map[string]any{"phase": "Ready"}
	statusOnly.SetResourceVersion("2")
	if !OnlyStatusChanged(base(), statusOnly) {
		t.Error("a status write was treated as a change worth a POST: it would loop")
	}
	specChange := base()
	specChange.Object["spec"] = map[string]any{"replicas": int64(2)}
	specChange.SetResourceVersion("2")
	if OnlyStatusChanged(base(), specChange) {
		t.Error("a spec change was ignored")
	}
	labelChange := base()
	labelChange.SetLabels(map[string]string{"a": "b"})
	if OnlyStatusChanged(base(), labelChange) {
		t.Error("a label change was ignored")
	}
}
