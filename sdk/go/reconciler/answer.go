package reconciler

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// OK is a successful answer: ork applies its resources and merges its status.
func OK() Result { return Result{Result: ResultKindOK} }

// Requeue is a successful answer that asks ork to reconcile again after d (0: after ork's
// per-key backoff).
func Requeue(d time.Duration) Result {
	r := Result{Result: ResultKindRequeue}
	if d > 0 {
		r.RequeueAfter = d.String()
	}
	return r
}

// Pending answers that the long-running operation id was started, or goes on: ork applies
// the answer's resources and status, holds the operation on the custom resource (Ready
// False, reason OperationPending) and calls again after pollAfter (0: ork's default, 10s;
// less than 1s counts as 1s) with prepared.operation, until a final answer (OK or Requeue).
// Answering with the id of prepared.operation continues it; another id replaces it.
func Pending(id string, pollAfter time.Duration) Result {
	op := &PendingOperation{ID: id}
	if pollAfter > 0 {
		op.PollAfter = pollAfter.String()
	}
	return Result{Result: ResultKindPending, Operation: op}
}

// WithDeadline bounds a pending answer's operation to d after it started: then ork stops
// waiting (Ready False, reason OperationTimedOut) and calls again with
// prepared.operation.timedOut. No effect on other answers.
func (r Result) WithDeadline(d time.Duration) Result {
	if r.Operation == nil {
		return r
	}
	op := *r.Operation
	op.Deadline = d.String()
	r.Operation = &op
	return r
}

// WithProgress says how far a pending answer's operation is, in percent (0 to 100), and
// what it is doing; ork shows both in the Ready condition. No effect on other answers.
func (r Result) WithProgress(percent int, message string) Result {
	if r.Operation == nil {
		return r
	}
	op := *r.Operation
	p := int64(percent)
	op.Progress, op.Message = &p, message
	r.Operation = &op
	return r
}

// Error is a failed reconcile: ork applies nothing, shows err in the Ready condition and
// retries with backoff.
func Error(err error) Result {
	if err == nil {
		err = errors.New("unknown error")
	}
	return Result{Result: ResultKindError, Error: err.Error()}
}

// Errorf is Error(fmt.Errorf(format, args...)).
func Errorf(format string, args ...any) Result { return Error(fmt.Errorf(format, args...)) }

// WithStatus sets the status ork merges into the custom resource's.
func (r Result) WithStatus(status map[string]any) Result {
	r.Status = status
	return r
}

// WithResources sets the objects the custom resource should own. Called with none it says
// "no objects" (with reconcile.remote.prune, every child is pruned), unlike never calling it
// ("no opinion").
func (r Result) WithResources(rs ...Resource) Result {
	r.Resources = append([]Resource{}, rs...)
	return r
}

// RequeueAfterAlso asks for another reconcile after d on an ok answer too.
func (r Result) RequeueAfterAlso(d time.Duration) Result {
	r.RequeueAfter = d.String()
	return r
}

// Validate reports what ork would refuse in r: an unknown result, a bad requeueAfter, or a
// resource that misses a required field (named as resources[i].fields.<name>).
func (r Result) Validate() error {
	switch r.Result {
	case "", ResultKindOK, ResultKindRequeue, ResultKindPending, ResultKindError:
	default:
		return fmt.Errorf("result: %q is not ok, requeue, pending or error", r.Result)
	}
	if err := checkDuration("requeueAfter", r.RequeueAfter); err != nil {
		return err
	}
	if err := r.validateOperation(); err != nil {
		return err
	}
	for i, res := range r.Resources {
		if err := res.Validate(); err != nil {
			return fmt.Errorf("resources[%d]: %w", i, err)
		}
	}
	return nil
}

// validateOperation checks what ork checks of an operation: it comes with "pending" and
// only then, with an id of at most 256 characters, durations and a progress from 0 to 100.
func (r Result) validateOperation() error {
	op := r.Operation
	switch {
	case r.Result == ResultKindPending && op == nil:
		return errors.New("operation: result pending needs an operation")
	case op == nil:
		return nil
	case r.Result != ResultKindPending:
		return fmt.Errorf("operation: goes only with result pending, not %q", r.Result)
	case op.ID == "":
		return errors.New("operation.id is required")
	case utf8.RuneCountInString(op.ID) > 256:
		return errors.New("operation.id is longer than 256 characters")
	case op.Progress != nil && (*op.Progress < 0 || *op.Progress > 100):
		return fmt.Errorf("operation.progress: %d is not from 0 to 100", *op.Progress)
	}
	if err := checkDuration("operation.pollAfter", op.PollAfter); err != nil {
		return err
	}
	return checkDuration("operation.deadline", op.Deadline)
}

func checkDuration(field, s string) error {
	if s == "" {
		return nil
	}
	if d, err := time.ParseDuration(s); err != nil || d < 0 {
		return fmt.Errorf("%s: %q is not a non-negative duration", field, s)
	}
	return nil
}
