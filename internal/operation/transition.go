package operation

import (
	"fmt"
	"time"
)

// Change says what a "pending" answer did to the held operation.
type Change int

// Changes of Pending.
const (
	// Started: no operation was held (or the held one had timed out): a new one starts.
	Started Change = iota
	// Continued: the answer names the held operation; it goes on.
	Continued
	// Replaced: the answer names another operation than the held one (typically a new one
	// for the generation a superseded poll carried): the held one is forgotten.
	Replaced
)

// String names the change for logs and tests.
func (c Change) String() string {
	switch c {
	case Started:
		return "Started"
	case Continued:
		return "Continued"
	case Replaced:
		return "Replaced"
	}
	return fmt.Sprintf("Change(%d)", int(c))
}

// Pending is the transition on a "pending" answer to a request sent for generation sent of
// the custom resource uid; held is the operation the request carried, nil when none. The
// result is the State to persist.
//
// A new operation (Started, Replaced) starts at now for generation sent, with no polls. The
// same id continues the held one: its start, generation and key stay, polls grow by one, and
// pollAfter, message and progress are the answer's. In both cases the deadline is counted
// from the start with the answer's deadline, so a reconciler may extend or drop it later.
func Pending(held *State, a Answer, uid string, sent int64, now time.Time) (State, Change) {
	var s State
	change := Continued
	switch {
	case held == nil || held.TimedOut:
		change = Started
	case held.ID != a.ID:
		change = Replaced
	}
	if change == Continued {
		s = *held
		s.Polls++
	} else {
		s = State{ID: a.ID, Key: Key(uid, sent, a.ID), Generation: sent, StartedAt: now.UTC().Truncate(time.Second)}
	}
	s.PollAfter = Duration(BoundPollAfter(a.PollAfter))
	s.Message, s.Progress = a.Message, cloneInt(a.Progress)
	s.Deadline = time.Time{}
	if a.Deadline > 0 {
		s.Deadline = s.StartedAt.Add(a.Deadline)
	}
	return s, change
}

// Held reports whether s is an operation ork still waits for (it has not timed out).
func (s *State) Held() bool { return s != nil && !s.TimedOut }

// Expired reports whether the held operation's deadline has passed at now.
func (s *State) Expired(now time.Time) bool {
	return s.Held() && !s.Deadline.IsZero() && !now.Before(s.Deadline)
}

// TimeOut is the transition when the deadline has passed: the operation is no longer held
// (nothing polls it, it is no longer in flight), and the returned State, marked TimedOut,
// is persisted in its place until the next answer, so that the next request carries
// prepared.operation with timedOut: true. message is for the Ready condition (reason
// ReasonTimedOut) and the Warning Event.
func TimeOut(s State, now time.Time) (next State, message string) {
	next = s
	next.TimedOut = true
	message = fmt.Sprintf("operation %q timed out: no final answer %s after it started (deadline %s), after %d polls",
		s.ID, now.Sub(s.StartedAt).Round(time.Second), s.Deadline.Sub(s.StartedAt), s.Polls)
	return next, message
}

// Final is what a final answer ("ok" or "requeue") does to the held operation.
type Final struct {
	// Clear: remove the persisted operation (it was held or timed out).
	Clear bool
	// AdvanceObserved: status.observedGeneration may become the generation the request was
	// sent for. False when the finished work is an older generation's: a superseded
	// operation that ended, or an answer to a request for a generation that is not the
	// custom resource's any more.
	AdvanceObserved bool
	// CallAgain: call the reconciler again now, as a requeue, for the current generation,
	// since the answer finished an older generation's work.
	CallAgain bool
}

// Finish is the transition on a final answer to a request sent for generation sent, while
// the custom resource is at generation current; held is the operation the request carried,
// nil when none. An "error" answer or a failed call is no transition: the operation stays
// held and the next call, after the usual backoff, carries it again.
func Finish(held *State, sent, current int64) Final {
	f := Final{Clear: held != nil, AdvanceObserved: sent == current}
	if held.Held() && held.Generation != current {
		f.AdvanceObserved = false
	}
	f.CallAgain = held != nil && !f.AdvanceObserved
	return f
}

// NextPoll is the delay from now to the next call about the held operation: its pollAfter,
// or less when the deadline comes first (never negative). When the deadline has passed at
// that time, the engine times the operation out instead of calling.
func (s *State) NextPoll(now time.Time) time.Duration {
	d := BoundPollAfter(time.Duration(s.PollAfter))
	if !s.Deadline.IsZero() {
		d = min(d, max(0, s.Deadline.Sub(now)))
	}
	return d
}

// Prepared is prepared.operation: what a request tells the reconciler of the operation ork
// holds (or that just timed out), for a custom resource now at generation current.
type Prepared struct {
	ID        string    `json:"id"`
	Key       string    `json:"key"`
	StartedAt time.Time `json:"startedAt"`
	// Polls counts the answers about the operation after the one that started it: 0 on the
	// first poll.
	Polls int `json:"polls"`
	// Superseded: the custom resource's generation moved since the operation started.
	Superseded bool `json:"superseded"`
	// TimedOut: the operation's deadline passed; ork no longer waits for it.
	TimedOut bool `json:"timedOut"`
	// Generation is the generation the operation started for.
	Generation int64 `json:"generation"`
	// Callback is where the reconciler may report completion; nil unless ork serves one.
	Callback *Callback `json:"callback,omitempty"`
}

// Callback is prepared.operation.callback: a URL to POST to when the operation completes,
// and the token that authorises that one call.
type Callback struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// Prepared is the prepared.operation of a request about s, for a custom resource now at
// generation current.
func (s *State) Prepared(current int64) *Prepared {
	if s == nil {
		return nil
	}
	return &Prepared{ID: s.ID, Key: s.Key, StartedAt: s.StartedAt, Polls: s.Polls,
		Superseded: current != s.Generation, TimedOut: s.TimedOut, Generation: s.Generation}
}

func cloneInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
