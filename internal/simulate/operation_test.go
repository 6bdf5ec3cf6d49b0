package simulate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock moves only when the run sleeps: pollAfters of seconds cost a test nothing.
type fakeClock struct {
	t     time.Time
	waits []time.Duration
}

func (c *fakeClock) now() time.Time { return c.t }

func (c *fakeClock) sleep(_ context.Context, d time.Duration) error {
	c.t = c.t.Add(d)
	c.waits = append(c.waits, d)
	return nil
}

const pendingAnswer = `{"result":"pending","operation":{"id":%q,"pollAfter":%q,"deadline":%q,"progress":40,"message":"creating"},
	"resources":[{"type":"deployment","fields":{"name":"my-webapp","image":"nginx:1.27"}}]}`

func pendingJSON(id, pollAfter, deadline string) string {
	return fmt.Sprintf(pendingAnswer, id, pollAfter, deadline)
}

func TestPendingAnswersAreFollowedLikeOrkRun(t *testing.T) {
	tests := []struct {
		name string
		// answer answers the n-th call (from 1); op is its prepared.operation. Only the
		// first call starts an operation, as with a reconciler that keys its job.
		answer func(n int, op map[string]any) string
		wait   time.Duration
		waits  []time.Duration
		want   []Operation
		// cycles are the operations each cycle left pending; steadyAt 0: none reached.
		cycles   []string
		steadyAt int
	}{
		{"an operation that ends after two polls", func(n int, op map[string]any) string {
			if n == 1 || op != nil && op["polls"].(float64) < 1 {
				return pendingJSON("db-1", "15s", "0s")
			}
			return webapp
		}, 0, []time.Duration{15 * time.Second, 15 * time.Second},
			[]Operation{{ID: "db-1", Cycle: 1, Polls: 2, Waited: "30s", End: OperationDone, Message: "creating (40%)"}},
			[]string{"db-1", "db-1", "", "", ""}, 5},
		{"an operation still pending when the wait is spent", func(int, map[string]any) string {
			return pendingJSON("db-1", "15s", "0s")
		}, 40 * time.Second, []time.Duration{15 * time.Second, 15 * time.Second, 10 * time.Second},
			[]Operation{{ID: "db-1", Cycle: 1, Polls: 3, Waited: "40s", End: OperationStillPending, Message: "creating (40%)"}},
			[]string{"db-1", "db-1", "db-1", "db-1"}, 0},
		{"a deadline passed times it out, and the next call says so", func(n int, op map[string]any) string {
			if n == 1 || op != nil && op["timedOut"] != true {
				return pendingJSON("db-1", "20s", "30s")
			}
			return webapp
		}, 0, []time.Duration{20 * time.Second, 10 * time.Second},
			[]Operation{{ID: "db-1", Cycle: 1, Polls: 2, Waited: "30s", End: OperationTimedOut,
				Message: `operation "db-1" timed out: no final answer 30s after it started (deadline 30s), after 1 polls`}},
			[]string{"db-1", "db-1", "", "", ""}, 5},
		{"another id replaces the operation", func(n int, op map[string]any) string {
			switch {
			case n == 1:
				return pendingJSON("a", "5s", "0s")
			case op["id"] == "a":
				return pendingJSON("b", "5s", "0s")
			}
			return webapp
		}, 0, []time.Duration{5 * time.Second, 5 * time.Second}, []Operation{
			{ID: "a", Cycle: 1, Polls: 1, Waited: "5s", End: OperationReplaced, Message: "creating (40%)"},
			{ID: "b", Cycle: 2, Polls: 1, Waited: "5s", End: OperationDone, Message: "creating (40%)"},
		}, []string{"a", "b", "", "", ""}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, rs := serve(t, func(n int, req map[string]any) string {
				op, _ := req["prepared"].(map[string]any)["operation"].(map[string]any)
				return tt.answer(n, op)
			})
			opts := remoteOpts(t, url)
			clk := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
			opts.Remote.OperationWait, opts.Remote.Now, opts.Remote.Sleep = tt.wait, clk.now, clk.sleep
			rep, err := Run(t.Context(), load(t, "../../examples/remote/katalog.yaml"), opts)
			if err != nil {
				t.Fatal(err)
			}
			cr := rep.CRDs[0].CRs[0]
			if cr.Err != "" || cr.SteadyAt != tt.steadyAt {
				t.Errorf("err %q, steady at %d; want steady at %d", cr.Err, cr.SteadyAt, tt.steadyAt)
			}
			if d := cmp.Diff(tt.want, cr.Operations); d != "" {
				t.Errorf("operations (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.waits, clk.waits); d != "" {
				t.Errorf("waits (-want +got):\n%s", d)
			}
			var cycles []string
			for _, c := range cr.Cycles {
				cycles = append(cycles, c.Operation)
			}
			if d := cmp.Diff(tt.cycles, cycles); d != "" {
				t.Errorf("cycles' operations (-want +got):\n%s", d)
			}
			// A poll is a requeue carrying prepared.operation as ork run builds it.
			for i, req := range rs.all()[1:] {
				p := req["prepared"].(map[string]any)
				op, _ := p["operation"].(map[string]any)
				if id := tt.cycles[i]; id != "" && (op == nil || p["trigger"] != "requeue" || op["id"] != id || op["superseded"] != false) {
					t.Errorf("call %d after a pending answer: prepared %v", i+2, p)
				}
			}
		})
	}
}

