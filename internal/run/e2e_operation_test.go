package run_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/run/runtest"
)

// preparedOperation is the request's prepared.operation, nil when it carries none.
func preparedOperation(c call) map[string]any {
	op, _, _ := unstructured.NestedMap(c.Body, "prepared", "operation")
	return op
}

func pendingAnswer(id string, extra map[string]any) response {
	op := map[string]any{"id": id, "pollAfter": "1s", "message": "creating the database"}
	for k, v := range extra {
		op[k] = v
	}
	return runtest.JSONResponse(map[string]any{"result": "pending", "operation": op, "status": map[string]any{"phase": "Creating"}})
}

// A reconciler that answers pending holds no worker: with 2 workers and one CR's operation
// going on, 50 other CRs all become Ready meanwhile; the pending CR shows OperationPending
// and Progressing, its operation in status.operation; each poll carries the operation, and
// the reconciler is asked to start it once. Its final answer makes it Ready, the operation
// and Progressing gone.
func TestAPendingOperationHoldsNoWorker(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var finished atomic.Bool
	var mu sync.Mutex
	starts, polls := 0, 0
	ep := runtest.NewEndpoint(t, func(c call) response {
		if c.CRName() != "db" {
			return runtest.JSONResponse(map[string]any{"result": "ok"})
		}
		mu.Lock()
		defer mu.Unlock()
		op := preparedOperation(c)
		if op == nil {
			starts++
		} else {
			polls++
			if op["id"] != "op-1" || op["superseded"] != false || op["key"] == "" {
				t.Errorf("poll carries prepared.operation %v, want op-1, not superseded, with its key", op)
			}
		}
		if finished.Load() {
			return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"phase": "Ready"}})
		}
		return pendingAnswer("op-1", nil)
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Timeout: "5s"}), nil)
	f.CreateCR("db", map[string]any{})
	f.Eventually("db pending", func() (bool, error) {
		ready := runtest.ReadyCondition(f.GetCR("db"))
		return ready["reason"] == operation.ReasonPending, nil
	})
	for i := range 50 {
		f.CreateCR(fmt.Sprintf("app-%d", i), map[string]any{})
	}
	for i := range 50 {
		f.WaitReady(fmt.Sprintf("app-%d", i), "True")
	}
	db := f.GetCR("db")
	if ready := runtest.ReadyCondition(db); ready["status"] != "False" || ready["reason"] != operation.ReasonPending {
		t.Errorf("db's Ready while 50 others converged = %v, want False, %s", ready, operation.ReasonPending)
	}
	if msg := runtest.ReadyCondition(db)["message"]; msg != `operation "op-1" pending: creating the database` {
		t.Errorf("db's Ready message = %q, want the operation's own", msg)
	}
	if p := condition(db, "Progressing"); p == nil || p["status"] != "True" {
		t.Errorf("db's Progressing = %v, want True", p)
	}
	if id, _, _ := unstructured.NestedString(db.Object, "status", "operation", "id"); id != "op-1" {
		t.Errorf("status.operation.id = %q, want op-1: %v", id, db.Object["status"])
	}
	if phase, _, _ := unstructured.NestedString(db.Object, "status", "phase"); phase != "Creating" {
		t.Errorf("status.phase = %q: a pending answer's status is written as any other's", phase)
	}
	if _, found, _ := unstructured.NestedInt64(db.Object, "status", "observedGeneration"); found {
		t.Error("observedGeneration is set while the generation's operation is pending")
	}
	f.Eventually("a poll", func() (bool, error) { mu.Lock(); defer mu.Unlock(); return polls > 0, nil })
	finished.Store(true)
	got := f.WaitReady("db", "True")
	if _, held, _ := unstructured.NestedMap(got.Object, "status", "operation"); held {
		t.Errorf("status.operation is still there after the final answer: %v", got.Object["status"])
	}
	if p := condition(got, "Progressing"); p == nil || p["status"] != "False" {
		t.Errorf("Progressing after the final answer = %v, want False", p)
	}
	if og, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration"); og != 1 {
		t.Errorf("observedGeneration = %d after the operation ended, want 1", og)
	}
	// The pass notes the operation's end after its status write: the gauge follows Ready.
	f.Eventually("ork_operations_in_flight back to 0", func() (bool, error) {
		return testutil.ToFloat64(f.Metrics.OperationsInFlight.WithLabelValues("app")) == 0, nil
	})
	mu.Lock()
	defer mu.Unlock()
	if starts != 1 {
		t.Errorf("the reconciler was asked to start the operation %d times, want once", starts)
	}
}

