package remote

import (
	"context"
	"testing"

	"github.com/orkspace/ork/internal/naming"
)

// A CR whose children are in a target: prepared.target names it, and each child of
// prepared.children carries it as an annotation, on a copy (the children are a cache's).
func TestRequestNamesTheTarget(t *testing.T) {
	srv, reqs := newEndpoint(t, answer(200, `{"result":"ok"}`))
	r := mustNew(t, goldenCRD(srv.URL), Options{})
	dep := child("Deployment", "my-webapp")
	req := Request{Key: "default/my-webapp", Object: webapp(), Trigger: TriggerUpdate, Attempt: 1, Target: "spoke-eu",
		Children: map[string]map[string]map[string]any{"deployment": {"my-webapp": dep}}}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body := decode(t, next(t, reqs).body)
	prepared := body["prepared"].(map[string]any)
	if prepared["target"] != "spoke-eu" {
		t.Errorf("prepared.target = %v, want spoke-eu", prepared["target"])
	}
	got := prepared["children"].(map[string]any)["deployment"].(map[string]any)["my-webapp"].(map[string]any)
	ann, _ := got["metadata"].(map[string]any)["annotations"].(map[string]any)
	if ann[naming.TargetAnnotation] != "spoke-eu" {
		t.Errorf("the child's annotations = %v, want %s: spoke-eu", ann, naming.TargetAnnotation)
	}
	if md, _ := dep["metadata"].(map[string]any); md["annotations"] != nil {
		if a, _ := md["annotations"].(map[string]any); a[naming.TargetAnnotation] != nil {
			t.Error("the cached child was changed")
		}
	}

	// ork's own cluster: neither.
	req.Target = ""
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body = decode(t, next(t, reqs).body)
	if _, ok := body["prepared"].(map[string]any)["target"]; ok {
		t.Error("prepared.target sent for ork's own cluster")
	}
}
