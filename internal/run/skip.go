package run

import (
	"fmt"
	"time"

	prov "github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/run/childwrite"
)

// ReasonSkippedUnchanged is the decision trace's reason for a pass whose call
// reconcile.remote.skipUnchanged skipped.
const ReasonSkippedUnchanged = "SkippedUnchanged"

// skipUnchanged decides whether the pass of in, whose inputs digest is inputs, skips its call
// (reconcile.remote.skipUnchanged, docs/remote-reconciler.md#failover-without-re-asking).
// Only the first pass of a CR in this holder's life may (in.first, whatever became of it): a
// restart, a leadership won or a bucket taken passes every CR once although nearly every
// answer would be the one already applied; any later pass comes from a change seen while
// running, a resync or a retry, and calls. It skips when the CR's status.lastDecision was
// recorded with its children, holds these inputs, is younger than maxAge, and every child
// is as that pass left it (none drifted, missing or extra). The remote reconciler asks only
// for a CR not being deleted, with no operation held and no rollout in progress. A skipped
// pass writes nothing; one whose last answer asked for a periodic requeue is queued again
// after that delay, as the answer was.
func (c *controller) skipUnchanged(in input, inputs string) (decision, bool) {
	if !in.first || in.deleting || in.cr.GetDeletionTimestamp() != nil {
		return decision{}, false
	}
	last, ok, err := prov.FromStatus(in.cr)
	if err != nil || !ok {
		c.cfg.log.Debug("skipUnchanged: calling", "key", in.key, "why", prov.NotRecorded, "err", err)
		return decision{}, false
	}
	w := c.writerOf(in)
	same, why := last.Unchanged(inputs, func() string {
		states, _ := w.ChildStates(in.cr, nil, c.cfg.childrenPayload)
		return prov.ChildrenDigest(c.cfg.skipConfig, states)
	}, time.Now(), c.cfg.skipMaxAge)
	if !same {
		c.cfg.log.Debug("skipUnchanged: calling", "key", in.key, "why", why, "decision", last.ID)
		return decision{}, false
	}
	d := decision{success: true, skipped: true, action: actionDone, reason: ReasonSkippedUnchanged,
		message: fmt.Sprintf("inputs and children unchanged since decision %s: call skipped", last.ID)}
	if after, err := time.ParseDuration(last.RequeueAfter); err == nil && after > 0 {
		d.action, d.after = actionRequeueAfter, after
	}
	return d, true
}

// skipConfig is the digest of r, the CRD's reconcile.remote, that a record's children digest
// carries: a Katalog changed since the decision (another endpoint, other excludes, args
// templates or types) calls. Without skipUnchanged itself (a new maxAge asks nothing new)
// and the candidate (no skip during a rollout).
func skipConfig(r *katalog.Remote) string {
	cp := *r
	cp.SkipUnchanged, cp.Candidate = nil, nil
	return prov.ConfigDigest(cp)
}

// writerOf is the writer of in's children: its target's when the pass resolved one
// (passTarget), the hub's otherwise.
func (c *controller) writerOf(in input) childWrites {
	if !in.target.Local() && c.spokes != nil {
		if sp, ok := c.spokes.Current(in.key, in.cr.GetUID()); ok && sp.Writer != nil {
			return sp.Writer
		}
	}
	return c.writes
}

// recordOf is the pass's status.lastDecision (nil without a decision id) and whether it must
// be written although the pass writes nothing else. With skipUnchanged, a pass whose answer
// was applied whole records its children as it left them (rep) and the requeue the answer
// asked for; any other pass records none, and no skip trusts it. The record is written
// whenever the one on the CR must give way (prov.LastDecision.Stale): a converged CR whose
// labels changed, whose children changed under an answer that wrote nothing, whose record
// predates the feature or is half maxAge old, or one whose answer is no longer applied
// whole. The CR's record is read from the pass's object, which may lag ork's own last status
// write: then at worst one write too many. Without skipUnchanged the record is written only
// with another write, as before.
func (c *controller) recordOf(in input, d decision, rec passRecord, tp targetPass, rep *childwrite.Report) (map[string]any, bool) {
	ld, ok := rec.lastDecision(in.cr)
	if !ok {
		return nil, false
	}
	if c.cfg.skipMaxAge <= 0 || !rec.called {
		return ld.Status(), false
	}
	if appliedWhole(in, d) {
		if states, ok := tp.writes.ChildStates(in.cr, rep, c.cfg.childrenPayload); ok {
			ld.Children = prov.ChildrenDigest(c.cfg.skipConfig, states)
		}
		if d.action == actionRequeueAfter {
			ld.RequeueAfter = max(d.after, minRequeueAfter).String()
		}
	}
	last, had, err := prov.FromStatus(in.cr)
	if err != nil || !had {
		return ld.Status(), ld.Children != ""
	}
	return ld.Status(), last.Stale(ld, rec.at, c.cfg.skipMaxAge)
}

// appliedWhole reports whether d, a pass's final decision, is an answer applied whole with
// nothing left pending: done, or a requeue after a delay; no operation held, no failure.
func appliedWhole(in input, d decision) bool {
	return d.success && !in.deleting && !d.pending && !d.holdGeneration && (d.op == nil || d.op.next == nil) &&
		(d.action == actionDone || d.action == actionRequeueAfter && d.after > 0)
}
