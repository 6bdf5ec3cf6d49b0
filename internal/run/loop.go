package run

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/orkspace/ork/internal/run/shardring"
	"github.com/orkspace/ork/internal/run/targetpass"
)

// runControllers starts informers and workers, and stops them when ctx ends. Each CRD's
// workers start as soon as its own caches (its informer and its children's) have synced, so
// one type that cannot be listed does not hold the others back; past CacheSyncTimeout it
// fails the run, naming that type. A stop (ctx ends) drains in-flight reconciles within the
// shutdown timeout; a lost Lease (ctx's cause is errLeadershipLost) stops them at once.
func (e *Engine) runControllers(ctx context.Context) error {
	// The broadcaster outlives ctx (reconciles draining after a stop still record Events)
	// but not the run: its Events are sent before the Lease is released.
	// A dry run has no recorder: it records no Event.
	if e.dry == nil {
		broadcaster := record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
		broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: e.kube.CoreV1().Events("")})
		defer broadcaster.Shutdown()
		e.recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: FieldManager})
	}

	dyn, meta := e.dyn, e.meta
	if e.ring != nil {
		// Each replica caches its own CRs' children: those of its held buckets' slots.
		dyn, meta = e.ring.Dynamic(dyn), e.ring.Metadata(meta)
	}
	factories := newChildInformers(dyn, meta, e.set, e.opts.Name, e.opts.WatchNamespaces)
	var controllers []*controller
	// ShutDown is idempotent: this also ends the queues' goroutines on an early return.
	defer func() {
		for _, c := range controllers {
			c.queue.ShutDown()
			c.rec.close()
		}
	}()
	for _, crd := range e.set.CRDs {
		c, err := newController(ctx, e, crd, factories)
		if err != nil {
			return fmt.Errorf("crd %s: %w", crd.Name, err)
		}
		controllers = append(controllers, c)
	}
	e.passing.Store(&controllers)
	defer e.passing.Store(nil)
	if e.ring != nil {
		ms := make([]shardring.Member, len(controllers))
		for i, c := range controllers {
			ms[i] = ringMember{c}
		}
		e.ring.Start(ctx, shardring.Members{Controllers: ms, Recorder: e.recorder,
			SlotChildren: e.childLabeller(controllers).Taken,
			ChildStores:  childStoresOf(controllers, factories.needFull)})
	}
	e.labelAtStart(ctx, controllers)
	// Before any pass: a restart resumes each rollout at its step, with its CRs on each side.
	rollouts := e.rollouts(controllers)
	if err := rollouts.Resume(ctx); err != nil {
		return err
	}
	rolloutCtx, stopRollouts := context.WithCancel(ctx)
	rolloutsDone := make(chan struct{})
	go func() { defer close(rolloutsDone); rollouts.Run(rolloutCtx, e.opts.RolloutInterval) }()
	// Its last write goes before the Lease is released.
	defer func() { stopRollouts(); <-rolloutsDone }()
	// Informers keep running until every worker has drained (a reconcile finishing during
	// shutdown still reads children from the cache), and are waited for: none outlives Run.
	stopInformers := startInformers(factories, controllers)
	defer stopInformers()
	// The targets' child informers too, after the drain; the probes stop first.
	targets := make([]*targetpass.Targets, len(controllers))
	for i, c := range controllers {
		targets[i] = c.targets
	}
	defer func() {
		for _, t := range targets {
			t.Close()
		}
	}()
	defer targetpass.Probe(ctx, e.targets, e.log, targets...)()

	// Workers get their own context: a stop signal drains the queue first and cancels
	// in-flight calls only when the shutdown timeout runs out.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	w := &workerGroup{}
	// Waits for caches still running when the run ends (another CRD's failed) end with it.
	syncCtx, cancelSync := context.WithCancel(ctx)
	defer cancelSync()
	syncFailed := e.startWorkers(syncCtx, workCtx, controllers, w)

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-syncFailed:
	case <-e.dry.AllDone(): // one pass over every custom resource (ork run --dry-run)
	}
	e.ready.Store(false)
	w.close()
	for _, c := range controllers {
		c.queue.ShutDown()
	}
	if runErr != nil || leaseLost(ctx) {
		// No drain: another replica may lead already, and a failed start has nothing to
		// finish. In-flight calls are cancelled and their writes refused.
		cancelWork()
		w.wait()
		if runErr == nil {
			runErr = context.Cause(ctx)
		}
		return runErr
	}
	e.drain(w, cancelWork)
	return nil
}

// startWorkers starts each controller's workers once its caches synced. The channel gets
// the first cache that did not sync in time.
func (e *Engine) startWorkers(ctx, workCtx context.Context, controllers []*controller, w *workerGroup) <-chan error {
	syncFailed := make(chan error, len(controllers))
	var started atomic.Int32
	step := e.step("waiting for the caches of %d CRD(s) and their children to sync", len(controllers))
	var once sync.Once
	done := func(err error) { once.Do(func() { step(err) }) }
	context.AfterFunc(ctx, func() { done(ctx.Err()) })
	for _, c := range controllers {
		go func() {
			if err := c.waitSynced(ctx, e.opts.CacheSyncTimeout); err != nil {
				if ctx.Err() == nil {
					done(err)
					syncFailed <- err
				}
				return
			}
			e.dry.Expect(c.cfg.crd.Name, c.informer.GetIndexer().ListKeys())
			if !w.start(c.cfg.workers, func() {
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
	return syncFailed
}

// drain lets in-flight reconciles finish within the shutdown timeout, then cancels them.
// Queued keys are left for the next start (or the next leader).
func (e *Engine) drain(w *workerGroup, cancelWork context.CancelFunc) {
	e.log.Info("shutting down: draining in-flight reconciles", "timeout", e.opts.ShutdownTimeout.String())
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
}

// startInformers runs the CRDs' informers and the shared child informers; the returned
// func stops them and waits until every one has returned.
func startInformers(factories childInformers, controllers []*controller) func() {
	stop := make(chan struct{})
	factories.start(stop)
	var wg sync.WaitGroup
	for _, c := range controllers {
		wg.Go(func() { c.informer.Run(stop) })
		wg.Go(func() { c.related.Run(stop) })
	}
	return func() {
		close(stop)
		factories.shutdown()
		wg.Wait()
	}
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
