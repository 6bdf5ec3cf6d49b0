package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/orkspace/ork/internal/dotpath"
	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/metacreate"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/rbacgen"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/run/apitypes"
	"github.com/orkspace/ork/internal/run/apiwarnings"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/crdinstall"
	"github.com/orkspace/ork/internal/run/dryplan"
	"github.com/orkspace/ork/internal/run/liveness"
	"github.com/orkspace/ork/internal/run/opcallback"
	"github.com/orkspace/ork/internal/run/ownedfields"
	"github.com/orkspace/ork/internal/run/secretcache"
	"github.com/orkspace/ork/internal/run/shardring"
	"github.com/orkspace/ork/internal/run/spokes"
	"github.com/orkspace/ork/internal/run/targetpass"
	"github.com/orkspace/ork/internal/target"
	"github.com/orkspace/ork/internal/trace"
)

// FieldManager is the server-side apply field manager of everything ork writes.
const FieldManager = naming.FieldManager

// Engine runs one controller per CRD of a Katalog.
type Engine struct {
	opts Options
	set  *katalog.Set
	kube kubernetes.Interface
	dyn  dynamic.Interface
	meta metadata.Interface
	// creator creates children and takes the answer as metadata.
	creator childwrite.Creator
	// api is what the cluster serves: discovery and the REST mapper (run/apitypes).
	api      *apitypes.Types
	recorder record.EventRecorder
	ready    atomic.Bool
	// lead is the leader election and its write guard.
	lead *leadership.Leadership
	// fence is the write guard asked before every write: lead's, or the ring's when sharded.
	fence fence
	// gate decides which CRs this replica passes: all, or its buckets' when sharded.
	gate passGate
	// ring is the sharded ring and its guard (ShardBuckets); nil in single-leader mode.
	ring *shardring.Ring
	// healthAddr is the bound health address, for callers that asked for port 0.
	healthAddr atomic.Value
	// writes and childLocks are shared by every CRD's controller: two CRDs may name the same
	// child.
	writes     *childwrite.Book
	childLocks *childwrite.Locks
	// owned tells whether ork's field manager still owns every field of a child it would
	// apply (appliedUnchanged).
	owned *ownedfields.Checker
	// passing are the controllers running now (nil: none, a standby), for the completion
	// callback's lookups and wakes (opcallbacks.go).
	passing atomic.Pointer[[]*controller]
	// secrets reads the remote reconcilers' Secrets (auth tokens, CAs), cached briefly.
	secrets *secretcache.Cache
	// targets are the clients of the clusters children go to besides this one, and their
	// breakers (docs/multicluster.md); nil when no CRD names a target. spokeUse counts the
	// controllers using each.
	targets  *target.Pool
	spokeUse spokes.Uses
	// pauses are the endpoints that asked to wait (Retry-After), shared by every
	// remote CRD: one service often reconciles several.
	pauses *remote.Pauses
	// live watches the workers for /healthz (run/liveness).
	live *liveness.Checker
	// dry is the dry run (DryRun); nil when ork writes for real.
	dry *dryplan.Collector
	// trace keeps each object's last decisions (DebugDecisions); nil when off.
	trace  *trace.Store
	redact []dotpath.Path
	// logStopped is set by the first pass that finds the decision log stopped by a write
	// error, which alone logs it (provenance.go).
	logStopped atomic.Bool
	log        *slog.Logger
}

