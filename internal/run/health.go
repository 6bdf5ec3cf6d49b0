package run

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/util/workqueue"

	"github.com/orkspace/ork/internal/trace"
)

// servers are the health and metrics listeners.
type servers struct{ list []*http.Server }

// startServers serves /healthz, /readyz and /metrics; equal addresses share one listener.
func (e *Engine) startServers() (*servers, error) {
	routes := map[string]*http.ServeMux{}
	mux := func(addr string) *http.ServeMux {
		if routes[addr] == nil {
			routes[addr] = http.NewServeMux()
		}
		return routes[addr]
	}
	if a := e.opts.HealthAddr; a != "" {
		m := mux(a)
		m.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			if err := e.live.check(); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok")
		})
		m.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			// A standby replica is ready to take over: failing its probe would only stall
			// rolling updates of a leader-elected Deployment.
			if e.opts.LeaderElect && !e.lead.IsLeader() {
				fmt.Fprintln(w, "ok (standby: not the leader)")
				return
			}
			if !e.Ready() {
				http.Error(w, "informers not synced", http.StatusServiceUnavailable)
				return
			}
			if e.ring != nil && !e.ring.UpToDate() {
				http.Error(w, "the held shard buckets' caches are not synced", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok")
		})
	}
	if a := e.opts.MetricsAddr; a != "" {
		m := mux(a)
		m.Handle("/metrics", promhttp.HandlerFor(e.opts.Metrics.Registry, promhttp.HandlerOpts{}))
		if e.trace != nil {
			m.Handle(trace.Prefix, e.trace.Handler())
		}
		if e.opts.Profiling {
			m.HandleFunc("/debug/pprof/", pprof.Index)
			m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			m.HandleFunc("/debug/pprof/profile", pprof.Profile)
			m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			m.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
	}
	s := &servers{}
	for addr, m := range routes {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			s.shutdown()
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		srv := &http.Server{Handler: m, ReadHeaderTimeout: 5 * time.Second}
		s.list = append(s.list, srv)
		if addr == e.opts.HealthAddr {
			e.healthAddr.Store(ln.Addr().String())
		}
		e.log.Info("serving", "addr", ln.Addr().String())
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				e.log.Warn("server stopped", "addr", addr, "err", err)
			}
		}()
	}
	return s, nil
}

func (s *servers) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.list {
		_ = srv.Shutdown(ctx)
	}
}

// HealthAddr is the bound address of /healthz and /readyz once serving ("127.0.0.1:0"
// resolves to a real port), else "".
func (e *Engine) HealthAddr() string {
	a, _ := e.healthAddr.Load().(string)
	return a
}

// Liveness bounds: /healthz fails only for what a restart can cure, a worker stuck inside a
// pass or a queue no worker takes from. Both are measured in passes and takes, never in
// requests: an apiserver or an endpoint that cannot be reached ends passes with an error (and
// puts keys in backoff, where they are not ready), so an outage never fails the probe and
// never turns into a restart storm.
const (
	// stuckGrace is how much longer than its CRD's timeout a pass may run: the timeout bounds
	// the call, the grace the writes around it.
	stuckGrace = 2 * time.Minute
	// passWriteGrace is how much longer than its call a pass's context lasts (the reads and
	// writes around the call): below stuckGrace, so that a pass blocked on the apiserver
	// ends with an error before the probe would call it stuck.
	passWriteGrace = 90 * time.Second
	// stallAfter is how long ready keys may wait while a worker is free and none takes one.
	stallAfter = 2 * time.Minute
)

// liveness watches every controller's queue for /healthz.
type liveness struct {
	// clock is time.Now; tests set another (export_test.go) while the engine runs.
	clock atomic.Pointer[func() time.Time]
	// paused is true while an endpoint asked to wait (Retry-After): remote.Pauses.Holding.
	paused func(time.Time) bool
	mu     sync.Mutex
	queues []*watchedQueue
}

func newLiveness(now func() time.Time, paused func(time.Time) bool) *liveness {
	l := &liveness{paused: paused}
	l.clock.Store(&now)
	return l
}

func (l *liveness) now() time.Time { return (*l.clock.Load())() }

// watch wraps one controller's queue: its Get starts a pass and its Done ends it. workers is
// how many take from it; timeout bounds one pass's call.
func (l *liveness) watch(name string, workers int, timeout time.Duration, q workqueue.TypedRateLimitingInterface[string]) workqueue.TypedRateLimitingInterface[string] {
	w := &watchedQueue{TypedRateLimitingInterface: q, l: l, name: name, workers: workers,
		limit: timeout + stuckGrace, inPass: map[string]time.Time{}}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queues = append(l.queues, w)
	return w
}

// check is nil while ork is alive; else it says which worker or queue is stuck. Queues shut
// down (a stop, a lost Lease) are forgotten.
func (l *liveness) check() error {
	now := l.now()
	l.mu.Lock()
	live := l.queues[:0]
	for _, q := range l.queues {
		if !q.ShuttingDown() {
			live = append(live, q)
		}
	}
	l.queues = live
	queues := slices.Clone(live)
	l.mu.Unlock()
	for _, q := range queues {
		if err := q.check(now, l.paused); err != nil {
			return err
		}
	}
	return nil
}

// watchedQueue is a controller's queue that records when its keys are taken and done.
type watchedQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	l       *liveness
	name    string
	workers int
	limit   time.Duration
	mu      sync.Mutex
	started bool
	// lastTake is when a worker last took a key, or first asked for one.
	lastTake time.Time
	inPass   map[string]time.Time
}

func (q *watchedQueue) Get() (string, bool) {
	q.mu.Lock()
	if !q.started { // the workers start: the stall clock starts with them, not at the sync wait
		q.started, q.lastTake = true, q.l.now()
	}
	q.mu.Unlock()
	key, shutdown := q.TypedRateLimitingInterface.Get()
	if !shutdown {
		now := q.l.now()
		q.mu.Lock()
		q.lastTake, q.inPass[key] = now, now
		q.mu.Unlock()
	}
	return key, shutdown
}

func (q *watchedQueue) Done(key string) {
	q.mu.Lock()
	delete(q.inPass, key)
	q.mu.Unlock()
	q.TypedRateLimitingInterface.Done(key)
}

func (q *watchedQueue) check(now time.Time, paused func(time.Time) bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for key, since := range q.inPass {
		if d := now.Sub(since); d > q.limit {
			return fmt.Errorf("crd %s: a worker has been inside the pass of %s for %v, longer than the timeout plus %v",
				q.name, key, d.Round(time.Second), stuckGrace)
		}
	}
	if !q.started || len(q.inPass) >= q.workers || q.Len() == 0 {
		return nil // not running yet, every worker busy (each within its bound), or nothing ready
	}
	if d := now.Sub(q.lastTake); d > stallAfter && !paused(now) {
		return fmt.Errorf("crd %s: %d key(s) ready and no worker took one for %v", q.name, q.Len(), d.Round(time.Second))
	}
	return nil
}
