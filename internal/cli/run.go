package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"github.com/orkspace/ork/internal/decisionlog"
	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/version"
)

type runOptions struct {
	files     []string
	endpoints []string
	// timeouts and authSecrets are --endpoint-timeout's and --auth-secret's values.
	timeouts, authSecrets []string
	cluster               clusterOptions
	qps                   float32
	burst                 int
	engine                run.Options
	// format is -o for --dry-run's plan.
	format output.Format
	// decisionLog is --decision-log's DEST: "" none, "-" stdout, else a file.
	decisionLog string
}

func newRunCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [-f katalog.yaml]...",
		Short: "Run the reconcile loop for every CRD of the Katalog against the current cluster",
		Long: `Run the operators of a Katalog in-process against the current kubeconfig (or the in-cluster
config). For a CRD with reconcile.remote, ork POSTs a PreparedRequest to the endpoint after every
watch event and applies the RemoteReconcileResult; other CRDs use the declarative reconciler.
SIGINT/SIGTERM stop taking work and let in-flight reconciles finish within --shutdown-timeout.
--endpoint CRD=URL calls URL instead of the CRD's endpoint for this run only (the Katalog is not
changed): a reconciler started on this machine while the Katalog names its in-cluster Service.
--endpoint-timeout CRD=DURATION and --auth-secret CRD=[NAMESPACE/]NAME:KEY replace its
reconcile.remote.timeout and auth.secretRef the same way (the chart's timeouts and authSecrets).

--dry-run runs the same loop against the live cluster with every write a server-side dry run
(applies, status, prune, finalizers) and prints, per custom resource, what would change: objects
created, fields changed, children pruned. It writes nothing (no resourceVersion changes, no Event,
no Lease) and exits after one pass over every custom resource, or keeps going with --watch. The
reconciler is called for real, with prepared.dryRun: true; custom resources being deleted are
shown, not called, unless --include-deletes.`,
		Example: `  ork run -f examples/remote/katalog.yaml --install-crds --namespace default
  ork run --kubeconfig ~/.kube/dev --context kind-dev --leader-elect -n ops
  ork run -f katalog.yaml --dry-run -o json
  ork run -f katalog.yaml --endpoint webapp=http://127.0.0.1:8088/reconcile
  ork run -f katalog.yaml --endpoint-timeout webapp=2m --auth-secret webapp=ops/webapp-token:token`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := completeRun(env)
			if err != nil {
				return err
			}
			return runRun(cmd, env, opts)
		},
	}
	addKatalogFlag(cmd)
	f := cmd.Flags()
	f.StringArray("endpoint", nil, "CRD=URL: call this URL instead of the CRD's reconcile.remote.endpoint, for this run only (repeatable; URL alone when the Katalog has one remote CRD)")
	f.StringArray("endpoint-timeout", nil, "CRD=DURATION: bound each call to the CRD's reconciler by this Go duration instead of its reconcile.remote.timeout (repeatable; DURATION alone when the Katalog has one remote CRD)")
	f.StringArray("auth-secret", nil, "CRD=[NAMESPACE/]NAME:KEY: send the token in this Secret key instead of the CRD's reconcile.remote.auth.secretRef (namespace default: ork's own; ork needs get on it; repeatable; the reference alone when the Katalog has one remote CRD)")
	addClusterFlags(cmd)
	addNamespaceFlag(cmd, "ork's own namespace: default for secretRef.namespace and the leader Lease; it does not limit what ork watches: see --watch-namespace")
	f.StringArray("watch-namespace", nil, "reconcile only the custom resources in this namespace, with caches there only (repeatable; default every namespace); RBAC: ork rbac gen --watch-namespace")
	f.Float32("kube-api-qps", 0, "client-side limit of requests per second to the apiserver; 0: none, the apiserver's API Priority and Fairness paces ork")
	f.Int("kube-api-burst", 0, "client-side burst to the apiserver, with --kube-api-qps (default 2 x qps)")
	f.Duration("backoff-base", time.Second, "first retry delay of a failed reconcile (per key, doubling)")
	f.Duration("backoff-max", 5*time.Minute, "longest retry delay of a failed reconcile")
	f.Duration("shutdown-timeout", 30*time.Second, "how long in-flight reconciles may finish after SIGTERM")
	f.String("health-addr", ":8081", "address of /healthz and /readyz (empty disables)")
	f.String("metrics-addr", ":8080", "address of /metrics (empty disables)")
	f.String("record", "", "write every exchange with a remote reconciler to this directory, one JSON file per call (auth header removed, Secret data masked)")
	f.StringArray("redact", nil, "dot-path to mask in recorded exchanges and leave out of decision digests (repeatable), e.g. spec.password")
	f.String("decision-log", "", "append one hash-chained JSON line per reconcile to this file (- for stdout): what each pass read and wrote, the changed field paths, never values (ork audit verify checks it; ork blame --decision-log reads it)")
	f.Bool("debug-decisions", false, "keep each object's last 20 decisions and serve them on --metrics-addr at /debug/decisions/ for ork trace (unauthenticated)")
	f.Bool("profiling", false, "serve Go's /debug/pprof on --metrics-addr (unauthenticated: for debugging)")
	f.String("operation-callback-url", "", "with --operation-callback-addr and --operation-callback-secret: the URL reconcilers reach ork's callback listener at (e.g. the Service's); they may POST a long-running operation's completion to it instead of waiting for the next poll (default none: operations are polled)")
	f.String("operation-callback-addr", "", "listen address of the operation callback listener, POST /operations/{token} (e.g. :8082)")
	f.String("operation-callback-secret", "", "Secret in --namespace whose key \"key\" (at least 16 bytes) signs the callback tokens; ork needs get on it (ork rbac gen --operation-callback-secret)")
	f.Bool("install-crds", false, "apply each crdFile at start and wait until it is Established")
	f.Bool("leader-elect", false, "run only while holding a Lease in --namespace (for several replicas)")
	f.String("name", "", "the operator's name: the value of the "+naming.OperatorLabel+" label on every child (its caches select on it) and the default --lease-name"+nameDefault)
	f.String("lease-name", "", "name of the leader election Lease (default --name)")
	f.Duration("leader-elect-lease-duration", 15*time.Second, "how long a standby waits after the last renewal before taking the Lease")
	f.Duration("leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it gives up; it writes nothing once its last renewal is older")
	f.Duration("leader-elect-retry-period", 2*time.Second, "how often candidates try to acquire, and the leader to renew, the Lease")
	f.Int("shard-buckets", 0, "share the custom resources among every replica: cut them by uid into this many buckets (a power of two from 2 to 256), each fenced by a Lease in --namespace, with the --leader-elect-* timings; a replica's member Lease is named after $POD_NAME, else the hostname (0: one replica reconciles everything; not with --leader-elect)")
	f.Bool("shard-client-filter-only", false, "with --shard-buckets: send the apiserver no shard selector, as a server without the ShardedListAndWatch gate ignores it (for tests of the client-side filter)")
	_ = f.MarkHidden("shard-client-filter-only")
	f.Duration("cache-sync-timeout", 2*time.Minute, "how long a CRD's caches may take to list their types at start before ork exits naming the type")
	f.Bool("preflight", true, "check with SelfSubjectAccessReviews that every permission ork needs is granted")
	f.Bool("dry-run", false, "make every write a server-side dry run and print what would change, then exit after one pass over every custom resource")
	f.Bool("watch", false, "with --dry-run: keep going, printing each pass as it ends")
	f.Bool("include-deletes", false, "with --dry-run: call the reconciler for custom resources being deleted too (by default they are shown, not called)")
	addOutputFlag(cmd, output.Text, output.Text, output.JSON)
	return cmd
}

