package run

import "github.com/orkspace/ork/internal/run/candidate"

// The engine's side of the rollout candidate (run/candidate): what it hands the rollout
// sync, and the passes it counts in the candidate's gate.

// ReasonCandidateRolledBack is the Warning Event on the rollout's ConfigMap when a
// candidate's gate fails.
const ReasonCandidateRolledBack = candidate.ReasonRolledBack

// ReasonInvalidReconcilerPin is the Warning Event, once per CR, on a CR whose pin annotation
// (orkestra.orkspace.io/reconciler) names no side.
const ReasonInvalidReconcilerPin = candidate.ReasonInvalidPin

// rollouts are the controllers' candidates in the rollout sync, each with its CR cache and
// its slow lane. A dry run has none: it writes no rollout state.
func (e *Engine) rollouts(controllers []*controller) *candidate.Rollouts {
	members := map[string]candidate.Member{}
	for _, c := range controllers {
		if c.cand == nil || e.dry != nil {
			continue
		}
		members[c.cfg.crd.Name] = candidate.Member{
			Candidate: c.cand,
			List:      func() []any { return c.informer.GetIndexer().List() },
			Requeue:   func(key string) { c.add(key, addOpts{trigger: TriggerResync}) },
		}
	}
	if len(members) == 0 {
		return candidate.NewRollouts(candidate.RolloutsDeps{}, nil)
	}
	return candidate.NewRollouts(candidate.RolloutsDeps{
		ConfigMaps: e.kube.CoreV1().ConfigMaps(e.opts.Namespace), Namespace: e.opts.Namespace, Name: e.opts.Name,
		MayWriteAny: func() error { return e.fence.mayWriteAny() }, Recorder: e.recorder, FieldManager: FieldManager, Log: e.log,
	}, members)
}

// sampleCandidate counts a pass the candidate reconciled for real in its rollout's gate, by
// the reason the whole pass ended with (its writes included); a pass that attempted nothing
// (the candidate's Retry-After) is no sample, nor is a pass whose work goes on (pending) or
// that only ended an older generation's operation: neither says how the candidate does.
func (c *controller) sampleCandidate(d decision) {
	if c.cand == nil || !d.candidate || d.quiet || d.pending || d.holdGeneration {
		return
	}
	c.cand.Served(d.reason)
}
