package childwrite

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/run/kobj"
)

// An onCreate child the cache does not know yet (it lags behind an earlier pass's create)
// must not be overwritten: the create finds it and leaves a user's later edit alone.
func TestCreateOnlyNeverOverwritesAnExistingObject(t *testing.T) {
	existing := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "site", "namespace": "ns"},
		"data":     map[string]any{"level": "edited-by-user"},
	}}
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), existing)
	metaScheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(metaScheme)
	meta := metadatafake.NewSimpleMetadataClient(metaScheme, &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: "ns"},
	})
	applyTotal := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ork_apply_total"}, []string{"crd", "kind", "result"})
	w := New(Deps{Dyn: dyn, Meta: meta, Creator: dynCreator{dyn}, ApplyTotal: applyTotal, Book: NewBook(), CRD: "site",
		MayWrite: func(string, types.UID) error { return nil }})
	desired := existing.DeepCopy()
	desired.Object["data"] = map[string]any{"level": "info"}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cr := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "site", "uid": "u"}}}

	p := planned{obj: desired, gvr: gvr, ref: RefOf(gvr.GroupResource(), desired), force: true, createOnly: true}
	if _, _, err := w.writeChild(context.Background(), cr, p, nil); err != nil {
		t.Fatalf("create-only of an existing object: %v, want no error", err)
	}
	got, err := dyn.Resource(gvr).Namespace("ns").Get(context.Background(), "site", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if level, _, _ := unstructured.NestedString(got.Object, "data", "level"); level != "edited-by-user" {
		t.Errorf("data.level = %q after a create-only pass, want the user's edit kept", level)
	}
	// Applies go through the metadata client: both clients are checked.
	for _, a := range append(dyn.Actions(), meta.Actions()...) {
		if v := a.GetVerb(); v != "create" && v != "get" {
			t.Errorf("create-only pass sent a %q: only a create is allowed", v)
		}
	}
}

// A child ork created in one pass and the next pass no longer lists is pruned even when the
// child cache has not seen it yet (the two passes came within the event's latency): its add
// event, when it arrives, is ork's own write and queues nothing, so this pass is the only
// one that would prune it.
func TestPruneCandidatesIncludeChildrenTheCacheHasNotSeen(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0,
		cache.Indexers{OwnerIndex: kobj.OwnerUIDIndex})
	w := New(Deps{Book: NewBook(), Children: []Cache{{GVR: gvr, Store: inf.GetIndexer()}}})
	cr := &unstructured.Unstructured{}
	cr.SetName("a")
	cr.SetUID("cr-uid")
	made := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "ns", ResourceVersion: "7"}}
	kept := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", ResourceVersion: "8"}}
	other := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: "ns", ResourceVersion: "9"}}
	w.Book.Wrote(RefOf(gvr.GroupResource(), made), [32]byte{1}, "cr-uid", nil, made)
	w.Book.Wrote(RefOf(gvr.GroupResource(), kept), [32]byte{2}, "cr-uid", nil, kept)
	w.Book.Wrote(RefOf(gvr.GroupResource(), other), [32]byte{3}, "another-cr", nil, other)

	cands := w.pruneCandidates(cr, map[Ref]bool{RefOf(gvr.GroupResource(), kept): true})
	if len(cands) != 1 || cands[0].ref.name != "old" || cands[0].gvr != gvr {
		t.Fatalf("candidates %+v, want only the child ork wrote for this CR and no longer keeps", cands)
	}
}
