package run

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/shard"
)

// errNotLeader refuses a write of a replica whose Lease may have passed to another
// (leadership.ErrNotLeader): the pass stops, and so does the run.
var errNotLeader = leadership.ErrNotLeader

// mayWrite is the leadership guard for the custom resource of key and uid: the Lease of
// its bucket when sharded (shards.mayWrite), else the leader Lease (leadership.MayWrite).
func (e *Engine) mayWrite(key string, uid types.UID) error {
	if e.shards != nil {
		return e.shards.mayWrite(uid)
	}
	return e.lead.MayWrite(key)
}

// mayWriteAny is the guard for a write of no custom resource (the rollout ConfigMap): a
// sharded replica must hold some bucket, a single one the leader Lease.
func (e *Engine) mayWriteAny() error {
	if e.shards != nil {
		if !e.shards.armed.Load() || e.shards.m.HoldsAny() {
			return nil
		}
		return fmt.Errorf("no shard bucket held: %w", errNotLeader)
	}
	return e.lead.MayWrite("")
}

// leaseLost reports whether ctx ended because a Lease that fences the whole run was lost:
// the leader Lease, or a sharded replica's member Lease.
func leaseLost(ctx context.Context) bool {
	cause := context.Cause(ctx)
	return errors.Is(cause, errLeadershipLost) || errors.Is(cause, shard.ErrMemberLost)
}

// errLeadershipLost is the cause that ends a leader's run at once (leadership.ErrLost).
var errLeadershipLost = leadership.ErrLost