func completeRun(env *Env) (runOptions, error) {
	cfg := env.Config()
	logger, err := env.Logger()
	if err != nil {
		return runOptions{}, err
	}
	ns := orkNamespace(env)
	opts := runOptions{
		files:       cfg.StringSlice("filename"),
		endpoints:   cfg.StringSlice("endpoint"),
		timeouts:    cfg.StringSlice("endpoint-timeout"),
		authSecrets: cfg.StringSlice("auth-secret"),
		cluster:     completeCluster(cfg),
		engine: run.Options{
			Namespace:               ns,
			BackoffBase:             cfg.Duration("backoff-base"),
			BackoffMax:              cfg.Duration("backoff-max"),
			ShutdownTimeout:         cfg.Duration("shutdown-timeout"),
			HealthAddr:              cfg.String("health-addr"),
			MetricsAddr:             cfg.String("metrics-addr"),
			InstallCRDs:             cfg.Bool("install-crds"),
			WatchNamespaces:         cfg.StringSlice("watch-namespace"),
			Profiling:               cfg.Bool("profiling"),
			DebugDecisions:          cfg.Bool("debug-decisions"),
			Redact:                  cfg.StringSlice("redact"),
			LeaderElect:             cfg.Bool("leader-elect"),
			LeaseName:               cfg.String("lease-name"),
			LeaseDuration:           cfg.Duration("leader-elect-lease-duration"),
			RenewDeadline:           cfg.Duration("leader-elect-renew-deadline"),
			RetryPeriod:             cfg.Duration("leader-elect-retry-period"),
			CacheSyncTimeout:        cfg.Duration("cache-sync-timeout"),
			ShardBuckets:            cfg.Int("shard-buckets"),
			ShardMember:             memberName(env),
			ShardMemberUID:          memberUID(env, ns),
			ShardClientFilterOnly:   cfg.Bool("shard-client-filter-only"),
			SkipPreflight:           !cfg.Bool("preflight"),
			OperationCallbackURL:    cfg.String("operation-callback-url"),
			OperationCallbackAddr:   cfg.String("operation-callback-addr"),
			OperationCallbackSecret: cfg.String("operation-callback-secret"),
			Logger:                  logger,
		},
	}
	for _, ns := range opts.engine.WatchNamespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return opts, usageError("--watch-namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	if opts.engine.BackoffBase <= 0 || opts.engine.BackoffMax < opts.engine.BackoffBase {
		return opts, usageError("--backoff-base must be positive and not above --backoff-max")
	}
	if e := opts.engine; e.RetryPeriod <= 0 || e.RenewDeadline <= e.RetryPeriod || e.LeaseDuration <= e.RenewDeadline {
		return opts, usageError("leader election needs --leader-elect-retry-period < --leader-elect-renew-deadline < --leader-elect-lease-duration, all positive")
	}
	if b := opts.engine.ShardBuckets; b != 0 {
		if err := naming.ValidBuckets(b); err != nil {
			return opts, usageError("--shard-buckets: %v (0 keeps one replica reconciling everything)", err)
		}
		if opts.engine.LeaderElect {
			return opts, usageError("--shard-buckets replaces --leader-elect: the replicas share the work, each bucket fenced by a Lease of its own")
		}
	}
	if opts.engine.CacheSyncTimeout <= 0 {
		return opts, usageError("--cache-sync-timeout must be positive")
	}
	if dir := cfg.String("record"); dir != "" {
		rec, err := exchange.NewRecorder(dir, exchange.RecorderOptions{Redact: opts.engine.Redact,
			OnError: func(err error) { logger.Warn("recording an exchange failed", "err", err) }})
		if err != nil {
			return opts, usageError("--record: %v", err)
		}
		opts.engine.Record = rec.Record
	}
	if (opts.engine.DebugDecisions || opts.engine.Profiling) && opts.engine.MetricsAddr == "" {
		return opts, usageError("--debug-decisions and --profiling are served on --metrics-addr, which is empty")
	}
	if err := completeDryRun(cfg, &opts); err != nil {
		return opts, err
	}
	if opts.decisionLog = cfg.String("decision-log"); opts.decisionLog != "" && opts.engine.DryRun {
		return opts, usageError("--decision-log records what ork wrote: not with --dry-run, which writes nothing")
	}
	opts.qps, opts.burst = float32(cfg.Float("kube-api-qps")), cfg.Int("kube-api-burst")
	if opts.qps < 0 || opts.burst < 0 {
		return opts, usageError("--kube-api-qps and --kube-api-burst must not be negative (0: no client-side limit)")
	}
	// A person at a terminal gets a spinner for the slow start-up steps; pipes and JSON
	// logs keep plain timestamped log lines.
	if env.Streams.ErrTTY && cfg.String("log-format") != "json" {
		opts.engine.Progress = output.NewProgress(env.Streams.ErrOut, true, env.ErrStyle(), time.Now)
	}
	// client-go logs through klog; send it to the same handler, without its verbose levels
	// (reflector chatter) even at --log-level debug.
	klog.SetSlogLogger(slog.New(minLevel{logger.Handler(), slog.LevelInfo}))
	return opts, nil
}

