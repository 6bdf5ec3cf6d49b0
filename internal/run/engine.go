package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
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
	"k8s.io/client-go/tools/cache"
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
	// healthAddr is the bound health address, for callers that asked for port 0.
	healthAddr atomic.Value
	log        *slog.Logger
}

// New checks the options and builds the clients; nothing talks to the cluster yet.
func New(set *katalog.Set, opts Options) (*Engine, error) {
	opts.defaults()
	if opts.RESTConfig == nil {
		return nil, errors.New("no cluster configuration")
	}
	if opts.Identity == "" {
		host, _ := os.Hostname()
		opts.Identity = host
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
		opts:   opts,
		set:    set,
		kube:   kube,
		dyn:    dyn,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Discovery())),
		log:    opts.Logger,
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

// runControllers starts informers and workers, and stops them when ctx ends.
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
	var synced []cache.InformerSynced
	for _, c := range controllers {
		go c.informer.Run(informerStop)
		synced = append(synced, c.informer.HasSynced)
	}
	for _, c := range controllers {
		synced = append(synced, c.childrenSynced()...)
	}
	done := e.step("waiting for the caches of %d CRD(s) and their children to sync", len(controllers))
	// WaitForCacheSync gives up only when ctx ends: that is a stop, not a failure.
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		done(ctx.Err())
		return nil
	}
	done(nil)

	// Workers get their own context: a stop signal drains the queue first and cancels
	// in-flight calls only when the shutdown timeout runs out.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	var workers sync.WaitGroup
	for _, c := range controllers {
		for range c.workers {
			workers.Go(func() {
				for c.processNext(workCtx) {
				}
			})
		}
	}
	e.ready.Store(true)
	e.log.Info("ork is running", "crds", len(controllers))

	<-ctx.Done()
	e.ready.Store(false)
	e.log.Info("shutting down: draining in-flight reconciles", "timeout", e.opts.ShutdownTimeout.String())
	// Queued keys are left for the next start (or the next leader); only in-flight ones finish.
	for _, c := range controllers {
		c.stopping.Store(true)
		c.queue.ShutDown()
	}
	drained := make(chan struct{})
	go func() { workers.Wait(); close(drained) }()
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
