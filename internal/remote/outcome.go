package remote

import (
	"errors"
	"fmt"
	"time"

	"github.com/orkspace/ork/internal/operation"
)

// Action is what the engine does with a key after a reconcile.
type Action int

// Actions, in the terms of client-go's rate-limited work queue.
const (
	// Done: Forget the key.
	Done Action = iota
	// RequeueAfter: a success that asks to run again. After > 0: Forget, then
	// AddAfter(After). After == 0 ("requeue" without requeueAfter): AddRateLimited without
	// Forget, so a reconciler that always answers "requeue" is slowed down by the per-key
	// backoff instead of spinning.
	RequeueAfter
	// Backoff: a failure; AddRateLimited (per-key exponential backoff).
	Backoff
	// RetryAfter: the endpoint asked for a pause (429/503 with Retry-After); AddAfter(After).
	RetryAfter
	// Pending: the reconciler answered "pending" (Result.Operation): the engine persists the
	// operation (internal/operation), applies resources and status as for a success but
	// with Ready False (Success is false), and calls again after After, the bounded
	// pollAfter (Forget, then AddAfter). An engine that knows no operations backs off.
	Pending
)

// String names the action for logs.
func (a Action) String() string {
	switch a {
	case Done:
		return "Done"
	case RequeueAfter:
		return "RequeueAfter"
	case Backoff:
		return "Backoff"
	case RetryAfter:
		return "RetryAfter"
	case Pending:
		return "Pending"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Reasons are CamelCase, for the Ready condition, Events and metrics labels.
const (
	// ReasonReconcileSucceeded: "ok", "" or "requeue".
	ReasonReconcileSucceeded = "ReconcileSucceeded"
	// ReasonReconcileError: result "error", or an error that is not a *CallError.
	ReasonReconcileError = "ReconcileError"
	// ReasonRemoteTimeout: no complete response within the timeout.
	ReasonRemoteTimeout = "RemoteTimeout"
	// ReasonRemoteUnreachable: connection refused, reset, DNS failure...
	ReasonRemoteUnreachable = "RemoteUnreachable"
	// ReasonRemoteTLSError: certificate verification failed or the CA could not be loaded.
	ReasonRemoteTLSError = "RemoteTLSError"
	// ReasonRemoteHTTPError: a status other than 200.
	ReasonRemoteHTTPError = "RemoteHTTPError"
	// ReasonRemoteThrottled: 429 or 503 with a Retry-After in the future.
	ReasonRemoteThrottled = "RemoteThrottled"
	// ReasonInvalidRemoteResponse: the body is not a strict RemoteReconcileResult JSON object.
	ReasonInvalidRemoteResponse = "InvalidRemoteResponse"
	// ReasonRemoteResponseTooLarge: the body exceeds the size limit (8 MiB by default).
	ReasonRemoteResponseTooLarge = "RemoteResponseTooLarge"
	// ReasonInvalidRemoteResult: an unknown result value, an invalid requeueAfter or an
	// invalid operation.
	ReasonInvalidRemoteResult = "InvalidRemoteResult"
	// ReasonTemplateError: the endpoint, args or a secret name did not render.
	ReasonTemplateError = "TemplateError"
	// ReasonAuthSecretError: the auth token could not be read from its Secret.
	ReasonAuthSecretError = "AuthSecretError"
	// ReasonReconcileCanceled: ork stopped the call (shutdown).
	ReasonReconcileCanceled = "ReconcileCanceled"
	// ReasonOperationPending: "pending"; the operation is held (operation.ReasonPending).
	ReasonOperationPending = operation.ReasonPending
)

// Outcome is the engine's next step for a key, with what to record.
type Outcome struct {
	Action Action
	// After is the delay of RequeueAfter and RetryAfter.
	After time.Duration
	// Success is the Ready condition's status.
	Success bool
	// Reason and Message go into the Ready condition and the Event.
	Reason  string
	Message string
	// Quiet is true when nothing was sent (the endpoint's pause): not a failure of this
	// object, nothing to report on it, just come back later.
	Quiet bool
}

// Decide maps a Reconcile return to the engine's next step (STYLE.md, "The run loop"). It
// is a pure function.
func Decide(res *Result, err error) Outcome {
	if err != nil {
		var ce *CallError
		if !errors.As(err, &ce) {
			return Outcome{Action: Backoff, Reason: ReasonReconcileError, Message: err.Error()}
		}
		if ce.Kind == KindPaused {
			return Outcome{Action: RetryAfter, After: ce.RetryAfter, Reason: ReasonRemoteThrottled, Message: ce.Message, Quiet: true}
		}
		if ce.RetryAfter > 0 {
			return Outcome{Action: RetryAfter, After: ce.RetryAfter, Reason: ReasonRemoteThrottled,
				Message: fmt.Sprintf("%s (retrying after %s)", ce.Message, ce.RetryAfter)}
		}
		return Outcome{Action: Backoff, Reason: reason(ce.Kind), Message: ce.Message}
	}
	if res == nil {
		return Outcome{Action: Backoff, Reason: ReasonReconcileError, Message: "remote reconciler returned no result"}
	}
	if res.Result == ResultPending && res.Operation != nil {
		return Outcome{Action: Pending, After: operation.BoundPollAfter(res.Operation.PollAfter),
			Reason: ReasonOperationPending, Message: pendingMessage(res.Operation)}
	}
	o := Outcome{Action: Done, Success: true, Reason: ReasonReconcileSucceeded, Message: "remote reconciler returned " + res.String()}
	if res.Result == ResultRequeue || res.RequeueAfter > 0 {
		o.Action, o.After = RequeueAfter, res.RequeueAfter
	}
	return o
}

func reason(k Kind) string {
	switch k {
	case KindTimeout:
		return ReasonRemoteTimeout
	case KindCanceled:
		return ReasonReconcileCanceled
	case KindNetwork:
		return ReasonRemoteUnreachable
	case KindTLS:
		return ReasonRemoteTLSError
	case KindHTTPStatus:
		return ReasonRemoteHTTPError
	case KindInvalidJSON:
		return ReasonInvalidRemoteResponse
	case KindTooLarge:
		return ReasonRemoteResponseTooLarge
	case KindInvalidResult, KindUnknownResult:
		return ReasonInvalidRemoteResult
	case KindRender:
		return ReasonTemplateError
	case KindAuth:
		return ReasonAuthSecretError
	}
	return ReasonReconcileError
}
