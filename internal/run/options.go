// Package run is ork's reconcile engine: informers, a rate-limited work queue and workers per
// CRD, server-side apply, status, events, health and metrics. The reconcile decision itself
// comes from the remote reconciler (internal/run/remote) or the declarative one.
package run

import (
	"log/slog"
	"time"

	"k8s.io/client-go/rest"
)

// Options configure the engine. Zero values take the documented defaults.
type Options struct {
	// RESTConfig reaches the cluster. A zero QPS/Burst becomes DefaultQPS/DefaultBurst:
	// client-go's own 5/10 would throttle ork, not the apiserver.
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
	// InstallCRDs applies each crdFile at start and waits until it is Established.
	InstallCRDs bool
	// LeaderElect runs the controllers only while holding the Lease LeaseName in Namespace.
	LeaderElect bool
	// LeaseName defaults to "orkestra".
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
	// SkipPreflight skips the start-up access review (for tests of the preflight's absence).
	SkipPreflight bool
	// Progress shows start-up steps (CRDs, preflight, cache sync); default: log lines.
	Progress Progress
	// Logger receives structured logs; default discards.
	Logger *slog.Logger
	// Metrics receives metrics; default a fresh registry.
	Metrics *Metrics
}

// Client-side rate limits sized for reconcile throughput: each reconcile costs a status
// patch plus one apply per child.
const (
	DefaultQPS   = 100
	DefaultBurst = 200
)

func (o *Options) defaults() {
	if o.RESTConfig != nil && o.RESTConfig.QPS == 0 {
		o.RESTConfig = rest.CopyConfig(o.RESTConfig)
		o.RESTConfig.QPS, o.RESTConfig.Burst = DefaultQPS, DefaultBurst
	}
	if o.Namespace == "" {
		o.Namespace = "orkestra-system"
	}
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
	if o.DiscoveryResetInterval <= 0 {
		o.DiscoveryResetInterval = 10 * time.Second
	}
	if o.SecretTTL <= 0 {
		o.SecretTTL = DefaultSecretTTL
	}
	if o.LeaseName == "" {
		o.LeaseName = "orkestra"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
}
