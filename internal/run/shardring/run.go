package shardring

import (
	"context"
	"errors"
	"fmt"

	"github.com/orkspace/ork/internal/shard"
)

// Run runs the controllers (runControllers) next to the ring's Manager: every CR is cached
// and queued, and a pass goes ahead only for the CRs of a bucket held here (Begin and the
// guard). A stop hands every bucket back after its drain; the loss of the member Lease
// stops every pass at once and returns the loss, so that ork exits non-zero.
func (s *Ring) Run(ctx context.Context, runControllers func(context.Context) error) error {
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	mgrCtx, stopMgr := context.WithCancel(ctx)
	defer stopMgr()
	mgrDone := make(chan error, 1)
	s.armed.Store(true)
	go func() {
		// No bucket before the controllers exist: a take records an Event and its CRs'
		// adds need the handlers.
		select {
		case <-s.started:
		case <-mgrCtx.Done():
			mgrDone <- nil
			return
		}
		err := s.m.Run(mgrCtx)
		if err != nil {
			cancelRun(err)
		}
		mgrDone <- err
	}()
	err := runControllers(runCtx)
	stopMgr() // the controllers failed to start: nothing of this replica runs on
	if mgrErr := <-mgrDone; mgrErr != nil && (err == nil || errors.Is(err, shard.ErrMemberLost)) {
		return fmt.Errorf("%w: stopped at once, without draining (other replicas take its buckets); exiting so that a restart joins again", mgrErr)
	}
	return err
}
