// Package metrics is ork run's Prometheus metrics: their names, help texts, labels and
// buckets, registered on a registry of their own (no global state).
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/util/workqueue"

	"github.com/orkspace/ork/internal/run/candidate"
	"github.com/orkspace/ork/internal/run/crdqueue"
)

// Metrics are ork's Prometheus metrics, on a registry of their own (no global state).
type Metrics struct {
	Registry          *prometheus.Registry
	ReconcileTotal    *prometheus.CounterVec
	ReconcileDuration *prometheus.HistogramVec
	RemoteDuration    *prometheus.HistogramVec
	ApplyTotal        *prometheus.CounterVec
	// TriggersTotal counts why keys were queued, before the queue merges them: a child
	// change, an update, a resync... It shows what drives the reconciles.
	TriggersTotal *prometheus.CounterVec
	// StatusFieldsPruned counts the status keys a CRD's schema was found to prune, once per
	// CRD and key: ork writes them no more.
	StatusFieldsPruned *prometheus.CounterVec
	// SuspendedCRs counts the custom resources suspended at their last pass.
	SuspendedCRs *prometheus.GaugeVec
	// ChildLockWait times each wait for a child lock (the ownership check of a child the
	// cache does not show controlled by the CR): near zero unless two CRs name one child.
	ChildLockWait *prometheus.HistogramVec
	// ShardBucketsHeld and ShardHandoffs are registered in sharded mode only (the ring's
	// buckets held here; buckets handed back or lost).
	ShardBucketsHeld prometheus.Gauge
	ShardHandoffs    prometheus.Counter
	// ShardCRsReceived and ShardCRsDropped count the custom resources the CR caches of a
	// sharded replica received, and those the client filter dropped (not of a held
	// bucket: the apiserver ignored the selector, or the holding changed meanwhile).
	ShardCRsReceived, ShardCRsDropped *prometheus.CounterVec
	// OperationsInFlight counts the long-running operations held for this replica's CRs;
	// OperationDuration times each from its start to its end (done, timedOut, replaced).
	OperationsInFlight *prometheus.GaugeVec
	OperationDuration  *prometheus.HistogramVec
	// OperationCallbacks counts the completion callbacks received, by result (accepted,
	// forged, notHeld, ...: opcallback's results).
	OperationCallbacks *prometheus.CounterVec
	// DecisionLogFailures counts the decision log entries not written, and DecisionLogStopped
	// is 1 once a write error stopped the log: no entry is written after it until ork
	// restarts (docs/provenance.md). Both stay 0 without a log.
	DecisionLogFailures prometheus.Counter
	DecisionLogStopped  prometheus.Gauge
	// SkippedUnchanged counts the passes whose call reconcile.remote.skipUnchanged skipped.
	SkippedUnchanged *prometheus.CounterVec
	// Queue are the CRD work queues' metrics (run/crdqueue), Candidate a rollout
	// candidate's (run/candidate).
	Queue     *crdqueue.Metrics
	Candidate candidate.Metrics
}

// New registers every metric on a fresh registry.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		ReconcileTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ork_reconcile_total", Help: "Reconciles by CRD, result (success, error, requeue) and the reconciler that answered (side: stable, or candidate in a canary).",
		}, []string{"crd", "result", "side"}),
		ReconcileDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ork_reconcile_duration_seconds", Help: "Time of one reconcile, remote call and apply included, by the reconciler that answered (side).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}, []string{"crd", "result", "side"}),
		RemoteDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ork_remote_request_duration_seconds", Help: "Remote reconciler calls by HTTP status code (or timeout/error).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}, []string{"crd", "code"}),
		ApplyTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ork_apply_total", Help: "Child writes (server-side apply; create for onCreate) by CRD, kind and result.",
		}, []string{"crd", "kind", "result"}),
		TriggersTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ork_reconcile_triggers_total", Help: "Reasons a key was queued (create, update, delete, child, resync, requeue), counted before the queue merges them.",
		}, []string{"crd", "trigger"}),
		StatusFieldsPruned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ork_status_fields_pruned_total", Help: "Status keys the CRD's schema prunes (the apiserver's unknown-field warning), counted once per CRD and key: ork stops writing them.",
		}, []string{"crd", "field"}),
		SuspendedCRs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ork_suspended_crs", Help: "Custom resources annotated orkestra.orkspace.io/reconcile: suspended at their last pass.",
		}, []string{"crd"}),
		ChildLockWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ork_child_lock_wait_seconds", Help: "Time a pass waited for the lock of one child it checks for ownership before creating or adopting it.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"crd"}),
		ShardBucketsHeld: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ork_shard_buckets_held", Help: "Shard buckets this replica holds (ork run --shard-buckets).",
		}),
		ShardHandoffs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ork_shard_handoffs_total", Help: "Shard buckets this replica stopped holding: handed back or lost.",
		}),
		ShardCRsReceived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ork_shard_crs_received_total", Help: "Custom resources (list items and watch events) the CR caches of a sharded replica received.",
		}, []string{"crd"}),
		ShardCRsDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ork_shard_crs_dropped_total", Help: "Custom resources the client-side shard filter dropped: not of a bucket this replica holds.",
		}, []string{"crd"}),
		OperationsInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ork_operations_in_flight", Help: "Long-running operations a reconciler answered pending for, held for this replica's custom resources.",
		}, []string{"crd"}),
		OperationDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ork_operation_duration_seconds", Help: "Time from a long-running operation's start to its end, by how it ended (done, timedOut, replaced).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 14),
		}, []string{"crd", "result"}),
		OperationCallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ork_operation_callbacks_total", Help: "Completion callbacks of long-running operations received (POST /operations/{token}), by result: accepted, or why refused.",
		}, []string{"result"}),
		DecisionLogFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ork_decision_log_append_failures_total", Help: "Decision log entries not written: refused alone (over the line bound), or lost after a write error stopped the log.",
		}),
		DecisionLogStopped: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ork_decision_log_stopped", Help: "1 once a write or fsync error stopped the decision log: no entry is written after it until ork restarts.",
		}),
		SkippedUnchanged: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ork_reconcile_skipped_unchanged_total", Help: "Passes whose call reconcile.remote.skipUnchanged skipped: the first pass of a custom resource after a restart, a leadership won or a bucket taken, with its inputs and children as its last decision left them.",
		}, []string{"crd"}),
		Queue:     crdqueue.NewMetrics(),
		Candidate: candidate.NewMetrics(),
	}
	reg.MustRegister(m.ReconcileTotal, m.ReconcileDuration, m.RemoteDuration, m.ApplyTotal, m.TriggersTotal, m.StatusFieldsPruned, m.SuspendedCRs, m.ChildLockWait,
		m.OperationsInFlight, m.OperationDuration, m.OperationCallbacks, m.DecisionLogFailures, m.DecisionLogStopped, m.SkippedUnchanged,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Queue.Register(reg)
	m.Candidate.Register(reg)
	return m
}

// QueueProvider feeds client-go work queue metrics into the registry.
func (m *Metrics) QueueProvider() workqueue.MetricsProvider { return m.Queue.Provider() }
