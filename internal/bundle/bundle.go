// Package bundle derives, from a validated Katalog, everything that runs `ork run` in a
// cluster: the manifests `ork bundle` prints in apply order, and the Helm chart of the same
// install. It never prints and never talks to a cluster.
package bundle

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/rbacgen"
)

// semver is a SemVer 2 version, as Helm requires of a chart's version.
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// Defaults of Options.
const (
	DefaultReplicas        = 2
	DefaultShutdownTimeout = 30 * time.Second
	// ImageRepository is where the release publishes ork's image (.goreleaser.yaml, kos).
	ImageRepository = "ghcr.io/orkspace/ork"
)

// Options tune the bundle.
type Options struct {
	// Name of the operator: of every object (ServiceAccount, ClusterRole, Deployment, ...),
	// of the leader Lease, and `ork run --name` (the operator label on children). Default
	// rbacgen.DefaultName; `ork bundle` defaults it to DefaultName(set).
	Name string
	// Namespace ork runs in; default rbacgen.DefaultNamespace.
	Namespace string
	// Image of the ork container; default DefaultImage(Version), which only a released
	// Version has (else Generate fails with *NoImageError).
	Image string
	// Replicas of the Deployment, at least 1; zero means DefaultReplicas.
	Replicas int
	// ShutdownTimeout is passed to `ork run --shutdown-timeout`; the pod's termination grace
	// period is derived from it. Default DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// WatchNamespaces are passed to `ork run --watch-namespace` and to rbacgen, which grants
	// the namespaced types there only; default none: every namespace.
	WatchNamespaces []string
	// Version is the ork version that generates the bundle (the default image's tag, the
	// chart's appVersion and the header); default "dev".
	Version string
	// ChartVersion is the generated chart's version (SemVer 2); default ChartVersion.
	ChartVersion string
	// ChartOnly is set when only the Helm chart is wanted (ork bundle --helm): without Image
	// and a released Version, the chart leaves image.repository and image.tag for the
	// installer to set (its values schema requires them) instead of Generate failing. The
	// manifests of such a bundle have no image. Default false.
	ChartOnly bool
	// ShardBuckets is `ork run --shard-buckets` (docs/scaling.md): every replica reconciles
	// its share of the custom resources, in place of one leader; 0 (the default) keeps one
	// leader. A power of two from 2 to 256.
	ShardBuckets int
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = rbacgen.DefaultName
	}
	if o.Namespace == "" {
		o.Namespace = rbacgen.DefaultNamespace
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	o.WatchNamespaces = slices.Compact(slices.Sorted(slices.Values(o.WatchNamespaces)))
	if o.Replicas == 0 {
		o.Replicas = DefaultReplicas
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.ChartVersion == "" {
		o.ChartVersion = ChartVersion
	}
	return o
}

// Bundle is the install of ork for one Katalog set.
type Bundle struct {
	// Objects in apply order: Namespace, CRDs, ServiceAccount, ClusterRole,
	// ClusterRoleBinding, Roles and RoleBindings, ConfigMap, Deployment, Service, PodDisruptionBudget, FlowSchema.
	Objects []*unstructured.Unstructured
	// Warnings are what the user should review (rbacgen's, a loopback endpoint).
	Warnings []string

	opts    Options
	set     *katalog.Set
	sources []string
	parts   *parts
}

// parts are the bundle's objects by role; the chart templates them one by one.
type parts struct {
	namespace   *unstructured.Unstructured // nil for a namespace that always exists
	crds        []*unstructured.Unstructured
	rbac        []*unstructured.Unstructured
	configMap   *unstructured.Unstructured
	deployment  *unstructured.Unstructured
	service     *unstructured.Unstructured
	pdb         *unstructured.Unstructured // built always: the chart decides by its value
	flowSchema  *unstructured.Unstructured
	configFiles map[string]string // the ConfigMap's data
}

// Generate builds the bundle for set, which must be valid (validate it first). Invalid
// options are an error naming the option.
func Generate(set *katalog.Set, opts Options) (*Bundle, error) {
	opts = opts.withDefaults()
	if why := CheckName(opts.Name); why != "" {
		return nil, fmt.Errorf("name %q: %s", opts.Name, why)
	}
	if !semver.MatchString(opts.ChartVersion) {
		return nil, fmt.Errorf("chart-version %q: want a SemVer 2 version such as 1.2.3", opts.ChartVersion)
	}
	if opts.Image == "" {
		switch {
		case Released(opts.Version):
			opts.Image = DefaultImage(opts.Version)
		case !opts.ChartOnly:
			return nil, &NoImageError{Version: opts.Version}
		}
	}
	if opts.Replicas < 1 {
		return nil, fmt.Errorf("replicas %d: want at least 1", opts.Replicas)
	}
	if opts.ShutdownTimeout < time.Second {
		return nil, fmt.Errorf("shutdown-timeout %s: want at least 1s", opts.ShutdownTimeout)
	}
	if err := checkSharding(set, opts); err != nil {
		return nil, err
	}
	p, warnings, err := build(set, opts)
	if err != nil {
		return nil, err
	}
	warnings = append(warnings, loopbackEndpoints(set)...)
	b := &Bundle{Warnings: warnings, opts: opts, set: set, parts: p}
	for _, f := range set.Files {
		b.sources = append(b.sources, f.Path)
	}
	if p.namespace != nil {
		b.Objects = append(b.Objects, p.namespace)
	}
	b.Objects = append(b.Objects, p.crds...)
	b.Objects = append(b.Objects, p.rbac...)
	b.Objects = append(b.Objects, p.configMap, p.deployment, p.service)
	if opts.Replicas >= 2 {
		// A PodDisruptionBudget on one replica would block every node drain.
		b.Objects = append(b.Objects, p.pdb)
	}
	b.Objects = append(b.Objects, p.flowSchema)
	return b, nil
}

// checkSharding refuses what `ork run --shard-buckets` refuses, so that a bundle never
// installs a Deployment that exits at start.
func checkSharding(set *katalog.Set, opts Options) error {
	if opts.ShardBuckets == 0 {
		return nil
	}
	if err := naming.ValidBuckets(opts.ShardBuckets); err != nil {
		return fmt.Errorf("shard-buckets: %w", err)
	}
	if hasCandidate(set) {
		return fmt.Errorf("shard-buckets: the Katalog rolls out a reconciler (reconcile.remote.candidate), and a rollout's state is one ConfigMap that one leader writes: install it without --shard-buckets")
	}
	return nil
}

// hasCandidate is whether a CRD of set rolls out a candidate reconciler.
func hasCandidate(set *katalog.Set) bool {
	for _, c := range set.CRDs {
		if r := c.OperatorBox.Reconcile.Remote; r != nil && r.Candidate != nil {
			return true
		}
	}
	return false
}

// build makes every part; rbacgen gives the ServiceAccount, ClusterRole and binding, so
// they are exactly `ork rbac gen --leader-elect`'s (`--shard-buckets B`'s when sharded).
func build(set *katalog.Set, opts Options) (*parts, []string, error) {
	rbac, err := rbacgen.Generate(set, rbacgen.Options{Name: opts.Name, Namespace: opts.Namespace,
		LeaderElect: opts.ShardBuckets == 0, ShardBuckets: opts.ShardBuckets, WatchNamespaces: opts.WatchNamespaces})
	if err != nil {
		return nil, nil, err
	}
	p := &parts{}
	for _, o := range rbac.Objects() {
		u, err := toUnstructured(o)
		if err != nil {
			return nil, nil, err
		}
		p.rbac = append(p.rbac, u)
	}
	if !slices.Contains(systemNamespaces, opts.Namespace) {
		if p.namespace, err = toUnstructured(namespace(opts)); err != nil {
			return nil, nil, err
		}
	}
	if p.crds, err = crdObjects(set); err != nil {
		return nil, nil, err
	}
	files, err := configFiles(set)
	if err != nil {
		return nil, nil, err
	}
	p.configFiles = files.data
	if p.configMap, err = toUnstructured(configMap(opts, files.data)); err != nil {
		return nil, nil, err
	}
	for _, step := range []struct {
		into **unstructured.Unstructured
		obj  any
	}{
		{&p.deployment, deployment(opts, files)},
		{&p.service, service(opts)},
		{&p.pdb, podDisruptionBudget(opts)},
		{&p.flowSchema, flowSchema(opts)},
	} {
		if *step.into, err = toUnstructured(step.obj); err != nil {
			return nil, nil, err
		}
	}
	return p, rbac.Warnings, nil
}

// loopbackEndpoints warns of remote endpoints on a loopback address: in the pod, that is
// the pod itself, not the reconciler a developer ran beside `ork run`.
func loopbackEndpoints(set *katalog.Set) []string {
	var out []string
	for _, c := range set.CRDs {
		r := c.OperatorBox.Reconcile.Remote
		if r == nil {
			continue
		}
		u, err := url.Parse(r.Endpoint)
		if err != nil {
			continue // a template, or reported by validate
		}
		ip := net.ParseIP(u.Hostname())
		if u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback()) {
			out = append(out, fmt.Sprintf("crds.%s: endpoint %s is a loopback address, which in the pod is the pod itself: point it at your reconciler's Service",
				c.Name, r.Endpoint))
		}
	}
	return out
}

// systemNamespaces always exist and are shared: the bundle does not declare them, so that
// deleting it never tries to delete them.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}
