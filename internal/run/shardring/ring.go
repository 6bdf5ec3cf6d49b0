// Package shardring is one replica's part of a sharded ring (ork run --shard-buckets): the
// write guard of each custom resource by its bucket's Lease (a Fence), the gate that lets a
// pass run only for a held, ready bucket, the CR and child caches that select the held
// buckets and catch up when they change, and the take-time labelling of older children. It
// knows the engine's controllers only as Members and is given the rest as Deps and at
// Start; internal/shard keeps the Leases (docs/architecture.md).
package shardring

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/shard"
)

// Events on a bucket Lease when this replica takes it or hands it back.
const (
	EventBucketTaken      = "ShardBucketTaken"
	EventBucketHandedBack = "ShardBucketHandedBack"
)

// Ring is this replica's part of a sharded ring (ork run --shard-buckets): the guard of
// each CR by its bucket's Lease, and each held bucket's work, which a hand-back drains and a
// loss cancels.
type Ring struct {
	m       *shard.Manager
	buckets int
	metrics Metrics
	// armed is set when the Manager starts: before that (the preflight, CRD install)
	// nothing the guard protects is written.
	armed atomic.Bool
	mu    sync.Mutex
	work  []bucketWork
	// controllers are the engine's, once built, as the ring knows them (Member);
	// recorder records the takes and hand-backs.
	controllers []Member
	// crCaches are the CR caches built on the ring (NewCRCache): /readyz waits for all.
	crCaches []*CRCache
	recorder record.EventRecorder
	// started is closed once the controllers are built: the Manager takes no bucket before.
	started   chan struct{}
	startOnce sync.Once
	// namespace and name place the Leases (ork's namespace, the operator's name).
	namespace, name string
	// hold is the current holding the CR caches select on (HoldingChanged).
	hold holding
	// takenAt is when each bucket was last taken: a CR created before is backlog (the
	// slow lane), not news.
	takenAt []time.Time
	// takes counts each bucket's takes, and passed is, for each CR in a CR cache, the
	// count of its bucket's takes when it was last seen there (takepass.go).
	takes  []uint64
	passed map[types.UID]uint64
	log    *slog.Logger
	// childListed are the child informers' last list holdings, by slotSelected key.
	childListed sync.Map
	// childTold is what each child informer was told, and childPaging the holding its
	// paged list started with, by slotSelected key (catchup.go).
	childTold, childPaging sync.Map
	// childStores are every child informer's store by ChildListKey, set with the
	// controllers, and childSynced is the holding of the list each one last took in: a
	// bucket is ready when all of them include it (ready.go).
	childStores map[string]cache.Store
	childSynced map[string]holding
	// stopped is closed when the controllers' run ends (nil, never closed, before).
	stopped <-chan struct{}
	// slotChildren labels the unslotted children of newly held buckets (slots.go);
	// set with the controllers; it returns the highest resourceVersion it wrote per child
	// collection (CollectionKey). slotted are the children it is labelling, by uid, until
	// the child cache shows them, each with its owner's bucket (dropped when it goes).
	slotChildren func(ctx context.Context, buckets []int) map[string]string
	slotted      sync.Map
	// toLabel are the buckets taken whose labelling is owed, with the take it is for; one
	// labeller works them off, coalescing the takes that arrive meanwhile (labelKick).
	toLabel   map[int]uint64
	labelKick chan struct{}
}

// bucketWork is one bucket's work on this replica.
type bucketWork struct {
	// ctx ends when the bucket is lost or its drain times out: its passes stop at once.
	ctx    context.Context
	cancel context.CancelFunc
	// draining refuses new passes while the bucket is handed back.
	draining bool
	// running counts the passes in flight; idle are closed when it drops to zero.
	running int
	idle    []chan struct{}
	// sinceGen is the first holding generation whose child lists count for this take;
	// labelled is set when the take's labelling ended, ready when the bucket's passes may
	// run; waiting are the keys put back until then (ready.go).
	sinceGen        uint64
	labelled, ready bool
	waiting         map[waitingKey]struct{}
}

