package exchange

import (
	"reflect"
	"testing"
)

// Redact masks what a recording masks, on a copy: the object it is given (an informer's
// cached one) keeps its values, and the maps off the paths are shared, not copied.
func TestRedactMasksACopy(t *testing.T) {
	redact, err := ParseRedact([]string{"spec.password", "spec.absent.deeper", "spec.size.notAMap", "metadata.annotations.token"})
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]any{"app": "web"}
	obj := map[string]any{
		"metadata": map[string]any{"labels": labels, "annotations": map[string]any{"token": "t0k3n", "keep": "x"}},
		"spec":     map[string]any{"password": "hunter2", "size": 3},
	}
	got := Redact(obj, redact)
	want := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"token": Redacted, "keep": "x"}},
		"spec":     map[string]any{"password": Redacted, "size": 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Redact = %v, want %v", got, want)
	}
	if obj["spec"].(map[string]any)["password"] != "hunter2" || obj["metadata"].(map[string]any)["annotations"].(map[string]any)["token"] != "t0k3n" {
		t.Errorf("Redact changed the object it was given: %v", obj)
	}
	labels["app"] = "changed"
	if got["metadata"].(map[string]any)["labels"].(map[string]any)["app"] != "changed" {
		t.Error("Redact copied a map that no path masks")
	}
	unmasked := Redact(obj, redact[1:3])
	if reflect.ValueOf(unmasked).UnsafePointer() != reflect.ValueOf(obj).UnsafePointer() {
		t.Error("Redact copied an object none of whose paths exist")
	}
}
