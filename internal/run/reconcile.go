package run

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/crstatus"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/target"
)

// reconciler decides what one custom resource should look like: the remote or the
// declarative reconciler.
type reconciler interface {
	reconcile(ctx context.Context, env passEnv, in input) decision
	// close releases what the reconciler holds (connections) when the engine stops.
	close()
}

// input is one reconcile's view of the custom resource.
type input struct {
	key      string
	cr       *unstructured.Unstructured // the cached object: never mutated
	trigger  Trigger
	attempt  int
	deleting bool
	// gone is true when cr is the last state of a deleted object (its tombstone): nothing
	// to write status to.
	gone bool
	// written is true when cr is the answer of this pass's own write (its finalizer), newer
	// than the cache.
	written bool
	// target is the cluster its children are in (its name is prepared.target); the zero
	// Ref is ork's own.
	target target.Ref
	// first: the first pass of this object in this holder's life, with
	// reconcile.remote.skipUnchanged on (skip.go).
	first bool
}

// action is what the queue does with a key after a reconcile.
type action int

const (
	actionDone action = iota
	actionRequeueAfter
	actionBackoff
	actionRetryAfter
)

// minRequeueAfter is the floor of a requeueAfter: a reconciler asking for 1ms would run hot.
const minRequeueAfter = 100 * time.Millisecond

// decision is a reconciler's answer; the engine applies it.
type decision struct {
	success bool
	// status is merged into the CR's status on success.
	status map[string]any
	// apply are applied every pass; createIfMissing only when the child does not exist.
	apply, createIfMissing []resources.Object
	// remove are deleted (declarative onDelete while the CR is being deleted).
	remove []resources.Object
	// prune deletes the CR's children that apply does not list (reconcile.remote.prune, a
	// successful result whose resources are present).
	prune bool
	// entries name the resources of a successful answer, in its order, for the next
	// request's prepared.lastApply (payload.lastApply); nil when off or nothing was to be
	// applied.
	entries []remote.AppliedResource
	action  action
	after   time.Duration
	reason  string
	message string
	// quiet: nothing was attempted (the endpoint's pause): no status, no Event, no failure
	// count; only come back after.
	quiet bool
	// notLeader: the call was held at the send by the leadership guard; the pass stops as
	// when the guard refuses before the call.
	notLeader bool
	// result, request and remoteTime are for the decision trace: the reconciler's answer, the
	// digest of the request sent, and how long the call took.
	result, request string
	remoteTime      time.Duration
	// related names the objects payload.related read, for the trace.
	related []string
	// relatedRead: every related entry was read, and relatedCut names those cut at
	// related.MaxSelected (ConditionRelatedTruncated).
	relatedRead bool
	relatedCut  []string
	// candidate: the candidate reconciler answered this pass for real (a canary); its final
	// reason, apply and status write included, is a sample of the rollout's gate.
	candidate bool
	// pending: a success whose work goes on (the reconciler holds an operation): applied
	// as one, but Ready stays False and observedGeneration where it is. holdGeneration
	// keeps observedGeneration on a success for an older generation's work.
	pending, holdGeneration bool
	// op is what the pass does to the held operation (operations.go), and progress the
	// Progressing condition it sets; nil for none.
	op       *opStep
	progress *crstatus.Progress
	// rec is the pass's provenance (provenance.go): a reconciler fills in what it said of
	// itself and read, the pass the rest. lastDecision is its status.lastDecision and wrote
	// says the pass wrote a child: only then, or with another status change, is it written.
	rec          passRecord
	lastDecision map[string]any
	wrote        bool
	// refresh: skipUnchanged's record on the CR is stale, so lastDecision is written even
	// alone (skip.go); skipped: the pass's call was skipped, nothing is written.
	refresh, skipped bool
}

func failure(reason, format string, a ...any) decision {
	return decision{action: actionBackoff, reason: reason, message: fmt.Sprintf(format, a...)}
}

