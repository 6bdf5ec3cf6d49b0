// Package remote is the HTTP reconciler: it POSTs a PreparedRequest built from a custom
// resource to the CRD's endpoint and decodes the RemoteReconcileResult it answers with.
package remote

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/dotpath"
	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/version"
)

// ContractVersion is the version of the wire contract (schema/prepared-request.schema.json
// and schema/remote-reconcile-result.schema.json) that ork sends in ContractVersionHeader on
// every request: a minor step per additive field, a major one for any breaking change. The
// SDKs under sdk/ carry the same number, so a reconciler can tell that ork speaks a newer
// contract than it was built for.
const (
	ContractVersion       = "1.2"
	ContractVersionHeader = "Ork-Contract-Version"
	// ReconcilerVersionHeader is the response header in which a reconciler names its own
	// version (a semver, a commit), recorded with each decision (docs/provenance.md).
	ReconcilerVersionHeader = decision.ReconcilerVersionHeader
)

// Defaults applied by New.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxBodyBytes = 8 << 20
	DefaultNamespace    = "orkestra-system"
	DefaultAuthHeader   = "Authorization"
	DefaultCAKey        = katalog.DefaultCAKey
)

// SecretSource reads one key of a Secret. The engine implements it (informer-backed or a
// direct GET). Reconcile calls it on every request, so a rotated token or CA is used on the
// next call without restarting ork.
type SecretSource interface {
	SecretValue(ctx context.Context, namespace, name, key string) ([]byte, error)
}

// Options tune a Reconciler.
type Options struct {
	// Secrets reads auth.secretRef and tls.caSecretRef; required when either is declared.
	Secrets SecretSource
	// DefaultNamespace is the namespace of a secretRef without one; default "orkestra-system".
	DefaultNamespace string
	// MaxBodyBytes limits the response body; a larger body is a failure. Default 8 MiB.
	MaxBodyBytes int64
	// HTTPClient, when set, is used as is and the CRD's tls block is ignored (tests).
	// Default: a client built from the tls block that does not follow redirects.
	HTTPClient *http.Client
	// Observe, when set, is called once per HTTP attempt with the status code ("200",
	// "500", ...) or "timeout", "canceled" or "error" when no full response arrived, and the
	// time from sending the request to the end of reading the body. Default: nil.
	Observe func(code string, d time.Duration)
	// Now is the clock for Retry-After dates and Observe durations; default time.Now.
	Now func() time.Time
	// Record, when set, is called once per request sent, synchronously before Call returns,
	// with the exchange: request body, response (the token scrubbed), outcome. The auth
	// header is never in it. exchange.Recorder.Record fits. Default: nil.
	Record func(exchange.Exchange)
	// Pauses, when set, is shared with other Reconcilers, so that an endpoint's
	// Retry-After holds every CRD's calls to it. Default: the Reconciler's own.
	Pauses *Pauses
}

// Trigger says why a reconcile runs; it is sent as prepared.trigger.
type Trigger string

// Triggers the engine reports.
const (
	TriggerCreate  Trigger = "create"
	TriggerUpdate  Trigger = "update"
	TriggerDelete  Trigger = "delete"
	TriggerResync  Trigger = "resync"
	TriggerRequeue Trigger = "requeue"
)

