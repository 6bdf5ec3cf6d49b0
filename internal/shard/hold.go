package shard

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/orkspace/ork/internal/naming"
)

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
			// A renewal that lands past the renew deadline would not make the bucket held
			// again (the guard has gone false; client-go's elector gives up there too):
			// it gets until the deadline, so that a hung apiserver loses the bucket on
			// time.
			left := time.Duration(0)
			if last := m.held[b].Load(); last != nil {
				left = m.opts.RenewDeadline - m.clock.Since(*last)
			}
			if left <= 0 {
				results[k] = result{b: b, err: fmt.Errorf("past the renew deadline")}
				return
			}
			rctx, cancel := context.WithTimeout(ctx, left)
			defer cancel()
			sent := m.clock.Now()
			l, lost, err := m.w.renew(rctx, cur)
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

// handBack starts draining bucket b; finishHandBack releases it once drained.
func (m *Manager) handBack(r *runState, b int, why string) {
	e := r.buckets[b]
	if e == nil || e.draining != nil {
		return
	}
	deadline := time.Now().Add(m.opts.HandBackTimeout)
	if !r.stopAt.IsZero() {
		deadline = r.stopAt.Add(m.opts.HandBackTimeout) // one deadline for the whole stop
	}
	dctx, cancel := context.WithDeadline(r.ctx, deadline)
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
	b, _, _ := naming.ParseBucketLeaseName(m.opts.Name, e.lease.Name)
	if r.buckets[b] != e {
		return // lost while draining: already reported
	}
	m.held[b].Store(nil) // the guard goes false before another replica can take it
	delete(r.buckets, b)
	// The next report tells the engine, even when the bucket is taken back before it:
	// a take back reported as no change would start no new holding, and the bucket's
	// CRs would get no take pass.
	r.mustReport = true
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
	// As for a hand-back: a renewal that hung until its deadline loses the bucket, and the
	// same round may take its Lease back (still in this replica's name). The held set then
	// looks unchanged, but the loss stopped the bucket's work: only a report makes the
	// engine's caches list again and pass its custom resources.
	r.mustReport = true
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
