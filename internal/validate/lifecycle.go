package validate

import "github.com/orkspace/ork/internal/katalog"

// skipUnchanged checks reconcile.remote.skipUnchanged: its maxAge is required and a positive
// duration (docs/katalog.md#operatorboxreconcileremote).
func (k *checker) skipUnchanged(s *katalog.SkipUnchanged) {
	if s == nil {
		return
	}
	const at = remotePath + ".skipUnchanged.maxAge"
	if s.MaxAge == "" {
		k.errorAt(katalog.RuleDuration, at, "skipUnchanged.maxAge is required",
			"set maxAge to how old a decision may be and still be trusted without a call, such as 24h")
		return
	}
	if msg := checkDuration("skipUnchanged.maxAge", s.MaxAge); msg != "" {
		k.errorAt(katalog.RuleDuration, at, msg, "use a positive Go duration such as 24h")
	}
}

// lifecycle checks prune and finalize: a reconciler that prunes without seeing its children
// decides blind, and finalizeTimeout means nothing without finalize.
func (k *checker) lifecycle(r *katalog.Remote) {
	if r.FinalizeTimeout != "" {
		if msg := checkDuration("finalizeTimeout", r.FinalizeTimeout); msg != "" {
			k.errorAt(katalog.RuleDuration, remotePath+".finalizeTimeout", msg, "use a positive Go duration such as 10m (the default)")
		} else if !r.Finalize {
			k.warnAt(katalog.RuleFinalizeTimeoutUnused, remotePath+".finalizeTimeout",
				"finalizeTimeout has no effect while finalize is false",
				"set finalize: true to hold each custom resource until the reconciler has answered its delete, or remove finalizeTimeout")
		}
	}
	if r.Prune && !r.Payload.Children.Enabled {
		k.warnAt(katalog.RulePruneWithoutChildren, remotePath+".prune",
			"prune is on but payload.children.enabled is false: the reconciler cannot see which children exist, and every child it leaves out of a successful answer is deleted",
			"set payload.children.enabled: true so that the reconciler answers with what it owns, or turn prune off")
	}
}
