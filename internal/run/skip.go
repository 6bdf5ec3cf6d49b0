package run

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prov "github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/dotpath"
	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/version"
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
func (c *controller) skipUnchanged(in input, args any, related []prov.Related) (decision, bool) {
	if !in.first || in.deleting || in.cr.GetDeletionTimestamp() != nil {
		return decision{}, false
	}
	if why := c.redactHides(in.cr, args); why != "" {
		c.cfg.log.Debug("skipUnchanged: calling", "key", in.key, "why", why)
		return decision{}, false
	}
	if why := c.targets.LeftBehind(in.cr, in.target); why != "" {
		c.cfg.log.Debug("skipUnchanged: calling", "key", in.key, "why", why)
		return decision{}, false
	}
	last, ok, err := prov.FromStatus(in.cr)
	if err != nil || !ok {
		c.cfg.log.Debug("skipUnchanged: calling", "key", in.key, "why", prov.NotRecorded, "err", err)
		return decision{}, false
	}
	// The same digest as the pass's record (newRecord): the --redact paths masked.
	inputs := passRecord{args: args, related: related, redact: c.e.redact}.inputs(in.cr)
	w := c.writerOf(in)
	now := time.Now()
	same, why := last.Unchanged(inputs, func(recorded string) bool {
		states, _ := w.ChildStates(in.cr, nil, c.cfg.childrenPayload)
		return prov.ChildrenMatch(c.childrenConfig(last.RequeueAfter), states, recorded)
	}, now, c.cfg.skipMaxAge)
	if !same {
		c.cfg.log.Debug("skipUnchanged: calling", "key", in.key, "why", why, "decision", last.ID)
		return decision{}, false
	}
	d := decision{success: true, skipped: true, action: actionDone, reason: ReasonSkippedUnchanged,
		message: fmt.Sprintf("inputs and children unchanged since decision %s: call skipped", last.ID)}
	if after, err := time.ParseDuration(last.RequeueAfter); err == nil && after > 0 {
		// Due from the decision, not from this pass: holders that change more often than
		// the requeue's period would otherwise put it off for ever.
		d.action, d.after = actionRequeueAfter, max(last.Time.Add(after).Sub(now), minRequeueAfter)
	}
	return d, true
}

// childrenConfig is what a record's children digest starts with: skipConfig, and whether the answer asked for a periodic requeue, so that a record
// whose requeueAfter a status schema pruned never matches and a skip never drops it. Only
// whether: a reconciler whose delay varies from call to call would otherwise make each
// record stale, and the skip's requeue takes the delay from the record.
func (c *controller) childrenConfig(requeueAfter string) string {
	return fmt.Sprintf("%s\x00requeue=%t", c.cfg.skipConfig, requeueAfter != "")
}

// redactHides names why a --redact path keeps the inputs digest from seeing a change the
// answer may depend on ("" when none does): the digest masks them (status.lastDecision is
// public), which is safe under spec, whose every change moves the generation the digest
// holds, and blind on the labels, annotations and args it also holds. Other paths (status,
// other metadata) are no inputs.
func (c *controller) redactHides(cr *unstructured.Unstructured, args any) string {
	for _, p := range c.e.redact {
		input := len(p) >= 2 && p[0] == "metadata" && (p[1] == "labels" || p[1] == "annotations")
		if masked := exchange.Redact(cr.Object, []dotpath.Path{p}); input && !sameMap(masked, cr.Object) {
			return "--redact " + strings.Join(p, ".") + " masks a label or annotation"
		}
		if m, ok := args.(map[string]any); ok && !sameMap(exchange.Redact(m, []dotpath.Path{p}), m) {
			return "--redact " + strings.Join(p, ".") + " masks an arg"
		}
	}
	return ""
}

// sameMap reports whether a and b are the same map (exchange.Redact returns its argument
// when no path exists in it).
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// skipConfig is the digest of r, the CRD's reconcile.remote, and of ork's version, that a
// record's children digest carries: a Katalog changed since the decision (another endpoint,
// other excludes, args templates or types), or another ork (which may write children
// differently), calls. Without skipUnchanged itself (a new maxAge asks nothing new)
// and the candidate (no skip during a rollout).
func skipConfig(r *katalog.Remote) string {
	cp := *r
	cp.SkipUnchanged, cp.Candidate = nil, nil
	return prov.ConfigDigest(struct {
		Remote katalog.Remote
		Ork    string
	}{cp, version.Get().Version})
}

// writerOf is the writer of in's children: its target's when the pass resolved one
// (passTarget), the hub's otherwise.
func (c *controller) writerOf(in input) childWrites {
	if w := c.targets.Writer(in.key, in.cr.GetUID(), in.target); w != nil {
		return w
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
		if d.action == actionRequeueAfter {
			ld.RequeueAfter = max(d.after, minRequeueAfter).String()
		}
		if states, ok := tp.writes.ChildStates(in.cr, rep, c.cfg.childrenPayload); ok {
			ld.Children = prov.ChildrenDigest(c.childrenConfig(ld.RequeueAfter), states)
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
