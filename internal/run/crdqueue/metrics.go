package crdqueue

import (
	"strconv"
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

// Metrics are the work queues' metrics: client-go's (ork_workqueue_*, by queue name) and the
// lanes' (ork_queue_*, by CRD).
type Metrics struct {
	queue queueMetrics
	lanes laneMetrics
}

// NewMetrics makes the metrics; Register puts them on a registry.
func NewMetrics() *Metrics {
	return &Metrics{queue: newQueueMetrics(), lanes: newLaneMetrics()}
}

// Register registers every metric on reg.
func (m *Metrics) Register(reg *prometheus.Registry) {
	q, l := m.queue, m.lanes
	reg.MustRegister(q.depthGauge, q.adds, q.retries, q.latency, q.workDuration, q.unfinished, q.longest,
		l.depth, l.wait, l.namespace)
}

// Provider feeds client-go work queue metrics into the registry.
func (m *Metrics) Provider() workqueue.MetricsProvider { return m.queue }

// queueMetrics implements workqueue.MetricsProvider with one vector per metric, labelled by
// queue name (the CRD).
type queueMetrics struct {
	adds, retries                   *prometheus.CounterVec
	depthGauge, unfinished, longest *prometheus.GaugeVec
	latency, workDuration           *prometheus.HistogramVec
}

func newQueueMetrics() queueMetrics {
	name := []string{"name"}
	buckets := prometheus.ExponentialBuckets(0.001, 4, 10)
	return queueMetrics{
		depthGauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ork_workqueue_depth", Help: "Current depth of the work queue."}, name),
		adds:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ork_workqueue_adds_total", Help: "Adds handled by the work queue."}, name),
		retries:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ork_workqueue_retries_total", Help: "Rate-limited retries handled by the work queue."}, name),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ork_workqueue_queue_duration_seconds",
			Help: "How long an item waits in the queue before it is processed.", Buckets: buckets}, name),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ork_workqueue_work_duration_seconds",
			Help: "How long processing an item takes.", Buckets: buckets}, name),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ork_workqueue_unfinished_work_seconds",
			Help: "Seconds of work in progress not yet observed by work_duration."}, name),
		longest: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ork_workqueue_longest_running_processor_seconds",
			Help: "Seconds the longest-running processor has been running."}, name),
	}
}

func (q queueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return q.depthGauge.WithLabelValues(name)
}
func (q queueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return q.adds.WithLabelValues(name)
}
func (q queueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return q.latency.WithLabelValues(name)
}
func (q queueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return q.workDuration.WithLabelValues(name)
}
func (q queueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return q.unfinished.WithLabelValues(name)
}
func (q queueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return q.longest.WithLabelValues(name)
}
func (q queueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return q.retries.WithLabelValues(name)
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
