package run

import (
	"log/slog"
	"slices"
	"time"

	prov "github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/runplan"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// Options configure the engine. Zero values take the documented defaults.
type Options struct {
	// RESTConfig reaches the cluster. A zero QPS means no client-side rate limit
	// (NoClientRateLimit), not client-go's 5/10: the apiserver's own fairness limits ork.
	RESTConfig *rest.Config
	// Namespace is ork's own namespace: the default for secretRef.namespace and the Lease.
	// Default "orkestra-system".
	Namespace string
	// BackoffBase and BackoffMax bound per-key exponential backoff. Default 1s and 5m.
	BackoffBase, BackoffMax time.Duration
	// ShutdownTimeout is how long in-flight reconciles may finish after a stop. Default 30s.
	ShutdownTimeout time.Duration
	// HealthAddr serves /healthz and /readyz; MetricsAddr serves /metrics. When equal, one
	// server serves all three. Empty disables the server.
	HealthAddr, MetricsAddr string
	// Record, when set, is given every exchange with a remote reconciler (ork run --record:
	// exchange.Recorder.Record). Default nil.
	Record func(exchange.Exchange)
	// DebugDecisions keeps the last decisions of each object and serves them on MetricsAddr
	// at /debug/decisions/ (ork trace): off by default, as it is unauthenticated.
	DebugDecisions bool
	// Redact are dot-paths masked from what is recorded, and in the request and inputs
	// digests of a decision (docs/provenance.md). Default none.
	Redact []string
	// Profiling serves Go's /debug/pprof on MetricsAddr (never the probe address): off by
	// default, as it is unauthenticated.
	Profiling bool
	// InstallCRDs applies each crdFile at start and waits until it is Established.
	InstallCRDs bool
	// WatchNamespaces, when set, limits ork to the custom resources in these namespaces: their
	// informers, and those of namespaced child types, are per namespace, and a child outside
	// them is refused. Default none: every namespace.
	WatchNamespaces []string
	// Name is the operator's name (ork run --name): the value of the OperatorLabel on every
	// child, which the child caches select on, and the default LeaseName. Default
	// naming.DefaultOperator ("orkestra").
	Name string
	// LeaderElect runs the controllers only while holding the Lease LeaseName in Namespace.
	LeaderElect bool
	// ShardBuckets, when set, shares the custom resources among active replicas (ork run
	// --shard-buckets): a power of two from 2 to 256, each bucket fenced by a Lease of its
	// own in Namespace, with the Lease timings below. Not with LeaderElect or DryRun.
	// Default 0: one replica reconciles everything (with LeaderElect, the leader).
	ShardBuckets int
	// ShardMember names this replica's member Lease <Name>-member-<ShardMember>: the pod
	// name. Default the hostname.
	ShardMember string
	// ShardMemberUID is the uid of the pod ShardMember names, in Namespace: the member
	// Lease names it as its owner, so the garbage collector deletes the Lease with the pod.
	// Default none.
	ShardMemberUID types.UID
	// ShardClientFilterOnly sends no shard selector to the apiserver, as a server without
	// the ShardedListAndWatch gate ignores it: every CR is received and the client filter
	// keeps the held buckets' (for tests of that path). Default false.
	ShardClientFilterOnly bool
	// LeaseName defaults to Name.
	LeaseName string
	// Identity names this replica in the Lease; default <hostname>_<random>, so that two
	// processes on one host are two candidates.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election. Default 15s, 10s
	// and 2s (client-go's and kube-controller-manager's defaults).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// CacheSyncTimeout bounds the wait for a CRD's informers (its own and its children's) to
	// list their types at start; past it, Run fails naming the types. Default 2m.
	CacheSyncTimeout time.Duration
	// ChildMinInterval is the shortest time between two passes of one key that a child's
	// change may start: a rollout or a controller fighting ork cannot run the remote
	// reconciler hot. Default 1s.
	ChildMinInterval time.Duration
	// DiscoveryResetInterval is the shortest time between two refreshes of the discovery
	// cache that an unknown kind may cause. Default 10s.
	DiscoveryResetInterval time.Duration
	// SecretTTL is how long a Secret read for a remote reconciler (auth token, CA) is
	// reused. Default DefaultSecretTTL (5s).
	SecretTTL time.Duration
	// RolloutInterval is how often each candidate's gate is judged and the rollout's state
	// written to the ConfigMap <name>-rollout (reconcile.remote.candidate). Default 10s.
	RolloutInterval time.Duration
	// SkipPreflight skips the start-up access review (for tests of the preflight's absence).
	SkipPreflight bool
	// DryRun makes every write a server-side dry run (applies, status, prune, finalizers)
	// and hands what each pass would change to OnPlan: no resourceVersion changes, no Event,
	// no Lease (not with LeaderElect or InstallCRDs). Every request carries
	// prepared.dryRun: true. Default false.
	DryRun bool
	// Watch, with DryRun, keeps going; without it Run returns after one pass over every
	// custom resource that existed when the caches synced (no requeue, no backoff). Default
	// false.
	Watch bool
	// IncludeDeletes, with DryRun, calls the reconciler for custom resources being deleted;
	// by default they are shown, not called. Default false.
	IncludeDeletes bool
	// OnPlan, with DryRun, receives what each pass would change, from the workers
	// (concurrently). Default nil.
	OnPlan func(runplan.CR)
	// DecisionLog receives one entry per pass that called a reconciler (ork run
	// --decision-log: decisionlog.Open); an Append that fails is logged, never fails the
	// pass. With it, each child write reads the child's whole object before and after, for
	// the changed field paths. Default nil: no log, and children read as metadata only.
	DecisionLog DecisionLog
	// OperationCallbackURL, OperationCallbackAddr and OperationCallbackSecret turn on the
	// completion callback of long-running operations (ork run --operation-callback-*): ork
	// serves POST /operations/{token} on OperationCallbackAddr, sends reconcilers
	// OperationCallbackURL + "/operations/" + a token in prepared.callback and
	// prepared.operation.callback, and signs the tokens with the key "key" of the Secret
	// OperationCallbackSecret in Namespace. All three or none. Default none: no callback.
	OperationCallbackURL, OperationCallbackAddr, OperationCallbackSecret string
	// Progress shows start-up steps (CRDs, preflight, cache sync); default: log lines.
	Progress Progress
	// Logger receives structured logs; default discards.
	Logger *slog.Logger
	// Metrics receives metrics; default a fresh registry.
	Metrics *Metrics
}

// DecisionLog appends decision log entries (decisionlog.Log).
type DecisionLog interface {
	Append(e prov.Entry) (prov.Entry, error)
}

// NoClientRateLimit is the QPS that turns client-go's client-side rate limiter off: ork's
// default. Since Kubernetes 1.29 every apiserver runs API Priority and Fairness: it queues
// each client's requests in its own flow and answers 429 (with Retry-After, which client-go
// honours) when its share is used, so the apiserver protects itself and its other tenants
// fairly. A client-side limit can only bind before the apiserver is busy: with client-go's
// 5/10, or even 100/200, ork ran at a third of what the apiserver could take.
const NoClientRateLimit = -1

// DefaultSecretTTL is how long a Secret read for the remote reconciler is reused: a rotated
// token is picked up within seconds, and a busy operator makes one GET per Secret per TTL
// instead of one per call.
const DefaultSecretTTL = 5 * time.Second

func (o *Options) defaults() {
	if o.RESTConfig != nil && o.RESTConfig.QPS == 0 {
		o.RESTConfig = rest.CopyConfig(o.RESTConfig)
		o.RESTConfig.QPS = NoClientRateLimit
	}
	if o.Namespace == "" {
		o.Namespace = "orkestra-system"
	}
	o.WatchNamespaces = slices.Compact(slices.Sorted(slices.Values(o.WatchNamespaces)))
	if o.BackoffBase <= 0 {
		o.BackoffBase = time.Second
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 5 * time.Minute
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 30 * time.Second
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = 15 * time.Second
	}
	if o.RenewDeadline <= 0 {
		o.RenewDeadline = 10 * time.Second
	}
	if o.RetryPeriod <= 0 {
		o.RetryPeriod = 2 * time.Second
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = 2 * time.Minute
	}
	if o.ChildMinInterval <= 0 {
		o.ChildMinInterval = time.Second
	}
	if o.RolloutInterval <= 0 {
		o.RolloutInterval = 10 * time.Second
	}
	if o.DiscoveryResetInterval <= 0 {
		o.DiscoveryResetInterval = 10 * time.Second
	}
	if o.SecretTTL <= 0 {
		o.SecretTTL = DefaultSecretTTL
	}
	if o.Name == "" {
		o.Name = naming.DefaultOperator
	}
	if o.LeaseName == "" {
		o.LeaseName = o.Name
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
}
