package childwrite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// The decision annotation says who wrote, not what: a dry run's plan never lists it, even
// when it is all that differs.
func TestChangedFieldsNeverListTheDecision(t *testing.T) {
	obj := func(image, id string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "web",
			"annotations": map[string]any{"orkestra.orkspace.io/decision": id}}, "spec": map[string]any{"image": image}}
	}
	if got := changedFields(obj("nginx:1", "01A"), obj("nginx:1", "01B")); got != nil {
		t.Errorf("a new decision alone lists %v", got)
	}
	if d := cmp.Diff([]string{"spec.image"}, changedFields(obj("nginx:1", "01A"), obj("nginx:2", "01B"))); d != "" {
		t.Errorf("changedFields (-want +got):\n%s", d)
	}
}

// What a write sends carries the decision; what the digest and the drift test judge does not.
func TestSentCarriesTheDecisionAndObjDoesNot(t *testing.T) {
	p := planned{obj: &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "web",
		"annotations": map[string]any{"orkestra.orkspace.io/applied": "abc"}}}}, decision: "01A"}
	sent := p.sent()
	if got := sent.GetAnnotations(); got["orkestra.orkspace.io/decision"] != "01A" || got["orkestra.orkspace.io/applied"] != "abc" {
		t.Errorf("sent annotations %v, want the decision beside the digest", got)
	}
	if _, ok := p.obj.GetAnnotations()["orkestra.orkspace.io/decision"]; ok {
		t.Errorf("the planned object itself was given the decision")
	}
	if p.decision = ""; p.sent() != p.obj {
		t.Errorf("without a decision, sent is not the planned object")
	}
}
