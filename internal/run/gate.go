package run

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run/shardring"
)

// passGate decides, per CR, whether this replica passes it now: the shard ring when
// sharded (ringGate), else allMine, which owns every CR (one leader's Lease fences the
// whole run). The controller asks the gate, never whether it is sharded.
type passGate interface {
	// owns reports whether the CR of uid is in a bucket held here.
	owns(uid types.UID) bool
	// begin starts a pass of the CR of uid under ctx: st says whether it may run; when it
	// may, passCtx is the pass's context (it ends early when the CR's bucket is lost) and
	// done ends the pass.
	begin(ctx context.Context, uid types.UID) (passCtx context.Context, done func(), st bucketState)
	// waitReady parks key until the bucket of uid is ready; false when it may go now.
	waitReady(uid types.UID, c *controller, key string) bool
	// takePass notes a pass of the CR of uid and reports whether its bucket's take owed it
	// one; forgetPass drops that note once the CR left the cache.
	takePass(uid types.UID) bool
	forgetPass(uid types.UID)
	// backlog reports whether an object created at created, of the CR of uid, came with
	// its bucket's take (the slow lane) rather than as news.
	backlog(uid types.UID, created time.Time) bool
	// partial reports whether the CR cache holds only some CRs: a relist of the same
	// version is then no news, and a CR gone from the cache may only have left it.
	partial() bool
}

// bucketState is what begin found for a CR's bucket (shardring.State).
type bucketState = shardring.State

const (
	bucketNotOwned = shardring.NotOwned
	bucketNotReady = shardring.NotReady
	bucketReady    = shardring.Ready
)

// allMine is the gate of a run that is not sharded.
type allMine struct{}

func (allMine) owns(types.UID) bool { return true }
func (allMine) begin(ctx context.Context, _ types.UID) (context.Context, func(), bucketState) {
	return ctx, func() {}, bucketReady
}
func (allMine) waitReady(types.UID, *controller, string) bool { return false }
func (allMine) takePass(types.UID) bool                       { return false }
func (allMine) forgetPass(types.UID)                          {}
func (allMine) backlog(types.UID, time.Time) bool             { return false }
func (allMine) partial() bool                                 { return false }
