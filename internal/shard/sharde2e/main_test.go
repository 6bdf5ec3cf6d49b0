// Package sharde2e_test runs several shard.Managers in one process against a real
// kube-apiserver started with the ShardedListAndWatch feature gate.
package sharde2e_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.MainWith(m, &env, testenv.Options{FeatureGates: "ShardedListAndWatch=true"}))
}

// Short Leases keep the tests fast; the ratios are client-go's defaults (15/10/2 s scaled).
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = 500 * time.Millisecond
	// jitteredRetry is the longest wait between two rounds (wait.Jitter adds up to 20%).
	jitteredRetry = retryPeriod * 12 / 10
	// slack covers what a loaded 2-core machine adds: the watch event's delivery, a few
	// Lease writes queued behind other sessions' builds.
	slack = 2 * time.Second
)

// ring is one operator's replicas in one namespace.
type ring struct {
	t    *testing.T
	ns   string
	name string

	mu      sync.Mutex
	events  []event
	members []*member
}

type event struct {
	member string
	what   string // take, drain, release, lost
	bucket int
	holds  bool // the member's guard for the bucket when the event happened
}

type member struct {
	pod         string
	m           *shard.Manager
	cancel      context.CancelFunc
	done        chan error
	partitioned *atomic.Bool
	// reported is the last held set OnHeldChange gave.
	reported atomic.Pointer[[]int]
}

func newRing(t *testing.T) *ring {
	e := env.Require(t)
	return &ring{t: t, ns: e.Namespace(t), name: "ork"}
}

// clientset is a client of its own for one member, whose every request fails once
// partitioned is set: a replica cut off from the apiserver, still running.
func clientset(t *testing.T, partitioned *atomic.Bool) kubernetes.Interface {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 100, 200
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if partitioned.Load() {
				return nil, errors.New("partitioned by the test")
			}
			return rt.RoundTrip(req)
		})
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// start runs a member pod of B buckets until the test ends or stop.
func (r *ring) start(pod string, b int) *member { return r.startDraining(pod, b, nil) }

// startDraining is start with drain called (after the ring's record) as the Drain callback.
func (r *ring) startDraining(pod string, b int, drain func(ctx context.Context, m *shard.Manager, bucket int)) *member {
	mem := &member{pod: pod, done: make(chan error, 1), partitioned: &atomic.Bool{}}
	record := func(what string, bucket int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, event{member: pod, what: what, bucket: bucket, holds: mem.m.Holds(bucket)})
	}
	m, err := shard.New(shard.Options{
		Client:    clientset(r.t, mem.partitioned).CoordinationV1(),
		Namespace: r.ns, Name: r.name, Member: pod, Buckets: b,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		HandBackTimeout: 2 * time.Second,
		Log:             slog.New(slog.NewTextHandler(testWriter{r.t}, nil)).With("member", pod),
		OnTake:          func(bucket int) { record("take", bucket) },
		OnHeldChange:    func(held []int) { mem.reported.Store(&held) },
		Drain: func(ctx context.Context, bucket int) {
			record("drain", bucket)
			if drain != nil {
				drain(ctx, mem.m, bucket)
			}
		},
		OnRelease: func(bucket int, lost bool) {
			if lost {
				record("lost", bucket)
			} else {
				record("release", bucket)
			}
		},
	})
	if err != nil {
		r.t.Fatal(err)
	}
	mem.m = m
	ctx, cancel := context.WithCancel(context.Background())
	mem.cancel = cancel
	go func() { mem.done <- m.Run(ctx) }()
	r.mu.Lock()
	r.members = append(r.members, mem)
	r.mu.Unlock()
	r.t.Cleanup(func() { mem.stop(r.t) })
	return mem
}

// stop ends the member as SIGTERM would: drain, release, return nil. A member whose Run
// already returned (partitioned) is left alone.
func (mem *member) stop(t *testing.T) {
	mem.cancel()
	select {
	case err := <-mem.done:
		if err != nil && !mem.partitioned.Load() {
			t.Errorf("member %s: Run: %v", mem.pod, err)
		}
		mem.done <- err // keep it for another stop
	case <-time.After(3 * leaseDuration): // a drain is bounded by HandBackTimeout
		t.Errorf("member %s did not stop", mem.pod)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// covered reports whether every bucket of b is held by exactly one of the live members, in
// their guard and in the Lease, and no member holds more than its share.
func (r *ring) covered(ctx context.Context, b int, live ...*member) (bool, error) {
	leases, err := env.Clientset.CoordinationV1().Leases(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	holderOf := map[string]string{}
	for _, l := range leases.Items {
		if l.Spec.HolderIdentity != nil {
			holderOf[l.Name] = *l.Spec.HolderIdentity
		}
	}
	for i := range b {
		var by []*member
		for _, mem := range live {
			if mem.m.Holds(i) {
				by = append(by, mem)
			}
		}
		if len(by) != 1 || holderOf[naming.BucketLeaseName(r.name, i, b)] != by[0].m.Identity() {
			return false, fmt.Errorf("bucket %d held by %d members, Lease holder %q", i, len(by), holderOf[naming.BucketLeaseName(r.name, i, b)])
		}
	}
	for _, mem := range live {
		// What the engine restarts its informers with is what the guard holds.
		var rep []int
		if p := mem.reported.Load(); p != nil {
			rep = *p
		}
		if !slices.Equal(rep, mem.m.Held()) {
			return false, fmt.Errorf("member %s last reported %v, holds %v", mem.pod, rep, mem.m.Held())
		}
		if n := len(mem.m.Held()); n > shard.FairShare(b, len(live)) {
			return false, fmt.Errorf("member %s holds %d buckets, above its share %d", mem.pod, n, shard.FairShare(b, len(live)))
		}
	}
	return true, nil
}

// watchOverlaps samples every member's guard until the test ends and fails it if two ever
// hold one bucket at once. Sampling cannot see every instant; it catches a guard that stays
// true past the renew deadline or two replicas taking one Lease.
func (r *ring) watchOverlaps(b int) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			r.mu.Lock()
			members := slices.Clone(r.members)
			r.mu.Unlock()
			for i := range b {
				var by []string
				for _, mem := range members {
					if mem.m.Holds(i) {
						by = append(by, mem.pod)
					}
				}
				if len(by) > 1 {
					r.t.Errorf("bucket %d held by %v at once", i, by)
					return
				}
			}
		}
	}()
	r.t.Cleanup(func() { close(stop); <-done })
}

func (r *ring) eventsOf(pod string) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event
	for _, e := range r.events {
		if pod == "" || e.member == pod {
			out = append(out, e)
		}
	}
	return out
}
