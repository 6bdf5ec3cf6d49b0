package run

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/related"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/crdqueue"
	"github.com/orkspace/ork/internal/run/informers"
	"github.com/orkspace/ork/internal/run/keyledger"
	"github.com/orkspace/ork/internal/run/relatedwatch"
)

// A pass that raced its CR's delete recorded references after onDelete forgot them: the
// key's next pass finds no object and forgets them, or a change of the ConfigMap would queue
// a CR that no longer exists, for ever.
func TestAPassThatFindsNoObjectForgetsItsRelatedReferences(t *testing.T) {
	m := NewMetrics()
	q := crdqueue.New("app", time.Millisecond, time.Second, m.Queue, nil)
	defer q.ShutDown()
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	w, err := relatedwatch.New([]katalog.Related{{As: "config", Kind: "ConfigMap", Name: "a-config"}}, relatedwatch.Deps{},
		func(katalog.Related) (schema.GroupVersionResource, error) {
			return schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, nil
		}, func(schema.GroupVersionResource) (bool, error) { return true, nil })
	if err != nil {
		t.Fatal(err)
	}
	c := &controller{e: (&Engine{opts: Options{Metrics: m}, writes: childwrite.NewBook()}).useRing(leadership.New(leadership.Options{}), nil), ledger: keyledger.New(), queue: workQueue{q, q}, informer: informers.AllNamespaces(inf), related: w, cfg: crdConfig{crd: &katalog.CRD{Name: "app"}}}
	cms := schema.GroupResource{Resource: "configmaps"}
	w.Record("ns/a", "u1", []related.Target{{Resource: cms, Ref: related.Ref{As: "config", Namespace: "ns", Name: "a-config"}}})
	c.ledger.Note("ns/a", TriggerRelated)
	c.handle(context.Background(), "ns/a")
	if got := w.Readers(related.Change{Resource: cms, Namespace: "ns", Name: "a-config"}); len(got) != 0 {
		t.Errorf("after a pass that found no object the index holds %v for it, want nothing", got)
	}
}

// hourIntervalController is a controller with lanes and a ChildMinInterval of an hour:
// anything the interval delays is not ready within a test.
func hourIntervalController(t *testing.T) (*controller, *crdqueue.Queue) {
	m := NewMetrics()
	q := crdqueue.New("app", time.Millisecond, time.Second, m.Queue, nil)
	t.Cleanup(q.ShutDown)
	return &controller{e: (&Engine{opts: Options{Metrics: m, ChildMinInterval: time.Hour}}).useRing(leadership.New(leadership.Options{}), nil), ledger: keyledger.New(), queue: workQueue{q, q}, cfg: crdConfig{crd: &katalog.CRD{Name: "app"}}}, q
}

// A related change seen while the CR's pass runs waits a whole ChildMinInterval: measured
// from the running pass, not the one before it (CI saw two passes 11ms apart at a 500ms
// interval when the change raced a pass the previous change had delayed).
func TestARelatedChangeDuringAPassWaitsTheInterval(t *testing.T) {
	c, q := hourIntervalController(t)
	c.ledger.Note("ns/a", TriggerCreate)
	if _, _, ok := c.ledger.Begin("ns/a", time.Now()); !ok {
		t.Fatal("begin found nothing pending")
	}
	c.ledger.End("ns/a", time.Now().Add(-2*time.Hour), false) // a pass long ago
	c.ledger.Note("ns/a", TriggerRelated)
	if _, _, ok := c.ledger.Begin("ns/a", time.Now()); !ok {
		t.Fatal("begin found nothing pending")
	}
	c.relatedChanged("ns/a", true) // during the pass
	if q.Len() != 0 {
		t.Errorf("a change during a pass queued the key at once (%d ready), want it delayed a whole interval", q.Len())
	}
}

// A key handed out by the queue with only a related or child change pending, within
// ChildMinInterval of its last pass, waits out the interval without beginning a pass (the
// queue re-runs a key at once when a change marked it while it was being handed out); a
// change of the CR itself is never held.
func TestAKeyTooSoonAfterItsPassWaits(t *testing.T) {
	c, q := hourIntervalController(t)
	c.ledger.Note("ns/a", TriggerCreate)
	c.ledger.Begin("ns/a", time.Now())
	c.ledger.End("ns/a", time.Now(), false)
	c.ledger.Note("ns/a", TriggerRelated)
	c.handle(context.Background(), "ns/a")
	if q.Len() != 0 {
		t.Errorf("%d keys ready, want the key delayed", q.Len())
	}
	if tr, _, ok := c.ledger.Begin("ns/a", time.Now()); !ok || tr != TriggerRelated {
		t.Errorf("pending after the held hand-out = %q, %v; want related still pending", tr, ok)
	}
	c.ledger.End("ns/a", time.Now(), false)
	c.ledger.Note("ns/a", TriggerUpdate)
	if wait := c.ledger.TooSoon("ns/a", time.Now(), time.Hour); wait != 0 {
		t.Errorf("an update of the CR waits %s, want no wait", wait)
	}
	// A requeue the reconciler asked for keeps its time when a child changes beside it
	// (the child's trigger outranks it, but the pass is owed anyway).
	c.ledger.Begin("ns/a", time.Now())
	c.ledger.End("ns/a", time.Now(), false)
	c.ledger.Note("ns/a", TriggerRequeue)
	c.ledger.Note("ns/a", TriggerChild)
	if wait := c.ledger.TooSoon("ns/a", time.Now(), time.Hour); wait != 0 {
		t.Errorf("a requeue with a child change beside it waits %s, want no wait", wait)
	}
}