func newRing(namespace, name string, buckets int, metrics Metrics, log *slog.Logger) *Ring {
	return &Ring{namespace: namespace, name: name, started: make(chan struct{}),
		buckets: buckets, metrics: metrics, work: make([]bucketWork, buckets), log: log,
		hold: holding{changed: make(chan struct{})}, takenAt: make([]time.Time, buckets),
		takes: make([]uint64, buckets), passed: map[types.UID]uint64{},
		toLabel: map[int]uint64{}, labelKick: make(chan struct{}, 1)}
}

// MayWrite is the guard for the CR of uid: this replica holds its bucket, renewed within
// the renew deadline.
func (s *Ring) MayWrite(_ string, uid types.UID) error {
	if !s.armed.Load() || s.m.HoldsUID(uid) {
		return nil
	}
	return fmt.Errorf("bucket %d of %d: %w", shard.BucketOf(uid, s.buckets), s.buckets, leadership.ErrNotLeader)
}

// Partial: a sharded replica's CR cache holds its buckets' CRs only.
func (s *Ring) Partial() bool { return true }

// MayWriteAny: a sharded replica must hold some bucket to write what belongs to no CR.
func (s *Ring) MayWriteAny() error {
	if !s.armed.Load() || s.m.HoldsAny() {
		return nil
	}
	return fmt.Errorf("no shard bucket held: %w", leadership.ErrNotLeader)
}

// Begin starts a pass for the CR of uid. It is NotOwned when its bucket is not held
// here, or is being handed back: the pass is left to the bucket's next holder, who passes
// every CR of a bucket it takes; NotReady while the bucket's child caches have not
// caught up with its take (ready.go). The pass's context ends with ctx or when the
// bucket is lost, and carries the CR's uid for the shard transport's check at the send;
// done ends the pass.
func (s *Ring) Begin(ctx context.Context, uid types.UID) (passCtx context.Context, done func(), st State) {
	s.mu.Lock()
	w, ok := s.workableLocked(uid)
	if !ok {
		s.mu.Unlock()
		return nil, nil, NotOwned
	}
	if !w.ready {
		s.mu.Unlock()
		return nil, nil, NotReady
	}
	bucketCtx, leave := s.enter(w)
	s.mu.Unlock()
	passCtx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(bucketCtx, cancel)
	return withCRUID(passCtx, uid), func() { stop(); cancel(); leave() }, Ready
}

// workableLocked is the work of uid's bucket, and whether it may start a pass: taken, not
// being handed back, its Lease renewed inside the deadline (s.mu held).
func (s *Ring) workableLocked(uid types.UID) (*bucketWork, bool) {
	b := shard.BucketOf(uid, s.buckets)
	w := &s.work[b]
	return w, w.ctx != nil && !w.draining && s.m.Holds(b)
}

// beginLabel is begin for the take-time labelling, which is part of making the bucket
// ready: it needs the bucket owned, not ready.
func (s *Ring) beginLabel(uid types.UID) (ctx context.Context, done func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.workableLocked(uid)
	if !ok {
		return nil, nil, false
	}
	ctx, done = s.enter(w)
	return ctx, done, true
}

// listedWith is the holding the last list of the child informer key used.
func (s *Ring) listedWith(key string) *atomic.Pointer[holding] {
	p, _ := s.childListed.LoadOrStore(key, &atomic.Pointer[holding]{})
	return p.(*atomic.Pointer[holding])
}

// Owns reports whether the bucket of uid is this replica's to work: taken and neither
// handed back nor lost. A bucket whose last renewal is late (its guard refuses until the
// next one lands) is still owned: its keys wait, they are not dropped.
func (s *Ring) Owns(uid types.UID) bool {
	b := shard.BucketOf(uid, s.buckets)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.work[b].ctx != nil && !s.work[b].draining
}

// enter counts a pass of w's bucket, for its drain (s.mu held).
func (s *Ring) enter(w *bucketWork) (ctx context.Context, done func()) {
	w.running++
	return w.ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if w.running--; w.running == 0 {
			for _, ch := range w.idle {
				close(ch)
			}
			w.idle = nil
		}
	}
}

