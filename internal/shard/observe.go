package shard

import (
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// observer judges the expiry of other replicas' Leases the way client-go's leader election
// does: by when this process last saw the Lease change (a new resourceVersion), on its own
// monotonic clock, never by the renewTime another machine wrote. Clock skew between nodes
// then cannot expire a live Lease early; the cost is that a Lease first seen now counts as
// live for one full duration, however old its last renewal.
type observer struct {
	mu   sync.Mutex
	seen map[string]sighting
}

type sighting struct {
	rv string
	at time.Time
}

func newObserver() *observer { return &observer{seen: map[string]sighting{}} }

// observe notes l as seen at now, unless this resourceVersion was seen before.
func (o *observer) observe(l *coordinationv1.Lease, now time.Time) sighting {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.seen[l.Name]
	if !ok || s.rv != l.ResourceVersion {
		s = sighting{rv: l.ResourceVersion, at: now}
		o.seen[l.Name] = s
	}
	return s
}

func (o *observer) forget(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.seen, name)
}

// live reports whether l has a holder whose Lease has not run out since this process saw it
// change. fallback is the duration of a Lease that states none.
func (o *observer) live(l *coordinationv1.Lease, now time.Time, fallback time.Duration) bool {
	if holder(l) == "" {
		return false
	}
	d := fallback
	if l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 0 {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return now.Sub(o.observe(l, now).at) <= d
}

func holder(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}