func runRun(cmd *cobra.Command, env *Env, opts runOptions) error {
	setMemoryLimit(opts.engine.Logger, memlimit.FromCgroup)
	set, err := loadValidKatalog(env, opts.files)
	if err != nil {
		return err
	}
	if opts.engine.Name, err = operatorName(env.Config(), set); err != nil {
		return err
	}
	// The name is a label value and the default Lease name: a DNS-1123 label is both.
	if errs := validation.IsDNS1123Label(opts.engine.Name); len(errs) > 0 {
		return usageError("--name %q: %s", opts.engine.Name, strings.Join(errs, "; "))
	}
	if opts.engine.ShardBuckets != 0 {
		if errs := validation.IsDNS1123Subdomain(naming.MemberLeaseName(opts.engine.Name, memberName(env))); len(errs) > 0 {
			return usageError("--shard-buckets: member Lease name: %s (set $POD_NAME)", strings.Join(errs, "; "))
		}
	}
	if set, err = overrideRemotes(set, opts, opts.engine.Logger); err != nil {
		return err
	}
	// Before the cluster, as the Katalog: a log ork cannot continue is reported without one.
	if opts.decisionLog != "" {
		l, err := decisionlog.Open(opts.decisionLog, env.Streams.Out, decisionlog.Options{})
		if err != nil {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--decision-log: %w", err)}
		}
		if n := l.Dropped(); n > 0 {
			opts.engine.Logger.Warn("decision log: its last line was cut short by a crash and is dropped", "file", opts.decisionLog, "bytes", n)
		}
		defer func() {
			if err := l.Close(); err != nil {
				opts.engine.Logger.Error("decision log: close failed", "file", opts.decisionLog, "err", err)
			}
		}()
		opts.engine.DecisionLog = l
	}
	// The cluster comes second: a broken Katalog is reported even without one.
	rc, err := opts.cluster.restConfig()
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst, rc.UserAgent = opts.qps, opts.burst, version.UserAgent()
	if opts.qps == 0 {
		rc.QPS = run.NoClientRateLimit
	} else if opts.burst == 0 {
		rc.Burst = max(1, int(2*opts.qps))
	}
	opts.engine.RESTConfig = rc
	plans := newPlanPrinter(env, opts)
	opts.engine.OnPlan = plans.add
	engine, err := run.New(set, opts.engine)
	if err != nil {
		return err
	}
	if err := engine.Run(cmd.Context()); err != nil {
		var missing *run.MissingPermissionsError
		if errors.As(err, &missing) {
			return &ExitError{Code: ExitFailed, Err: err}
		}
		return fmt.Errorf("run: %w", err)
	}
	return plans.flush()
}

// minLevel drops records below a floor, whatever the wrapped handler accepts.
type minLevel struct {
	slog.Handler
	floor slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.floor && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(attrs), h.floor}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.floor}
}

// memberUID is this replica's pod uid ($POD_UID, from the downward API) when its member
// Lease can name the pod as its owner: the pod is named by $POD_NAME (the member name) and
// runs in ork's namespace. An owner is looked up in its dependent's namespace: a pod
// elsewhere would look gone, and the garbage collector would delete the live Lease.
func memberUID(env *Env, ns string) types.UID {
	uid, pod, podNS := env.Getenv("POD_UID"), env.Getenv("POD_NAME"), env.Getenv("POD_NAMESPACE")
	if uid == "" || pod == "" || podNS == "" || podNS != ns {
		return ""
	}
	return types.UID(uid)
}

// memberName names this replica in a sharded ring: the pod name ($POD_NAME, from the
// downward API), else the hostname (a pod's, unless hostname is set in its spec).
func memberName(env *Env) string {
	if p := env.Getenv("POD_NAME"); p != "" {
		return p
	}
	h, _ := os.Hostname()
	return h
}
