// Package liveness is the judge behind /healthz: it watches every controller's queue and
// fails only for what a restart can cure, a worker stuck inside a pass or a queue no worker
// takes from.
package liveness

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// The bounds are measured in passes and takes, never in requests: an apiserver or an
// endpoint that cannot be reached ends passes with an error (and puts keys in backoff, where
// they are not ready), so an outage never fails the probe and never turns into a restart
// storm.
const (
	// stuckGrace is how much longer than its CRD's timeout a pass may run: the timeout
	// bounds the call, the grace the writes around it.
	stuckGrace = 2 * time.Minute
	// PassWriteGrace is how much longer than its call a pass's context lasts (the reads and
	// writes around the call): below stuckGrace, so that a pass blocked on the apiserver
	// ends with an error before the probe would call it stuck.
	PassWriteGrace = 90 * time.Second
	// stallAfter is how long ready keys may wait while a worker is free and none takes one.
	stallAfter = 2 * time.Minute
)

// Checker watches every controller's queue for /healthz.
type Checker struct {
	// clock is time.Now; tests set another (SetClock) while the engine runs.
	clock atomic.Pointer[func() time.Time]
	// paused is true while an endpoint asked to wait (Retry-After): remote.Pauses.Holding.
	paused func(time.Time) bool
	mu     sync.Mutex
	queues []*watchedQueue
}

// New judges time by now; paused tells whether an endpoint asked to wait at a time (then
// keys that wait are not stalled).
func New(now func() time.Time, paused func(time.Time) bool) *Checker {
	l := &Checker{paused: paused}
	l.clock.Store(&now)
	return l
}

func (l *Checker) now() time.Time { return (*l.clock.Load())() }

// SetClock makes the checker judge time by now: a test moves it past the bounds instead of
// waiting minutes.
func (l *Checker) SetClock(now func() time.Time) { l.clock.Store(&now) }

// Watch wraps one controller's queue: its Get starts a pass and its Done ends it. workers is
// how many take from it; timeout bounds one pass's call.
func (l *Checker) Watch(name string, workers int, timeout time.Duration, q workqueue.TypedRateLimitingInterface[string]) workqueue.TypedRateLimitingInterface[string] {
	w := &watchedQueue{TypedRateLimitingInterface: q, l: l, name: name, workers: workers,
		limit: timeout + stuckGrace, inPass: map[string]time.Time{}}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queues = append(l.queues, w)
	return w
}

// Check is nil while ork is alive; else it says which worker or queue is stuck. Queues shut
// down (a stop, a lost Lease) are forgotten.
func (l *Checker) Check() error {
	now := l.now()
	l.mu.Lock()
	live := l.queues[:0]
	for _, q := range l.queues {
		if !q.ShuttingDown() {
			live = append(live, q)
		}
	}
	l.queues = live
	queues := slices.Clone(live)
	l.mu.Unlock()
	for _, q := range queues {
		if err := q.check(now, l.paused); err != nil {
			return err
		}
	}
	return nil
}

// watchedQueue is a controller's queue that records when its keys are taken and done.
type watchedQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	l       *Checker
	name    string
	workers int
	limit   time.Duration
	mu      sync.Mutex
	started bool
	// lastTake is when a worker last took a key, or first asked for one.
	lastTake time.Time
	inPass   map[string]time.Time
}

func (q *watchedQueue) Get() (string, bool) {
	q.mu.Lock()
	if !q.started { // the workers start: the stall clock starts with them, not at the sync wait
		q.started, q.lastTake = true, q.l.now()
	}
	q.mu.Unlock()
	key, shutdown := q.TypedRateLimitingInterface.Get()
	if !shutdown {
		now := q.l.now()
		q.mu.Lock()
		q.lastTake, q.inPass[key] = now, now
		q.mu.Unlock()
	}
	return key, shutdown
}

func (q *watchedQueue) Done(key string) {
	q.mu.Lock()
	delete(q.inPass, key)
	q.mu.Unlock()
	q.TypedRateLimitingInterface.Done(key)
}

func (q *watchedQueue) check(now time.Time, paused func(time.Time) bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for key, since := range q.inPass {
		if d := now.Sub(since); d > q.limit {
			return fmt.Errorf("crd %s: a worker has been inside the pass of %s for %v, longer than the timeout plus %v",
				q.name, key, d.Round(time.Second), stuckGrace)
		}
	}
	if !q.started || len(q.inPass) >= q.workers || q.Len() == 0 {
		return nil // not running yet, every worker busy (each within its bound), or nothing ready
	}
	if d := now.Sub(q.lastTake); d > stallAfter && !paused(now) {
		return fmt.Errorf("crd %s: %d key(s) ready and no worker took one for %v", q.name, q.Len(), d.Round(time.Second))
	}
	return nil
}
