package run

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/run/shardring"
	"github.com/orkspace/ork/internal/shard"
)

// Events on a bucket Lease when this replica takes it or hands it back.
const (
	EventShardBucketTaken      = shardring.EventBucketTaken
	EventShardBucketHandedBack = shardring.EventBucketHandedBack
)

// newShardRing builds this replica's part of the ring for opts.ShardBuckets; nothing talks
// to the cluster before Run.
func newShardRing(set *katalog.Set, opts Options) (*shardring.Ring, error) {
	lease := rest.CopyConfig(opts.RESTConfig)
	// A limiter of its own, allowing every held bucket's renewal and the member's within
	// one retry period (twice over, for the takes), so that renewals never queue behind
	// reconcile traffic.
	lease.QPS = float32(2*(opts.ShardBuckets+1)) / float32(opts.RetryPeriod.Seconds())
	lease.Burst = 2 * (opts.ShardBuckets + 1)
	lease.RateLimiter = nil
	lease.UserAgent = rest.DefaultKubernetesUserAgent() + " shard-leases"
	client, err := kubernetes.NewForConfig(lease)
	if err != nil {
		return nil, fmt.Errorf("shard Lease client: %w", err)
	}
	if err := opts.Metrics.Registry.Register(opts.Metrics.ShardBucketsHeld); err != nil {
		return nil, fmt.Errorf("shard metrics: %w", err)
	}
	for _, c := range []prometheus.Collector{opts.Metrics.ShardHandoffs, opts.Metrics.ShardCRsReceived, opts.Metrics.ShardCRsDropped} {
		if err := opts.Metrics.Registry.Register(c); err != nil {
			return nil, fmt.Errorf("shard metrics: %w", err)
		}
	}
	return shardring.New(shardring.Deps{
		Lease: shard.Options{
			Client: client.CoordinationV1(), Namespace: opts.Namespace, Name: opts.Name, LeaderLease: opts.LeaseName,
			Member: opts.ShardMember, MemberUID: opts.ShardMemberUID, Identity: opts.Identity, Buckets: opts.ShardBuckets,
			LeaseDuration: opts.LeaseDuration, RenewDeadline: opts.RenewDeadline, RetryPeriod: opts.RetryPeriod,
			HandBackTimeout: handBackTimeout(set, opts.ShutdownTimeout), Log: opts.Logger,
		},
		Metrics: shardring.Metrics{BucketsHeld: opts.Metrics.ShardBucketsHeld, Handoffs: opts.Metrics.ShardHandoffs,
			CRsReceived: opts.Metrics.ShardCRsReceived, CRsDropped: opts.Metrics.ShardCRsDropped},
	})
}

// handBackTimeout is how long a hand-back or a stop lets a bucket's calls run: up to the
// Katalog's longest remote timeout, by which ork's own call has ended, so that a call never
// goes on at the reconciler beside the next holder's (docs/scaling.md); at most stop, the
// shutdown timeout, since a stop hands every bucket back.
func handBackTimeout(set *katalog.Set, stop time.Duration) time.Duration {
	longest := time.Duration(0)
	for _, c := range set.CRDs {
		t := remote.DefaultTimeout
		if r := c.OperatorBox.Reconcile.Remote; r != nil && r.Timeout != "" {
			if d, err := time.ParseDuration(r.Timeout); err == nil && d > 0 {
				t = d
			}
		}
		longest = max(longest, t)
	}
	return min(longest, stop)
}

// useRing sets the engine's shard ring (nil: single leader), and with it the fence and the
// pass gate, which must agree with it: the ring's when sharded, else the leader Lease's
// fence and allMine.
func (e *Engine) useRing(lead *leadership.Leadership, ring *shardring.Ring) *Engine {
	e.ring = ring
	if ring != nil {
		e.fence, e.gate = ringFence{ring}, ringGate{ring}
		return e
	}
	e.fence, e.gate = leaderFence{lead: lead}, allMine{}
	return e
}

// ringFence is the ring as the engine's fence.
type ringFence struct{ r *shardring.Ring }

func (f ringFence) mayWrite(key string, uid types.UID) error { return f.r.MayWrite(key, uid) }
func (f ringFence) mayWriteAny() error                       { return f.r.MayWriteAny() }

// ringGate is the ring as the engine's pass gate.
type ringGate struct{ r *shardring.Ring }

func (g ringGate) owns(uid types.UID) bool { return g.r.Owns(uid) }
func (g ringGate) begin(ctx context.Context, uid types.UID) (context.Context, func(), bucketState) {
	return g.r.Begin(ctx, uid)
}
func (g ringGate) waitReady(uid types.UID, c *controller, key string) bool {
	return g.r.WaitReady(uid, ringMember{c}, key)
}
func (g ringGate) takePass(uid types.UID) bool                   { return g.r.TakePass(uid) }
func (g ringGate) forgetPass(uid types.UID)                      { g.r.ForgetPass(uid) }
func (g ringGate) backlog(uid types.UID, created time.Time) bool { return g.r.Backlog(uid, created) }
func (g ringGate) partial() bool                                 { return g.r.Partial() }