// An operation survives a restart: the new engine's next call carries the same id, the
// reconciler is not asked to start another for the generation. Without a status
// subresource the operation is kept in the annotation, whose own change costs no pass.
func TestAnOperationSurvivesARestart(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, runtest.CRDOptions{NoStatus: true})
	var finished atomic.Bool
	ep := runtest.NewEndpoint(t, func(c call) response {
		if finished.Load() {
			return runtest.JSONResponse(map[string]any{"result": "ok"})
		}
		return pendingAnswer("op-9", nil)
	})
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()})
	_, stop := f.StartStoppable(set, nil)
	f.CreateCR("db", map[string]any{})
	f.Eventually("the operation annotation", func() (bool, error) {
		return f.GetCR("db").GetAnnotations()[operation.Annotation] != "", nil
	})
	stop()
	before := len(ep.Recorded())
	f.Start(set, nil)
	next := ep.NextMatching(t, "the new engine's call", func(c call) bool { return c.Seq >= before })
	if op := preparedOperation(next); op == nil || op["id"] != "op-9" {
		t.Errorf("after the restart the call carries prepared.operation %v, want op-9", op)
	}
	finished.Store(true)
	f.Eventually("the annotation removed by the final answer", func() (bool, error) {
		_, has := f.GetCR("db").GetAnnotations()[operation.Annotation]
		return !has, nil
	})
	for _, c := range ep.Recorded() {
		if c.Seq > 0 && preparedOperation(c) == nil && !finished.Load() {
			t.Errorf("call %d (%s) carries no operation: the reconciler was asked to start again", c.Seq, c.Trigger)
		}
		if c.Trigger == "update" {
			t.Errorf("call %d was triggered by an update: ork's own operation annotation came back as news", c.Seq)
		}
	}
}

// A spec edit mid-operation is sent as superseded; observedGeneration never shows the new
// generation before the work for it completes.
func TestASpecEditMidOperationIsSuperseded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var superseded, finished atomic.Bool
	ep := runtest.NewEndpoint(t, func(c call) response {
		gen, _, _ := unstructured.NestedInt64(c.Body, "object", "metadata", "generation")
		og, _, _ := unstructured.NestedInt64(c.Body, "object", "status", "observedGeneration")
		if og >= 2 && !finished.Load() {
			t.Errorf("observedGeneration %d while generation 2's work is pending", og)
		}
		op := preparedOperation(c)
		switch {
		case op != nil && op["superseded"] == true:
			superseded.Store(true)
			return pendingAnswer("op-2", nil) // the new generation's own operation
		case finished.Load():
			return runtest.JSONResponse(map[string]any{"result": "ok"})
		case gen == 1 || op != nil && op["id"] == "op-2":
			id := "op-1"
			if gen == 2 {
				id = "op-2"
			}
			return pendingAnswer(id, nil)
		}
		return pendingAnswer("op-2", nil)
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("db", map[string]any{"replicas": 1})
	f.Eventually("op-1 held", func() (bool, error) {
		id, _, _ := unstructured.NestedString(f.GetCR("db").Object, "status", "operation", "id")
		return id == "op-1", nil
	})
	f.PatchSpec("db", `{"spec":{"replicas":2}}`)
	f.Eventually("a superseded call", func() (bool, error) { return superseded.Load(), nil })
	f.Eventually("op-2 held", func() (bool, error) {
		id, _, _ := unstructured.NestedString(f.GetCR("db").Object, "status", "operation", "id")
		return id == "op-2", nil
	})
	if og, _, _ := unstructured.NestedInt64(f.GetCR("db").Object, "status", "observedGeneration"); og >= 2 {
		t.Errorf("observedGeneration = %d while generation 2's operation is pending", og)
	}
	finished.Store(true)
	f.Eventually("observedGeneration 2 once its work completed", func() (bool, error) {
		og, _, _ := unstructured.NestedInt64(f.GetCR("db").Object, "status", "observedGeneration")
		return og == 2, nil
	})
}

// An operation past its deadline: Ready=False, reason OperationTimedOut, a Warning Event,
// no longer counted in flight; the next call says timedOut.
func TestAnOperationPastItsDeadlineTimesOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var sawTimedOut atomic.Bool
	ep := runtest.NewEndpoint(t, func(c call) response {
		if op := preparedOperation(c); op != nil && op["timedOut"] == true {
			sawTimedOut.Store(true)
			return runtest.JSONResponse(map[string]any{"result": "error", "error": "gave up"})
		}
		return pendingAnswer("op-forever", map[string]any{"deadline": "2s"})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("db", map[string]any{})
	f.Eventually("timed out", func() (bool, error) {
		return runtest.ReadyCondition(f.GetCR("db"))["reason"] == operation.ReasonTimedOut, nil
	})
	f.WaitEvent("db", corev1.EventTypeWarning, operation.ReasonTimedOut)
	if n := testutil.ToFloat64(f.Metrics.OperationsInFlight.WithLabelValues("app")); n != 0 {
		t.Errorf("ork_operations_in_flight = %v after the timeout, want 0", n)
	}
	f.Eventually("the next call says timedOut", func() (bool, error) { return sawTimedOut.Load(), nil })
	if err := f.CRs().Delete(t.Context(), "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
