package run

// The engine's side of the rollout candidate (candidate.go): what it hands the rollout sync,
// and the passes it counts in the candidate's gate.

// rollouts are the controllers' candidates in the rollout sync (rolloutsync.go), each with
// its CR cache and its slow lane. A dry run has none: it writes no rollout state.
func (e *Engine) rollouts(controllers []*controller) *rollouts {
	members := map[string]rolloutMember{}
	for _, c := range controllers {
		if c.cand == nil || e.dry != nil {
			continue
		}
		members[c.cfg.crd.Name] = rolloutMember{
			cand:    c.cand,
			list:    func() []any { return c.informer.GetIndexer().List() },
			requeue: func(key string) { c.add(key, addOpts{trigger: TriggerResync}) },
		}
	}
	if len(members) == 0 {
		return newRollouts(rolloutsDeps{}, nil)
	}
	return newRollouts(rolloutsDeps{
		configMaps: e.kube.CoreV1().ConfigMaps(e.opts.Namespace), namespace: e.opts.Namespace, name: e.opts.Name,
		mayWriteAny: func() error { return e.fence.mayWriteAny() }, recorder: e.recorder, fieldManager: FieldManager, log: e.log,
	}, members)
}

// sampleCandidate counts a pass the candidate reconciled for real in its rollout's gate, by
// the reason the whole pass ended with (its writes included); a pass that attempted nothing
// (the candidate's Retry-After) is no sample.
func (c *controller) sampleCandidate(d decision) {
	if c.cand == nil || !d.candidate || d.quiet {
		return
	}
	c.cand.served(d.reason)
}
