package shard

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// runState is what Run's goroutine keeps between rounds.
type runState struct {
	member  *coordinationv1.Lease // nil until the member Lease is held
	buckets map[int]*bucketLease
	drained chan *bucketLease
	done    chan struct{} // closed when Run returns: pending drain reports are dropped
	// ctx outlives Run's ctx and the round's: drains and releases run on it.
	ctx context.Context
	// reported is the last held set given to OnHeldChange.
	reported []int
}

// reportHeld calls OnHeldChange when the held set moved since the last call.
func (m *Manager) reportHeld(r *runState) {
	held := m.Held()
	if slices.Equal(held, r.reported) {
		return
	}
	r.reported = held
	if m.opts.OnHeldChange != nil {
		m.opts.OnHeldChange(held)
	}
}

// Run takes the member Lease, then, every RetryPeriod (jittered), renews what it holds and
// takes or hands back buckets toward the fair share. It returns nil after ctx ends and
// every held bucket has been drained and released (and the member Lease with them), or
// ErrMemberLost (wrapped) at once when the member Lease is lost: every bucket is then
// reported lost and left to expire.
func (m *Manager) Run(ctx context.Context) error {
	// API calls outlive ctx: stopping still renews while the buckets drain, then releases.
	apiCtx, stopAPI := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAPI()
	inf := m.informer()
	go inf.RunWithContext(apiCtx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil // stopped before anything was taken
	}
	r := &runState{buckets: map[int]*bucketLease{}, drained: make(chan *bucketLease), done: make(chan struct{}), ctx: apiCtx}
	defer close(r.done)
	ctxDone := ctx.Done()
	timer := m.clock.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctxDone:
			ctxDone = nil // stopping: hand everything back, keep renewing meanwhile
			for _, b := range slices.Sorted(maps.Keys(r.buckets)) {
				m.handBack(r, b, "stopping")
			}
		case e := <-r.drained:
			m.finishHandBack(r, e)
		case <-timer.C():
			if err := m.round(apiCtx, r, inf.GetStore(), ctxDone == nil); err != nil {
				m.loseAll(r)
				m.reportHeld(r)
				return err
			}
			timer.Reset(wait.Jitter(m.opts.RetryPeriod, 0.2))
		}
		m.reportHeld(r)
		if ctxDone == nil && len(r.buckets) == 0 {
			if r.member != nil {
				rctx, cancel := context.WithTimeout(apiCtx, m.opts.RenewDeadline/2)
				defer cancel()
				if err := m.w.release(rctx, r.member); err != nil {
					return err
				}
			}
			m.member.Store(nil)
			return nil
		}
	}
}

// informer watches the Leases of ork's namespace; its events time the expiry of the
// others' Leases (observer).
func (m *Manager) informer() cache.SharedIndexInformer {
	leases := m.opts.Client.Leases(m.opts.Namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return leases.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return leases.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &coordinationv1.Lease{}, 0, cache.Indexers{})
	see := func(obj any) {
		if l, ok := obj.(*coordinationv1.Lease); ok {
			m.obs.observe(l, m.clock.Now())
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    see,
		UpdateFunc: func(_, obj any) { see(obj) },
		DeleteFunc: func(obj any) {
			if l, ok := obj.(*coordinationv1.Lease); ok {
				m.obs.forget(l.Name)
			}
		},
	})
	return inf
}

// round is one RetryPeriod's work: the member Lease first (its loss is fatal), then the
// renewals of the held buckets, then the takes and hand-backs toward the fair share (none
// while stopping).
func (m *Manager) round(ctx context.Context, r *runState, store cache.Store, stopping bool) error {
	ctx, cancel := context.WithTimeout(ctx, m.opts.RenewDeadline/2)
	defer cancel()
	if err := m.holdMember(ctx, r, store); err != nil || r.member == nil {
		return err
	}
	m.renewBuckets(ctx, r)
	if stopping {
		return nil
	}
	v := m.view(store, r)
	if v.fenced != m.fenced.Swap(v.fenced) {
		m.opts.Log.Info("mode fencing changed: no bucket is taken while a live Lease of the single-leader mode or of another B exists", "fenced", v.fenced)
	}
	take, back := plan(v.mine, v.takeable, FairShare(m.opts.Buckets, v.live), v.fenced, m.offset)
	for _, b := range back {
		m.handBack(r, b, fmt.Sprintf("above the fair share %d of %d live members", FairShare(m.opts.Buckets, v.live), v.live))
	}
	for _, b := range take {
		m.takeBucket(ctx, r, b, v.leases[b])
	}
	return nil
}