// failureFrom turns a pass error into a failed decision: a failed child write keeps the
// reason childwrite gave it.
func failureFrom(err error) decision {
	var pe *passError
	if errors.As(err, &pe) {
		return failure(pe.reason, "%s", pe.msg)
	}
	if we, ok := errors.AsType[*childwrite.Error](err); ok {
		return failure(we.Reason, "%s", we.Error())
	}
	return failure(reasonApplyFailed, "%v", err)
}

// passError is a failed pass with the reason its condition and Event carry.
type passError struct {
	reason, msg string
}

func (e *passError) Error() string { return e.msg }

func failed(reason, format string, a ...any) *passError {
	return &passError{reason: reason, msg: fmt.Sprintf(format, a...)}
}

// retryLater gives back a key whose pass its bucket's late renewal held: its trigger is
// owed again, after the rate limiter's delay, in the lane it came from.
func (c *controller) retryLater(key string, t Trigger) {
	c.endPass(key, false)
	c.add(key, addOpts{trigger: t, lane: laneKeep, rateLimited: true})
}

// processNext handles one key; false means the queue is shutting down.
func (c *controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if c.queue.ShuttingDown() {
		// Stopping: what is still queued is the next run's (or the next holder's) to pass.
		return false
	}
	c.handle(ctx, key)
	c.e.dry.Passed(c.cfg.crd.Name, key)
	return true
}

func (c *controller) handle(ctx context.Context, key string) {
	start := time.Now()
	if wait := c.ledger.TooSoon(key, start, c.e.opts.ChildMinInterval); wait > 0 {
		c.add(key, addOpts{lane: laneKeep, after: wait})
		return
	}
	trigger, tomb, ok := c.ledger.Begin(key, start)
	if !ok {
		// A delayed add a later pass already covered. The queue keeps only the earliest of
		// two delayed adds of one key, so a resync a later pass moved on is queued again here.
		if at := c.ledger.ResyncDue(key); !at.IsZero() {
			c.add(key, addOpts{after: time.Until(at)})
		}
		return
	}
	in, found := c.lookup(key, trigger, tomb)
	if !found {
		// Gone, its delete done or never seen: a pass that raced its delete may have
		// recorded its references after onDelete forgot them.
		c.related.Forget(key)
		c.queue.Forget(key)
		c.endPass(key, true)
		return
	}
	if in.gone && c.e.gate.partial() {
		exists, err := c.stillExists(ctx, in.cr)
		if err != nil {
			c.cfg.log.Warn("could not confirm the delete of a sharded custom resource; retrying", "key", key, "err", err)
			c.retryLater(key, trigger)
			return
		}
		if exists {
			// Not deleted: a relist whose holding left its bucket out dropped it from the
			// cache while the bucket was taken back. Its take pass comes with the next list.
			more := c.ledger.DropTombstone(key, tomb)
			c.endPass(key, false)
			if more {
				c.add(key, addOpts{})
			}
			return
		}
	}
	passCtx, endPassCtx, st := c.e.gate.begin(ctx, in.cr.GetUID())
	if st == bucketNotReady {
		// Taken here, its children not in the child caches yet: a pass now would send
		// none. The key waits, its trigger kept, and is queued when the bucket is ready.
		c.endPass(key, false)
		c.ledger.Note(key, trigger)
		c.queue.lanes.KeepLane(key)
		if !c.e.gate.waitReady(in.cr.GetUID(), c, key) {
			c.add(key, addOpts{}) // ready meanwhile, or gone: begin decides again
		}
		return
	}
	if st != bucketReady {
		if c.e.gate.owns(in.cr.GetUID()) {
			// Still this replica's bucket, its renewal late: the key waits for it.
			c.retryLater(key, trigger)
			return
		}
		// Another replica's bucket, or one being handed back: its holder passes it.
		c.queue.Forget(key)
		c.endPass(key, false)
		return
	}
	defer endPassCtx()
	// A deadline of its own, below /healthz's bound for a stuck pass: the apiserver requests
	// of a pass have none otherwise (only the call has), and an apiserver that hangs rather
	// than refuses would hold the worker until the probe restarts ork.
	if c.cfg.passTimeout > 0 {
		var cancel context.CancelFunc
		passCtx, cancel = context.WithTimeout(passCtx, c.cfg.passTimeout)
		defer cancel()
	}
	d, steps, done := c.pass(passCtx, in)
	if !done {
		if c.e.gate.partial() && c.e.gate.owns(in.cr.GetUID()) && ctx.Err() == nil {
			// A sharded replica's guard refused while the bucket is still its own (a late
			// renewal): the pass is owed, not dropped.
			c.retryLater(key, trigger)
			return
		}
		// Leadership is lost: nothing more is written, the engine is stopping.
		c.endPass(key, false)
		return
	}
	// A delete is done when its call succeeded and asked for nothing more; only then does
	// its tombstone go, and only that one (a newer delete keeps its own).
	deleteDone := in.gone && d.success && d.action == actionDone
	moreDeletes := deleteDone && c.ledger.DropTombstone(key, tomb)
	c.observe(in, d, start)
	c.sampleCandidate(d)
	c.emitPlan(in, d)
	c.traceDecision(in, d, steps, start)
	c.logDecision(in, d, steps)
	if c.e.dry.OneShot() {
		c.queue.Forget(key) // one pass each, whatever its outcome
	} else {
		c.schedule(key, in.trigger, d)
		c.armFinalizeDeadline(in, d)
		if d.action == actionDone && !in.gone {
			c.scheduleResync(key)
		}
	}
	switch {
	case moreDeletes:
		// Another incarnation of the name was deleted too: its delete next (then, if the
		// name is taken again, the new object).
		// Both are real changes (a delete, a create): the fast lane.
		c.add(key, addOpts{trigger: TriggerDelete, lane: laneFast})
	case deleteDone && c.cached(key) != nil:
		// The name was taken again while the old object's delete ran: now the new one.
		c.add(key, addOpts{trigger: TriggerCreate, lane: laneFast})
	}
	if deleteDone && !moreDeletes && c.cached(key) == nil {
		c.related.Forget(key) // the last delete of the name, which may have read nothing
	}
	c.endPass(key, deleteDone && !moreDeletes)
}

