package run

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"

	"github.com/orkspace/ork/internal/lanequeue"
)

// maxNamespaceSeries caps the per-namespace depth series of one CRD: the namespaces past it
// are summed under otherNamespaces, so a cluster with thousands of namespaces cannot blow up
// the metrics.
const maxNamespaceSeries = 50

// otherNamespaces is the namespace label of the depth of namespaces past the cap.
const otherNamespaces = "(other)"

// laneQueue is a CRD's work queue: client-go's rate-limiting queue over a lane queue
// (internal/lanequeue), which decides which ready key goes next. It remembers the lane each
// key in flight was taken from, so a retry after a failure keeps it.
type laneQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	lanes *lanequeue.Queue[string]
	mu    sync.Mutex
	// inFlight is the lane of each key a worker holds, from Get to Done.
	inFlight map[string]lanequeue.Lane
}

func newLaneQueue(name string, base, ceiling time.Duration, m *Metrics) *laneQueue {
	lanes := lanequeue.New(lanequeue.Options[string]{Group: keyNamespace, Observer: m.laneObserver(name)})
	provider := m.QueueProvider()
	// The same chain client-go builds by default (rate limiting over delaying over the
	// queue), with the lane queue as the queue's storage: de-duplication, one worker per
	// key, delays, backoff and the ork_workqueue_* metrics are client-go's.
	typed := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: name, MetricsProvider: provider, Queue: lanes})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: name, MetricsProvider: provider, Queue: typed})
	return &laneQueue{
		TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](base, ceiling),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: provider, DelayingQueue: delaying}),
		lanes:    lanes,
		inFlight: map[string]lanequeue.Lane{},
	}
}

// Get takes the next key and remembers its lane until Done.
func (q *laneQueue) Get() (string, bool) {
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
func (q *laneQueue) Done(key string) {
	q.mu.Lock()
	delete(q.inFlight, key)
	q.mu.Unlock()
	q.TypedRateLimitingInterface.Done(key)
}

// markFast makes the key's next add go to the fast lane (a real change). A nil queue (unit
// tests' plain work queues) has no lanes.
func (q *laneQueue) markFast(key string) {
	if q != nil {
		q.lanes.Fast(key)
	}
}

// keepLane makes the key's next add (its retry) go to the lane its running pass came from.
func (q *laneQueue) keepLane(key string) {
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

// keyNamespace is the namespace of a queue key; "" for a cluster-scoped CR (one group).
func keyNamespace(key string) string {
	ns, _, ok := strings.Cut(key, "/")
	if !ok {
		return ""
	}
	return ns
}

// laneMetrics are the lane queue's metrics.
type laneMetrics struct {
	depth     *prometheus.GaugeVec     // crd, lane
	wait      *prometheus.HistogramVec // crd, lane
	namespace *prometheus.GaugeVec     // crd, namespace
}

func newLaneMetrics() laneMetrics {
	return laneMetrics{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ork_queue_lane_depth", Help: "Keys ready in each lane of the work queue (fast: real changes; slow: start-up, relist, resync, requeue).",
		}, []string{"crd", "lane"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ork_queue_wait_seconds", Help: "Time a key waited ready in its lane before a worker took it.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 20),
		}, []string{"crd", "lane"}),
		namespace: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ork_queue_namespace_depth",
			Help: "Keys ready per namespace, only for namespaces with keys; past " + strconv.Itoa(maxNamespaceSeries) + " namespaces per CRD the rest are summed under namespace=\"" + otherNamespaces + "\". Cluster-scoped CRs: namespace=\"\".",
		}, []string{"crd", "namespace"}),
	}
}

func (l laneMetrics) register(reg *prometheus.Registry) {
	reg.MustRegister(l.depth, l.wait, l.namespace)
}

// laneObserver feeds one CRD's lane queue into the metrics.
func (m *Metrics) laneObserver(crd string) lanequeue.Observer {
	return &laneObserver{crd: crd, m: m.lanes, series: map[string]bool{}, other: map[string]int{}}
}

// laneObserver is called under the lane queue's lock: no locking of its own.
type laneObserver struct {
	crd string
	m   laneMetrics
	// depth and wait are each lane's series, resolved at their first use (a lane never used
	// has none) and kept: the queue reports on every push and pop.
	depth [2]prometheus.Gauge
	wait  [2]prometheus.Observer
	// series are the namespaces with a series of their own; other the depths summed under
	// otherNamespaces.
	series     map[string]bool
	other      map[string]int
	otherTotal int
}

func (o *laneObserver) LaneDepth(l lanequeue.Lane, n int) {
	if o.depth[l] == nil {
		o.depth[l] = o.m.depth.WithLabelValues(o.crd, l.String())
	}
	o.depth[l].Set(float64(n))
}

func (o *laneObserver) Waited(l lanequeue.Lane, d time.Duration) {
	if o.wait[l] == nil {
		o.wait[l] = o.m.wait.WithLabelValues(o.crd, l.String())
	}
	o.wait[l].Observe(d.Seconds())
}

func (o *laneObserver) NamespaceDepth(ns string, n int) {
	if !o.series[ns] {
		if _, summed := o.other[ns]; !summed && n > 0 && len(o.series) < maxNamespaceSeries {
			o.series[ns] = true
		}
	}
	if o.series[ns] {
		if n == 0 {
			delete(o.series, ns)
			o.m.namespace.DeleteLabelValues(o.crd, ns)
			return
		}
		o.m.namespace.WithLabelValues(o.crd, ns).Set(float64(n))
		return
	}
	o.otherTotal += n - o.other[ns]
	if n == 0 {
		delete(o.other, ns)
	} else {
		o.other[ns] = n
	}
	if o.otherTotal == 0 {
		o.m.namespace.DeleteLabelValues(o.crd, otherNamespaces)
		return
	}
	o.m.namespace.WithLabelValues(o.crd, otherNamespaces).Set(float64(o.otherTotal))
}
