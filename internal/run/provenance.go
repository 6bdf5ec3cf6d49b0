package run

import (
	"crypto/rand"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prov "github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/run/childwrite"
)

// passRecord is the provenance of one pass (docs/provenance.md): its decision id and what the
// reconciler that answered said of itself and read. The id goes on every child the pass
// writes and, with the inputs digest, into status.lastDecision when the pass writes
// something.
type passRecord struct {
	id      string
	at      time.Time
	trigger Trigger
	// called: a reconciler answered (whatever it answered); version and side name it (side
	// only during a rollout), args are its rendered args and related what payload.related
	// read, by the request's names.
	called        bool
	version, side string
	args          any
	related       []prov.Related
}

// newRecord starts the record of a pass of in. A pass without an id (a dry run's, or one
// whose id could not be drawn: the system's random source failing) records nothing:
// provenance is a record of the pass, never a reason to fail it.
func (c *controller) newRecord(in input) passRecord {
	now := time.Now()
	if c.crw != nil && !c.crw.records() {
		return passRecord{at: now, trigger: in.trigger}
	}
	id, err := prov.NewID(now, rand.Reader)
	if err != nil {
		c.cfg.log.Warn("no decision id for this pass", "key", in.key, "err", err)
	}
	return passRecord{id: id, at: now, trigger: in.trigger}
}

// answered is rec with what the reconciler's answer d said of it.
func (rec passRecord) answered(d decision) passRecord {
	rec.called, rec.version, rec.side, rec.args, rec.related = d.rec.called, d.rec.version, d.rec.side, d.rec.args, d.rec.related
	return rec
}

// lastDecision is the record of rec for status.lastDecision; ok is false without an id.
func (rec passRecord) lastDecision(cr *unstructured.Unstructured) (d prov.LastDecision, ok bool) {
	if rec.id == "" {
		return prov.LastDecision{}, false
	}
	return prov.LastDecision{ID: rec.id, Time: rec.at, Trigger: string(rec.trigger), Inputs: rec.inputs(cr),
		Reconciler: prov.Reconciler{Side: rec.side, Version: rec.version}}, true
}

// inputs is the digest of what the answer depended on; "" when it cannot be computed (args
// that do not encode as JSON: the request would not have encoded either).
func (rec passRecord) inputs(cr *unstructured.Unstructured) string {
	d, err := prov.InputsDigest(prov.InputsOf(cr, rec.args, prov.RelatedVersions(rec.related)))
	if err != nil {
		return ""
	}
	return d
}

// relatedOf lists the related objects a request carries (prov.RelatedOf).
func relatedOf(objs map[string][]map[string]any) []prov.Related { return prov.RelatedOf(objs) }

// wroteChildren reports whether a pass's child writes changed the cluster.
func wroteChildren(rep childwrite.Report) bool { return rep.Created+rep.Changed+rep.Pruned > 0 }

// logDecision appends the pass's entry to the decision log, when there is one and a
// reconciler answered. A failed append is logged: the log records passes, it never decides
// one.
func (c *controller) logDecision(in input, d decision, steps passSteps) {
	l := c.e.opts.DecisionLog
	if l == nil || !d.rec.called || d.rec.id == "" {
		return
	}
	e := prov.Entry{
		Decision: d.rec.id, Time: d.rec.at, Trigger: string(d.rec.trigger), Inputs: d.rec.inputs(in.cr),
		Object: prov.Object{Ref: prov.Ref{APIVersion: in.cr.GetAPIVersion(), Kind: in.cr.GetKind(), Namespace: in.cr.GetNamespace(), Name: in.cr.GetName()},
			Generation: in.cr.GetGeneration(), ResourceVersion: in.cr.GetResourceVersion()},
		Related:    d.rec.related,
		Children:   steps.applies.Children,
		Reconciler: prov.Reconciler{Side: d.rec.side, Version: d.rec.version},
	}
	switch {
	case d.quiet:
		// Answered but not applied (the CR was replaced, or suspended, during the call).
		e.Outcome, e.Reason = "skipped", d.reason
	case !d.success:
		e.Outcome, e.Reason = "error", d.reason
	case d.pending:
		e.Outcome = "pending"
	case d.action == actionRequeueAfter:
		e.Outcome = "requeue"
	default:
		e.Outcome = "ok"
	}
	if _, err := l.Append(e); err != nil {
		c.cfg.log.Error("decision log: the pass's entry was not written", "key", in.key, "decision", d.rec.id, "err", err)
	}
}
