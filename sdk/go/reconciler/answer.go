package reconciler

import (
	"errors"
	"fmt"
	"time"
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
	case "", ResultKindOK, ResultKindRequeue, ResultKindError:
	default:
		return fmt.Errorf("result: %q is not ok, requeue or error", r.Result)
	}
	if r.RequeueAfter != "" {
		d, err := time.ParseDuration(r.RequeueAfter)
		if err != nil || d < 0 {
			return fmt.Errorf("requeueAfter: %q is not a non-negative duration", r.RequeueAfter)
		}
	}
	for i, res := range r.Resources {
		if err := res.Validate(); err != nil {
			return fmt.Errorf("resources[%d]: %w", i, err)
		}
	}
	return nil
}
