package target

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Defaults of Options.
const (
	// DefaultQPS and DefaultBurst bound each spoke's client. The hub's client has no
	// client-side limit (its apiserver's priority and fairness does the limiting); a spoke
	// may be small, one hub writes to many, and a hub that loops must not flood one.
	DefaultQPS   = 50
	DefaultBurst = 100
	// DefaultMinBackoff and DefaultMaxBackoff bound how long an unreachable target waits
	// before it is tried again: doubled at each failure in a row.
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = 2 * time.Minute
	// DefaultProbeTimeout bounds one reachability probe.
	DefaultProbeTimeout = 5 * time.Second
)

// SecretGetter reads a Secret of the hub. The engine gives one backed by its cache or a GET;
// the pool calls it at each Get, and rebuilds the client when the resourceVersion changes.
type SecretGetter func(ctx context.Context, namespace, name string) (*corev1.Secret, error)

// Options configure a Pool.
type Options struct {
	// Secrets reads the kubeconfig Secrets; required.
	Secrets SecretGetter
	// QPS and Burst are each target client's rate limit; default DefaultQPS, DefaultBurst.
	QPS   float32
	Burst int
	// UserAgent of the target clients; default client-go's.
	UserAgent string
	// MinBackoff and MaxBackoff bound the wait before an unreachable target is tried again;
	// default DefaultMinBackoff, DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// ProbeTimeout bounds one probe; default DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	o.QPS = cmp.Or(o.QPS, DefaultQPS)
	o.Burst = cmp.Or(o.Burst, DefaultBurst)
	o.MinBackoff = cmp.Or(o.MinBackoff, DefaultMinBackoff)
	o.MaxBackoff = max(cmp.Or(o.MaxBackoff, DefaultMaxBackoff), o.MinBackoff)
	o.ProbeTimeout = cmp.Or(o.ProbeTimeout, DefaultProbeTimeout)
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Client is the client set of one target, built from one version of its Secret.
type Client struct {
	Ref Ref
	// Config is the target's rest.Config, with the pool's rate limit, for what the engine
	// builds besides (a RESTMapper, informers).
	Config  *rest.Config
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Meta reads and writes objects as metadata only (the child caches, ownership reads).
	Meta metadata.Interface
	// ResourceVersion is the Secret's that the client was built from.
	ResourceVersion string

	http *http.Client
	done chan struct{}
}

// Done is closed when the pool drops the client (the Secret changed, the target was
// forgotten, or the pool closed): stop what was started with it, such as its informers.
func (c *Client) Done() <-chan struct{} { return c.done }

// drop closes the client's idle connections; its transport is its own (forTarget).
func (c *Client) drop() {
	close(c.done)
	c.http.CloseIdleConnections()
}

// Pool keeps one client set per target, built when first asked for, and the reachability of
// each target. Safe for concurrent use.
type Pool struct {
	opts Options

	mu      sync.Mutex
	clients map[Ref]*Client
	states  map[Ref]*state
	closed  bool
}

// NewPool returns an empty Pool.
func NewPool(opts Options) (*Pool, error) {
	if opts.Secrets == nil {
		return nil, errors.New("target pool: Options.Secrets is required")
	}
	return &Pool{opts: opts.withDefaults(), clients: map[Ref]*Client{}, states: map[Ref]*state{}}, nil
}

// ErrLocal is Get's error for the local Ref: the engine's own clients serve it.
var ErrLocal = errors.New("the local cluster has no target client")

// Get returns ref's client, reading its Secret through Options.Secrets each time: when the
// Secret's resourceVersion is the client's, the same client; otherwise one built from the
// new kubeconfig, and the old one is dropped (its Done closed), so a rotated credential is
// used from the next Get on, without a restart. Get does not consult the breaker (see
// Reachable) and does not feed it: the caller reports with Failed and Succeeded.
func (p *Pool) Get(ctx context.Context, ref Ref) (*Client, error) {
	if ref.Local() {
		return nil, ErrLocal
	}
	sec, err := p.opts.Secrets(ctx, ref.Namespace, ref.Name)
	if err != nil {
		return nil, &Error{Ref: ref, Err: fmt.Errorf("read the kubeconfig Secret: %w", err)}
	}
	p.mu.Lock()
	cur, closed := p.clients[ref], p.closed
	p.mu.Unlock()
	if closed {
		return nil, &Error{Ref: ref, Err: errors.New("the target pool is closed")}
	}
	if cur != nil && cur.ResourceVersion == sec.ResourceVersion {
		return cur, nil
	}
	data, ok := sec.Data[ref.Key]
	if !ok {
		return nil, &Error{Ref: ref, Err: fmt.Errorf("the Secret has no key %q", ref.Key)}
	}
	built, err := p.build(ref, data, sec.ResourceVersion)
	if err != nil {
		return nil, &Error{Ref: ref, Err: err}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	cur = p.clients[ref]
	switch {
	case p.closed:
		built.drop()
		return nil, &Error{Ref: ref, Err: errors.New("the target pool is closed")}
	case cur != nil && cur.ResourceVersion == built.ResourceVersion:
		built.drop() // another Get built the same version first
		return cur, nil
	}
	if cur != nil {
		cur.drop()
	}
	p.clients[ref] = built
	return built, nil
}

func (p *Pool) build(ref Ref, data []byte, resourceVersion string) (*Client, error) {
	rc, err := restConfig(data)
	if err != nil {
		return nil, err
	}
	rc = forTarget(rc, p.opts.QPS, p.opts.Burst, p.opts.UserAgent)
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("build the client: %w", err)
	}
	kube, err := kubernetes.NewForConfigAndClient(rc, hc)
	if err != nil {
		return nil, fmt.Errorf("build the client: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(rc, hc)
	if err != nil {
		return nil, fmt.Errorf("build the dynamic client: %w", err)
	}
	meta, err := metadata.NewForConfigAndClient(rc, hc)
	if err != nil {
		return nil, fmt.Errorf("build the metadata client: %w", err)
	}
	return &Client{Ref: ref, Config: rc, Kube: kube, Dynamic: dyn, Meta: meta, ResourceVersion: resourceVersion,
		http: hc, done: make(chan struct{})}, nil
}

// Targets lists the targets that have a client, sorted.
func (p *Pool) Targets() []Ref {
	p.mu.Lock()
	defer p.mu.Unlock()
	refs := make([]Ref, 0, len(p.clients))
	for r := range p.clients {
		refs = append(refs, r)
	}
	slices.SortFunc(refs, func(a, b Ref) int { return strings.Compare(a.String(), b.String()) })
	return refs
}

// Forget drops ref's client and state: no custom resource the engine holds targets it any
// more (a sharded replica handed its bucket back, the CRs were deleted).
func (p *Pool) Forget(ref Ref) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.clients[ref]; c != nil {
		c.drop()
	}
	delete(p.clients, ref)
	delete(p.states, ref)
}

// DropClient drops ref's client and keeps its state: the engine will try ref again when its
// breaker lets it (a cluster a custom resource left), but uses no client of it meanwhile,
// and one kept would be probed (Targets) for nothing, for as long as ork runs.
func (p *Pool) DropClient(ref Ref) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.clients[ref]; c != nil {
		c.drop()
	}
	delete(p.clients, ref)
}

// Close drops every client; Get fails afterwards.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.clients {
		c.drop()
	}
	clear(p.clients)
	p.closed = true
}

// Error is an error of one target: its Secret, its kubeconfig or its client. Its text names
// the target and never a credential.
type Error struct {
	Ref Ref
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("target %s: %v", e.Ref, e.Err) }
func (e *Error) Unwrap() error { return e.Err }
