package remote

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/operation"
)

func ptr[T any](v T) *T { return &v }

func TestDecide(t *testing.T) {
	ce := func(k Kind) error { return &CallError{Kind: k, Message: string(k) + " happened"} }
	tests := []struct {
		name string
		res  *Result
		err  error
		want Outcome
	}{
		{name: "ok: done", res: &Result{Result: "ok"},
			want: Outcome{Action: Done, Success: true, Reason: "ReconcileSucceeded", Message: "remote reconciler returned ok"}},
		{name: "empty result: done", res: &Result{},
			want: Outcome{Action: Done, Success: true, Reason: "ReconcileSucceeded", Message: "remote reconciler returned ok"}},
		{name: "ok + requeueAfter: requeue after it", res: &Result{Result: "ok", RequeueAfter: 5 * time.Second},
			want: Outcome{Action: RequeueAfter, After: 5 * time.Second, Success: true, Reason: "ReconcileSucceeded", Message: "remote reconciler returned ok (requeue after 5s)"}},
		{name: "requeue + requeueAfter", res: &Result{Result: "requeue", RequeueAfter: time.Second},
			want: Outcome{Action: RequeueAfter, After: time.Second, Success: true, Reason: "ReconcileSucceeded", Message: "remote reconciler returned requeue (requeue after 1s)"}},
		{name: "requeue alone: rate-limited (After 0)", res: &Result{Result: "requeue"},
			want: Outcome{Action: RequeueAfter, Success: true, Reason: "ReconcileSucceeded", Message: "remote reconciler returned requeue"}},
		{name: "error result: backoff", res: &Result{Result: "error", Error: "x"}, err: ce(KindErrorResult),
			want: Outcome{Action: Backoff, Reason: "ReconcileError", Message: "ErrorResult happened"}},
		{name: "429 with Retry-After", err: &CallError{Kind: KindHTTPStatus, StatusCode: 429, RetryAfter: 2 * time.Second, Message: "HTTP 429"},
			want: Outcome{Action: RetryAfter, After: 2 * time.Second, Reason: "RemoteThrottled", Message: "HTTP 429 (retrying after 2s)"}},
		{name: "503 without Retry-After", err: &CallError{Kind: KindHTTPStatus, StatusCode: 503, Message: "HTTP 503"},
			want: Outcome{Action: Backoff, Reason: "RemoteHTTPError", Message: "HTTP 503"}},
		{name: "wrapped CallError", err: fmt.Errorf("reconcile default/x: %w", ce(KindTimeout)),
			want: Outcome{Action: Backoff, Reason: "RemoteTimeout", Message: "Timeout happened"}},
		{name: "other error", err: errors.New("panic: boom"),
			want: Outcome{Action: Backoff, Reason: "ReconcileError", Message: "panic: boom"}},
		{name: "pending: poll after pollAfter, Ready False", res: &Result{Result: "pending", Operation: &operation.Answer{ID: "db-1", PollAfter: 30 * time.Second, Message: "creating", Progress: ptr(40)}},
			want: Outcome{Action: Pending, After: 30 * time.Second, Reason: "OperationPending", Message: `operation "db-1" pending (40%): creating`}},
		{name: "pending without pollAfter: the default", res: &Result{Result: "pending", Operation: &operation.Answer{ID: "db-1"}},
			want: Outcome{Action: Pending, After: 10 * time.Second, Reason: "OperationPending", Message: `operation "db-1" pending`}},
		{name: "pending with a pollAfter under a second: one", res: &Result{Result: "pending", Operation: &operation.Answer{ID: "db-1", PollAfter: time.Millisecond}},
			want: Outcome{Action: Pending, After: time.Second, Reason: "OperationPending", Message: `operation "db-1" pending`}},
		{name: "no result, no error", want: Outcome{Action: Backoff, Reason: "ReconcileError", Message: "remote reconciler returned no result"}},
	}
	for kind, reason := range map[Kind]string{
		KindTimeout: "RemoteTimeout", KindCanceled: "ReconcileCanceled", KindNetwork: "RemoteUnreachable",
		KindTLS: "RemoteTLSError", KindHTTPStatus: "RemoteHTTPError", KindInvalidJSON: "InvalidRemoteResponse",
		KindTooLarge: "RemoteResponseTooLarge", KindInvalidResult: "InvalidRemoteResult", KindUnknownResult: "InvalidRemoteResult",
		KindRender: "TemplateError", KindAuth: "AuthSecretError",
	} {
		tests = append(tests, struct {
			name string
			res  *Result
			err  error
			want Outcome
		}{name: string(kind), err: ce(kind), want: Outcome{Action: Backoff, Reason: reason, Message: string(kind) + " happened"}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, Decide(tt.res, tt.err)); d != "" {
				t.Errorf("Decide (-want +got):\n%s", d)
			}
		})
	}
}

func TestActionString(t *testing.T) {
	got := fmt.Sprint(Done, RequeueAfter, Backoff, RetryAfter, Action(9))
	if want := "Done RequeueAfter Backoff RetryAfter Action(9)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
