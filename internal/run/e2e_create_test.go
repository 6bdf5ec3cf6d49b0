package run_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// configMapAnswer answers with one ConfigMap "cfg" holding data.
func configMapAnswer(data map[string]any) response {
	return jsonResponse(map[string]any{"result": "ok", "resources": []any{
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cfg"}, "data": data},
	}})
}

// orkEntries are the managedFields entries of field manager orkestra, by operation.
func orkEntries(u *unstructured.Unstructured) map[metav1.ManagedFieldsOperationType]int {
	out := map[metav1.ManagedFieldsOperationType]int{}
	for _, m := range u.GetManagedFields() {
		if m.Manager == "orkestra" && m.Subresource == "" {
			out[m.Operation]++
		}
	}
	return out
}

// A new child is created (a POST: its fields are orkestra's Update entry); the next apply
// takes them over, so that no field stays owned twice and a field the reconciler drops
// from a later answer is removed from the object.
func TestCreatedChildIsHandedOverToApply(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, func(c call) response {
		if c.trigger() == "create" {
			return configMapAnswer(map[string]any{"a": "1", "b": "2"})
		}
		return configMapAnswer(map[string]any{"a": "1"}) // b dropped
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL, managed: []string{"/configmaps"}}), nil)
	f.createCR("web", map[string]any{})
	f.waitReady("web", "True")
	cm, err := f.get(configmaps, "cfg")
	if err != nil {
		t.Fatal(err)
	}
	if got := orkEntries(cm); got[metav1.ManagedFieldsOperationUpdate] != 1 || got[metav1.ManagedFieldsOperationApply] != 0 {
		t.Fatalf("after the first pass: orkestra entries %v, want the create's one Update entry", got)
	}
	f.patchSpec("web", `{"spec":{"replicas":2}}`)
	f.eventually("data.b removed", func() (bool, error) {
		cm, err = f.get(configmaps, "cfg")
		if err != nil {
			return false, err
		}
		_, has := cm.Object["data"].(map[string]any)["b"]
		return !has, nil
	})
	if got := orkEntries(cm); got[metav1.ManagedFieldsOperationUpdate] != 0 || got[metav1.ManagedFieldsOperationApply] != 1 {
		t.Errorf("after the hand-over: orkestra entries %v, want one Apply entry and no Update entry", got)
	}
	if v := cm.Object["data"].(map[string]any)["a"]; v != "1" {
		t.Errorf("data.a = %v, want 1", v)
	}
}
