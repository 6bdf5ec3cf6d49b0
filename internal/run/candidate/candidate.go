// Package candidate runs a CRD's rollout candidate (reconcile.remote.candidate) beside its
// stable reconciler: the shadow calls and their comparison, the canary's sides, and the
// rollout sync that judges each gate and keeps the state in a ConfigMap. The rules of a
// rollout are internal/rollout's; this package holds the state and the calls. It knows the
// engine only through Deps and RolloutsDeps (docs/architecture.md).
package candidate

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/rollout"
	"github.com/orkspace/ork/internal/trace"
)

// Candidate is a CRD's reconcile.remote.candidate in the engine: its own HTTP reconciler
// (own timeout, own Retry-After pauses: a throttled candidate must not hold the stable
// endpoint, nor the other way round), the pool its shadow calls run on, and the rollout's
// state. The stable pass never waits for it: a shadow call is handed to the pool and the
// pass goes on; when the pool is full the call is skipped and counted.
type Candidate struct {
	crd           string
	r             *remote.Reconciler
	plan          rollout.Plan
	shadowDeletes bool
	// shadowRest shadows the stable slice during a canary (candidate.canary.shadowRest).
	shadowRest bool
	// slots bound the shadow calls in flight (candidate.concurrency).
	slots   chan struct{}
	metrics Metrics
	log     *slog.Logger
	now     func() time.Time
	// trace keeps each shadow comparison for ork trace; nil without --debug-decisions.
	trace *trace.Store

	// ctx ends the shadow calls when the engine stops (Close); a pass's own context ends with
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

// Deps is what a candidate needs of the engine: the Secrets its auth reads, ork's
// namespace, its counters, the decision trace and a logger; never the engine itself.
type Deps struct {
	// Secrets reads the candidate's auth.secretRef and tls.caSecretRef.
	Secrets remote.SecretSource
	// Namespace is ork's, the default of a secretRef without one.
	Namespace string
	Metrics   Metrics
	// Trace keeps each shadow comparison; nil without --debug-decisions.
	Trace *trace.Store
	Log   *slog.Logger
}

// New builds the candidate of crd: remote's own settings (payload, TLS, managed
// resources) with the candidate's endpoint, auth and timeout.
func New(crd *katalog.CRD, deps Deps) (*Candidate, error) {
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
		Secrets:          deps.Secrets,
		DefaultNamespace: deps.Namespace,
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
	c := &Candidate{
		crd: crd.Name, r: r, plan: plan, shadowDeletes: spec.ShadowDeletes, shadowRest: spec.Canary.ShadowRestOrDefault(),
		slots: make(chan struct{}, n), metrics: deps.Metrics, now: time.Now, trace: deps.Trace,
		log: deps.Log.With("crd", crd.Name, "side", string(rollout.Candidate)),
		ctx: ctx, cancel: cancel,
		logged: map[string]loggedPaths{}, badPins: map[types.UID]bool{}, inFlight: map[string]bool{},
	}
	c.state = plan.Start(nil, c.now())
	return c, nil
}

// loggedPaths are the diverging paths last logged for one CR, and its uid (ForgetObjects).
type loggedPaths struct {
	uid   types.UID
	paths string
}

// Call asks the candidate for real: a pass in the canary slice, whose answer is applied.
func (c *Candidate) Call(ctx context.Context, req remote.Request) (*remote.Result, exchange.Exchange, error) {
	return c.r.Call(ctx, req)
}

// Timeout bounds one candidate call (candidate.timeout).
func (c *Candidate) Timeout() time.Duration { return c.r.Timeout() }

// Canary says whether the rollout is a canary, whose passes may wait for the candidate.
func (c *Candidate) Canary() bool { return c.plan.Mode == rollout.ModeCanary }

// ShadowsDeletes says whether a deleting pass is shadowed too (candidate.shadowDeletes).
func (c *Candidate) ShadowsDeletes() bool { return c.shadowDeletes }

// ForgetObjects drops what the candidate remembers of the CRs for which gone is true (a
// released shard bucket's): warned pins, logged divergences, waiting shadow calls.
func (c *Candidate) ForgetObjects(gone func(types.UID) bool) {
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

// Forget drops what the candidate remembers of a deleted custom resource.
func (c *Candidate) Forget(key string, uid types.UID) {
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
func (c *Candidate) live() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.Phase != rollout.RolledBack
}

// SideOf is the side cr's pass goes to for real: the candidate for a CR in the canary
// slice or pinned to it while a canary is under way; stable otherwise (shadow mode, a
// rolled-back canary). A pin that names no side is ignored; warn is true the first time
// this CR's is seen.
func (c *Candidate) SideOf(cr metav1.Object) (side rollout.Side, warn bool) {
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

// Shadows reports whether a stable pass is shadowed: always in shadow mode, and during a
// canary with shadowRest.
func (c *Candidate) Shadows() bool {
	if c.plan.Mode == rollout.ModeCanary && !c.shadowRest {
		return false
	}
	return c.live()
}

// Served counts a pass the candidate reconciled for real, by the reason it ended with
// (nothing to compare it with: stable was not asked).
func (c *Candidate) Served(reason string) {
	c.metrics.calls.WithLabelValues(c.crd, reason).Inc()
	s := rollout.Sample{Reason: reason, Served: true}
	if s.Reason != remote.ReasonReconcileSucceeded {
		c.metrics.errors.WithLabelValues(c.crd).Inc()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.Window.Add(s)
}

// resume continues from prev, the state a previous run wrote, unless the spec changed.
func (c *Candidate) resume(prev rollout.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = c.plan.Start(&prev, c.now())
}

// advance judges the gate and moves the rollout on (rollout.Plan.Advance).
func (c *Candidate) advance() (rollout.State, rollout.Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var change rollout.Change
	c.state, change = c.plan.Advance(c.state, c.now())
	s := c.state
	s.Divergences = slices.Clone(s.Divergences)
	return s, change
}

// Close stops the shadow calls in flight and waits for them.
func (c *Candidate) Close() {
	c.mu.Lock()
	c.closed = true
	c.waiting, c.order = nil, nil
	c.mu.Unlock()
	c.cancel()
	c.calls.Wait()
	c.r.Close()
}
