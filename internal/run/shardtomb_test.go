package run

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/run/informers"
)

// A sharded replica's cache drops a bucket's objects when a relist's holding leaves the
// bucket out; taken back meanwhile, the bucket is owned again when the tombstone is handled.
// The object lives: no delete reaches the reconciler. A tombstone of an object the
// apiserver no longer has is a delete, delivered.
func TestATombstoneOfALiveObjectIsNoDelete(t *testing.T) {
	c, s, q, cr := newShardedController(t)
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	live := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", UID: cr.GetUID(), ResourceVersion: "7"}}
	scheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(scheme)
	meta := metadatafake.NewSimpleMetadataClient(scheme, live)
	calls := 0
	c.e.meta, c.cfg.gvr, c.rec = meta, gvr, countingReconciler{calls: &calls}
	c.informer = informers.AllNamespaces(cache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0, cache.Indexers{}))
	s.Take(t.Context(), 1)

	handleQueued := func() {
		for q.Len() > 0 {
			k, _ := q.Get()
			c.handle(t.Context(), k)
			q.Done(k)
		}
	}
	c.onDelete(cache.DeletedFinalStateUnknown{Key: "ns/w", Obj: cr})
	handleQueued()
	if n := calls; n != 0 {
		t.Fatalf("the tombstone of a live object reached the reconciler %d times, want none", n)
	}
	if _, tomb, ok := c.ledger.Begin("ns/w", time.Now()); ok || tomb != nil {
		t.Errorf("the tombstone of a live object is still pending (%v)", tomb)
	}

	if err := meta.Resource(gvr).Namespace("ns").Delete(t.Context(), "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	c.onDelete(cache.DeletedFinalStateUnknown{Key: "ns/w", Obj: cr})
	k, _ := q.Get()
	trigger, tomb, ok := c.ledger.Begin(k, time.Now())
	q.Done(k)
	if !ok || tomb == nil || trigger != TriggerDelete {
		t.Fatalf("the tombstone of a deleted object: trigger %q, tombstone %v; want its delete pending", trigger, tomb)
	}
	exists, err := c.stillExists(t.Context(), tomb)
	if err != nil || exists {
		t.Errorf("stillExists of a deleted object: %v, %v; want false", exists, err)
	}
}
