package candidate

import (
	"errors"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/rollout"
	"github.com/orkspace/ork/internal/trace"
)

// sideShadow is the trace's side of a shadow comparison (trace.Decision.Side).
const sideShadow = "shadow"

// shadowBacklog bounds the CRs whose shadow call waits for a slot: a burst (start-up, a
// relist, a bucket take) is shadowed whole up to it; past it a pass's shadow call is skipped
// and counted.
const shadowBacklog = 256

// shadowJob is one shadow call to make: the request, and stable's answer to compare with.
type shadowJob struct {
	req             remote.Request
	namespace, name string
	stable          *remote.Result
}

// Shadow sends req to the candidate as a dry run, on the pool, and compares its answer with
// stable's (stableRes nil when the stable call failed: nothing to compare, the candidate's
// errors still count). It returns at once: with every slot busy, or the CR's previous call
// still out, the request waits in the backlog, where a newer pass of the same CR replaces
// it (the candidate is asked about the latest state); past the backlog's bound it is
// skipped.
func (c *Candidate) Shadow(req remote.Request, namespace, name string, stableRes *remote.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	req.DryRun = true
	job := shadowJob{req: req, namespace: namespace, name: name, stable: stableRes}
	if _, ok := c.waiting[req.Key]; ok {
		c.waiting[req.Key] = job
		return
	}
	if !c.inFlight[req.Key] {
		select {
		case c.slots <- struct{}{}:
			c.start(job)
			return
		default:
		}
	}
	if len(c.waiting) >= c.backlogBound() {
		c.metrics.skipped.WithLabelValues(c.crd).Inc()
		return
	}
	if c.waiting == nil {
		c.waiting = map[string]shadowJob{}
	}
	c.waiting[req.Key] = job
	c.order = append(c.order, req.Key)
}

func (c *Candidate) backlogBound() int {
	if c.backlog > 0 {
		return c.backlog
	}
	return shadowBacklog
}

// start makes job's call on the slot it holds, then, on the same slot, the waiting calls
// that may go, oldest first (c.mu held).
func (c *Candidate) start(job shadowJob) {
	c.inFlight[job.req.Key] = true
	c.calls.Add(1)
	go func() {
		defer c.calls.Done()
		for {
			c.call(job)
			c.mu.Lock()
			delete(c.inFlight, job.req.Key)
			next, ok := c.nextWaiting()
			if !ok || c.closed {
				<-c.slots
				c.mu.Unlock()
				return
			}
			c.inFlight[next.req.Key] = true
			c.mu.Unlock()
			job = next
		}
	}()
}

// nextWaiting takes the oldest waiting job whose CR has no call out (c.mu held).
func (c *Candidate) nextWaiting() (shadowJob, bool) {
	for i, key := range c.order {
		if c.inFlight[key] {
			continue
		}
		job := c.waiting[key]
		delete(c.waiting, key)
		c.order = slices.Delete(c.order, i, i+1)
		return job, true
	}
	return shadowJob{}, false
}

// call makes one shadow call and records its comparison.
func (c *Candidate) call(job shadowJob) {
	req, namespace, name := job.req, job.namespace, job.name
	start := c.now()
	res, _, err := c.r.Call(c.ctx, req)
	if errors.Is(err, leadership.ErrNotLeader) {
		return // held at the send: says nothing of the candidate
	}
	s, paths := c.judge(req.Key, uidOf(req), namespace, name, job.stable, res, err)
	if c.trace != nil {
		c.trace.Record(trace.Key{CRD: c.crd, Namespace: namespace, Name: name}, trace.Decision{
			Time: start, Trigger: string(req.Trigger), Attempt: req.Attempt, Side: sideShadow, Result: resultOf(res),
			Success: s.Reason == remote.ReasonReconcileSucceeded, Reason: s.Reason, Divergences: paths,
			Durations: trace.Durations{Remote: trace.Duration(c.now().Sub(start)), Total: trace.Duration(c.now().Sub(start))},
		})
	}
}

// uidOf is the uid of a request's custom resource.
func uidOf(req remote.Request) types.UID {
	md, _ := req.Object["metadata"].(map[string]any)
	uid, _ := md["uid"].(string)
	return types.UID(uid)
}

// deletingRequest says whether req is a deleting pass's.
func deletingRequest(req remote.Request) bool {
	md, _ := req.Object["metadata"].(map[string]any)
	return md["deletionTimestamp"] != nil
}

// resultOf is a decoded answer's result for the trace; "" when none was decoded.
func resultOf(res *remote.Result) string {
	if res == nil {
		return ""
	}
	if res.Result == "" {
		return "ok"
	}
	return res.Result
}

// judge counts one candidate answer against stable's and returns the sample and the
// differing paths.
func (c *Candidate) judge(key string, uid types.UID, namespace, name string, stableRes, res *remote.Result, err error) (rollout.Sample, []string) {
	out := remote.Decide(res, err)
	s := rollout.Sample{Reason: out.Reason}
	var paths []string
	if out.Success && stableRes != nil {
		var failed string
		paths, s.Compared, failed = rollout.Compare(stableRes, res, namespace, name)
		if failed != "" {
			s.Reason = failed
		}
		s.Diverged = len(paths) > 0
	} else if out.Success {
		if _, failed := rollout.AnswerOf(res, namespace, name); failed != "" {
			s.Reason = failed
		}
	}
	c.metrics.calls.WithLabelValues(c.crd, s.Reason).Inc()
	if s.Reason != remote.ReasonReconcileSucceeded {
		c.metrics.errors.WithLabelValues(c.crd).Inc()
	}
	if s.Diverged {
		c.metrics.divergences.WithLabelValues(c.crd).Inc()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.Window.Add(s)
	if !s.Compared {
		return s, nil
	}
	if !s.Diverged {
		delete(c.logged, key)
		return s, nil
	}
	c.state.Record(rollout.Divergence{CR: key, Paths: paths, At: c.now().UTC()})
	// Paths only, never values: a value may be a secret.
	if joined := strings.Join(paths, ","); c.logged[key].paths != joined {
		c.logged[key] = loggedPaths{uid: uid, paths: joined}
		c.log.Info("the candidate's answer differs from the stable one's", "key", key, "paths", paths)
	}
	return s, paths
}
