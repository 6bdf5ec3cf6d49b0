package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/naming"
)

// Mode fencing is write, then check: each side first writes its own Lease (the single
// leader its Lease, a sharded replica the bucket Leases it takes), then reads the Leases
// from the apiserver and works only if no live Lease of another mode is there; otherwise
// it releases what it just wrote and does no work. Reads of the apiserver are
// linearizable, so of two racers that both found the other side's Leases expired, the one
// that wrote second sees the first's Lease: they cannot both start. Both may see each
// other and both yield; then the lower mode (the single leader below any ring, a ring of
// fewer buckets below one of more) holds off for collisionHoldOff while the higher retries
// at its next round, so two racers cannot collide round after round.

// collisionHoldOff is how long the lower mode of a collision tries no acquisition: longer
// than the higher one's next round (at most 1.2 RetryPeriod, RetryPeriod < LeaseDuration,
// plus that round's requests).
func collisionHoldOff(leaseDuration time.Duration) time.Duration { return 2 * leaseDuration }

// leaderRank is the single-leader mode's rank: below every ring (whose rank is its B).
const leaderRank = 1

// otherMode reports whether l is a Lease of another mode of the operator, and that mode's
// rank: the single-leader Lease, or a bucket Lease of another B (by its name or by the B it
// records).
func (m *Manager) otherMode(l *coordinationv1.Lease) (rank int, ok bool) {
	if l.Name == m.opts.LeaderLease {
		return leaderRank, true
	}
	_, b, isBucket := naming.ParseBucketLeaseName(m.opts.Name, l.Name)
	if isBucket && (b != m.opts.Buckets || !sameBuckets(l, m.opts.Buckets)) {
		return b, true
	}
	return 0, false
}

// liveOtherMode reads the Leases from the apiserver (not the informer's cache, which may
// lag a write another process just made) and names the live ones of another mode; above
// is whether one of them ranks above this ring.
func (m *Manager) liveOtherMode(ctx context.Context) (names []string, above bool, err error) {
	list, err := m.opts.Client.Leases(m.opts.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, false, fmt.Errorf("list Leases in %s: %w", m.opts.Namespace, err)
	}
	now := m.clock.Now()
	for i := range list.Items {
		l := &list.Items[i]
		if rank, other := m.otherMode(l); other && m.obs.live(l, now, m.opts.LeaseDuration) {
			names = append(names, l.Name)
			above = above || rank > m.opts.Buckets
		}
	}
	return names, above, nil
}

// maxTakesPerRound bounds the takes of one round (sent takeConcurrency at a time), so that
// with a large B on a slow apiserver the takes and the check after them fit in the
// round's deadline; the rest are taken in the next rounds.
const (
	maxTakesPerRound = 32
	takeConcurrency  = 8
)

