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

// ork's own add of a finalizer comes back as an update that is no news;
// anything else on the object, or someone removing it, is.
func TestOnlyFinalizerAdded(t *testing.T) {
	obj := func(spec string, finalizers ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"v": spec}}}
		u.SetName("a")
		u.SetResourceVersion(spec + string(rune('0'+len(finalizers))))
		u.SetFinalizers(finalizers)
		return u
	}
	tc := "example.com/cleanup"
	for _, tt := range []struct {
		name string
		a, b *unstructured.Unstructured
		want bool
	}{
		{"added", obj("1"), obj("1", tc), true},
		{"added beside another", obj("1", "x"), obj("1", "x", tc), true},
		{"added with a spec change", obj("1"), obj("2", tc), false},
		{"removed", obj("1", tc), obj("1"), false},
		{"another finalizer added", obj("1"), obj("1", "x"), false},
		{"unchanged", obj("1", tc), obj("1", tc), false},
	} {
		if got := OnlyFinalizerAdded(tt.a, tt.b, tc); got != tt.want {
			t.Errorf("%s: OnlyFinalizerAdded = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// ork's own write of an annotation coming back is no news; any other change with it is.
func TestOnlyAnnotationChanged(t *testing.T) {
	obj := func(ann map[string]string, spec string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"v": spec}}}
		u.SetAnnotations(ann)
		return u
	}
	const key = "orkestra.orkspace.io/operation"
	for _, tt := range []struct {
		name string
		a, b *unstructured.Unstructured
		want bool
	}{
		{"the annotation set", obj(nil, "1"), obj(map[string]string{key: "x"}, "1"), true},
		{"the annotation removed", obj(map[string]string{key: "x", "team": "a"}, "1"), obj(map[string]string{"team": "a"}, "1"), true},
		{"another annotation too", obj(nil, "1"), obj(map[string]string{key: "x", "team": "a"}, "1"), false},
		{"the spec too", obj(nil, "1"), obj(map[string]string{key: "x"}, "2"), false},
		{"nothing", obj(map[string]string{key: "x"}, "1"), obj(map[string]string{key: "x"}, "1"), false},
	} {
		if got := OnlyAnnotationChanged(tt.a, tt.b, key); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
