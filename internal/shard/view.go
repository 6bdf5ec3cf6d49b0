package shard

import (
	"strconv"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/naming"
)

// view is one round's reading of the namespace's Leases.
type view struct {
	mine     []int // held and not draining, sorted
	takeable []int // free, expired or not yet created, sorted
	leases   map[int]*coordinationv1.Lease
	live     int  // live members of this B, this replica included
	fenced   bool // a live Lease of another mode or another B exists
	warm     bool // another replica holds a live bucket Lease of this B: the ring runs
}

func (m *Manager) view(store cache.Store, r *runState) view {
	now := m.clock.Now()
	self := naming.MemberLeaseName(m.opts.Name, m.opts.Member)
	v := view{leases: map[int]*coordinationv1.Lease{}, live: 1}
	for _, obj := range store.List() {
		l, ok := obj.(*coordinationv1.Lease)
		if !ok {
			continue
		}
		live := m.obs.live(l, now, m.opts.LeaseDuration)
		switch i, b, isBucket := naming.ParseBucketLeaseName(m.opts.Name, l.Name); {
		case l.Name == m.opts.LeaderLease:
			v.fenced = v.fenced || live
		case isBucket:
			// B is in the name and in the annotation: either one differing is another ring.
			if _, other := m.otherMode(l); other {
				v.fenced = v.fenced || live
			}
			if b == m.opts.Buckets {
				v.leases[i] = l // taking it rewrites the annotation
			}
		case naming.IsMemberLeaseName(m.opts.Name, l.Name) && l.Name != self:
			if live && sameBuckets(l, m.opts.Buckets) {
				v.live++
			}
		}
	}
	for i := range m.opts.Buckets {
		if e := r.buckets[i]; e != nil {
			if e.draining == nil {
				v.mine = append(v.mine, i)
			}
			continue
		}
		// A Lease held in this replica's name but not among its buckets is one whose take
		// got no answer, or whose release failed: taking it back (its resourceVersion as
		// the precondition) beats leaving it to nobody until it expires.
		switch l := v.leases[i]; {
		case l == nil || !m.obs.live(l, now, m.opts.LeaseDuration) || holder(l) == m.opts.Identity:
			v.takeable = append(v.takeable, i)
		default:
			v.warm = true
		}
	}
	return v
}

// sameBuckets reports whether l records b buckets (naming.BucketsAnnotation).
func sameBuckets(l *coordinationv1.Lease, b int) bool {
	return l.Annotations[naming.BucketsAnnotation] == strconv.Itoa(b)
}
