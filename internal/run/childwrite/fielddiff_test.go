package childwrite

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

// The applied annotation moves with every change: listed only when it is the only change.
func TestChangedFieldsListTheDigestAlone(t *testing.T) {
	obj := func(image, digest string) map[string]any {
		md := map[string]any{"name": "web"}
		if digest != "" {
			md["annotations"] = map[string]any{"orkestra.orkspace.io/applied": digest}
		}
		return map[string]any{"metadata": md, "spec": map[string]any{"image": image}}
	}
	if d := cmp.Diff([]string{"spec.image"}, changedFields(obj("a", "1"), obj("b", "2"))); d != "" {
		t.Errorf("a change with its digest (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"metadata.annotations"}, changedFields(obj("a", ""), obj("a", "2"))); d != "" {
		t.Errorf("the digest alone, added (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{`metadata.annotations.orkestra\.orkspace\.io/applied`}, changedFields(obj("a", "1"), obj("a", "2"))); d != "" {
		t.Errorf("the digest alone, changed (-want +got):\n%s", d)
	}
}
