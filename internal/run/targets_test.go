package run

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/target"
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

// A CR moving to another target, or going, releases the target none of the controller's
// CRs uses any more, and only that one.
func TestSpokesReleaseUnusedTargets(t *testing.T) {
	a := target.Ref{Namespace: "ns", Name: "a", Key: "k"}
	b := target.Ref{Namespace: "ns", Name: "b", Key: "k"}
	s := newSpokes(nil)
	s.use("ns/x", "ux", a)
	s.use("ns/y", "uy", a)
	if rel := s.use("ns/x", "ux", b); len(rel) != 0 {
		t.Errorf("x moved to b while y still uses a: released %v", rel)
	}
	if rel := s.use("ns/y", "uy", b); len(rel) != 1 || rel[0] != a {
		t.Errorf("y moved to b: released %v, want [%v]", rel, a)
	}
	if rel := s.forget(func(key string, _ types.UID) bool { return key == "ns/x" }); len(rel) != 0 {
		t.Errorf("x gone while y uses b: released %v", rel)
	}
	if rel := s.forget(func(string, types.UID) bool { return true }); len(rel) != 1 || rel[0] != b {
		t.Errorf("every CR gone: released %v, want [%v]", rel, b)
	}
	if key, ok := s.ownerKey("uy"); ok {
		t.Errorf("a forgotten CR's uid still maps to %s", key)
	}
}
