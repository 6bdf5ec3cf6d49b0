package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/record"

	"github.com/orkspace/ork/internal/katalog"
)

// FieldManager is the server-side apply field manager of everything ork writes.
const FieldManager = "orkestra"

// Engine runs one controller per CRD of a Katalog.
type Engine struct {
	opts     Options
	set      *katalog.Set
	kube     kubernetes.Interface
	dyn      dynamic.Interface
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	recorder record.EventRecorder
	ready    atomic.Bool
	// leading is true while this replica holds the Lease (with LeaderElect).
	leading atomic.Bool
	// lead is the write guard under leader election.
	lead leadership
	// healthAddr is the bound health address, for callers that asked for port 0.
	healthAddr atomic.Value
	// discoveryReset rate-limits refreshes of the discovery cache (mapping.go).
	discoveryReset resetLimiter
	// writes and childLocks are shared by every CRD's controller: two CRDs may name the same
	// child.
	writes     *writeBook
	childLocks childLocks
	log        *slog.Logger
}

// New checks the options and builds the clients; nothing talks to the cluster yet.
func New(set *katalog.Set, opts Options) (*Engine, error) {
	opts.defaults()
	if opts.RESTConfig == nil {
		return nil, errors.New("no cluster configuration")
	}
	if opts.Identity == "" {
		opts.Identity = defaultIdentity()
	}
	kube, err := kubernetes.NewForConfig(opts.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(opts.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	return &Engine{
		opts:           opts,
		set:            set,
		kube:           kube,
		dyn:            dyn,
		mapper:         restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Discovery())),
		lead:           leadership{enabled: opts.LeaderElect, renewDeadline: opts.RenewDeadline},
		discoveryReset: resetLimiter{every: opts.DiscoveryResetInterval},
		writes:         newWriteBook(),
		log:            opts.Logger,
	}, nil
}

// Ready reports whether every informer has synced and the workers run.
func (e *Engine) Ready() bool { return e.ready.Load() }

// Run installs CRDs if asked, checks permissions, then runs the controllers until ctx ends,
// draining in-flight reconciles within the shutdown timeout. It returns nil on a clean stop.
func (e *Engine) Run(ctx context.Context) error {
	if e.opts.InstallCRDs {
		if err := e.installCRDs(ctx); err != nil {
			return err
		}
	}
	if !e.opts.SkipPreflight {
		if err := e.preflight(ctx); err != nil {
			return err
		}
	}
	srv, err := e.startServers()
	if err != nil {
		return err
	}
	defer srv.shutdown()

	// The broadcaster outlives ctx: reconciles draining after a stop still record Events.
	broadcaster := record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: e.kube.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	e.recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: FieldManager})

	if e.opts.LeaderElect {
		return e.runWithLeaderElection(ctx, e.runControllers)
	}
	return e.runControllers(ctx)
}

// runControllers starts informers and workers, and stops them when ctx ends. Each CRD's
// workers start as soon as its own caches (its informer and its children's) have synced, so
// one type that cannot be listed does not hold the others back; past CacheSyncTimeout it
// fails the run, naming that type. A stop (ctx ends) drains in-flight reconciles within the
// shutdown timeout; a lost Lease (ctx's cause is errLeadershipLost) stops them at once.
func (e *Engine) runControllers(ctx context.Context) error {
	factory := dynamicinformer.NewDynamicSharedInformerFactory(e.dyn, 0)
	var controllers []*controller
	for _, crd := range e.set.CRDs {
		c, err := newController(ctx, e, crd, factory)
		if err != nil {
			return fmt.Errorf("crd %s: %w", crd.Name, err)
		}
		controllers = append(controllers, c)
	}
	// ShutDown is idempotent: this also ends the queues' goroutines on an early return.
	defer func() {
		for _, c := range controllers {
			c.queue.ShutDown()
		}
	}()
	// Informers keep running until every worker has drained: a reconcile finishing during
	// shutdown still reads children from the cache.
	informerStop := make(chan struct{})
	defer close(informerStop)
	factory.Start(informerStop)
	for _, c := range controllers {
		go c.informer.Run(informerStop)
	}

	// Workers get their own context: a stop signal drains the queue first and cancels
	// in-flight calls only when the shutdown timeout runs out.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	w := &workerGroup{}
	syncFailed := make(chan error, len(controllers))
	var started atomic.Int32
	step := e.step("waiting for the caches of %d CRD(s) and their children to sync", len(controllers))
	var stepOnce sync.Once
	done := func(err error) { stepOnce.Do(func() { step(err) }) }
	// Waits still running when the run ends (another CRD's caches failed) end with it.
	syncCtx, cancelSync := context.WithCancel(ctx)
	defer cancelSync()
	for _, c := range controllers {
		go func() {
			if err := c.waitSynced(syncCtx, e.opts.CacheSyncTimeout); err != nil {
				syncFailed <- err
				return
			}
			if !w.start(c.workers, func() {
				for c.processNext(workCtx) {
				}
			}) {
				return // stopping
			}
			if int(started.Add(1)) == len(controllers) {
				done(nil)
				e.ready.Store(true)
				e.log.Info("ork is running", "crds", len(controllers))
			}
		}()
	}

	var runErr error
	select {
	case <-ctx.Done():
		done(ctx.Err())
	case runErr = <-syncFailed:
		done(runErr)
	}
	e.ready.Store(false)
	w.close()
	for _, c := range controllers {
		c.stopping.Store(true)
		c.queue.ShutDown()
	}
	if runErr != nil || errors.Is(context.Cause(ctx), errLeadershipLost) {
		// No drain: another replica may lead already, and a failed start has nothing to
		// finish. In-flight calls are cancelled and their writes refused.
		cancelWork()
		w.wait()
		if runErr == nil {
			runErr = context.Cause(ctx)
		}
		return runErr
	}
	e.log.Info("shutting down: draining in-flight reconciles", "timeout", e.opts.ShutdownTimeout.String())
	// Queued keys are left for the next start (or the next leader); only in-flight ones finish.
	drained := make(chan struct{})
	go func() { w.wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(e.opts.ShutdownTimeout):
		e.log.Warn("shutdown timeout: cancelling in-flight reconciles")
		cancelWork()
		<-drained
	}
	e.log.Info("stopped")
	return nil
}

// workerGroup runs workers that may be started from several goroutines until it is closed.
type workerGroup struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// start runs n copies of fn, unless the group is closed (then false).
func (w *workerGroup) start(n int, fn func()) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	for range n {
		w.wg.Go(fn)
	}
	return true
}

func (w *workerGroup) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

func (w *workerGroup) wait() { w.wg.Wait() }

func (e *Engine) lockChild(ref childRef) func() { return e.childLocks.lock(ref) }