// Request is one reconcile of one custom resource.
type Request struct {
	// Key is the work-queue key, "namespace/name" or "name" for cluster-scoped resources.
	Key string
	// Object is the custom resource from the informer cache. Reconcile never modifies it.
	Object map[string]any
	// Trigger is why the reconcile runs.
	Trigger Trigger
	// Attempt counts the tries of this key, 1 for the first.
	Attempt int
	// Children are the owned objects by intent type and name ("deployment" -> "web" ->
	// object), filled by the engine when payload.children.enabled. Never modified.
	Children map[string]map[string]map[string]any
	// Related are the objects of payload.related by their entry's as, sent as
	// prepared.related (each declared key always, [] when nothing was found). Never modified.
	Related map[string][]map[string]any
	// DryRun is sent as prepared.dryRun: true, asking the reconciler to touch nothing outside
	// its answer (ork remote check, ork run --dry-run). Omitted from the body when false.
	// Target is sent as prepared.target, and tags each of Children (naming.TargetAnnotation):
	// the name of the cluster the CR's children are in when it is not ork's own (a target);
	// empty for ork's own cluster.
	Target string
	DryRun bool
	// LastApply is what applying the previous result did, sent as prepared.lastApply when
	// payload.lastApply is on; nil when nothing was applied yet. Never modified.
	LastApply []AppliedResource
	// Operation is sent as prepared.operation: the long-running operation ork holds for the
	// custom resource, or the one that just timed out (operation.State.Prepared). Omitted
	// when nil. Never modified.
	Operation *operation.Prepared
	// Callback is sent as prepared.callback: where to report the completion of an
	// operation this call may start (ork run --operation-callback-url): set only when
	// callbacks are on and no operation is held. Never modified.
	Callback *operation.Callback
	// Hold, when set, is asked right before the POST goes out, after the secrets are read
	// (which may take a while): an error sends nothing, and Call returns it as is, not as a
	// CallError. ork run's leadership guard: a replica whose Lease may have passed calls no
	// reconciler. Default nil: always sent.
	Hold func() error
}

// Result is a decoded RemoteReconcileResult.
type Result struct {
	// Result is "ok", "" (same as ok), "requeue", "pending" or "error".
	Result string
	// RequeueAfter is the parsed requeueAfter; 0 when empty.
	RequeueAfter time.Duration
	// Error is the reconciler's error text for an "error" result (token scrubbed).
	Error string
	// Status is merged into the CR's status; nil when absent.
	Status map[string]any
	// Resources are the intent or full-object entries, unvalidated: nil when absent (or
	// null), an empty list, not nil, when present and empty. prune tells the two apart:
	// absent is "no opinion", empty "own nothing".
	Resources []map[string]any
	// Operation is the operation of a "pending" result, checked (an id, durations that are
	// not negative, progress 0 to 100) but not bounded: pollAfter is as the reconciler wrote
	// it, 0 when absent. Nil for any other result.
	Operation *operation.Answer
}

// Reconciler calls one CRD's remote endpoint. It is safe for concurrent use.
type Reconciler struct {
	gvk             gvk
	endpoint        text
	timeout         time.Duration
	args            valueFunc
	objectExclude   pathTree
	childrenEnabled bool
	childrenExclude pathTree
	// related are the payload.related keys, in order, each with its exclude paths.
	related []relatedKey
	// lastApplyEnabled sends prepared.lastApply (payload.lastApply).
	lastApplyEnabled bool
	auth             *authConfig
	clients          *clientSource
	secrets          SecretSource
	defaultNS        string
	maxBody          int64
	observe          func(string, time.Duration)
	record           func(exchange.Exchange)
	now              func() time.Time
	// paused are the endpoints that asked to wait (Retry-After).
	paused *Pauses
	// userAgent is made once: reading the build info parses it anew each time.
	userAgent string
}