// holdMember takes the member Lease (waiting out a predecessor's) or renews it.
func (m *Manager) holdMember(ctx context.Context, r *runState, store cache.Store) error {
	name := MemberLeaseName(m.opts.Name, m.opts.Member)
	sent := m.clock.Now()
	if r.member == nil {
		cur := stored(store, m.opts.Namespace, name)
		if cur != nil && holder(cur) != m.opts.Identity && m.obs.live(cur, sent, m.opts.LeaseDuration) {
			m.opts.Log.Info("member Lease held by another process, waiting for it to expire", "lease", name, "holder", holder(cur))
			return nil
		}
		l, ok, err := m.w.take(ctx, name, cur)
		if err != nil || !ok {
			if err != nil {
				m.opts.Log.Error("take the member Lease", "lease", name, "err", err)
			}
			return nil
		}
		r.member = l
		m.member.Store(&sent)
		m.opts.Log.Info("member Lease taken", "lease", name, "identity", m.opts.Identity)
		return nil
	}
	l, lost, err := m.w.renew(ctx, r.member)
	if lost {
		return fmt.Errorf("%w %s/%s: another process holds it", ErrMemberLost, m.opts.Namespace, name)
	}
	if err != nil {
		if last := m.member.Load(); last != nil && m.clock.Since(*last) > m.opts.RenewDeadline {
			return fmt.Errorf("%w %s/%s: not renewed within %s: %w", ErrMemberLost, m.opts.Namespace, name, m.opts.RenewDeadline, err)
		}
		m.opts.Log.Error("renew the member Lease", "lease", name, "err", err)
		if l != nil {
			r.member = l
		}
		return nil
	}
	r.member = l
	m.member.Store(&sent)
	return nil
}

// renewBuckets renews every held bucket, several at once (B Leases one after another
// would not fit in a RetryPeriod on a slow apiserver), and drops those that are lost or
// past the renew deadline.
func (m *Manager) renewBuckets(ctx context.Context, r *runState) {
	type result struct {
		b    int
		sent time.Time
		l    *coordinationv1.Lease
		lost bool
		err  error
	}
	bs := slices.Sorted(maps.Keys(r.buckets))
	results := make([]result, len(bs))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for k, b := range bs {
		cur := r.buckets[b].lease
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			sent := m.clock.Now()
			l, lost, err := m.w.renew(ctx, cur)
			results[k] = result{b: b, sent: sent, l: l, lost: lost, err: err}
		})
	}
	wg.Wait()
	for _, res := range results {
		switch {
		case res.lost:
			m.loseBucket(r, res.b, "another replica holds its Lease")
		case res.err != nil:
			if res.l != nil {
				r.buckets[res.b].lease = res.l
			}
			if !m.Holds(res.b) {
				m.loseBucket(r, res.b, fmt.Sprintf("not renewed within %s: %v", m.opts.RenewDeadline, res.err))
			}
		default:
			r.buckets[res.b].lease = res.l
			m.setHeld(res.b, res.sent)
		}
	}
}

// takeBucket takes bucket b's Lease (cur as read; nil when it does not exist yet).
func (m *Manager) takeBucket(ctx context.Context, r *runState, b int, cur *coordinationv1.Lease) {
	name := BucketLeaseName(m.opts.Name, b, m.opts.Buckets)
	sent := m.clock.Now()
	l, ok, err := m.w.take(ctx, name, cur)
	if err != nil {
		m.opts.Log.Error("take a bucket", "lease", name, "err", err)
		return
	}
	if !ok {
		return // another replica won the compare-and-swap
	}
	r.buckets[b] = &bucketLease{lease: l}
	m.setHeld(b, sent)
	m.opts.Log.Info("bucket taken", "bucket", b, "lease", name, "held", len(r.buckets))
	if m.opts.OnTake != nil {
		m.opts.OnTake(b)
	}
}

// handBack starts draining bucket b; finishHandBack releases it once drained.
func (m *Manager) handBack(r *runState, b int, why string) {
	e := r.buckets[b]
	if e == nil || e.draining != nil {
		return
	}
	dctx, cancel := context.WithTimeout(r.ctx, m.opts.HandBackTimeout)
	e.draining = cancel
	m.opts.Log.Info("handing a bucket back", "bucket", b, "reason", why)
	go func() {
		defer cancel()
		if m.opts.Drain != nil {
			m.opts.Drain(dctx, b)
		}
		select {
		case r.drained <- e:
		case <-r.done:
		}
	}()
}

// finishHandBack releases a drained bucket so that its next holder starts at once.
func (m *Manager) finishHandBack(r *runState, e *bucketLease) {
	b, _, _ := ParseBucketLeaseName(m.opts.Name, e.lease.Name)
	if r.buckets[b] != e {
		return // lost while draining: already reported
	}
	m.held[b].Store(nil) // the guard goes false before another replica can take it
	delete(r.buckets, b)
	ctx, cancel := context.WithTimeout(r.ctx, m.opts.RenewDeadline/2)
	defer cancel()
	if err := m.w.release(ctx, e.lease); err != nil {
		m.opts.Log.Error("release a bucket (it expires instead)", "bucket", b, "err", err)
	}
	m.opts.Log.Info("bucket handed back", "bucket", b, "held", len(r.buckets))
	if m.opts.OnRelease != nil {
		m.opts.OnRelease(b, false)
	}
}

func (m *Manager) loseBucket(r *runState, b int, why string) {
	m.held[b].Store(nil)
	if e := r.buckets[b]; e != nil && e.draining != nil {
		e.draining()
	}
	delete(r.buckets, b)
	m.opts.Log.Error("bucket lost: its work stops at once", "bucket", b, "reason", why)
	if m.opts.OnRelease != nil {
		m.opts.OnRelease(b, true)
	}
}

func (m *Manager) loseAll(r *runState) {
	for _, b := range slices.Sorted(maps.Keys(r.buckets)) {
		m.loseBucket(r, b, "the member Lease is lost")
	}
	m.member.Store(nil)
}

func stored(store cache.Store, ns, name string) *coordinationv1.Lease {
	obj, ok, err := store.GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil
	}
	l, _ := obj.(*coordinationv1.Lease)
	return l
}
