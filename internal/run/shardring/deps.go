package shardring

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orkspace/ork/internal/shard"
)

// Metrics are the ring's own metrics; the engine registers them (sharded mode only).
type Metrics struct {
	// BucketsHeld is the count of buckets held here; Handoffs counts the buckets this
	// replica stopped holding, handed back or lost.
	BucketsHeld prometheus.Gauge
	Handoffs    prometheus.Counter
	// CRsReceived and CRsDropped count, per CRD, the custom resources the CR caches
	// received and the client filter dropped (the server ignored the selector, or the
	// holding changed meanwhile).
	CRsReceived, CRsDropped *prometheus.CounterVec
}

// Deps is what the ring needs of the engine when it is built; what exists only once the
// controllers are built comes with Start (Members).
type Deps struct {
	// Lease are the bucket Leases' options; the ring sets their callbacks (OnTake, Drain,
	// OnRelease, OnHeldChange), and takes its namespace, name, bucket count and logger
	// from them.
	Lease   shard.Options
	Metrics Metrics
}

// New builds this replica's part of the ring; nothing talks to the cluster before Run.
func New(deps Deps) (*Ring, error) {
	o := deps.Lease
	s := newRing(o.Namespace, o.Name, o.Buckets, deps.Metrics, o.Log)
	// Bucket contexts outlive a stop: a hand-back drains them, a loss cancels them.
	base := context.Background()
	o.OnTake = func(b int) { s.Take(base, b) }
	o.Drain, o.OnRelease, o.OnHeldChange = s.Drain, s.Release, s.HoldingChanged
	m, err := shard.New(o)
	if err != nil {
		return nil, err
	}
	s.m = m
	return s, nil
}

// Buckets is the ring's bucket count.
func (s *Ring) Buckets() int { return s.buckets }