// While an operation is held, Ready is False with its message and Progressing True, and
// observedGeneration stays; once it ends, Ready is True and Progressing False.
func TestPendingConditionsFollowOrkRun(t *testing.T) {
	run := func(cycles int) map[string]any {
		url, _ := serve(t, func(n int, _ map[string]any) string {
			if n == 1 {
				return pendingJSON("db-1", "1s", "0s")
			}
			return webapp
		})
		opts := remoteOpts(t, url)
		clk := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
		opts.Remote.Now, opts.Remote.Sleep, opts.Cycles = clk.now, clk.sleep, cycles
		rep, err := Run(t.Context(), load(t, "../../examples/remote/katalog.yaml"), opts)
		if err != nil {
			t.Fatal(err)
		}
		return crStatus(t, rep)
	}
	status := run(1)
	want := []any{
		map[string]any{"type": "Progressing", "status": "True", "reason": "OperationPending", "message": `operation "db-1" pending (40%): creating`, "observedGeneration": int64(1)},
		map[string]any{"type": "Ready", "status": "False", "reason": "OperationPending", "message": `operation "db-1" pending (40%): creating`, "observedGeneration": int64(1)},
	}
	if d := cmp.Diff(want, status["conditions"]); d != "" || status["observedGeneration"] != nil {
		t.Errorf("pending: observedGeneration %v, conditions (-want +got):\n%s", status["observedGeneration"], d)
	}
	status = run(2)
	want = []any{
		map[string]any{"type": "Progressing", "status": "False", "reason": "OperationCompleted", "message": `operation "db-1" ended`, "observedGeneration": int64(1)},
		map[string]any{"type": "Ready", "status": "True", "reason": "ReconcileSucceeded", "message": "reconciled", "observedGeneration": int64(1)},
	}
	if d := cmp.Diff(want, status["conditions"]); d != "" || status["observedGeneration"] != int64(1) {
		t.Errorf("ended: observedGeneration %v, conditions (-want +got):\n%s", status["observedGeneration"], d)
	}
}

func crStatus(t *testing.T, rep Report) map[string]any {
	t.Helper()
	for _, o := range rep.Objects {
		if o.GetKind() == "WebApp" {
			st, _ := o.Object["status"].(map[string]any)
			return st
		}
	}
	t.Fatal("no WebApp in the objects")
	return nil
}
