package run

import (
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/shard"
)

// A sharded replica's cache drops a bucket's objects when a relist's holding leaves the
// bucket out; taken back meanwhile, the bucket is owned again when the tombstone is handled.
// The object lives: no delete reaches the reconciler. A tombstone of an object the
// apiserver no longer has is a delete, delivered.
func TestATombstoneOfALiveObjectIsNoDelete(t *testing.T) {
	const buckets = 2
	metrics := NewMetrics()
	s := newShards("ns", "ork", buckets, metrics, slog.New(slog.DiscardHandler))
	m, err := shard.New(shard.Options{Client: fake.NewClientset().CoordinationV1(), Namespace: "ns", Name: "ork",
		Member: "p", Buckets: buckets})
	if err != nil {
		t.Fatal(err)
	}
	s.m = m
	var uid types.UID
	for uid = uuid.NewUUID(); shard.BucketOf(uid, buckets) != 1; uid = uuid.NewUUID() {
	}
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	live := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", UID: uid, ResourceVersion: "7"}}
	scheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(scheme)
	meta := metadatafake.NewSimpleMetadataClient(scheme, live)
	q := newLaneQueue("app", time.Millisecond, time.Second, metrics)
	defer q.ShutDown()
	calls := 0
	rec := countingReconciler{calls: &calls}
	c := &controller{e: &Engine{shards: s, meta: meta, opts: Options{Metrics: metrics}}, crd: &katalog.CRD{Name: "app"},
		gvr: gvr, ledger: newLedger(), lanes: q, queue: q, rec: rec, log: slog.New(slog.DiscardHandler),
		informer: allNamespaces(cache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0, cache.Indexers{}))}
	cr := &unstructured.Unstructured{}
	cr.SetAPIVersion("example.com/v1")
	cr.SetKind("Widget")
	cr.SetNamespace("ns")
	cr.SetName("w")
	cr.SetUID(uid)
	cr.SetResourceVersion("7")
	s.take(t.Context(), 1)

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
	if _, tomb, ok := c.ledger.begin("ns/w", time.Now()); ok || tomb != nil {
		t.Errorf("the tombstone of a live object is still pending (%v)", tomb)
	}

	if err := meta.Resource(gvr).Namespace("ns").Delete(t.Context(), "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	c.onDelete(cache.DeletedFinalStateUnknown{Key: "ns/w", Obj: cr})
	k, _ := q.Get()
	trigger, tomb, ok := c.ledger.begin(k, time.Now())
	q.Done(k)
	if !ok || tomb == nil || trigger != TriggerDelete {
		t.Fatalf("the tombstone of a deleted object: trigger %q, tombstone %v; want its delete pending", trigger, tomb)
	}
	exists, err := c.stillExists(t.Context(), tomb)
	if err != nil || exists {
		t.Errorf("stillExists of a deleted object: %v, %v; want false", exists, err)
	}
}
