package run

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// EventStatusFieldPruned reports status keys the CRD's schema drops.
const EventStatusFieldPruned = "StatusFieldPruned"

// notePruned records the status keys a write's warnings say the schema pruned, says so once
// per CRD and key (a log line, a metric, a Warning Event on the CR at hand), and corrects
// what the write changed: a Ready condition or an observedGeneration the apiserver dropped
// changed nothing.
func (c *controller) notePruned(in input, res statusResult, keys []string) statusResult {
	if len(keys) == 0 {
		return res
	}
	if slices.Contains(keys, "conditions") {
		res.ReadyTurnedTrue = false
	}
	if slices.Contains(keys, "observedGeneration") {
		res.NewGeneration = false
	}
	fresh := c.pruned.Add(keys)
	if len(fresh) == 0 {
		return res
	}
	for _, k := range fresh {
		c.cfg.log.Warn("status field pruned by the CRD schema", "crd", c.cfg.gvr.GroupResource().String(), "field", "status."+k, "key", in.key)
		c.e.opts.Metrics.StatusFieldsPruned.WithLabelValues(c.cfg.crd.Name, k).Inc()
	}
	msg := fmt.Sprintf("the status schema of %s drops status.%s: ork no longer writes %s (declare %s in the CRD's status schema, or set x-kubernetes-preserve-unknown-fields: true)",
		c.cfg.gvr.GroupResource(), strings.Join(fresh, ", status."), plural(len(fresh), "it", "them"), plural(len(fresh), "it", "them"))
	if slices.Contains(fresh, "conditions") {
		msg += "; without conditions there is no Ready condition"
	}
	c.event(in.cr, corev1.EventTypeWarning, EventStatusFieldPruned, msg)
	return res
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
