package remotecheck

import (
	"context"
	"fmt"
	"time"

	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/remote"
)

// DefaultOperationWait bounds, when Options.OperationWait is unset, the time a check waits
// in all for the operations of "pending" answers: long enough for a reconciler's short
// jobs and a few polls, short enough for a CI step.
const DefaultOperationWait = 2 * time.Minute

// CheckOperation finds what goes wrong with a long-running operation: still pending at the
// bound, an id that changed without superseded, a deadline passed.
const CheckOperation = "operation"

const operationsHint = "docs/remote-reconciler.md#operations"

// PendingOperation is the operation of a "pending" answer, as the reconciler wrote it
// (durations unbounded, "" when absent).
type PendingOperation struct {
	ID        string `json:"id"`
	PollAfter string `json:"pollAfter,omitempty"`
	Deadline  string `json:"deadline,omitempty"`
	Message   string `json:"message,omitempty"`
	Progress  *int   `json:"progress,omitempty"`
}

func pendingOf(a *operation.Answer) *PendingOperation {
	p := &PendingOperation{ID: a.ID, Message: a.Message, Progress: a.Progress}
	if a.PollAfter > 0 {
		p.PollAfter = a.PollAfter.String()
	}
	if a.Deadline > 0 {
		p.Deadline = a.Deadline.String()
	}
	return p
}

// clock is the time of a check: real unless a test injects Options.Now and Options.Sleep.
type clock struct {
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
	// left is what remains of Options.OperationWait.
	left  time.Duration
	bound time.Duration
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// follow sends the request of s and, while its answer is "pending", polls as ork run
// would: each poll carries prepared.operation as the engine builds it (operation.Pending,
// then State.Prepared), after the operation's pollAfter, capped by what is left of the
// check's bound on waiting. A deadline that passes is ork's OperationTimedOut, followed by
// one more call with timedOut: true. It returns the first exchange, then one per poll.
func (ck *checker) follow(ctx context.Context, s step) []sent {
	out := []sent{ck.send(ctx, s, poll{})}
	gen := ck.objectFor(s.trigger).GetGeneration()
	uid := string(ck.cr.GetUID())
	var held *operation.State
	polls := 0
	for {
		last := &out[len(out)-1]
		if last.pending == nil || last.fatal || ctx.Err() != nil {
			return out
		}
		state, change := operation.Pending(held, *last.pending, uid, gen, ck.clock.now())
		if change == operation.Replaced {
			// The check never moves the generation, so no poll is superseded: a new id is
			// a second operation for the same generation.
			last.add(Warning, "$.operation.id", fmt.Sprintf("operation id changed from %q to %q without superseded: the reconciler started a second operation for generation %d",
				held.ID, state.ID, gen),
				"while prepared.operation is not superseded, answer \"pending\" with its id (or a final answer); key the external job on prepared.operation.key so that a poll finds it: "+operationsHint)
		}
		held = &state
		if ck.clock.left <= 0 {
			last.add(Warning, "$.operation", fmt.Sprintf("operation %q still pending after waiting the bound of %s (--operation-wait), %s: %s",
				state.ID, ck.clock.bound, polled(polls), lastMessage(state)),
				"the check follows an operation at most that long; a longer --operation-wait follows it to its end: "+operationsHint)
			return out
		}
		wait := min(state.NextPoll(ck.clock.now()), ck.clock.left)
		if ck.clock.sleep(ctx, wait) != nil {
			return out
		}
		ck.clock.left -= wait
		if now := ck.clock.now(); state.Expired(now) {
			timedOut, msg := operation.TimeOut(state, now)
			last.request.Reason, last.request.Message = operation.ReasonTimedOut, msg
			last.add(Warning, "$.operation.deadline", msg,
				"ork sets Ready=False with reason "+operation.ReasonTimedOut+", sends a Warning Event and calls once more with prepared.operation.timedOut: true; finish within the deadline you answered, or answer a later one: "+operationsHint)
			held = &timedOut
			polls++
			out = append(out, ck.send(ctx, s, poll{name: fmt.Sprintf("%s, timed out", s.name(ck.children)), op: timedOut.Prepared(gen), waited: wait}))
			continue
		}
		polls++
		out = append(out, ck.send(ctx, s, poll{name: fmt.Sprintf("%s, poll %d", s.name(ck.children), polls), op: state.Prepared(gen), waited: wait}))
	}
}

func polled(n int) string {
	if n == 1 {
		return "1 poll"
	}
	return fmt.Sprintf("%d polls", n)
}

func lastMessage(s operation.State) string {
	m := s.Message
	if m == "" {
		m = "(no message)"
	}
	if s.Progress != nil {
		m = fmt.Sprintf("%s (%d%%)", m, *s.Progress)
	}
	return m
}

// add records a violation of the operation on the exchange.
func (o *sent) add(severity, path, msg, hint string) {
	o.violations = append(o.violations, Violation{Severity: severity, Request: o.request.Name, Path: path, Check: CheckOperation, Message: msg, Hint: hint})
}

// poll is a request that follows a "pending" answer; the zero poll is the step's own request.
type poll struct {
	name string
	// op is sent as prepared.operation.
	op     *operation.Prepared
	waited time.Duration
}

func (p poll) trigger(t remote.Trigger) remote.Trigger {
	if p.op != nil {
		return remote.TriggerRequeue // a poll is no news, as in ork run
	}
	return t
}