// New prepares the Reconciler of a remote CRD: it parses the timeout, exclude paths and
// templates, and reads tls.caFile (relative to the Katalog file) once. Secrets (the auth
// token and tls.caSecretRef) are read through opts.Secrets on every call instead, so New
// needs no cluster access and rotation needs no restart.
func New(crd *katalog.CRD, opts Options) (*Reconciler, error) {
	if crd == nil || crd.OperatorBox.Reconcile.Remote == nil {
		return nil, fmt.Errorf("crd has no reconcile.remote")
	}
	if crd.APITypes == nil {
		return nil, fmt.Errorf("crd %s has no apiTypes", crd.Name)
	}
	rem := crd.OperatorBox.Reconcile.Remote
	at := func(field string) string {
		return katalog.DisplayPath(katalog.CRDPath(crd.Name, "operatorBox.reconcile.remote."+field))
	}
	r := &Reconciler{
		gvk:              gvk{Group: crd.APITypes.Group, Version: crd.APITypes.Version, Kind: crd.APITypes.Kind},
		timeout:          DefaultTimeout,
		childrenEnabled:  rem.Payload.Children.Enabled,
		lastApplyEnabled: rem.Payload.LastApply,
		secrets:          opts.Secrets,
		defaultNS:        orDefault(opts.DefaultNamespace, DefaultNamespace),
		maxBody:          opts.MaxBodyBytes,
		observe:          opts.Observe,
		record:           opts.Record,
		now:              opts.Now,
		paused:           opts.Pauses,
		userAgent:        version.UserAgent(),
	}
	if r.paused == nil {
		r.paused = NewPauses()
	}
	if r.maxBody <= 0 {
		r.maxBody = DefaultMaxBodyBytes
	}
	if r.now == nil {
		r.now = time.Now
	}
	if rem.Protocol != "" && rem.Protocol != "http" {
		return nil, fmt.Errorf("%s: unsupported protocol %q (only http)", at("protocol"), rem.Protocol)
	}
	if rem.Timeout != "" {
		d, err := time.ParseDuration(rem.Timeout)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s: %q is not a positive duration such as 30s", at("timeout"), rem.Timeout)
		}
		r.timeout = d
	}
	var err error
	if r.endpoint, err = compileText(at("endpoint"), rem.Endpoint); err != nil {
		return nil, err
	}
	if r.endpoint.t == nil {
		if _, err := parseEndpoint(rem.Endpoint); err != nil {
			return nil, fmt.Errorf("%s: %w", at("endpoint"), err)
		}
	}
	if r.args, err = compileArgs(at("args"), rem.Args); err != nil {
		return nil, err
	}
	if r.objectExclude, err = parsePaths(at("payload.object.exclude"), rem.Payload.Object.Exclude); err != nil {
		return nil, err
	}
	if r.childrenExclude, err = parsePaths(at("payload.children.exclude"), rem.Payload.Children.Exclude); err != nil {
		return nil, err
	}
	for i, rel := range rem.Payload.Related {
		exclude, err := parsePaths(at(fmt.Sprintf("payload.related[%d].exclude", i)), append([]string{"metadata.managedFields"}, rel.Exclude...))
		if err != nil {
			return nil, err
		}
		r.related = append(r.related, relatedKey{as: rel.As, exclude: exclude})
	}
	if r.auth, err = newAuth(at("auth"), rem.Auth); err != nil {
		return nil, err
	}
	if r.clients, err = newClientSource(at("tls"), crd.Source, rem.TLS, opts.HTTPClient); err != nil {
		return nil, err
	}
	if (r.auth != nil || r.clients.caSecret != nil) && opts.Secrets == nil {
		return nil, fmt.Errorf("%s: a secretRef is declared but no SecretSource was given", at(""))
	}
	return r, nil
}

// Timeout is the bound on one whole call (reconcile.remote.timeout, default 30s).
func (r *Reconciler) Timeout() time.Duration { return r.timeout }

func parsePaths(at string, in []string) (pathTree, error) {
	paths := make([]dotpath.Path, 0, len(in))
	for i, s := range in {
		p, err := dotpath.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", at, i, err)
		}
		paths = append(paths, p)
	}
	return newPathTree(paths), nil
}

// parseEndpoint accepts absolute http(s) URLs only: a relative or schemeless endpoint would
// otherwise fail later with a far less readable transport error.
func parseEndpoint(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		// url.Error repeats the whole URL, query string included; keep only the reason.
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err
		}
		return nil, fmt.Errorf("invalid endpoint URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q is not an absolute http(s) URL", redactURL(u))
	}
	return u, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