// Take starts bucket b's work (the Manager's OnTake); each of its CRs is then owed one pass (the slow lane, as
// the initial list's), queued when the CR cache shows it (takepass.go). Called on the
// Manager's goroutine: the queueing runs apart.
func (s *Ring) Take(base context.Context, b int) {
	s.mu.Lock()
	w := &s.work[b]
	if w.cancel != nil {
		w.cancel()
	}
	w.ctx, w.cancel = context.WithCancel(base)
	w.draining = false
	s.takenAt[b] = time.Now()
	s.takes[b]++
	// Not ready until the child caches list with a holding that includes b: the next one
	// (the Manager reports the held change after the take), or the current one if it has
	// b already (lost and taken back within one round: the caches never left it).
	w.sinceGen, w.labelled, w.ready, w.waiting = s.hold.gen+1, false, false, nil
	if slices.Contains(s.hold.held, b) {
		w.sinceGen = s.hold.gen
	}
	s.toLabel[b] = s.takes[b]
	s.mu.Unlock()
	// What this replica remembers of b's CRs from an earlier take is stale: another
	// replica may have applied and written them since (prepared.lastApply is "what
	// applying this object's last answer did").
	s.forgetBucket(b)
	select {
	case s.labelKick <- struct{}{}:
	default: // a kick is pending: the labeller takes b with it
	}
	s.log.Info("shard bucket taken: its custom resources are reconciled here", "bucket", b, "buckets", s.buckets)
	s.event(b, EventBucketTaken, fmt.Sprintf("bucket %d of %d taken by %s", b, s.buckets, s.m.Identity()))
}

// HoldingChanged starts the next holding: the CR and child caches catch up with its
// selectors (catchup.go), and the newly held buckets' CRs are owed a pass each
// (takepass.go). The labelling of their older children is kicked by the take itself.
func (s *Ring) HoldingChanged(held []int) {
	s.metrics.BucketsHeld.Set(float64(len(held)))
	s.mu.Lock()
	close(s.hold.changed)
	s.hold = holding{sel: shard.Selector(held, s.buckets), held: held, gen: s.hold.gen + 1, changed: make(chan struct{})}
	s.mu.Unlock()
}

// current is the holding the CR caches select on now.
func (s *Ring) current() holding {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hold
}

// Backlog reports whether the CR of uid, created at created, was there before its bucket
// was taken: its add is the take's backlog (the slow lane), not a create.
func (s *Ring) Backlog(uid types.UID, created time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return created.Before(s.takenAt[shard.BucketOf(uid, s.buckets)].Truncate(time.Second).Add(time.Second))
}

// UpToDate reports whether every CR cache has listed with the current holding: /readyz.
func (s *Ring) UpToDate() bool {
	s.mu.Lock()
	started, caches := s.controllers != nil, s.crCaches
	s.mu.Unlock()
	if !started {
		return false // no controller yet: nothing is up to date
	}
	for _, cc := range caches {
		if !cc.UpToDate() {
			return false
		}
	}
	return true
}

// Member is all the ring knows of a controller of the engine: it never holds the
// controller itself.
type Member interface {
	// ForgetObjects drops what the controller remembers of the CRs for which gone is true
	// (their bucket moved): what a hand-back forgets (docs/architecture.md).
	ForgetObjects(gone func(types.UID) bool)
	// Requeue queues key now: a key that waited for its bucket to be ready.
	Requeue(key string)
}

// Members is what the ring is handed once the engine's controllers are built.
type Members struct {
	Controllers []Member
	// Recorder records the takes and hand-backs (nil in a dry run).
	Recorder record.EventRecorder
	// SlotChildren labels the unslotted children of newly held buckets (slots.go) and
	// returns the highest resourceVersion it wrote per child collection (CollectionKey).
	SlotChildren func(ctx context.Context, buckets []int) map[string]string
	// ChildStores are every child informer's store, by ChildListKey (ready.go).
	ChildStores map[string]cache.Store
}

// Start hands the built controllers, the Event recorder and the labelling of unslotted
// children over, and starts the labeller, until ctx ends; the Manager starts taking
// buckets after it (started).
func (s *Ring) Start(ctx context.Context, m Members) {
	s.mu.Lock()
	s.controllers, s.recorder, s.slotChildren, s.childStores, s.stopped = m.Controllers, m.Recorder, m.SlotChildren, m.ChildStores, ctx.Done()
	s.mu.Unlock()
	s.startOnce.Do(func() {
		go s.labeller(ctx)
		close(s.started)
	})
}

