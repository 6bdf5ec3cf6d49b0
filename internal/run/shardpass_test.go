package run

import (
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/lanequeue"
	"github.com/orkspace/ork/internal/run/crdqueue"
	"github.com/orkspace/ork/internal/run/keyledger"
	"github.com/orkspace/ork/internal/run/shardring"
	"github.com/orkspace/ork/internal/run/suspensions"
	"github.com/orkspace/ork/internal/shard"
)

// newShardedController is a controller of a replica of a ring of two buckets, none taken
// yet, and a custom resource ns/w of bucket 1.
func newShardedController(t *testing.T) (*controller, *shardring.Ring, *crdqueue.Queue, *unstructured.Unstructured) {
	t.Helper()
	const buckets = 2
	metrics := NewMetrics()
	s, err := shardring.New(shardring.Deps{
		Lease: shard.Options{Client: fake.NewClientset().CoordinationV1(), Namespace: "ns", Name: "ork",
			Member: "p", Buckets: buckets, Log: slog.New(slog.DiscardHandler)},
		Metrics: shardring.Metrics{BucketsHeld: metrics.ShardBucketsHeld, Handoffs: metrics.ShardHandoffs,
			CRsReceived: metrics.ShardCRsReceived, CRsDropped: metrics.ShardCRsDropped}})
	if err != nil {
		t.Fatal(err)
	}
	q := crdqueue.New("app", time.Millisecond, time.Second, metrics.Queue, nil)
	t.Cleanup(q.ShutDown)
	c := &controller{e: (&Engine{opts: Options{Metrics: metrics}}).useRing(nil, s), suspended: suspensions.New(nil), ledger: keyledger.New(), queue: workQueue{q, q}, cfg: crdConfig{crd: &katalog.CRD{Name: "app"}, log: slog.New(slog.DiscardHandler)}}
	var uid types.UID
	for uid = uuid.NewUUID(); shard.BucketOf(uid, buckets) != 1; uid = uuid.NewUUID() {
	}
	cr := &unstructured.Unstructured{}
	cr.SetAPIVersion("example.com/v1")
	cr.SetKind("Widget")
	cr.SetNamespace("ns")
	cr.SetName("w")
	cr.SetUID(uid)
	cr.SetResourceVersion("7")
	cr.SetCreationTimestamp(metav1.NewTime(time.Now().Add(-time.Hour)))
	return c, s, q, cr
}

// A bucket handed back and taken back before the CR cache listed without it keeps its CRs
// in the cache: the relist shows them as syncs, not adds. Each still gets one pass per
// take, in the slow lane, and a second relist of the same take passes nothing.
func TestTakenBackBucketPassesItsCachedCRsOnce(t *testing.T) {
	c, s, q, cr := newShardedController(t)

	// passes takes what is queued, each in its lane, as a worker would, and counts them.
	passes := func() (fast, slow int) {
		fast, slow = q.Depth(lanequeue.Fast), q.Depth(lanequeue.Slow)
		for q.Len() > 0 {
			k, _ := q.Get()
			q.Forget(k)
			q.Done(k)
		}
		return fast, slow
	}

	s.Take(t.Context(), 1)
	c.onAdd(cr, false) // the first take's relist adds it
	if fast, slow := passes(); fast != 0 || slow != 1 {
		t.Fatalf("first take: %d fast, %d slow passes; want one slow", fast, slow)
	}
	c.onUpdate(cr, cr) // another relist of the same take: no news
	if fast, slow := passes(); fast+slow != 0 {
		t.Fatalf("a relist of the same take: %d fast, %d slow passes; want none", fast, slow)
	}

	s.Release(1, false)
	s.Take(t.Context(), 1) // taken back before the cache listed without it
	c.onUpdate(cr, cr)     // the relist shows it unchanged
	if fast, slow := passes(); fast != 0 || slow != 1 {
		t.Fatalf("taken back: %d fast, %d slow passes; want one slow", fast, slow)
	}
	c.onUpdate(cr, cr)
	if fast, slow := passes(); fast+slow != 0 {
		t.Fatalf("a relist after the take back's pass: %d fast, %d slow passes; want none", fast, slow)
	}

	// A change seen after a take is that take's pass: the relist after it owes none.
	s.Release(1, false)
	s.Take(t.Context(), 1)
	changed := cr.DeepCopy()
	changed.SetResourceVersion("8")
	changed.SetLabels(map[string]string{"v": "2"})
	c.onUpdate(cr, changed)
	c.onUpdate(changed, changed)
	if fast, slow := passes(); fast != 1 || slow != 0 {
		t.Fatalf("a change after a take back, then its relist: %d fast, %d slow passes; want the change's one fast", fast, slow)
	}

	// Left the cache with its bucket: no pass, and nothing owed while the bucket is not here.
	s.Release(1, false)
	c.onDelete(changed)
	c.onUpdate(changed, changed)
	if fast, slow := passes(); fast+slow != 0 {
		t.Fatalf("after the bucket went: %d fast, %d slow passes; want none", fast, slow)
	}
}
