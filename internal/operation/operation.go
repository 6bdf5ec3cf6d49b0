// Package operation is the state of a long-running operation that a remote reconciler
// reported with a "pending" answer, as ork holds it across polls, restarts and replicas: what
// is persisted on the custom resource, how it changes with each answer and with time, and
// what the next request tells the reconciler of it. It is pure: the engine reads, writes and
// schedules; every transition takes the time as an argument.
package operation

import (
	"fmt"
	"strconv"
	"time"

	"github.com/orkspace/ork/internal/naming"
)

// Condition reasons of the Ready condition while an operation is held or after it timed out.
const (
	// ReasonPending: the reconciler answered "pending"; Ready is False, Progressing True.
	ReasonPending = "OperationPending"
	// ReasonTimedOut: the operation's deadline passed before a final answer; Ready is False
	// and a Warning Event says so.
	ReasonTimedOut = "OperationTimedOut"
)

// ConditionProgressing is the condition ork sets True while an operation is held (reason
// ReasonPending) and False once it ends or times out.
const ConditionProgressing = "Progressing"

// Annotation holds the operation on the custom resource when its status schema would prune
// status.operation.
const Annotation = naming.OperationAnnotation

// StatusField is the key under status where the operation is kept when the schema allows it.
const StatusField = "operation"

// Poll delay bounds: a reconciler's pollAfter is raised to MinPollAfter, and an answer
// without one polls after DefaultPollAfter.
const (
	DefaultPollAfter = 10 * time.Second
	MinPollAfter     = time.Second
)

// MaxIDLength bounds an operation id, in characters: it is persisted on the custom resource and sent back
// with every poll.
const MaxIDLength = 256

// Answer is the operation of a "pending" answer, decoded and checked by internal/remote:
// ID is set, PollAfter and Deadline are not negative, Progress is nil or 0 to 100.
type Answer struct {
	ID string
	// PollAfter is the delay the reconciler asked for; 0: DefaultPollAfter.
	PollAfter time.Duration
	// Deadline, counted from the operation's start, bounds it; 0: no deadline.
	Deadline time.Duration
	Message  string
	Progress *int
}

// State is a held operation as ork persists it on the custom resource (status.operation, or
// the annotation as compact JSON). A State with TimedOut set is no longer held: it is kept
// only so that the next request tells the reconciler, whichever replica sends it.
type State struct {
	ID string `json:"id"`
	// Key is Key(uid, Generation, ID), sent as prepared.operation.key.
	Key string `json:"key"`
	// Generation is the custom resource's generation the operation started for.
	Generation int64     `json:"generation"`
	StartedAt  time.Time `json:"startedAt"`
	// Polls counts the answers about the operation after the one that started it.
	Polls     int      `json:"polls"`
	PollAfter Duration `json:"pollAfter"`
	// Deadline is when the operation times out; zero: never.
	Deadline time.Time `json:"deadline,omitzero"`
	Message  string    `json:"message,omitempty"`
	Progress *int      `json:"progress,omitempty"`
	TimedOut bool      `json:"timedOut,omitempty"`
}

// Key is the stable key of a custom resource's work for one generation: "<uid>/<generation>",
// and "<uid>/<generation>/<id>" once the reconciler named an operation. The first form is
// what a reconciler derives itself from a request that carries no prepared.operation
// (object.metadata.uid, prepared.generation): keying the work it starts on it makes a second
// call for the same generation find that work again, which covers the window in which ork
// got a "pending" answer but crashed (or lost its bucket) before persisting the operation.
// The Idempotency-Key header, new for every call, cannot do that.
func Key(uid string, generation int64, id string) string {
	k := uid + "/" + strconv.FormatInt(generation, 10)
	if id != "" {
		k += "/" + id
	}
	return k
}

// Duration is a time.Duration written as a Go duration string ("10s") in JSON.
type Duration time.Duration

// MarshalText writes the duration as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a Go duration string; a negative one is refused.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("pollAfter: %w", err)
	}
	if v < 0 {
		return fmt.Errorf("pollAfter %q is negative", b)
	}
	*d = Duration(v)
	return nil
}

// BoundPollAfter is the delay between polls for a reconciler's pollAfter: DefaultPollAfter
// for 0, at least MinPollAfter, so that a reconciler cannot make ork spin.
func BoundPollAfter(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultPollAfter
	case d < MinPollAfter:
		return MinPollAfter
	}
	return d
}
