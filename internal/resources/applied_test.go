package resources

import (
	"encoding/hex"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/naming"
)

func markedCM(annotations map[string]any) *unstructured.Unstructured {
	md := map[string]any{"name": "cfg", "namespace": "ns"}
	if annotations != nil {
		md["annotations"] = annotations
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md,
		"data": map[string]any{"a": "1"}}}
}

// The digest is of the object without the annotation: marking a marked object, or one
// carrying a stale digest, gives the same digest and annotation as marking it bare.
func TestMarkAppliedDigestsTheObjectWithoutTheAnnotation(t *testing.T) {
	bare := markedCM(nil)
	want := MarkApplied(bare)
	if got := bare.GetAnnotations()[AppliedAnnotation]; got != hex.EncodeToString(want[:]) {
		t.Fatalf("annotation %q, want the digest %x", got, want)
	}
	for name, obj := range map[string]*unstructured.Unstructured{
		"marked again": bare.DeepCopy(),
		"stale digest": markedCM(map[string]any{AppliedAnnotation: "0000"}),
		// A child the reconciler returns whole carries the decision that last wrote it: a
		// digest that moved with each id would write the child on every pass.
		"an earlier decision's id": markedCM(map[string]any{naming.DecisionAnnotation: "01J0000000000000000000000"}),
	} {
		if got := MarkApplied(obj); got != want {
			t.Errorf("%s: digest %x, want %x", name, got, want)
		}
		if len(obj.GetAnnotations()) != 1 {
			t.Errorf("%s: annotations %v, want the digest only", name, obj.GetAnnotations())
		}
	}
	changed := markedCM(nil)
	changed.Object["data"] = map[string]any{"a": "2"}
	if MarkApplied(changed) == want {
		t.Error("another object, the same digest")
	}
	other := markedCM(map[string]any{"team": "a"})
	if MarkApplied(other) == want {
		t.Error("another annotation, the same digest")
	}
}

// A child sent back whole by a reconciler loses the digest and the decision id, as it loses
// server fields.
func TestStripServerFieldsDropsTheDigest(t *testing.T) {
	obj := markedCM(map[string]any{AppliedAnnotation: "abc", naming.DecisionAnnotation: "01J0000000000000000000000", "team": "a"})
	stripServerFields(obj.Object)
	if got := obj.GetAnnotations(); len(got) != 1 || got["team"] != "a" {
		t.Errorf("annotations %v, want team only", got)
	}
	only := markedCM(map[string]any{AppliedAnnotation: "abc"})
	stripServerFields(only.Object)
	if _, has := only.Object["metadata"].(map[string]any)["annotations"]; has {
		t.Errorf("metadata %v: want no annotations left", only.Object["metadata"])
	}
}
