package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/operation"
)

func TestPendingAnswers(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *operation.Answer
	}{
		{"every field", `{"result":"pending","operation":{"id":"db-1","pollAfter":"30s","deadline":"30m","message":"creating","progress":40},"status":{"phase":"Provisioning"}}`,
			&operation.Answer{ID: "db-1", PollAfter: 30 * time.Second, Deadline: 30 * time.Minute, Message: "creating", Progress: ptr(40)}},
		{"only an id", `{"result":"pending","operation":{"id":"db-1"}}`, &operation.Answer{ID: "db-1"}},
		{"nulls and empty strings are absent", `{"result":"pending","operation":{"id":"db-1","pollAfter":"","deadline":null,"message":null,"progress":null}}`, &operation.Answer{ID: "db-1"}},
		{"a pollAfter under a second is kept as written", `{"result":"pending","operation":{"id":"db-1","pollAfter":"100ms"}}`, &operation.Answer{ID: "db-1", PollAfter: 100 * time.Millisecond}},
		{"progress as a whole float", `{"result":"pending","operation":{"id":"db-1","progress":100.0}}`, &operation.Answer{ID: "db-1", Progress: ptr(100)}},
		{"progress 0", `{"result":"pending","operation":{"id":"db-1","progress":0}}`, &operation.Answer{ID: "db-1", Progress: ptr(0)}},
		{"requeueAfter is ignored", `{"result":"pending","requeueAfter":"5s","operation":{"id":"db-1"}}`, &operation.Answer{ID: "db-1"}},
		{"an operation of null with another result", `{"result":"ok","operation":null}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := decodeResult([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, res.Operation); d != "" {
				t.Errorf("operation (-want +got):\n%s", d)
			}
		})
	}
}

func TestInvalidPendingAnswers(t *testing.T) {
	tests := []struct {
		name string
		body string
		kind Kind
		want string
	}{
		{"pending without an operation", `{"result":"pending"}`, KindInvalidResult,
			`result "pending" without an operation (want "operation": {"id": ...})`},
		{"pending with a null operation", `{"result":"pending","operation":null}`, KindInvalidResult, `result "pending" without an operation`},
		{"an operation without an id", `{"result":"pending","operation":{"pollAfter":"5s"}}`, KindInvalidResult,
			`result "pending" with an operation without an id (an operation has id, pollAfter, deadline, message, progress)`},
		{"an empty id", `{"result":"pending","operation":{"id":""}}`, KindInvalidResult, `without an id`},
		{"an id too long", `{"result":"pending","operation":{"id":"` + strings.Repeat("é", 257) + `"}}`, KindInvalidResult, `is longer than 256 characters`},
		{"an id not a string", `{"result":"pending","operation":{"id":7}}`, KindInvalidJSON, `field "operation.id" is a number, want a string`},
		{"pollAfter without a unit", `{"result":"pending","operation":{"id":"x","pollAfter":"10"}}`, KindInvalidResult,
			`invalid operation.pollAfter "10" (want a Go duration such as 10s or 30m)`},
		{"negative pollAfter", `{"result":"pending","operation":{"id":"x","pollAfter":"-1s"}}`, KindInvalidResult, `invalid operation.pollAfter "-1s"`},
		{"deadline in words", `{"result":"pending","operation":{"id":"x","deadline":"an hour"}}`, KindInvalidResult, `invalid operation.deadline "an hour"`},
		{"pollAfter as a number", `{"result":"pending","operation":{"id":"x","pollAfter":10}}`, KindInvalidJSON, `field "operation.pollAfter" is a number, want a string`},
		{"progress over 100", `{"result":"pending","operation":{"id":"x","progress":101}}`, KindInvalidResult,
			`invalid operation.progress 101 (want a whole number from 0 to 100)`},
		{"negative progress", `{"result":"pending","operation":{"id":"x","progress":-1}}`, KindInvalidResult, `invalid operation.progress -1`},
		{"fractional progress", `{"result":"pending","operation":{"id":"x","progress":40.5}}`, KindInvalidResult, `invalid operation.progress 40.5`},
		{"progress as a string", `{"result":"pending","operation":{"id":"x","progress":"40"}}`, KindInvalidJSON, `field "operation.progress" is a string, want a number`},
		{"an unknown operation field", `{"result":"pending","operation":{"id":"x","eta":"5m"}}`, KindInvalidJSON,
			`unknown field "operation.eta" (an operation has id, pollAfter, deadline, message, progress)`},
		{"operation not an object", `{"result":"pending","operation":"x"}`, KindInvalidJSON, `field "operation" is a string, want an object`},
		{"an operation with ok", `{"result":"ok","operation":{"id":"x"}}`, KindInvalidResult,
			`operation with result "ok": an operation goes only with result "pending"`},
		{"an operation with no result", `{"operation":{"id":"x"}}`, KindInvalidResult, `operation with result "": an operation goes only with result "pending"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeResult([]byte(tt.body))
			var ce *CallError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a CallError", err)
			}
			if ce.Kind != tt.kind {
				t.Errorf("kind = %s, want %s", ce.Kind, tt.kind)
			}
			if !strings.Contains(ce.Message, tt.want) {
				t.Errorf("message = %q, want it to contain %q", ce.Message, tt.want)
			}
		})
	}
}

// A request about a held operation carries it as prepared.operation, after the other
// prepared fields; every other request has none (see request.json).
func TestPreparedOperationIsSentWhenHeld(t *testing.T) {
	srv, reqs := newEndpoint(t, answer(200, `{"result":"pending","operation":{"id":"db-1"}}`))
	r := mustNew(t, goldenCRD(srv.URL), Options{})
	// webapp() is at generation 3: the operation started for 2 is superseded.
	held := operation.State{ID: "db-1", Key: operation.Key("0b5e-uid", 2, "db-1"), Generation: 2,
		StartedAt: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), Polls: 3, PollAfter: operation.Duration(10 * time.Second)}
	req := Request{Key: "default/my-webapp", Object: webapp(), Trigger: TriggerRequeue, Attempt: 1, Operation: held.Prepared(3)}
	res, err := r.Reconcile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != ResultPending || res.Operation == nil || res.Operation.ID != "db-1" {
		t.Errorf("result = %+v, want pending db-1", res)
	}
	got := next(t, reqs)
	prepared := decode(t, got.body)["prepared"].(map[string]any)
	want := map[string]any{"id": "db-1", "key": "0b5e-uid/2/db-1", "startedAt": "2026-05-01T12:00:00Z",
		"polls": json.Number("3"), "superseded": true, "timedOut": false, "generation": json.Number("2")}
	if d := cmp.Diff(want, prepared["operation"]); d != "" {
		t.Errorf("prepared.operation (-want +got):\n%s", d)
	}
	i, j := strings.Index(string(got.body), `"children"`), strings.Index(string(got.body), `"operation"`)
	if i < 0 || j < i {
		t.Errorf("prepared.operation is not after prepared.children:\n%s", got.body)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got.body, "", "  "); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	golden(t, "request-operation.json", pretty.Bytes())
}
