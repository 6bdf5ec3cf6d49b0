package run

import (
	"cmp"
	"crypto/rand"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prov "github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/decisionlog"
	"github.com/orkspace/ork/internal/dotpath"
	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/target"
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
	// crVersion is the CR's resourceVersion after the pass's own writes to it (its
	// finalizer, the operation annotation, its status: crVersionAfter); "" when it wrote
	// none.
	crVersion string
	// redact are ork run's --redact paths, masked in the inputs digest as in a recording:
	// status.lastDecision is public, and a short secret under a digest could be found by
	// hashing guesses.
	redact []dotpath.Path
	// target names the cluster of the pass's children (targetName); "" for the local one.
	target string
}

// newRecord starts the record of a pass of in. A pass without an id (a dry run's, or one
// whose id could not be drawn: the system's random source failing) records nothing:
// provenance is a record of the pass, never a reason to fail it.
func (c *controller) newRecord(in input) passRecord {
	now := time.Now()
	if c.crw != nil && !c.crw.records() {
		return passRecord{at: now, trigger: in.trigger, redact: c.e.redact, target: targetName(in.target)}
	}
	id, err := prov.NewID(now, rand.Reader)
	if err != nil {
		c.cfg.log.Warn("no decision id for this pass", "key", in.key, "err", err)
	}
	return passRecord{id: id, at: now, trigger: in.trigger, redact: c.e.redact, target: targetName(in.target)}
}

// targetName is how the decision record and the trace name ref: as conditions and logs do
// (namespace/name[key] of its kubeconfig Secret), and "" for the local cluster, which a
// record leaves out.
func targetName(ref target.Ref) string {
	if ref.Local() {
		return ""
	}
	return ref.String()
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
		Reconciler: prov.Reconciler{Side: rec.side, Version: rec.version}, Target: rec.target}, true
}

// inputs is the digest of what the answer depended on, the redact paths masked in the CR and
// in args (as a recording masks them); "" when it cannot be computed (args that do not
// encode as JSON: the request would not have encoded either).
func (rec passRecord) inputs(cr *unstructured.Unstructured) string {
	args := rec.args
	if m, ok := args.(map[string]any); ok {
		args = exchange.Redact(m, rec.redact)
	}
	masked := &unstructured.Unstructured{Object: exchange.Redact(cr.Object, rec.redact)}
	d, err := prov.InputsDigest(prov.InputsOf(masked, args, prov.RelatedVersions(rec.related)))
	if err != nil {
		return ""
	}
	return d
}

// crVersionAfter is the resourceVersion of in's CR after the pass's own writes to it, "" when
// it wrote none: that of its status or operation annotation, the last (the ledger's record
// of ork's last write to the CR, when the pass changed it from ownBefore), else that of its
// finalizer (in.cr is then the write's answer). The log names it rather than the version
// read: the call saw the finalizer's, and a later read of a CR nobody else changed shows
// the status's.
func (c *controller) crVersionAfter(in input, ownBefore string) string {
	if uid, rv := c.ledger.StatusWrite(in.key); rv != "" && rv != ownBefore && uid == in.cr.GetUID() {
		return rv
	}
	if in.written {
		return in.cr.GetResourceVersion()
	}
	return ""
}

// relatedOf lists the related objects a request carries (prov.RelatedOf).
func relatedOf(objs map[string][]map[string]any) []prov.Related { return prov.RelatedOf(objs) }

// wroteChildren reports whether a pass's child writes changed the cluster.
func wroteChildren(rep childwrite.Report) bool { return rep.Created+rep.Changed+rep.Pruned > 0 }

// logDecision appends the pass's entry to the decision log, when there is one and a
// reconciler answered. A failed append is counted and logged (decisionLogFailed): the log
// records passes, it never decides one.
func (c *controller) logDecision(in input, d decision, steps passSteps) {
	l := c.e.opts.DecisionLog
	if l == nil || !d.rec.called || d.rec.id == "" {
		return
	}
	e := prov.Entry{
		Decision: d.rec.id, Time: d.rec.at, Trigger: string(d.rec.trigger), Inputs: d.rec.inputs(in.cr),
		Object: prov.Object{Ref: prov.Ref{APIVersion: in.cr.GetAPIVersion(), Kind: in.cr.GetKind(), Namespace: in.cr.GetNamespace(), Name: in.cr.GetName()},
			Generation: in.cr.GetGeneration(), ResourceVersion: cmp.Or(d.rec.crVersion, in.cr.GetResourceVersion())},
		Target:     d.rec.target,
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
		c.decisionLogFailed(in.key, d.rec.id, err)
	}
}

// decisionLogFailed counts an entry the decision log did not write and logs why: each entry
// refused alone, and once the write error that stopped the log (decisionlog.ErrStopped),
// after which every entry is refused: one error line a pass would bury it.
func (c *controller) decisionLogFailed(key, id string, err error) {
	m := c.e.opts.Metrics
	m.DecisionLogFailures.Inc()
	if !errors.Is(err, decisionlog.ErrStopped) {
		c.cfg.log.Error("decision log: the pass's entry was not written", "key", key, "decision", id, "err", err)
		return
	}
	if c.e.logStopped.CompareAndSwap(false, true) {
		m.DecisionLogStopped.Set(1)
		c.cfg.log.Error("decision log: a write failed; no entry is written until ork restarts (ork_decision_log_append_failures_total counts those lost)",
			"key", key, "decision", id, "err", err)
	}
}
