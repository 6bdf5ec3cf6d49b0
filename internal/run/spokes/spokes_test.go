package spokes

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/target"
)

// A CR moving to another target, or going, releases the target none of the controller's
// CRs uses any more, and only that one.
func TestSpokesReleaseUnusedTargets(t *testing.T) {
	a := target.Ref{Namespace: "ns", Name: "a", Key: "k"}
	b := target.Ref{Namespace: "ns", Name: "b", Key: "k"}
	s := New(nil, nil)
	s.Use("ns/x", "ux", a)
	s.Use("ns/y", "uy", a)
	if rel := s.Use("ns/x", "ux", b); len(rel) != 0 {
		t.Errorf("x moved to b while y still uses a: released %v", rel)
	}
	if rel := s.Use("ns/y", "uy", b); len(rel) != 1 || rel[0] != a {
		t.Errorf("y moved to b: released %v, want [%v]", rel, a)
	}
	if rel := s.Forget(func(key string, _ types.UID) bool { return key == "ns/x" }); len(rel) != 0 {
		t.Errorf("x gone while y uses b: released %v", rel)
	}
	if rel := s.Forget(func(string, types.UID) bool { return true }); len(rel) != 1 || rel[0] != b {
		t.Errorf("every CR gone: released %v, want [%v]", rel, b)
	}
	if key, ok := s.OwnerKey("uy"); ok {
		t.Errorf("a forgotten CR's uid still maps to %s", key)
	}
}