// New checks the options and builds the clients; nothing talks to the cluster yet.
func New(set *katalog.Set, opts Options) (*Engine, error) {
	opts.defaults()
	if opts.RESTConfig == nil {
		return nil, errors.New("no cluster configuration")
	}
	if errs := validation.IsDNS1123Label(opts.Name); len(errs) > 0 {
		// The name is a label value the child caches select on, and the default Lease name.
		return nil, fmt.Errorf("name %q: %s", opts.Name, strings.Join(errs, "; "))
	}
	for _, ns := range opts.WatchNamespaces {
		// "" would be every namespace under a filter no key ever matches; "a,b" one
		// namespace that cannot exist: both would watch nothing, silently.
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("watch namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	if opts.DryRun && (opts.LeaderElect || opts.InstallCRDs) {
		return nil, errors.New("a dry run writes nothing: not with leader election (a Lease) or CRD installation")
	}
	if err := opcallback.CheckOptions(opts.OperationCallbackURL, opts.OperationCallbackAddr, opts.OperationCallbackSecret); err != nil {
		return nil, err
	}
	if opts.ShardBuckets != 0 {
		if err := naming.ValidBuckets(opts.ShardBuckets); err != nil {
			return nil, err
		}
		if opts.DryRun || opts.LeaderElect {
			return nil, errors.New("shard buckets: a sharded ring fences itself by Leases: not with leader election, nor in a dry run (which writes nothing)")
		}
		for _, c := range set.CRDs {
			// A rollout's state and gate live in one ConfigMap that one leader writes;
			// several replicas judging their own slices would race on it.
			if r := c.OperatorBox.Reconcile.Remote; r != nil && r.Candidate != nil {
				return nil, fmt.Errorf("CRD %q: reconcile.remote.candidate is not rolled out by sharded replicas yet: run the rollout with --leader-elect, or remove candidate", c.Name)
			}
		}
	}
	if err := rbacgen.CheckWatchScope(set, opts.WatchNamespaces); err != nil {
		return nil, err
	}
	if opts.Identity == "" && opts.ShardBuckets == 0 {
		// A sharded replica's default is <member>_<random> (shard.Options.Identity).
		opts.Identity = leadership.DefaultIdentity()
	}
	// Every client but the Lease's goes through the write guard.
	lead := leadership.New(leadership.Options{
		Enabled: opts.LeaderElect, Config: opts.RESTConfig, Namespace: opts.Namespace, Name: opts.LeaseName, OperatorName: opts.Name, Identity: opts.Identity,
		LeaseDuration: opts.LeaseDuration, RenewDeadline: opts.RenewDeadline, RetryPeriod: opts.RetryPeriod, Log: opts.Logger,
	})
	guarded := rest.CopyConfig(opts.RESTConfig)
	if guarded.QPS > 0 && guarded.RateLimiter == nil {
		// One limiter for every client below: each would otherwise get its own, and
		// --kube-api-qps would bind each of the three, not ork.
		burst := guarded.Burst
		if burst <= 0 {
			burst = rest.DefaultBurst
		}
		guarded.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(guarded.QPS, burst)
	}
	var ring *shardring.Ring
	if opts.ShardBuckets != 0 {
		var err error
		if ring, err = newShardRing(set, opts); err != nil {
			return nil, err
		}
		guarded.Wrap(ring.Transport)
	} else {
		guarded.Wrap(lead.Transport)
	}
	// A write that wants its warnings (the status keys a schema prunes) collects them.
	guarded.WarningHandlerWithContext = apiwarnings.NewRouter(opts.RESTConfig)
	// The typed client speaks protobuf, as kube-controller-manager's clients do: it writes
	// only built-in kinds (an Event for each CR turning Ready above all), and protobuf costs
	// a fraction of JSON to encode and decode. Discovery stays on JSON, the one form its
	// decoder reads.
	typed := rest.CopyConfig(guarded)
	typed.ContentType = runtime.ContentTypeProtobuf
	typed.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	kube, err := kubernetes.NewForConfig(typed)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(guarded)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(guarded)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	metaClient, err := metadata.NewForConfig(guarded)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	creator, err := metacreate.New(guarded)
	if err != nil {
		return nil, err
	}
	redact, err := exchange.ParseRedact(opts.Redact)
	if err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	var decisions *trace.Store
	if opts.DebugDecisions {
		decisions = trace.NewStore(trace.Options{})
	}
	pauses := remote.NewPauses()
	e := &Engine{
		live:       liveness.New(time.Now, pauses.Holding),
		trace:      decisions,
		dry:        newDryRunner(opts, len(set.CRDs)),
		redact:     redact,
		opts:       opts,
		set:        set,
		kube:       kube,
		dyn:        dyn,
		meta:       metaClient,
		creator:    creator,
		api:        apitypes.New(disco, opts.DiscoveryResetInterval),
		lead:       lead,
		writes:     childwrite.NewBook(),
		owned:      ownedfields.New(ownedfields.Options{Client: openapi.NewClientWithContext(disco.RESTClient()), Manager: FieldManager}),
		childLocks: childwrite.NewLocks(),
		secrets:    secretcache.New(kube, opts.SecretTTL),
		pauses:     pauses,
		log:        opts.Logger,
	}
	if targetpass.Named(set) {
		// Kubeconfig Secrets are read through the same cache as the reconcilers' tokens: a
		// rotation is seen within its TTL.
		if e.targets, err = target.NewPool(target.Options{Secrets: e.secrets.Secret, UserAgent: opts.RESTConfig.UserAgent}); err != nil {
			return nil, err
		}
	}
	return e.useRing(lead, ring), nil
}

// Ready reports whether every informer has synced and the workers run.
func (e *Engine) Ready() bool { return e.ready.Load() }

// Run installs CRDs if asked, checks permissions, then runs the controllers until ctx ends,
// draining in-flight reconciles within the shutdown timeout. It returns nil on a clean stop.
func (e *Engine) Run(ctx context.Context) error {
	if e.opts.InstallCRDs {
		if err := crdinstall.Install(ctx, e.set.CRDs, crdinstall.Deps{Dyn: e.dyn, API: e.api, Step: e.step}); err != nil {
			return err
		}
	}
	if !e.opts.SkipPreflight {
		if err := e.preflight(ctx); err != nil {
			return err
		}
	}
	// No Secret read outlives the run (after the drain: defers run in reverse).
	defer e.secrets.Close()
	if e.targets != nil {
		defer e.targets.Close() // before the Secret cache: its reads go through it
	}
	srv, err := e.startServers()
	if err != nil {
		return err
	}
	defer srv.Shutdown()

	if e.opts.LeaderElect {
		return e.lead.Run(ctx, e.runControllers)
	}
	if e.ring != nil {
		return e.ring.Run(ctx, e.runControllers)
	}
	return e.runControllers(ctx)
}
