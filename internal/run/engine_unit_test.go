package run

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/keyledger"
	"github.com/orkspace/ork/internal/runplan"
)

type panickingReconciler struct{}

func (panickingReconciler) close() {}

func (panickingReconciler) reconcile(context.Context, passEnv, input) decision {
	var m map[string]int
	m["boom"]++ // a nil-map write, the kind of bug a reconciler ships
	return decision{}
}

func TestPanicInAReconcileIsAFailedReconcile(t *testing.T) {
	c := &controller{e: (&Engine{}).useRing(leadership.New(leadership.Options{}), nil), rec: panickingReconciler{}, cfg: crdConfig{log: slog.New(slog.DiscardHandler)}}
	c.env = newPassEnv(c)
	d := c.safeReconcile(context.Background(), input{key: "ns/a"})
	if d.success || d.action != actionBackoff || d.reason != reasonPanic || !strings.Contains(d.message, "assignment to entry in nil map") {
		t.Errorf("decision after a panic = %+v, want a backed-off failure naming the panic", d)
	}
}

// A pass held by the endpoint's pause sent nothing: the next pass carries the trigger the
// endpoint has not seen yet (a create stays a create), and waits for the pause to end —
// not cut short by --backoff-max (it would only be held again) — spread a little, so that
// the keys held together do not all call at the instant the pause ends.
func TestHeldPassKeepsItsTriggerAndWaitsForThePause(t *testing.T) {
	var delays []time.Duration
	q := &recordingQueue{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(
		workqueue.DefaultTypedControllerRateLimiter[string]()), added: func(d time.Duration) { delays = append(delays, d) }}
	defer q.ShutDown()
	c := &controller{e: (&Engine{opts: Options{BackoffMax: 5 * time.Second}}).useRing(leadership.New(leadership.Options{}), nil), ledger: keyledger.New(), queue: workQueue{TypedRateLimitingInterface: q}}
	pause := 2 * time.Minute
	for range 20 {
		c.ledger.Note("ns/a", TriggerCreate)
		trigger, _, _ := c.ledger.Begin("ns/a", time.Now())
		c.schedule("ns/a", trigger, decision{action: actionRetryAfter, after: pause, quiet: true})
		c.ledger.End("ns/a", time.Now(), false)
		if got, _, _ := c.ledger.Begin("ns/a", time.Now()); got != TriggerCreate {
			t.Fatalf("after a held pass the trigger is %q, want create: the endpoint never saw it", got)
		}
		c.ledger.End("ns/a", time.Now(), false)
	}
	distinct := map[time.Duration]bool{}
	for _, d := range delays {
		if d < pause || d > pause+pause/4+time.Second {
			t.Fatalf("held pass requeued after %s, want between the pause (%s) and a quarter more", d, pause)
		}
		distinct[d] = true
	}
	if len(distinct) < 2 {
		t.Errorf("20 held passes all requeued after %v: not spread", delays)
	}

	// The key that got the 429 itself: a failure, retried after the pause but never later
	// than --backoff-max, as a requeue.
	delays = nil
	c.ledger.Note("ns/b", TriggerCreate)
	trigger, _, _ := c.ledger.Begin("ns/b", time.Now())
	c.schedule("ns/b", trigger, decision{action: actionRetryAfter, after: pause})
	c.ledger.End("ns/b", time.Now(), false)
	if len(delays) != 1 || delays[0] != 5*time.Second {
		t.Errorf("the throttled key requeued after %v, want --backoff-max (5s)", delays)
	}
	if got, _, _ := c.ledger.Begin("ns/b", time.Now()); got != TriggerRequeue {
		t.Errorf("the throttled key's next trigger is %q, want requeue", got)
	}
}

// recordingQueue records the delay of every AddAfter.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	added func(time.Duration)
}

func (q *recordingQueue) AddAfter(key string, d time.Duration) {
	q.added(d)
	q.TypedRateLimitingInterface.AddAfter(key, d)
}

// A dry-run pass held by the endpoint's pause sent nothing: its plan says not called.
func TestDryRunPlanOfAHeldPassSaysNotCalled(t *testing.T) {
	var plans []runplan.CR
	dry := newDryRunner(Options{DryRun: true, OnPlan: func(p runplan.CR) { plans = append(plans, p) }}, 1)
	crd := &katalog.CRD{Name: "app", OperatorBox: katalog.OperatorBox{Reconcile: katalog.Reconcile{Remote: &katalog.Remote{}}}}
	c := &controller{e: (&Engine{dry: dry}).useRing(leadership.New(leadership.Options{}), nil), cfg: crdConfig{crd: crd}}
	cr := &unstructured.Unstructured{}
	cr.SetNamespace("ns")
	cr.SetName("a")
	c.emitPlan(input{key: "ns/a", cr: cr, trigger: TriggerCreate},
		decision{action: actionRetryAfter, quiet: true, reason: "RemoteThrottled", message: "not sent"})
	if len(plans) != 1 || plans[0].Called {
		t.Errorf("plans %+v, want one that says not called", plans)
	}
}

// A child deleted while ork's watch was down comes back, after the relist, as a tombstone
// carrying the last object ork saw, often the very version ork wrote. That is someone
// else's delete, not an echo of ork's write: the owner is queued so that the child is
// created again. Only ork's own prune is its own delete.
func TestChildDeletedDuringAWatchGapRequeuesItsOwner(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "myorg.io", Version: "v1", Kind: "App"}
	c := &controller{e: (&Engine{writes: childwrite.NewBook(), opts: Options{Metrics: NewMetrics()}}).useRing(leadership.New(leadership.Options{}), nil), ledger: keyledger.New(), queue: workQueue{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}, cfg: crdConfig{crd: &katalog.CRD{Name: "app"}, gvk: gvk}}
	defer c.queue.ShutDown()
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	child := &unstructured.Unstructured{}
	child.SetNamespace("ns")
	child.SetName("web")
	child.SetUID("child-uid")
	child.SetResourceVersion("42")
	child.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(
		&metav1.ObjectMeta{Name: "a", UID: "cr-uid"}, gvk)})
	c.e.writes.Wrote(childwrite.RefOf(gr, child), [32]byte{1}, "cr-uid", nil, child)

	c.onChild(gr, nil, cache.DeletedFinalStateUnknown{Key: "ns/web", Obj: child}, true)
	if c.queue.Len() != 1 {
		t.Fatalf("a child deleted during a watch gap queued %d keys, want its owner", c.queue.Len())
	}

	// ork's own prune of the same child is no news.
	c.e.writes.Wrote(childwrite.RefOf(gr, child), [32]byte{1}, "cr-uid", nil, child)
	c.e.writes.Pruning(childwrite.RefOf(gr, child), "child-uid")
	key, _ := c.queue.Get()
	c.queue.Done(key)
	c.onChild(gr, nil, child, true)
	if c.queue.Len() != 0 {
		t.Errorf("ork's own prune queued the owner")
	}
}

// keepAll is a CRD whose status schema prunes nothing.
