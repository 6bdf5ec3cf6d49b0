// Package crdqueue is a CRD's work queue: client-go's rate-limiting queue over a lane queue
// (internal/lanequeue), with the ork_workqueue_* and ork_queue_* metrics. It remembers the
// lane of each key in flight, so that a retry keeps it.
package crdqueue

import (
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/orkspace/ork/internal/lanequeue"
)

// Queue is a CRD's work queue: client-go's rate-limiting queue over a lane queue
// (internal/lanequeue), which decides which ready key goes next. It remembers the lane each
// key in flight was taken from, so a retry after a failure keeps it.
//
// Lock order: client-go's queue lock, then the lane queue's, then mu, which is a leaf:
// nothing is called while it is held. The target func takes other locks (a controller's
// spokes', the CR cache's) and renders a template: it runs at the add, before any of these,
// never under them; the lane queue reads only what it noted (turns).
type Queue struct {
	workqueue.TypedRateLimitingInterface[string]
	lanes  *lanequeue.Queue[string]
	target func(key string) string
	mu     sync.Mutex
	// inFlight is the lane of each key a worker holds, from Get to Done.
	inFlight map[string]lanequeue.Lane
	// turns is the target of each key added since it was last taken, as target named it at
	// its last add (nil without targets).
	turns map[string]string
}

// New is the queue of the CRD name, retrying with an exponential backoff from base to
// ceiling, its metrics in m. target names the cluster of a key's children ("" for the one
// ork runs in; nil: every key's): namespaces take turns, and within a namespace its clusters
// take turns, so that the custom resources of one busy target never wait behind another's,
// and a namespace spread over many clusters takes no more turns than another
// (docs/multicluster.md).
func New(name string, base, ceiling time.Duration, m *Metrics, target func(key string) string) *Queue {
	q := &Queue{target: target, inFlight: map[string]lanequeue.Lane{}}
	opts := lanequeue.Options[string]{Group: keyNamespace, Observer: m.laneObserver(name)}
	if target != nil {
		q.turns = map[string]string{}
		opts.Subgroup = q.turnOf
	}
	lanes := lanequeue.New(opts)
	provider := m.queue
	// The same chain client-go builds by default (rate limiting over delaying over the
	// queue), with the lane queue as the queue's storage: de-duplication, one worker per
	// key, delays, backoff and the ork_workqueue_* metrics are client-go's.
	typed := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: name, MetricsProvider: provider, Queue: lanes})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: name, MetricsProvider: provider, Queue: typed})
	q.TypedRateLimitingInterface = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](base, ceiling),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: provider, DelayingQueue: delaying})
	q.lanes = lanes
	return q
}

// Add queues key now, its turn's target noted first.
func (q *Queue) Add(key string) {
	q.noteTurn(key)
	q.TypedRateLimitingInterface.Add(key)
}

// AddAfter queues key after d, its turn's target noted first.
func (q *Queue) AddAfter(key string, d time.Duration) {
	q.noteTurn(key)
	q.TypedRateLimitingInterface.AddAfter(key, d)
}

// AddRateLimited queues key after its backoff, its turn's target noted first.
func (q *Queue) AddRateLimited(key string) {
	q.noteTurn(key)
	q.TypedRateLimitingInterface.AddRateLimited(key)
}

// noteTurn notes the target of key for the push its add causes, out of every queue lock.
func (q *Queue) noteTurn(key string) {
	if q.target == nil {
		return
	}
	t := q.target(key)
	q.mu.Lock()
	q.turns[key] = t
	q.mu.Unlock()
}

// turnOf is the lane queue's subgroup of key, under its lock: the target noted at its last
// add. A key with none noted (a delayed add whose note a take consumed since, rare: every
// pass's own adds note again) takes the namespace's hub turn; only the order of turns is at
// stake, never a pass.
func (q *Queue) turnOf(key string) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.turns[key]
}

// Get takes the next key and remembers its lane until Done; its noted turn is consumed, so
// that the notes of keys gone do not stay.
func (q *Queue) Get() (string, bool) {
	key, shutdown := q.TypedRateLimitingInterface.Get()
	if !shutdown {
		l := q.lanes.Taken(key)
		q.mu.Lock()
		q.inFlight[key] = l
		delete(q.turns, key)
		q.mu.Unlock()
	}
	return key, shutdown
}

// Done ends the key's pass.
func (q *Queue) Done(key string) {
	q.mu.Lock()
	delete(q.inFlight, key)
	q.mu.Unlock()
	q.TypedRateLimitingInterface.Done(key)
}

// MarkFast makes the key's next add go to the fast lane (a real change). A nil queue (unit
// tests' plain work queues) has no lanes.
func (q *Queue) MarkFast(key string) {
	if q != nil {
		q.lanes.Fast(key)
	}
}

// KeepLane makes the key's next add (its retry) go to the lane its running pass came from.
func (q *Queue) KeepLane(key string) {
	if q == nil {
		return
	}
	q.mu.Lock()
	l := q.inFlight[key]
	q.mu.Unlock()
	if l == lanequeue.Fast {
		q.lanes.Fast(key)
	}
}

// Depth is the number of keys ready in lane.
func (q *Queue) Depth(lane lanequeue.Lane) int { return q.lanes.Depth(lane) }

// keyNamespace is the namespace of a queue key; "" for a cluster-scoped CR (one group).
func keyNamespace(key string) string {
	ns, _, ok := strings.Cut(key, "/")
	if !ok {
		return ""
	}
	return ns
}
