package run

import (
	"github.com/orkspace/ork/internal/run/relatedwatch"
)

// Reasons of the passes payload.related holds back, and of what it reports
// (internal/run/relatedwatch).
const (
	// ReasonRelatedObjectMissing: a required related object is not there; no call was made.
	ReasonRelatedObjectMissing = relatedwatch.ReasonObjectMissing
	// EventTooManyRelated is the Warning Event of a selector that matched more than
	// related.MaxSelected objects; also the reason of ConditionRelatedTruncated.
	EventTooManyRelated = relatedwatch.EventTooManyObjects
	// ConditionRelatedTruncated is True while a selector entry matches more objects than
	// are sent, and absent otherwise.
	ConditionRelatedTruncated = relatedwatch.ConditionTruncated
)

// newRelatedWatch is c's related watch; nil when the CRD declares no related objects.
func newRelatedWatch(c *controller) (*relatedwatch.Watch, error) {
	rem := c.cfg.crd.OperatorBox.Reconcile.Remote
	if rem == nil {
		return nil, nil
	}
	return relatedwatch.New(rem.Payload.Related, c.relatedDeps(), c.e.api.RelatedGVR, c.e.api.Namespaced)
}

// relatedDeps are c's dependencies for its related watch.
func (c *controller) relatedDeps() relatedwatch.Deps {
	return relatedwatch.Deps{Dyn: c.e.dyn, Meta: c.e.meta, WatchNamespaces: c.e.opts.WatchNamespaces,
		Changed: c.relatedChanged, Event: c.event, Owns: c.e.gate.owns}
}

// heldByRelated is the decision of a pass payload.related holds back.
func heldByRelated(h *relatedwatch.Hold) decision {
	if h.Backoff {
		return failure(h.Reason, "%s", h.Message)
	}
	return decision{action: actionDone, reason: h.Reason, message: h.Message}
}

// relatedChanged queues key for a related object's change, like childChanged: no sooner
// than ChildMinInterval after its last pass, in the fast lane when fast.
func (c *controller) relatedChanged(key string, fast bool) {
	c.countTrigger(TriggerRelated)
	o := addOpts{trigger: TriggerRelated, minInterval: c.e.opts.ChildMinInterval}
	if fast {
		o.lane = laneFast
	}
	c.add(key, o)
}