// passSteps is what a pass did beside the call, for the decision trace.
type passSteps struct {
	applies       childwrite.Report
	apply, status time.Duration
}

// pass reconciles one input and writes the outcome. done is false when a write was refused
// because this replica may no longer be the leader.
func (c *controller) pass(ctx context.Context, in input) (d decision, steps passSteps, done bool) {
	// The failures below replace the decision; which reconciler answered stays.
	var candidate bool
	defer func() { d.candidate = d.candidate || candidate }()
	in.first = c.cfg.skipMaxAge > 0 && !in.gone && c.ledger.FirstPass(in.key, in.cr.GetUID())
	if d, held, ok := c.suspension(ctx, &in); held || !ok {
		return d, steps, ok // suspended: nothing but its condition is written
	}
	if d, skip := c.skipDelete(in); skip {
		return d, steps, true
	}
	// Where the children go is settled before anything is called or written: a target that
	// does not answer frees the worker at once.
	tp, tskip, terr := c.passTarget(ctx, &in)
	if errors.Is(terr, errNotLeader) {
		return d, steps, false
	}
	rec := c.newRecord(in)
	_, ownBefore := c.ledger.StatusWrite(in.key)
	defer func() {
		rec.crVersion = c.crVersionAfter(in, ownBefore) // in as the pass's writes left it
		d.rec = rec
	}()
	skip, ferr := c.finalizeBefore(ctx, &in)
	switch {
	case errors.Is(ferr, errNotLeader):
		return d, steps, false
	case terr != nil:
		d = failureFrom(terr)
	case tskip != nil:
		d = *tskip
	case ferr != nil:
		d = failureFrom(ferr)
	case skip != nil:
		d = *skip
	default:
		// The call's side effects are the new leader's to cause, not a replica's whose
		// Lease may have passed.
		if err := c.e.fence.mayWrite(in.key, in.cr.GetUID()); err != nil {
			return d, steps, false
		}
		if d = c.safeReconcile(ctx, in); d.notLeader {
			return d, steps, false
		}
		candidate = d.candidate
		rec = rec.answered(d)
	}
	if d.quiet || d.skipped {
		return d, steps, true // nothing was attempted: nothing to write or report
	}
	if d.success && !in.deleting && c.replaced(in) {
		// Its answer is for an object that is no more: applied, its children would name a
		// dead uid as their controller. The delete, or the new object's create, is queued.
		c.cfg.log.Debug("custom resource replaced or deleted during the call: its answer is not applied", "key", in.key, "uid", in.cr.GetUID())
		return decision{success: true, action: actionDone, reason: ReasonSucceeded, message: "replaced or deleted during the call: nothing applied"}, steps, true
	}
	if d.success && !in.deleting && c.suspendedNow(in.key) {
		// Suspended while its call ran (an incident: someone wants it left alone now): its
		// answer is not applied. The annotation's own update passes it next, which writes
		// the Suspended condition.
		c.cfg.log.Debug("custom resource suspended during the call: its answer is not applied", "key", in.key)
		return decision{quiet: true, action: actionDone, reason: ReasonSuspended, message: "suspended during the call: nothing applied"}, steps, true
	}
	var err error
	t := time.Now()
	switch {
	case !d.success:
	case in.deleting && len(d.remove) > 0:
		err = tp.writes.RemoveAll(ctx, in.cr, d.remove)
	case !in.deleting:
		steps.applies, err = tp.writes.ApplyAll(ctx, in.cr, d.apply, d.createIfMissing, rec.id)
		if err == nil && d.prune {
			err = tp.writes.Prune(ctx, in.cr, &steps.applies)
		}
	}
	if d.entries != nil && !errors.Is(err, errNotLeader) {
		failure := d.message
		if err != nil {
			failure = err.Error()
		}
		c.crw.applied(in.key, in.cr.GetUID(), childwrite.LastApplyOf(d.entries, steps.applies, failure, in.cr.GetNamespace()))
	}
	// The operation is the reconciler's, started whatever became of the applies: it is
	// persisted even when they failed.
	opErr := c.persistOperation(ctx, in, d.op)
	if err == nil {
		err = opErr
	}
	if err == nil {
		err = c.finalizeAfter(ctx, &in, d)
	}
	if err == nil && appliedWhole(in, d) && terr == nil && tskip == nil {
		// Its children are on its target now, its answer applied whole (none pending, no
		// operation going on): none may stay on a cluster it left (docs/multicluster.md).
		var after time.Duration
		if after, err = c.targets.Leave(ctx, &targetCR{c: c, in: &in}, tp.Pass); err == nil && after > 0 && d.action == actionDone {
			d.action, d.after = actionRequeueAfter, after
		}
	}
	if err == nil && in.deleting && !in.gone && terr == nil && tskip == nil && (d.success || !c.cfg.finalize) {
		// The children on a target go before the CR does: no garbage collector there.
		var cd *decision
		if cd, err = c.cleanupTarget(ctx, &in, tp); cd != nil {
			d = *cd
		}
	}
	steps.apply = time.Since(t)
	if errors.Is(err, errNotLeader) {
		return d, steps, false
	}
	if err != nil {
		f := failureFrom(err)
		f.related, f.relatedRead, f.relatedCut = d.related, d.relatedRead, d.relatedCut // what was read stays true
		f.op, f.progress = d.op, d.progress                                             // and the operation held
		d = f
	}
	if d.success || err != nil {
		a := steps.applies
		c.targetWritten(tp, err, &d, a.Created+a.Changed+a.Pruned > 0)
	}
	// A CR being deleted but still there (another controller's finalizer holds it) gets its
	// failures reported like any other: it is where users look.
	if !in.gone && (!in.deleting || !d.success) {
		d.lastDecision, d.refresh = c.recordOf(in, d, rec, tp, &steps.applies)
		d.wrote = wroteChildren(steps.applies)
		t = time.Now()
		d, err = c.report(ctx, in, d, steps.applies)
		steps.status = time.Since(t)
		if errors.Is(err, errNotLeader) {
			return d, steps, false
		}
	}
	if opErr == nil && c.e.gate.owns(in.cr.GetUID()) {
		// Counted only once persisted, and only while its bucket is still this replica's
		// (a release's forget must not be undone by a pass that ends after it).
		c.ops.Note(in.key, in.cr.GetUID(), d.op.inflight(), time.Now())
	}
	return d, steps, true
}

