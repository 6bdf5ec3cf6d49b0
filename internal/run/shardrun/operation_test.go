package shardrun_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/reconcilertest"
	"github.com/orkspace/ork/internal/testkit"
)

// A long-running operation moves with its bucket: the replica that takes the bucket over
// polls the operation the first one persisted (the same id), the reconciler is asked to
// start each one once, and no two calls for one CR overlap.
func TestAnOperationMovesWithItsBucket(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var finished atomic.Bool
	var mu sync.Mutex
	starts := map[string]int{}
	polledBy := map[string]map[string]bool{} // CR -> replicas that polled its operation
	f.ep.SetRespond(func(c reconcilertest.Call) reconcilertest.Response {
		name, _, _ := unstructured.NestedString(c.Body, "object", "metadata", "name")
		op, _, _ := unstructured.NestedMap(c.Body, "prepared", "operation")
		mu.Lock()
		if op == nil {
			starts[name]++
		} else {
			if op["id"] != "op-"+name {
				t.Errorf("%s: a poll carries operation %v, want op-%s", name, op["id"], name)
			}
			if polledBy[name] == nil {
				polledBy[name] = map[string]bool{}
			}
			polledBy[name][c.Header.Get(replicaHeader)] = true
		}
		mu.Unlock()
		if finished.Load() {
			return seenAnswer(c)
		}
		return reconcilertest.JSON(map[string]any{"result": "pending", "operation": map[string]any{"id": "op-" + name, "pollAfter": "1s"}})
	})
	const b, n = 4, 8
	want := map[string]string{}
	for _, cr := range f.create(n, "1") {
		want[cr.GetName()] = "1"
	}
	f.sharded("a", b, "--endpoint", f.via("a"))
	f.settled(leaseDuration+slack, b, "a")
	f.waitOperations(want)
	f.sharded("c", b, "--endpoint", f.via("c"))
	f.settled(2*leaseDuration+slack, b, "a", "c")
	testkit.Eventually(t, "c polls an operation a started", 100*time.Millisecond, 2*slack, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		// a started every operation (starts, below): a poll by c carries one a persisted.
		for _, by := range polledBy {
			if by["c"] {
				return true, nil
			}
		}
		return false, nil
	})
	finished.Store(true)
	f.waitConverged("every operation ended across the hand-over", 2*slack, want)
	mu.Lock()
	defer mu.Unlock()
	for name := range want {
		if starts[name] != 1 {
			t.Errorf("%s: the reconciler was asked to start its operation %d times, want once", name, starts[name])
		}
	}
	for _, o := range f.ep.Overlaps() {
		t.Errorf("overlapping calls for %s: #%d by %s and #%d by %s", o.Key,
			o.First.Seq, o.First.Header.Get(replicaHeader), o.Second.Seq, o.Second.Header.Get(replicaHeader))
	}
}

// waitOperations waits until every named widget has its operation in status.operation.
func (f *fixture) waitOperations(want map[string]string) {
	f.t.Helper()
	testkit.Eventually(f.t, "every widget's operation persisted", 100*time.Millisecond, leaseDuration+slack, func(ctx context.Context) (bool, error) {
		for name := range want {
			got, err := f.dyn.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if id, _, _ := unstructured.NestedString(got.Object, "status", "operation", "id"); id != "op-"+name {
				return false, nil
			}
		}
		return true, nil
	})
}
