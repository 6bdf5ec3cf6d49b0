package run

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/naming"
)

// ork's own add of the target-cleanup finalizer comes back as an update that is no news;
// anything else on the object, or someone removing it, is.
func TestOnlyTargetFinalizerAdded(t *testing.T) {
	obj := func(spec string, finalizers ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"v": spec}}}
		u.SetName("a")
		u.SetResourceVersion(spec + string(rune('0'+len(finalizers))))
		u.SetFinalizers(finalizers)
		return u
	}
	tc := naming.TargetCleanupFinalizer
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
		if got := onlyTargetFinalizerAdded(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: onlyTargetFinalizerAdded = %v, want %v", tt.name, got, tt.want)
		}
	}
}