// endPass ends the key's pass and queues it again for child changes that came in during
// the pass and were not ork's own writes.
func (c *controller) endPass(key string, forget bool) {
	if forget {
		c.ops.Forget(func(k string, _ types.UID) bool { return k == key })
		c.targets.Forget(func(k string, _ types.UID) bool { return k == key })
	}
	for _, ev := range c.ledger.End(key, time.Now(), forget) {
		if !c.e.writes.Own(ev, !c.cfg.childrenPayload) {
			c.childChanged(key)
			return
		}
	}
}

func (c *controller) observe(in input, d decision, start time.Time) {
	if d.skipped {
		c.e.opts.Metrics.SkippedUnchanged.WithLabelValues(c.cfg.crd.Name).Inc()
		c.cfg.log.Debug("call skipped: unchanged since the last decision", "key", in.key, "trigger", string(in.trigger), "note", d.message)
		return
	}
	result := "success"
	switch {
	case d.quiet:
		result = "requeue"
	case !d.success:
		result = "error"
	case d.action == actionRequeueAfter:
		result = "requeue"
	}
	took := time.Since(start)
	side := "stable"
	if d.candidate {
		side = "candidate"
	}
	c.e.opts.Metrics.ReconcileTotal.WithLabelValues(c.cfg.crd.Name, result, side).Inc()
	c.e.opts.Metrics.ReconcileDuration.WithLabelValues(c.cfg.crd.Name, result, side).Observe(took.Seconds())
	logArgs := []any{"key", in.key, "trigger", string(in.trigger), "attempt", in.attempt,
		"result", result, "duration", took.Round(time.Millisecond).String()}
	if d.success || d.quiet {
		c.cfg.log.Debug("reconciled", append(logArgs, "note", d.message)...)
	} else {
		c.cfg.log.Warn("reconcile failed", append(logArgs, "reason", d.reason, "error", d.message)...)
	}
}

