package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/rollout"
	"github.com/orkspace/ork/internal/trace"
)

// candidate is a CRD's reconcile.remote.candidate in the engine: its own HTTP reconciler
// (own timeout, own Retry-After pauses: a throttled candidate must not hold the stable
// endpoint, nor the other way round), the pool its shadow calls run on, and the rollout's
// state. The stable pass never waits for it: a shadow call is handed to the pool and the
// pass goes on; when the pool is full the call is skipped and counted.
type candidate struct {
	crd           string
	r             *remote.Reconciler
	plan          rollout.Plan
	shadowDeletes bool
	// shadowRest shadows the stable slice during a canary (candidate.canary.shadowRest).
	shadowRest bool
	// slots bound the shadow calls in flight (candidate.concurrency).
	slots   chan struct{}
	metrics candidateMetrics
	log     *slog.Logger
	now     func() time.Time
	// trace keeps each shadow comparison for ork trace; nil without --debug-decisions.
	trace *trace.Store

	// ctx ends the shadow calls when the engine stops (close); a pass's own context ends with
	// the pass, long before its shadow call.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup
	state  rollout.State
	// logged are the paths last logged for each diverging CR, so that a CR diverging the same
	// way on every pass is logged once; a CR whose answers agree again is removed. The
	// recent divergences themselves are in state (the last 20, for ork rollout status).
	logged map[string]loggedPaths
	// badPins are the CRs whose pin annotation names no side, warned about once each.
	badPins map[types.UID]bool
	// inFlight are the CRs with a shadow call under way: one at a time per CR, so that
	// answers neither overlap nor land out of order.
	inFlight map[string]bool
	// waiting is the latest request of each CR whose shadow call waits for a slot or for
	// its previous call, order the CRs oldest first; at most backlog of them (0:
	// shadowBacklog).
	waiting map[string]shadowJob
	order   []string
	backlog int
}

// candidateDeps is what a candidate needs of the engine: the Secrets its auth reads, ork's
// namespace, its counters, the decision trace and a logger; never the engine itself.
type candidateDeps struct {
	// secrets reads the candidate's auth.secretRef and tls.caSecretRef.
	secrets remote.SecretSource
	// namespace is ork's, the default of a secretRef without one.
	namespace string
	metrics   candidateMetrics
	// trace keeps each shadow comparison; nil without --debug-decisions.
	trace *trace.Store
	log   *slog.Logger
}

