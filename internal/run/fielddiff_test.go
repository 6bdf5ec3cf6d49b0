package run

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChangedFields(t *testing.T) {
	before := map[string]any{
		"metadata": map[string]any{"name": "web", "resourceVersion": "1", "generation": int64(1),
			"labels": map[string]any{"app.kubernetes.io/name": "web"}},
		"spec": map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "web", "image": "nginx:1.27"}}}}},
		"status": map[string]any{"ready": int64(1)},
	}
	after := map[string]any{
		"metadata": map[string]any{"name": "web", "resourceVersion": "1", "generation": int64(2),
			"labels": map[string]any{"app.kubernetes.io/name": "web", "team": "a"}},
		"spec": map[string]any{"replicas": 2.0, "ports": []any{int64(80)}, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "web", "image": "nginx:1.28"}}}}},
		"status": map[string]any{"ready": int64(2)},
	}
	want := []string{"metadata.labels.team", "spec.ports", "spec.template.spec.containers[0].image"}
	if d := cmp.Diff(want, changedFields(before, after)); d != "" {
		t.Errorf("changedFields (-want +got):\n%s", d)
	}
	if got := changedFields(before, before); got != nil {
		t.Errorf("no change listed %v", got)
	}
}