// schedule queues the key again as the decision asks. Every add is noted in the ledger
// first, so the pass it starts knows its trigger.
func (c *controller) schedule(key string, trigger Trigger, d decision) {
	switch d.action {
	case actionDone:
		c.queue.Forget(key)
	case actionRequeueAfter:
		// "requeue" without a delay goes through the per-key backoff so that a reconciler
		// that always asks again slows down instead of spinning.
		if d.after > 0 {
			c.queue.Forget(key)
			c.add(key, addOpts{trigger: TriggerRequeue, after: max(d.after, minRequeueAfter)})
		} else {
			c.add(key, addOpts{trigger: TriggerRequeue, rateLimited: true})
		}
	case actionRetryAfter:
		// A retry keeps the lane of the pass that failed.
		if d.quiet {
			// Held by the server's pause, nothing sent: the endpoint has not seen this
			// trigger yet. Wait for the pause to end (remote bounds it), spread by up to a
			// quarter more so that the keys held together do not all call at once.
			c.add(key, addOpts{trigger: trigger, lane: laneKeep, after: d.after + rand.N(d.after/4+time.Second)})
			return
		}
		// The endpoint picks the pause, but never longer than ork's own backoff ceiling.
		c.add(key, addOpts{trigger: TriggerRequeue, lane: laneKeep, after: min(d.after, c.e.opts.BackoffMax)})
	case actionBackoff:
		c.add(key, addOpts{trigger: TriggerRequeue, lane: laneKeep, rateLimited: true})
	}
}

// scheduleResync queues the key's next periodic resync (reconcile.resync), at a random
// point between 3/4 and 5/4 of the interval: the custom resources that ork started with, all
// reconciled at once, are resynced spread over half an interval instead of all together,
// and drift further apart with every round. A pass before it moves it on.
func (c *controller) scheduleResync(key string) {
	if c.cfg.resync <= 0 {
		return
	}
	d := c.cfg.resync*3/4 + rand.N(c.cfg.resync/2+1)
	c.ledger.ResyncAfter(key, time.Now(), d)
	c.add(key, addOpts{after: d})
}

