package childwrite

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/kobj"
)

// The children's states are the cached children the CR controls, overlaid with what its pass
// did: a write's answer over the cached version, a created child added, a pruned one gone. A
// child the answer lists that none of them shows makes them no proof.
func TestChildStates(t *testing.T) {
	const uid = "u-cr"
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cr := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "web", "namespace": "ns", "uid": uid}}}
	child := func(name, owner, applied, rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv,
			Annotations:     map[string]string{naming.AppliedAnnotation: applied},
			OwnerReferences: []metav1.OwnerReference{{UID: types.UID(owner), Controller: ptr.To(true), Name: "web", Kind: "App", APIVersion: "x/v1"}}}}
	}
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{OwnerIndex: kobj.OwnerUIDIndex})
	for _, o := range []any{child("kept", uid, "a1", "1"), child("applied", uid, "a1", "1"), child("pruned", uid, "a1", "1"), child("theirs", "u-other", "a1", "1")} {
		if err := store.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	w := New(Deps{Children: []Cache{{GVR: cms, Store: store}}})
	ref := func(name string) Ref { return Ref{gr: cms.GroupResource(), namespace: "ns", name: name} }
	names := func(states []decision.ChildState) map[string]string {
		out := map[string]string{}
		for _, s := range states {
			out[s.Name] = s.Applied + "@" + s.ResourceVersion
		}
		return out
	}

	cached, ok := w.ChildStates(cr, nil, true)
	if got := names(cached); !ok || len(got) != 3 || got["theirs"] != "" {
		t.Errorf("from the cache: %v (ok %v), want kept, applied and pruned, not another CR's", got, ok)
	}
	rep := &Report{
		kept:    map[Ref]bool{ref("kept"): true, ref("applied"): true, ref("created"): true},
		written: map[Ref]metav1.Object{ref("applied"): child("applied", uid, "a2", "2"), ref("created"): child("created", uid, "a2", "5")},
		pruned:  map[Ref]bool{ref("pruned"): true},
	}
	states, ok := w.ChildStates(cr, rep, true)
	want := map[string]string{"kept": "a1@1", "applied": "a2@2", "created": "a2@5"}
	if got := names(states); !ok || len(got) != len(want) || got["kept"] != want["kept"] || got["applied"] != want["applied"] || got["created"] != want["created"] {
		t.Errorf("as the pass left them: %v (ok %v), want %v", got, ok, want)
	}
	if noVersion, _ := w.ChildStates(cr, rep, false); names(noVersion)["kept"] != "a1@" {
		t.Errorf("without the children payload, the versions are kept: %v", names(noVersion))
	}
	rep.kept[ref("elsewhere")] = true
	if _, ok := w.ChildStates(cr, rep, true); ok {
		t.Error("a listed child in neither the cache nor the pass's writes: the states are taken for proof")
	}
}
