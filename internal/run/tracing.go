package run

import (
	"fmt"
	"time"

	"github.com/orkspace/ork/internal/trace"
)

// traceDecision keeps the pass in the decision trace (--debug-decisions). A deleted
// object's decisions stay, its delete last, until the store's bound pushes them out.
func (c *controller) traceDecision(in input, d decision, steps passSteps, start time.Time) {
	if c.e.trace == nil {
		return
	}
	key := trace.Key{CRD: c.cfg.crd.Name, Namespace: in.cr.GetNamespace(), Name: in.cr.GetName()}
	side := ""
	if d.candidate {
		side = sideCandidate
	}
	c.e.trace.Record(key, trace.Decision{Side: side, Target: d.rec.target,
		Time: start, Trigger: string(in.trigger), Attempt: in.attempt, Request: d.request, Result: d.result,
		Success: d.success, Reason: d.reason, Message: d.message, Next: next(d), Related: d.related, Applies: steps.applies.Objects,
		Durations: trace.Durations{Remote: trace.Duration(d.remoteTime), Apply: trace.Duration(steps.apply),
			Status: trace.Duration(steps.status), Total: trace.Duration(time.Since(start))},
	})
}

// sideCandidate is the trace's side of a pass the candidate answered (trace.Decision.Side);
// a shadow comparison's is run/candidate's.
const sideCandidate = "candidate"

// next says what the engine did with the key after the pass.
func next(d decision) string {
	switch d.action {
	case actionRequeueAfter:
		if d.after > 0 {
			return fmt.Sprintf("requeue after %s", max(d.after, minRequeueAfter))
		}
		return "requeue (backoff)"
	case actionRetryAfter:
		return fmt.Sprintf("retry after %s", d.after)
	case actionBackoff:
		return "backoff"
	}
	return "done"
}
