package remotecheck

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock moves only when the check sleeps, so that pollAfter and deadlines of minutes
// cost a test nothing.
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

// operationAnswer edits the example's answer by what prepared.operation carries (nil on
// a request that follows no pending answer).
func operationAnswer(f func(op map[string]any, a map[string]any)) func(req, a map[string]any) {
	return func(req, a map[string]any) {
		op, _ := req["prepared"].(map[string]any)["operation"].(map[string]any)
		f(op, a)
	}
}

func pending(a map[string]any, op map[string]any) {
	a["result"], a["operation"] = "pending", op
}

func TestPendingAnswersAreFollowedToTheirEnd(t *testing.T) {
	tests := []struct {
		name   string
		answer func(op, a map[string]any)
		// wait is the bound, for the whole check: every trigger's request starts an
		// operation here, as a reconciler that keys no job would.
		wait time.Duration
		// requests and waits are those about create, the first trigger.
		requests []string
		waits    []time.Duration
		want     []v // the violations of the whole check, in order
	}{
		{"an operation that ends after two polls", func(op, a map[string]any) {
			if op == nil || op["polls"].(float64) < 1 {
				pending(a, map[string]any{"id": "db-1", "pollAfter": "15s", "progress": 40, "message": "creating"})
			}
		}, 10 * time.Minute, []string{"create", "create, poll 1", "create, poll 2"}, []time.Duration{15 * time.Second, 15 * time.Second}, nil},
		{"pollAfter below the floor is raised to a second", func(op, a map[string]any) {
			if op == nil {
				pending(a, map[string]any{"id": "db-1", "pollAfter": "10ms"})
			}
		}, 0, []string{"create", "create, poll 1"}, []time.Duration{time.Second}, nil},
		{"an operation that never ends stops at the bound", func(_, a map[string]any) {
			pending(a, map[string]any{"id": "db-1", "pollAfter": "40s", "message": "creating"})
		}, 100 * time.Second, []string{"create", "create, poll 1", "create, poll 2", "create, poll 3"},
			[]time.Duration{40 * time.Second, 40 * time.Second, 20 * time.Second}, []v{
				{"create, poll 3", CheckOperation, "$.operation", `operation "db-1" still pending after waiting the bound of 1m40s (--operation-wait), 3 polls: creating`},
				{"update", CheckOperation, "$.operation", `operation "db-1" still pending after waiting the bound of 1m40s (--operation-wait), 0 polls: creating`},
				{"resync", CheckOperation, "$.operation", "0 polls"},
				{"create, children sent back", CheckOperation, "$.operation", "0 polls"},
				{"update, children sent back", CheckOperation, "$.operation", "0 polls"},
				{"resync, children sent back", CheckOperation, "$.operation", "0 polls"},
			}},
		{"an id that changes without superseded", func(op, a map[string]any) {
			switch {
			case op == nil:
				pending(a, map[string]any{"id": "first", "pollAfter": "5s"})
			case op["id"] == "first":
				pending(a, map[string]any{"id": "second", "pollAfter": "5s"})
			}
		}, 0, []string{"create", "create, poll 1", "create, poll 2"}, []time.Duration{5 * time.Second, 5 * time.Second}, []v{
			{"create, poll 1", CheckOperation, "$.operation.id", `operation id changed from "first" to "second" without superseded: the reconciler started a second operation for generation 1`},
			{"update, poll 1", CheckOperation, "$.operation.id", `operation id changed from "first" to "second" without superseded: the reconciler started a second operation for generation 2`},
			{"resync, poll 1", CheckOperation, "$.operation.id", "changed"},
			{"create, children sent back, poll 1", CheckOperation, "$.operation.id", "changed"},
			{"update, children sent back, poll 1", CheckOperation, "$.operation.id", "changed"},
			{"resync, children sent back, poll 1", CheckOperation, "$.operation.id", "changed"},
		}},
		{"a deadline that passes is timed out, then called once more", func(op, a map[string]any) {
			if op == nil || op["timedOut"] != true {
				pending(a, map[string]any{"id": "db-1", "pollAfter": "20s", "deadline": "30s"})
			}
		}, 10 * time.Minute, []string{"create", "create, poll 1", "create, timed out"}, []time.Duration{20 * time.Second, 10 * time.Second}, []v{
			{"create, poll 1", CheckOperation, "$.operation.deadline", `operation "db-1" timed out: no final answer 30s after it started (deadline 30s), after 1 polls`},
			{"update, poll 1", CheckOperation, "$.operation.deadline", "timed out"},
			{"resync, poll 1", CheckOperation, "$.operation.deadline", "timed out"},
			{"create, children sent back, poll 1", CheckOperation, "$.operation.deadline", "timed out"},
			{"update, children sent back, poll 1", CheckOperation, "$.operation.deadline", "timed out"},
			{"resync, children sent back, poll 1", CheckOperation, "$.operation.deadline", "timed out"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent []map[string]any
			srv := httptest.NewServer(reconciler(func(req, a map[string]any) {
				sent = append(sent, req)
				operationAnswer(tt.answer)(req, a)
			}))
			t.Cleanup(srv.Close)
			set, opts := example(t)
			clk := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
			opts.Endpoint, opts.OperationWait, opts.Now, opts.Sleep = srv.URL, tt.wait, clk.now, clk.sleep
			rep, err := Run(t.Context(), set, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Conformant {
				t.Errorf("not conformant: an operation's trouble is a warning:\n%s", dump(rep.Violations))
			}
			var names []string
			for _, r := range rep.Requests {
				if r.Round == 1 && strings.HasPrefix(r.Name, "create") {
					names = append(names, r.Name)
				}
			}
			if d := cmp.Diff(tt.requests, names); d != "" {
				t.Errorf("create's requests (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.waits, clk.waits[:min(len(tt.waits), len(clk.waits))]); d != "" {
				t.Errorf("waits (-want +got):\n%s", d)
			}
			var got []v
			for _, x := range rep.Violations {
				got = append(got, v{x.Request, x.Check, x.Path, x.Message})
				if x.Severity != Warning || !strings.Contains(x.Hint, "#operations") {
					t.Errorf("violation %+v: want a warning pointing at the Operations docs", x)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("violations:\n%s\nwant %d", dump(rep.Violations), len(tt.want))
			}
			for i, w := range tt.want {
				if g := got[i]; g != w && (g.request != w.request || g.check != w.check || g.path != w.path || !strings.Contains(g.msg, w.msg)) {
					t.Errorf("violation %d: %+v\nwant %+v", i, g, w)
				}
			}
			// A poll is a requeue carrying prepared.operation as ork run builds it.
			for i, req := range sent {
				p := req["prepared"].(map[string]any)
				op, _ := p["operation"].(map[string]any)
				if (op != nil) != (p["trigger"] == "requeue") {
					t.Errorf("request %d: trigger %v with operation %v", i, p["trigger"], op)
				}
				uid := req["object"].(map[string]any)["metadata"].(map[string]any)["uid"]
				if op != nil && (op["key"] != fmt.Sprintf("%v/%v/%v", uid, op["generation"], op["id"]) || op["superseded"] != false || p["dryRun"] != true) {
					t.Errorf("request %d: prepared %v", i, p)
				}
			}
		})
	}
}
