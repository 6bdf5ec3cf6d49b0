package run

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/shard"
)

// errNotLeader refuses a write of a replica whose Lease may have passed to another
// (leadership.ErrNotLeader): the pass stops, and so does the run.
var errNotLeader = leadership.ErrNotLeader

// fence says whether this replica may write now: asked before every write and call, it
// returns an error wrapping errNotLeader when another replica may hold the right. The
// leader Lease implements it (leaderFence), and the shard ring does when sharded, per
// bucket (ringFence).
type fence interface {
	// mayWrite guards a write for the custom resource of key and uid.
	mayWrite(key string, uid types.UID) error
	// mayWriteAny guards a write of no custom resource (the rollout ConfigMap).
	mayWriteAny() error
}

// leaderFence is the fence of a single leader: the leader Lease for every write.
type leaderFence struct{ lead *leadership.Leadership }

func (f leaderFence) mayWrite(key string, _ types.UID) error { return f.lead.MayWrite(key) }
func (f leaderFence) mayWriteAny() error                     { return f.lead.MayWrite("") }

// leaseLost reports whether ctx ended because a Lease that fences the whole run was lost:
// the leader Lease, or a sharded replica's member Lease.
func leaseLost(ctx context.Context) bool {
	cause := context.Cause(ctx)
	return errors.Is(cause, errLeadershipLost) || errors.Is(cause, shard.ErrMemberLost)
}

// errLeadershipLost is the cause that ends a leader's run at once (leadership.ErrLost).
var errLeadershipLost = leadership.ErrLost
