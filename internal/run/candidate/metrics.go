package candidate

import "github.com/prometheus/client_golang/prometheus"

// Metrics count a candidate reconciler's answers (reconcile.remote.candidate),
// apart from the stable reconciler's: the stable metrics stay what they were before the
// rollout began.
type Metrics struct {
	// calls counts the candidate's answers by the reason its pass ends with.
	calls *prometheus.CounterVec
	// errors counts the answers whose reason is not success (the gate's errors, with the
	// throttled and canceled ones it leaves out).
	errors *prometheus.CounterVec
	// divergences counts the compared answers that differ from the stable one's.
	divergences *prometheus.CounterVec
	// skipped counts the shadow calls not sent because the backlog was full (shadowBacklog).
	skipped *prometheus.CounterVec
	// rollbacks counts the gate's failures.
	rollbacks *prometheus.CounterVec
}

// NewMetrics builds the counters, unregistered.
func NewMetrics() Metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append([]string{"crd"}, labels...))
	}
	return Metrics{
		calls:       counter("ork_candidate_calls_total", "Candidate reconciler answers by the reason its pass ends with.", "reason"),
		errors:      counter("ork_candidate_errors_total", "Candidate reconciler answers whose reason is not ReconcileSucceeded."),
		divergences: counter("ork_candidate_divergence_total", "Candidate answers that differ from the stable reconciler's after normalising."),
		skipped:     counter("ork_candidate_skipped_total", "Shadow calls not sent because candidate.concurrency calls were in flight and the backlog of waiting custom resources was full."),
		rollbacks:   counter("ork_candidate_rollbacks_total", "Rollouts rolled back by a failed gate."),
	}
}

// Register registers the counters with reg.
func (m Metrics) Register(reg *prometheus.Registry) {
	reg.MustRegister(m.calls, m.errors, m.divergences, m.skipped, m.rollbacks)
}