// newCandidate builds the candidate of crd: remote's own settings (payload, TLS, managed
// resources) with the candidate's endpoint, auth and timeout.
func newCandidate(crd *katalog.CRD, deps candidateDeps) (*candidate, error) {
	stable := crd.OperatorBox.Reconcile.Remote
	spec := stable.Candidate
	rem := *stable
	rem.Endpoint, rem.Auth, rem.Candidate = spec.Endpoint, spec.Auth, nil
	if spec.Timeout != "" {
		rem.Timeout = spec.Timeout
	}
	shadowCRD := *crd
	shadowCRD.OperatorBox.Reconcile.Remote = &rem
	r, err := remote.New(&shadowCRD, remote.Options{
		Secrets:          deps.secrets,
		DefaultNamespace: deps.namespace,
		// Its own pauses: the candidate's Retry-After is about the candidate.
		Pauses: remote.NewPauses(),
	})
	if err != nil {
		return nil, fmt.Errorf("candidate: %w", err)
	}
	plan, err := rollout.PlanOf(spec)
	if err != nil {
		return nil, err
	}
	n := katalog.DefaultCandidateConcurrency
	if spec.Concurrency != nil {
		n = *spec.Concurrency
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{
		crd: crd.Name, r: r, plan: plan, shadowDeletes: spec.ShadowDeletes, shadowRest: spec.Canary.ShadowRestOrDefault(),
		slots: make(chan struct{}, n), metrics: deps.metrics, now: time.Now, trace: deps.trace,
		log: deps.log.With("crd", crd.Name, "side", string(rollout.Candidate)),
		ctx: ctx, cancel: cancel,
		logged: map[string]loggedPaths{}, badPins: map[types.UID]bool{}, inFlight: map[string]bool{},
	}
	c.state = plan.Start(nil, c.now())
	return c, nil
}

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

// shadow sends req to the candidate as a dry run, on the pool, and compares its answer with
// stable's (stableRes nil when the stable call failed: nothing to compare, the candidate's
// errors still count). It returns at once: with every slot busy, or the CR's previous call
// still out, the request waits in the backlog, where a newer pass of the same CR replaces
// it (the candidate is asked about the latest state); past the backlog's bound it is
// skipped.
func (c *candidate) shadow(req remote.Request, namespace, name string, stableRes *remote.Result) {
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

func (c *candidate) backlogBound() int {
	if c.backlog > 0 {
		return c.backlog
	}
	return shadowBacklog
}

// start makes job's call on the slot it holds, then, on the same slot, the waiting calls
// that may go, oldest first (c.mu held).
func (c *candidate) start(job shadowJob) {
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
func (c *candidate) nextWaiting() (shadowJob, bool) {
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
func (c *candidate) call(job shadowJob) {
	req, namespace, name := job.req, job.namespace, job.name
	start := c.now()
	res, _, err := c.r.Call(c.ctx, req)
	if errors.Is(err, errNotLeader) {
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

// loggedPaths are the diverging paths last logged for one CR, and its uid (forgetObjects).
type loggedPaths struct {
	uid   types.UID
	paths string
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

// forgetObjects drops the warned pins of the CRs for which gone is true (controller.forgetObjects).
func (c *candidate) forgetObjects(gone func(types.UID) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.DeleteFunc(c.badPins, func(uid types.UID, _ bool) bool { return gone(uid) })
	maps.DeleteFunc(c.logged, func(_ string, l loggedPaths) bool { return l.uid != "" && gone(l.uid) })
	// A waiting shadow call of a CR now another replica's: that replica shadows its passes.
	c.order = slices.DeleteFunc(c.order, func(key string) bool {
		if uid := uidOf(c.waiting[key].req); uid != "" && gone(uid) {
			delete(c.waiting, key)
			return true
		}
		return false
	})
}

// forget drops what the candidate remembers of a deleted custom resource.
func (c *candidate) forget(key string, uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.logged, key)
	delete(c.badPins, uid)
	// Its waiting shadow call too, unless it shadows the delete itself (shadowDeletes).
	if w, ok := c.waiting[key]; ok && uidOf(w.req) == uid && !deletingRequest(w.req) {
		delete(c.waiting, key)
		c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == key })
	}
}

// live reports whether the rollout is under way: shadowing, or a canary that has not rolled
// back. A rolled-back candidate gets no call at all until its spec changes.
func (c *candidate) live() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.Phase != rollout.RolledBack
}

// sideOf is the side cr's pass goes to for real: the candidate for a CR in the canary
// slice or pinned to it while a canary is under way; stable otherwise (shadow mode, a
// rolled-back canary). A pin that names no side is ignored; warn is true the first time
// this CR's is seen.
func (c *candidate) sideOf(cr metav1.Object) (side rollout.Side, warn bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.plan.Mode != rollout.ModeCanary || (c.state.Phase != rollout.Progressing && c.state.Phase != rollout.Complete) {
		return rollout.Stable, false
	}
	side, bad := rollout.SideOf(cr.GetUID(), cr.GetAnnotations(), c.plan.Percent(c.state))
	if bad && !c.badPins[cr.GetUID()] {
		c.badPins[cr.GetUID()] = true
		return side, true
	}
	return side, false
}

// shadows reports whether a stable pass is shadowed: always in shadow mode, and during a
// canary with shadowRest.
func (c *candidate) shadows() bool {
	if c.plan.Mode == rollout.ModeCanary && !c.shadowRest {
		return false
	}
	return c.live()
}

// served counts a pass the candidate reconciled for real, by the reason it ended with
// (nothing to compare it with: stable was not asked).
func (c *candidate) served(reason string) {
	c.metrics.calls.WithLabelValues(c.crd, reason).Inc()
	s := rollout.Sample{Reason: reason, Served: true}
	if s.Reason != remote.ReasonReconcileSucceeded {
		c.metrics.errors.WithLabelValues(c.crd).Inc()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.Window.Add(s)
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
func (c *candidate) judge(key string, uid types.UID, namespace, name string, stableRes, res *remote.Result, err error) (rollout.Sample, []string) {
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

// resume continues from prev, the state a previous run wrote, unless the spec changed.
func (c *candidate) resume(prev rollout.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = c.plan.Start(&prev, c.now())
}

// advance judges the gate and moves the rollout on (rollout.Plan.Advance).
func (c *candidate) advance() (rollout.State, rollout.Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var change rollout.Change
	c.state, change = c.plan.Advance(c.state, c.now())
	s := c.state
	s.Divergences = slices.Clone(s.Divergences)
	return s, change
}

// close stops the shadow calls in flight and waits for them.
func (c *candidate) close() {
	c.mu.Lock()
	c.closed = true
	c.waiting, c.order = nil, nil
	c.mu.Unlock()
	c.cancel()
	c.calls.Wait()
	c.r.Close()
}