// takeBuckets takes the Leases of the buckets take (each as read in leases; nil when it
// does not exist yet), then checks for a live Lease of another mode before any of them
// counts as held: no call and no write of this replica's happens for them before that
// check passed. When it fails (or cannot be made), the Leases just taken are released.
// It runs on deadlines of its own (the round's may be used up by the renewals), each
// ending before the earliest renew deadline of the buckets already held, so that the
// expiry timer is never held up by a slow take.
func (m *Manager) takeBuckets(r *runState, take []int, leases map[int]*coordinationv1.Lease) {
	if len(take) > maxTakesPerRound {
		take = take[:maxTakesPerRound]
	}
	if len(take) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, min(m.opts.RenewDeadline/2, m.untilExpiry(r)))
	defer cancel()
	type result struct {
		l    *coordinationv1.Lease
		sent time.Time
	}
	results := make([]result, len(take))
	sem := make(chan struct{}, takeConcurrency)
	var wg sync.WaitGroup
	for k, b := range take {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			name := naming.BucketLeaseName(m.opts.Name, b, m.opts.Buckets)
			at := m.clock.Now()
			l, ok, err := m.w.take(ctx, name, leases[b], nil)
			if err != nil {
				m.opts.Log.Error("take a bucket", "lease", name, "err", err)
			}
			if ok { // else another replica won the compare-and-swap
				results[k] = result{l: l, sent: at}
			}
		})
	}
	wg.Wait()
	var got []*bucketLease
	var sent []time.Time
	var bs []int
	for k, res := range results {
		if res.l != nil {
			got, sent, bs = append(got, &bucketLease{lease: res.l}), append(sent, res.sent), append(bs, take[k])
		}
	}
	if len(got) == 0 {
		return
	}
	cctx, ccancel := context.WithTimeout(r.ctx, min(m.opts.RenewDeadline/2, m.untilExpiry(r)))
	defer ccancel()
	other, above, err := m.liveOtherMode(cctx)
	if err != nil || len(other) > 0 {
		// A fresh deadline: a slow check may have used up the round's, and a release that
		// fails leaves the buckets to nobody until they expire.
		rctx, cancel := context.WithTimeout(r.ctx, m.opts.RenewDeadline/2)
		defer cancel()
		for _, e := range got {
			if rerr := m.w.release(rctx, e.lease); rerr != nil {
				m.opts.Log.Error("release a bucket just taken (it expires instead)", "lease", e.lease.Name, "err", rerr)
			}
		}
		m.fenced.Store(true)
		if above {
			m.holdOff = m.clock.Now().Add(collisionHoldOff(m.opts.LeaseDuration))
		}
		m.opts.Log.Info("mode fencing: a live Lease of another mode appeared while taking buckets; released them, no work done",
			"buckets", bs, "other", other, "holdOff", above, "err", err)
		return
	}
	// Renewals of takes that ended late (below) may use no more time than the buckets held
	// before have left: the expiry timer waits for this round.
	older := m.untilExpiry(r)
	for k, e := range got {
		r.buckets[bs[k]] = e
		m.setHeld(bs[k], sent[k])
	}
	// On a slow apiserver the take and the check may use most of the renew deadline: work
	// started with little of it left would be lost at the next round and taken back the
	// round after, a relist and a pass of every CR of the bucket each time. Such takes are
	// renewed first.
	first := slices.MinFunc(sent, func(a, b time.Time) int { return a.Compare(b) })
	if left := m.opts.RenewDeadline - m.clock.Since(first); left < m.opts.RetryPeriod*3/2 {
		m.renewTaken(r, bs, min(m.opts.RenewDeadline/2, older))
	}
	for _, b := range bs {
		e := r.buckets[b]
		if e == nil {
			continue
		}
		m.opts.Log.Info("bucket taken", "bucket", b, "lease", e.lease.Name, "held", len(r.buckets))
		if m.opts.OnTake != nil {
			m.opts.OnTake(b)
		}
	}
}

// renewTaken renews the buckets bs just taken, before their work starts; one that cannot
// be renewed inside its deadline is dropped before it was worked (no OnRelease: there was
// no OnTake), its Lease left to expire or to be taken back.
func (m *Manager) renewTaken(r *runState, bs []int, within time.Duration) {
	ctx, cancel := context.WithTimeout(r.ctx, within)
	defer cancel()
	for _, b := range bs {
		last := m.held[b].Load()
		left := m.opts.RenewDeadline - m.clock.Since(*last)
		sent := m.clock.Now()
		var l *coordinationv1.Lease
		var lost bool
		err := errors.New("past the renew deadline")
		if left > 0 {
			rctx, rcancel := context.WithTimeout(ctx, left)
			l, lost, err = m.w.renew(rctx, r.buckets[b].lease)
			rcancel()
		}
		if err == nil && !lost {
			r.buckets[b].lease = l
			m.setHeld(b, sent)
			continue
		}
		m.held[b].Store(nil)
		delete(r.buckets, b)
		m.opts.Log.Info("bucket taken too late to start its work: dropped before any", "bucket", b, "lost", lost, "err", err)
	}
}
