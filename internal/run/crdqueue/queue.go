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
type Queue struct {
	workqueue.TypedRateLimitingInterface[string]
	lanes *lanequeue.Queue[string]
	mu    sync.Mutex
	// inFlight is the lane of each key a worker holds, from Get to Done.
	inFlight map[string]lanequeue.Lane
}

// New is the queue of the CRD name, retrying with an exponential backoff from base to
// ceiling, its metrics in m. target names the cluster of a key's children ("" for the one
// ork runs in; nil: every key's): the keys of one namespace take turns per cluster, so that
// the custom resources of one busy target never wait behind another's (docs/multicluster.md).
func New(name string, base, ceiling time.Duration, m *Metrics, target func(key string) string) *Queue {
	group := keyNamespace
	if target != nil {
		group = func(key string) string { return turnGroup(target(key), keyNamespace(key)) }
	}
	lanes := lanequeue.New(lanequeue.Options[string]{Group: group, Namespace: keyNamespace, Observer: m.laneObserver(name)})
	provider := m.queue
	// The same chain client-go builds by default (rate limiting over delaying over the
	// queue), with the lane queue as the queue's storage: de-duplication, one worker per
	// key, delays, backoff and the ork_workqueue_* metrics are client-go's.
	typed := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: name, MetricsProvider: provider, Queue: lanes})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: name, MetricsProvider: provider, Queue: typed})
	return &Queue{
		TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](base, ceiling),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: provider, DelayingQueue: delaying}),
		lanes:    lanes,
		inFlight: map[string]lanequeue.Lane{},
	}
}

// Get takes the next key and remembers its lane until Done.
func (q *Queue) Get() (string, bool) {
	key, shutdown := q.TypedRateLimitingInterface.Get()
	if !shutdown {
		l := q.lanes.Taken(key)
		q.mu.Lock()
		q.inFlight[key] = l
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

// turnGroup is the lane queue's group of a key of namespace ns whose children are on
// target: the namespace alone for the local cluster, as without targets. A namespace has no
// NUL, so no two pairs share a group.
func turnGroup(target, ns string) string {
	if target == "" {
		return ns
	}
	return target + "\x00" + ns
}

// keyNamespace is the namespace of a queue key; "" for a cluster-scoped CR (one group).
func keyNamespace(key string) string {
	ns, _, ok := strings.Cut(key, "/")
	if !ok {
		return ""
	}
	return ns
}
