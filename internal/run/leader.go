package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

var (
	// errNotLeader refuses a write of a replica whose Lease may have passed to another.
	errNotLeader = errors.New("not the leader: the Lease was not renewed within the renew deadline")
	// errLeadershipLost ends a leader's run at once, without draining.
	errLeadershipLost = errors.New("lost the leader Lease")
)

// leadership is this replica's hold on the Lease, as the write guard sees it. Leases have no
// fencing: a replica frozen past its Lease (a long pause, a throttled container) may run
// again while another leads, and nothing on the apiserver stops its writes. The guard
// narrows that window: a write goes out only while the last successful renewal is within
// the renew deadline, which is shorter than the Lease a standby waits out.
//
// A write the guard refuses counts as the loss of the Lease: the run stops at once, as when
// the elector itself gives up (a little later), and ork exits to stand by again. Carrying on
// would drop the refused pass's work while this replica may well still lead.
type leadership struct {
	enabled       bool
	renewDeadline time.Duration
	// armed is set when this replica starts leading: before that (the preflight, CRD
	// install) nothing the guard protects is written.
	armed atomic.Bool
	// lastRenew is when the last successful renewal was sent (with the monotonic clock:
	// a wall-clock step must not move the deadline).
	lastRenew atomic.Pointer[time.Time]
	lost      atomic.Bool
	// onLoss ends the leader's run; set while it leads.
	onLoss atomic.Pointer[func()]
}

func (l *leadership) mayWrite(now time.Time) error {
	if !l.enabled || !l.armed.Load() {
		return nil
	}
	if l.lost.Load() {
		return errNotLeader
	}
	if last := l.lastRenew.Load(); last == nil || now.Sub(*last) > l.renewDeadline {
		l.lose()
		return errNotLeader
	}
	return nil
}

func (l *leadership) renewed(at time.Time) { l.lastRenew.Store(&at) }

// lose marks the Lease lost and ends the leader's run, once.
func (l *leadership) lose() {
	if l.lost.CompareAndSwap(false, true) {
		if f := l.onLoss.Load(); f != nil {
			(*f)()
		}
	}
}

// mayWrite is checked before every write for the custom resource of key, and before its
// call to the reconciler (whose side effects are writes too), and again, per request, by
// guardTransport. It is a function of the key: today one Lease covers every key, the
// scale-out work narrows it to the key's bucket.
func (e *Engine) mayWrite(key string) error {
	_ = key // one Lease for all keys, for now
	return e.lead.mayWrite(time.Now())
}

// guardTransport refuses every request but a read while this replica may no longer lead.
// It sits under client-go, so it also holds back what happens after ork's own check: a write
// waiting in client-go's retries (429/5xx with Retry-After), an Event sent later by the
// broadcaster.
type guardTransport struct {
	next http.RoundTripper
	lead *leadership
}

func (g guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if err := g.lead.mayWrite(time.Now()); err != nil {
			return nil, err
		}
	}
	return g.next.RoundTrip(req)
}

// renewTracker is the Lease lock, noting each successful acquire or renewal by this replica.
type renewTracker struct {
	resourcelock.Interface
	lead *leadership
}

func (t renewTracker) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return t.track(rec, func() error { return t.Interface.Create(ctx, rec) })
}

func (t renewTracker) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return t.track(rec, func() error { return t.Interface.Update(ctx, rec) })
}

func (t renewTracker) track(rec resourcelock.LeaderElectionRecord, write func() error) error {
	sent := time.Now() // the Lease runs from when the request left, not when it came back
	err := write()
	if err == nil && rec.HolderIdentity == t.Identity() {
		t.lead.renewed(sent)
	}
	return err
}

// defaultIdentity is <hostname>_<random>: two ork processes on one host (or two pods with
// the same hostname) are two candidates, never one leader twice.
func defaultIdentity() string {
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

// runWithLeaderElection runs fn only while this replica holds the Lease. On a stop, fn
// drains its in-flight reconciles first and only then is the Lease released, so the
// standby that takes over at once never works next to a draining leader. A lost Lease is
// not a stop: fn's context ends at once with errLeadershipLost, and the error is returned
// so that ork exits non-zero and restarts as a candidate.
func (e *Engine) runWithLeaderElection(ctx context.Context, fn func(context.Context) error) error {
	client, err := leaderClient(e.opts.RESTConfig)
	if err != nil {
		return fmt.Errorf("leader election client: %w", err)
	}
	lock := renewTracker{lead: e.lead, Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: e.opts.LeaseName, Namespace: e.opts.Namespace},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.opts.Identity},
	}}
	// The elector's context ends only after fn has returned (or, while standing by, on the
	// stop signal): cancelling it is what releases the Lease.
	electCtx, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()
	// fn runs here, not in the elector's callback goroutine, so that returning means fn
	// has finished.
	leading := make(chan context.Context, 1)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   e.opts.LeaseDuration,
		RenewDeadline:   e.opts.RenewDeadline,
		RetryPeriod:     e.opts.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            e.opts.LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leaderCtx context.Context) { leading <- leaderCtx },
			OnStoppedLeading: func() {
				e.lead.lose()
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
		e.log.Info("acquired leadership", "lease", e.opts.Namespace+"/"+e.opts.LeaseName, "identity", e.opts.Identity)
		e.leading.Store(true)
		fnCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		onStop := context.AfterFunc(ctx, func() { cancel(context.Canceled) })
		lose := func() { cancel(errLeadershipLost) }
		e.lead.onLoss.Store(&lose)
		e.lead.armed.Store(true)
		onLoss := context.AfterFunc(leaderCtx, e.lead.lose)
		runErr := fn(fnCtx)
		onStop()
		onLoss()
		lost := errors.Is(context.Cause(fnCtx), errLeadershipLost)
		cancel(nil)
		stopElecting()
		<-electionDone
		if lost {
			return fmt.Errorf("%w %s/%s: stopped at once, without draining (another replica may lead already); exiting so that a restart stands by as a candidate",
				errLeadershipLost, e.opts.Namespace, e.opts.LeaseName)
		}
		return runErr
	}
}
