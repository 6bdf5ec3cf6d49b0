package run

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// runWithLeaderElection runs fn only while this replica holds the Lease, and releases the
// Lease on a clean stop so a standby takes over at once.
func (e *Engine) runWithLeaderElection(ctx context.Context, fn func(context.Context) error) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: e.opts.LeaseName, Namespace: e.opts.Namespace},
		Client:     e.kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.opts.Identity},
	}
	// OnStartedLeading runs in a goroutine of its own that elector.Run does not wait for:
	// finished and runErr hand fn's end back to this one.
	var (
		started  atomic.Bool
		finished = make(chan struct{})
		runErr   error
	)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Name:            e.opts.LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				e.log.Info("acquired leadership", "lease", e.opts.Namespace+"/"+e.opts.LeaseName)
				e.leading.Store(true)
				started.Store(true)
				defer close(finished)
				runErr = fn(ctx)
			},
			OnStoppedLeading: func() {
				e.leading.Store(false)
				e.log.Info("leadership released", "identity", e.opts.Identity)
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	elector.Run(ctx)
	if started.Load() {
		<-finished
	}
	if runErr == nil && ctx.Err() == nil {
		return errors.New("lost leadership")
	}
	return runErr
}