// event records an Event on bucket b's Lease, where `kubectl describe lease` shows the
// ring's moves.
func (s *Ring) event(b int, reason, msg string) {
	s.mu.Lock()
	rec := s.recorder
	s.mu.Unlock()
	if rec == nil {
		return
	}
	rec.Event(&corev1.ObjectReference{APIVersion: "coordination.k8s.io/v1", Kind: "Lease", Namespace: s.namespace,
		Name: naming.BucketLeaseName(s.name, b, s.buckets)}, corev1.EventTypeNormal, reason, msg)
}

// Drain stops new passes of bucket b and waits until its passes in flight have ended, at
// most until ctx ends; then it cancels them and waits for them to return.
func (s *Ring) Drain(ctx context.Context, b int) {
	// While it is still held: the Event is a write of this replica's.
	s.event(b, EventBucketHandedBack, fmt.Sprintf("bucket %d of %d handed back by %s", b, s.buckets, s.m.Identity()))
	s.mu.Lock()
	w := &s.work[b]
	w.draining = true
	if w.running == 0 {
		s.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	w.idle = append(w.idle, idle)
	cancel := w.cancel
	s.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
		s.log.Info("shard bucket hand-back: cancelling the passes still in flight", "bucket", b)
		if cancel != nil {
			cancel()
		}
		<-idle // cancelled passes return promptly: every request of theirs carries the context
	}
}

// Release ends bucket b's work: after its drain and release (lost false), or at once on a
// loss (its passes in flight are cancelled; the guard already refuses their writes).
func (s *Ring) Release(b int, lost bool) {
	s.mu.Lock()
	w := &s.work[b]
	if w.cancel != nil {
		w.cancel()
	}
	w.ctx, w.cancel, w.draining = nil, nil, false
	// Its waiting keys are the next holder's (it passes every CR of a bucket it takes).
	w.ready, w.labelled, w.waiting = false, false, nil
	delete(s.toLabel, b)
	s.mu.Unlock()
	s.slotted.Range(func(uid, owner any) bool {
		if owner.(int) == b { // its child will not be shown here: no owner to queue
			s.slotted.Delete(uid)
		}
		return true
	})
	s.forgetBucket(b) // their memory is the next holder's
	s.metrics.Handoffs.Inc()
	if lost {
		s.log.Info("shard bucket lost: its work stopped at once", "bucket", b, "buckets", s.buckets)
		return
	}
	s.log.Info("shard bucket handed back", "bucket", b, "buckets", s.buckets)
}

// forgetBucket drops what the controllers remember of bucket b's CRs (Member.ForgetObjects).
func (s *Ring) forgetBucket(b int) {
	s.mu.Lock()
	cs := s.controllers
	s.mu.Unlock()
	inBucket := func(uid types.UID) bool { return shard.BucketOf(uid, s.buckets) == b }
	for _, c := range cs {
		c.ForgetObjects(inBucket)
	}
}

// Transport refuses every request but a read while this replica holds no bucket: writes of
// no CR (Events) need "holds any", and a write waiting in client-go's retries is held back
// here too.
func (s *Ring) Transport(next http.RoundTripper) http.RoundTripper {
	return shardTransport{next: next, s: s}
}

type shardTransport struct {
	next http.RoundTripper
	s    *Ring
}

func (t shardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if !t.s.armed.Load() {
			break
		}
		// A pass's write is checked against its CR's bucket here, at the send: it may have
		// waited in client-go's rate limiter or retries since the pass checked.
		if uid, ok := req.Context().Value(crUIDKey{}).(types.UID); ok {
			if err := t.s.MayWrite("", uid); err != nil {
				return nil, err
			}
		} else if !t.s.m.HoldsAny() {
			return nil, fmt.Errorf("no shard bucket held: %w", leadership.ErrNotLeader)
		}
	}
	return t.next.RoundTrip(req)
}

// crUIDKey carries the uid of the CR a pass works for, for the transport's check.
type crUIDKey struct{}

// withCRUID marks ctx as a pass's for the CR of uid.
func withCRUID(ctx context.Context, uid types.UID) context.Context {
	return context.WithValue(ctx, crUIDKey{}, uid)
}
