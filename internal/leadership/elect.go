package leadership

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/orkspace/ork/internal/shard"
)

// DefaultIdentity is <hostname>_<random>: two ork processes on one host (or two pods with
// the same hostname) are two candidates, never one leader twice.
func DefaultIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "ork"
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return host + "_" + hex.EncodeToString(b)
}

// leaderClient is a client of its own for the Lease, with its own rate limiter, so renewals
// never queue behind reconcile traffic on ork's side.
func leaderClient(cfg *rest.Config) (kubernetes.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = 5, 10 // one request per retry period is all it makes
	c.UserAgent = rest.DefaultKubernetesUserAgent() + " leader-election"
	if cfg.UserAgent != "" {
		c.UserAgent = cfg.UserAgent + " leader-election"
	}
	return kubernetes.NewForConfig(c)
}

// Run runs fn only while this replica holds the Lease. On a stop, fn drains its in-flight
// reconciles first and only then is the Lease released, so the standby that takes over at
// once never works next to a draining leader. A lost Lease is not a stop: fn's context
// ends at once with ErrLost, and the error is returned so that ork exits non-zero and
// restarts as a candidate.
func (l *Leadership) Run(ctx context.Context, fn func(context.Context) error) error {
	o := l.opts
	client, err := leaderClient(o.Config)
	if err != nil {
		return fmt.Errorf("leader election client: %w", err)
	}
	// Mode fencing: never acquired while a sharded ring of the operator holds bucket Leases.
	lock := renewTracker{lead: l, Interface: shard.FenceLeaderLock(&resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: o.Identity},
	}, client.CoordinationV1(), o.Namespace, o.OperatorName, nil, o.LeaseDuration)}
	// The elector's context ends only after fn has returned (or, while standing by, on the
	// stop signal): cancelling it is what releases the Lease.
	electCtx, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()
	// fn runs here, not in the elector's callback goroutine, so that returning means fn
	// has finished.
	leading := make(chan context.Context, 1)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   o.LeaseDuration,
		RenewDeadline:   o.RenewDeadline,
		RetryPeriod:     o.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            o.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leaderCtx context.Context) { leading <- leaderCtx },
			OnStoppedLeading: func() {
				l.lose()
				l.leading.Store(false)
				o.Log.Info("leadership released", "identity", o.Identity)
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
		o.Log.Info("acquired leadership", "lease", o.Namespace+"/"+o.Name, "identity", o.Identity)
		runErr, lost := l.lead(ctx, leaderCtx, fn)
		stopElecting()
		<-electionDone
		if lost {
			return fmt.Errorf("%w %s/%s: stopped at once, without draining (another replica may lead already); exiting so that a restart stands by as a candidate",
				ErrLost, o.Namespace, o.Name)
		}
		return runErr
	}
}

// lead runs fn while this replica leads: until fn returns, or at once (fn's context ends
// with ErrLost) when leaderCtx ends or a write finds the Lease lost. lost reports the latter.
func (l *Leadership) lead(ctx, leaderCtx context.Context, fn func(context.Context) error) (runErr error, lost bool) {
	l.leading.Store(true)
	fnCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	onStop := context.AfterFunc(ctx, func() { cancel(context.Canceled) })
	lose := func() { cancel(ErrLost) }
	l.onLoss.Store(&lose)
	l.armed.Store(true)
	onLoss := context.AfterFunc(leaderCtx, l.lose)
	// The elector may have given up, or a write found the Lease lost, before onLoss was
	// stored: lose then ran with nothing to end, and will not run again.
	if l.lost.Load() || leaderCtx.Err() != nil {
		l.leading.Store(false)
		lose()
	}
	runErr = fn(fnCtx)
	onStop()
	onLoss()
	lost = errors.Is(context.Cause(fnCtx), ErrLost)
	cancel(nil)
	return runErr, lost
}
