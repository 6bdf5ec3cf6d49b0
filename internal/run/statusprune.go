package run

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// EventStatusFieldPruned reports status keys the CRD's schema drops.
const EventStatusFieldPruned = "StatusFieldPruned"

// prunedKeys are the top-level status keys a CRD's schema was seen to prune (the apiserver's
// `unknown field "status.<key>"` warning on ork's write). ork leaves them out of later
// writes: written again, they would be dropped again and the write (and its Event) would
// repeat on every pass. Kept for the life of the process: a CRD whose schema learns the key
// is written to again after a restart.
type prunedKeys struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (p *prunedKeys) has(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keys[key]
}

// add records keys and returns those not known before, sorted.
func (p *prunedKeys) add(keys []string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var fresh []string
	for _, k := range keys {
		if !p.keys[k] {
			if p.keys == nil {
				p.keys = map[string]bool{}
			}
			p.keys[k] = true
			fresh = append(fresh, k)
		}
	}
	slices.Sort(fresh)
	return fresh
}

// notePruned records the status keys a write's warnings say the schema pruned, says so once
// per CRD and key (a log line, a metric, a Warning Event on the CR at hand), and corrects
// what the write changed: a Ready condition or an observedGeneration the apiserver dropped
// changed nothing.
func (c *controller) notePruned(in input, res statusResult, keys []string) statusResult {
	if len(keys) == 0 {
		return res
	}
	if slices.Contains(keys, "conditions") {
		res.readyTurnedTrue = false
	}
	if slices.Contains(keys, "observedGeneration") {
		res.newGeneration = false
	}
	fresh := c.pruned.add(keys)
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