// lookup finds the object for key: the last state of a deleted one whose delete is not done
// yet (even when a new object took the name meanwhile: that one comes next), else the
// cached one.
func (c *controller) lookup(key string, trigger Trigger, tomb *unstructured.Unstructured) (input, bool) {
	in := input{key: key, trigger: trigger, attempt: c.queue.NumRequeues(key) + 1}
	cached := c.cached(key)
	if tomb != nil && (cached == nil || cached.GetUID() != tomb.GetUID()) {
		in.cr, in.deleting, in.gone = tomb, true, true
		if in.trigger != TriggerRequeue {
			in.trigger = TriggerDelete
		}
		return in, true
	}
	if cached == nil {
		return in, false
	}
	in.cr = cached
	in.deleting = in.cr.GetDeletionTimestamp() != nil
	if in.trigger == TriggerDelete && !in.deleting {
		in.trigger = TriggerCreate // a delete the informer saw, then the object again
	}
	return in, true
}

// stillExists asks the apiserver whether cr (that very object: its uid) exists. A sharded
// replica's cache drops objects when its buckets change, so a tombstone there is not proof
// of a delete: a delete is delivered only for an object the apiserver no longer has.
func (c *controller) stillExists(ctx context.Context, cr *unstructured.Unstructured) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got, err := c.e.meta.Resource(c.cfg.gvr).Namespace(cr.GetNamespace()).Get(ctx, cr.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get %s: %w", cr.GetName(), err)
	}
	return got.GetUID() == cr.GetUID(), nil
}

// replaced reports whether the cache no longer holds in's object under its key: deleted,
// or replaced by a new incarnation (as statusBase judges it for the status write).
func (c *controller) replaced(in input) bool {
	cached := c.cached(in.key)
	return cached == nil || cached.GetUID() != in.cr.GetUID()
}

// suspendedNow reports whether the cache shows key's CR suspended.
func (c *controller) suspendedNow(key string) bool {
	cached := c.cached(key)
	return cached != nil && cached.GetAnnotations()[SuspendAnnotation] == SuspendValue
}

// cached is the CR of key in the informer's cache, or nil.
func (c *controller) cached(key string) *unstructured.Unstructured {
	obj, exists, err := c.informer.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return nil
	}
	return obj.(*unstructured.Unstructured)
}

// safeReconcile turns a panic in a reconciler into a failed reconcile. A controller whose
// pass environment was never built is a bug of ork's, not the reconciler's: it panics
// outside the recover.
func (c *controller) safeReconcile(ctx context.Context, in input) (d decision) {
	if !c.env.built {
		panic("run: a controller without a pass environment: build it with newPassEnv")
	}
	defer func() {
		if r := recover(); r != nil {
			c.cfg.log.Warn("reconcile panicked", "key", in.key, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			d = failure(reasonPanic, "reconcile panicked: %v", r)
		}
	}()
	return c.rec.reconcile(ctx, c.env, in)
}

// event records an Event on obj, unless this replica may no longer write.
func (c *controller) event(obj *unstructured.Unstructured, typ, reason, msg string) {
	if c.e.recorder == nil || c.e.fence.mayWrite(kobj.KeyOf(obj), obj.GetUID()) != nil {
		return // a dry run records none
	}
	c.e.recorder.Event(obj, typ, reason, msg)
}

// childrenOf returns the cached children of the CR, by type key and name, as plain maps
// (the cache's own maps: callers copy before changing them).
func (c *controller) childrenOf(cr *unstructured.Unstructured) map[string]map[string]map[string]any {
	if out, ok := c.targets.Children(cr); ok {
		return out // its children are on its target: the hub has none
	}
	out := map[string]map[string]map[string]any{}
	for _, ch := range c.children {
		objs, err := ch.informer.GetIndexer().ByIndex(ownerIndex, string(cr.GetUID()))
		if err != nil {
			continue
		}
		for _, o := range objs {
			u := o.(*unstructured.Unstructured)
			if out[ch.typeKey] == nil {
				out[ch.typeKey] = map[string]map[string]any{}
			}
			out[ch.typeKey][u.GetName()] = u.Object
		}
	}
	return out
}
