package simulate

import (
	"context"
	"fmt"
	"time"

	"github.com/orkspace/ork/internal/operation"
)

// DefaultOperationWait bounds, when RemoteOptions.OperationWait is unset, the time a run
// waits in all for the operations of "pending" answers: a simulation follows a reconciler's
// short jobs, it does not sit out a cloud's long ones.
const DefaultOperationWait = 2 * time.Minute

// How an operation a CR waited on ended (Operation.End).
const (
	// OperationDone: a final answer ended it.
	OperationDone = "done"
	// OperationTimedOut: its deadline passed; the next call carried timedOut: true.
	OperationTimedOut = "timedOut"
	// OperationReplaced: a "pending" answer named another id.
	OperationReplaced = "replaced"
	// OperationFailed: the reconcile failed while it was held (CR.Err says why).
	OperationFailed = "failed"
	// OperationStillPending: it was still pending when the run stopped following it, at the
	// cycle limit or once RemoteOptions.OperationWait was spent.
	OperationStillPending = "pending"
)

// Operation is a long-running operation a CR waited on: a "pending" answer that the run
// followed, as ork run does, with polls that carry prepared.operation.
type Operation struct {
	ID string `json:"id"`
	// Cycle is the cycle whose answer started it.
	Cycle int `json:"cycle"`
	// Polls counts the calls about it after the one that started it.
	Polls int `json:"polls"`
	// Waited is the time the run waited for it, its pollAfters bounded.
	Waited string `json:"waited"`
	// End is how it ended: OperationDone, OperationTimedOut, OperationReplaced,
	// OperationFailed or OperationStillPending.
	End string `json:"end"`
	// Message is its last answer's message and progress, or the timeout's message.
	Message string `json:"message,omitempty"`
}

// waiter is the run's clock and what is left of RemoteOptions.OperationWait.
type waiter struct {
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
	left  time.Duration
}

func newWaiter(o *RemoteOptions) *waiter {
	w := &waiter{now: o.Now, sleep: o.Sleep, left: o.OperationWait}
	if w.left <= 0 {
		w.left = DefaultOperationWait
	}
	if w.now == nil {
		w.now = time.Now
	}
	if w.sleep == nil {
		w.sleep = sleep
	}
	return w
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

// held is what a target keeps of the operation it waits on.
type held struct {
	state operation.State
	// due is when to poll: the answer's time plus its bounded pollAfter.
	due    time.Time
	waited time.Duration
	// at is the index of its entry in the target's CR.Operations.
	at int
}

// report is the entry of t's held operation in CR.Operations.
func (t *target) report() *Operation { return &t.result.Operations[t.op.at] }

// awaitPoll waits until t's operation is due, as far as the bound allows. It reports false
// when nothing is left to wait and the poll is not due yet: the run stops following it.
// A deadline passed meanwhile times the operation out, and the next call says so.
func (w *waiter) awaitPoll(ctx context.Context, t *target) (bool, error) {
	h := t.op
	if h == nil || !h.state.Held() {
		return true, nil
	}
	d := max(0, h.due.Sub(w.now()))
	if d > 0 && w.left <= 0 {
		t.report().End = OperationStillPending
		return false, nil
	}
	d = min(d, w.left)
	if err := w.sleep(ctx, d); err != nil {
		return false, err
	}
	w.left -= d
	h.waited += d
	t.report().Waited = h.waited.Round(time.Millisecond).String()
	if now := w.now(); h.state.Expired(now) {
		var msg string
		h.state, msg = operation.TimeOut(h.state, now)
		t.report().End, t.report().Message = OperationTimedOut, msg
	}
	return true, nil
}

// pending is the transition on a "pending" answer to a call about generation gen of the CR
// with uid: a new operation starts a report entry (the held one, if any, was replaced), the
// same one counts a poll.
func (w *waiter) pending(t *target, a operation.Answer, uid string, gen int64, cycle int) {
	var prev *operation.State
	if t.op != nil {
		prev = &t.op.state
	}
	now := w.now()
	state, change := operation.Pending(prev, a, uid, gen, now)
	if change == operation.Replaced {
		r := t.report()
		r.End = OperationReplaced
		r.Polls++ // the answer that replaced it was to a poll about it
	}
	if change != operation.Continued {
		t.result.Operations = append(t.result.Operations, Operation{ID: state.ID, Cycle: cycle, Waited: "0s"})
		t.op = &held{at: len(t.result.Operations) - 1}
	}
	t.op.state, t.op.due = state, now.Add(state.NextPoll(now))
	r := t.report()
	r.Polls, r.End, r.Message = state.Polls, OperationStillPending, message(state)
}

// endOperation closes t's operation as e, once a final answer or a failure came to a call
// about it.
func (t *target) endOperation(e string) {
	if t.op == nil {
		return
	}
	r := t.report()
	r.Polls++
	if r.End == OperationStillPending {
		r.End = e
	}
	t.op = nil
}

func message(s operation.State) string {
	m := s.Message
	if s.Progress != nil {
		m = fmt.Sprintf("%s (%d%%)", m, *s.Progress)
	}
	return m
}
