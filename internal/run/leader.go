package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// runWithLeaderElection runs fn only while this replica holds the Lease. On a stop, fn
// drains its in-flight reconciles first and only then is the Lease released, so the
// standby that takes over at once never works next to a draining leader.
func (e *Engine) runWithLeaderElection(ctx context.Context, fn func(context.Context) error) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: e.opts.LeaseName, Namespace: e.opts.Namespace},
		Client:     e.kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.opts.Identity},
	}
	// The elector's context ends only after fn has returned (or, while standing by, on the
	// stop signal): cancelling it is what releases the Lease.
	electCtx, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()
	// fn runs here, not in the elector's callback goroutine, so that returning means fn
	// has finished.
	leading := make(chan context.Context, 1)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Name:            e.opts.LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leaderCtx context.Context) { leading <- leaderCtx },
			OnStoppedLeading: func() {
				e.leading.Store(false)
				e.log.Info("leadership released", "identity", e.opts.Identity)
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	electionDone := make(chan struct{})
	go func() { elector.Run(electCtx); close(electionDone) }()

	select {
	case <-ctx.Done(): // stopped while standing by
		stopElecting()
		<-electionDone
		return nil
	case <-electionDone:
		return errors.New("leader election ended before this replica led")
	case leaderCtx := <-leading:
		e.log.Info("acquired leadership", "lease", e.opts.Namespace+"/"+e.opts.LeaseName)
		e.leading.Store(true)
		// fn stops on the stop signal or on a lost Lease, whichever comes first.
		fnCtx, cancel := context.WithCancel(leaderCtx)
		stop := context.AfterFunc(ctx, cancel)
		runErr := fn(fnCtx)
		stop()
		cancel()
		lost := leaderCtx.Err() != nil && ctx.Err() == nil
		stopElecting()
		<-electionDone
		if runErr == nil && lost {
			return errors.New("lost leadership")
		}
		return runErr
	}
}
