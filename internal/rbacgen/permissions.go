// Package rbacgen derives the least-privilege RBAC that `ork run` needs for a Katalog: one
// ServiceAccount, one ClusterRole and ClusterRoleBinding for what is cluster-wide, and a Role and
// RoleBinding in each namespace where rights concern that namespace only (the Lease, a static
// Secret, the watched namespaces), merged and sorted so that the same Katalog always gives
// byte-identical output.
package rbacgen

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/render"
	"github.com/orkspace/ork/internal/resources"
)

// Defaults of Options.
const (
	DefaultName      = naming.DefaultOperator
	DefaultNamespace = "orkestra-system"
)

// Options tune what is generated.
type Options struct {
	// Name of the ServiceAccount, ClusterRole, ClusterRoleBinding, Roles and RoleBindings;
	// default DefaultName.
	Name string
	// Namespace is ork's own: the ServiceAccount's, the Lease's and a secretRef's without a
	// namespace; default DefaultNamespace.
	Namespace string
	// LeaderElect adds the Lease verbs `ork run --leader-elect` needs, in Namespace; default
	// false.
	LeaderElect bool
	// LeaseName is the Lease that get and update are limited to (`ork run --lease-name`);
	// default Name.
	LeaseName string
	// ShardBuckets adds the Lease verbs `ork run --shard-buckets` needs, in Namespace: get
	// and update on the bucket Leases by name, get/update/create on the member Leases (named
	// after pods, so not by name), list and watch; default 0: none.
	ShardBuckets int
	// ShardName is the operator name the bucket Leases are named after (`ork run --name`);
	// default Name.
	ShardName string
	// InstallCRDs adds get/create/patch on the Katalog's CustomResourceDefinitions (those with
	// a crdFile, by name) for `ork run --install-crds`; default false.
	InstallCRDs bool
	// WatchNamespaces, when set, grants the namespaced types (custom resources, children,
	// Events) in these namespaces only (`ork run --watch-namespace`); default none: cluster-wide.
	WatchNamespaces []string
	// OperationCallbackSecret adds get on that Secret, in Namespace, whose key signs the
	// operation callback tokens (`ork run --operation-callback-secret`); default none.
	OperationCallbackSecret string
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.LeaseName == "" {
		o.LeaseName = o.Name
	}
	if o.ShardName == "" {
		o.ShardName = o.Name
	}
	o.WatchNamespaces = slices.Compact(slices.Sorted(slices.Values(o.WatchNamespaces)))
	return o
}

// Permission is one verb on one resource, in the shape of a SubjectAccessReview's
// ResourceAttributes, so `ork run`'s preflight can check exactly what the roles grant.
// An empty Name means any object; an empty Namespace means every namespace (the ClusterRole),
// a set one that namespace only (a Role there).
type Permission struct {
	Verb        string `json:"verb"`
	Group       string `json:"group"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
}

// Attributes is p as a SubjectAccessReview asks it: in p's namespace, or cluster-wide.
func (p Permission) Attributes() authorizationv1.ResourceAttributes {
	return authorizationv1.ResourceAttributes{
		Verb: p.Verb, Group: p.Group, Resource: p.Resource, Subresource: p.Subresource, Name: p.Name,
		Namespace: p.Namespace,
	}
}

// Verb sets. Their order is Kubernetes' usual reading order, which the output keeps.
var (
	verbOrder   = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	manageVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	crVerbs     = []string{"get", "list", "watch", "update", "patch"}
	statusVerbs = []string{"get", "update", "patch"}
	eventVerbs  = []string{"create", "patch"}
	readVerbs   = []string{"get", "list", "watch"}
)

// Permissions lists every permission the generated roles grant for set, sorted by namespace,
// group, resource, subresource, name and verb. Entries the Katalog leaves incomplete (a CRD
// without group or plural, a templated custom kind) are left out: validate the set first.
func Permissions(set *katalog.Set, opts Options) []Permission {
	ps, _ := collect(set, opts)
	return ps
}

// collector gathers permissions and the warnings met on the way.
type collector struct {
	perms    map[Permission]struct{}
	warnings []string
	// watch are the namespaces namespaced types are granted in; none: cluster-wide.
	watch []string
	// scopes knows which types are namespaced.
	scopes scopes
}

// add grants verbs cluster-wide.
func (c *collector) add(group, resource, subresource, name string, verbs ...string) {
	c.addIn("", group, resource, subresource, name, verbs...)
}

// addIn grants verbs in one namespace ("" for every namespace).
func (c *collector) addIn(namespace, group, resource, subresource, name string, verbs ...string) {
	for _, v := range verbs {
		c.perms[Permission{Verb: v, Group: group, Resource: resource, Subresource: subresource, Name: name, Namespace: namespace}] = struct{}{}
	}
}

// addWatched grants verbs on a type where ork watches it: in each watched namespace for a
// namespaced type under --watch-namespace, else cluster-wide.
func (c *collector) addWatched(group, resource, subresource string, verbs ...string) {
	if len(c.watch) == 0 || !c.scopes.namespaced(group, resource) {
		c.add(group, resource, subresource, "", verbs...)
		return
	}
	for _, ns := range c.watch {
		c.addIn(ns, group, resource, subresource, "", verbs...)
	}
}

func (c *collector) warnf(format string, a ...any) {
	c.warnings = append(c.warnings, fmt.Sprintf(format, a...))
}

// collect applies the rules of docs/rbac.md.
func collect(set *katalog.Set, opts Options) ([]Permission, []string) {
	opts = opts.withDefaults()
	c := &collector{perms: map[Permission]struct{}{}, watch: opts.WatchNamespaces, scopes: newScopes(set)}
	// What the engine itself does whatever the Katalog: events on the CRs (in the CR's
	// namespace) and the preflight's SelfSubjectAccessReviews.
	c.addWatched("", "events", "", eventVerbs...)
	c.addWatched("events.k8s.io", "events", "", eventVerbs...)
	c.add("authorization.k8s.io", "selfsubjectaccessreviews", "", "", "create")
	if opts.InstallCRDs && set != nil {
		c.installCRDs(set)
	}
	if opts.LeaderElect {
		// client-go's LeaseLock gets and updates the Lease by name, and creates it by a POST,
		// whose name RBAC does not see: create cannot be limited to one name.
		c.addIn(opts.Namespace, "coordination.k8s.io", "leases", "", opts.LeaseName, "get", "update")
		c.addIn(opts.Namespace, "coordination.k8s.io", "leases", "", "", "create")
		// Mode fencing: the leader lists the Leases for a sharded ring's live bucket Leases
		// before it acquires (shard.FenceLeaderLock).
		c.addIn(opts.Namespace, "coordination.k8s.io", "leases", "", "", "list")
	}
	if opts.ShardBuckets > 0 {
		c.shardLeases(opts)
	}
	if opts.OperationCallbackSecret != "" {
		c.secret("--operation-callback-secret", &katalog.SecretKeyRef{Name: opts.OperationCallbackSecret}, opts.Namespace)
	}
	if set != nil {
		for _, crd := range set.CRDs {
			c.crd(set, crd, opts.Namespace)
		}
		if hasCandidate(set) {
			// A rollout keeps its progress in one ConfigMap, <name>-rollout (docs/naming.md#in-orks-namespace), and
			// records rollbacks as Events on it; create cannot be limited to a name.
			c.addIn(opts.Namespace, "", "configmaps", "", naming.RolloutConfigMapName(opts.Name), "get", "update", "patch")
			c.addIn(opts.Namespace, "", "configmaps", "", "", "create")
			c.addIn(opts.Namespace, "", "events", "", "", eventVerbs...)
		}
	}
	ps := make([]Permission, 0, len(c.perms))
	for p := range c.perms {
		ps = append(ps, p)
	}
	sortPermissions(ps)
	return ps, c.warnings
}

func sortPermissions(ps []Permission) { slices.SortFunc(ps, comparePermissions) }

// installCRDs grants what --install-crds does with each crdFile, by name. Discovery needs no
// grant. ork installs a CRD by server-side apply, a PATCH carrying the name: when the CRD
// does not exist yet, the apiserver also authorises a create, of that same name (so even the
// create is limited by resourceNames); get polls until it is Established.
func (c *collector) installCRDs(set *katalog.Set) {
	for _, crd := range set.CRDs {
		if crd.Manifest != nil && crd.Manifest.Name != "" {
			c.add("apiextensions.k8s.io", "customresourcedefinitions", "", crd.Manifest.Name, "get", "create", "patch")
		}
	}
}

func (c *collector) crd(set *katalog.Set, crd *katalog.CRD, orkNamespace string) {
	at := "crds." + crd.Name
	if crd.APITypes == nil || crd.APITypes.Plural == "" {
		c.warnf("%s: no apiTypes.plural (nor a crdFile to infer it from): its custom resources are not covered", at)
	} else {
		// update/patch also carry reconcile.remote.finalize's finalizer writes (and ork
		// finalizers release's); prune's deletes are managedResources' delete.
		c.addWatched(crd.APITypes.Group, crd.APITypes.Plural, "", crVerbs...)
		c.addWatched(crd.APITypes.Group, crd.APITypes.Plural, "status", statusVerbs...)
		// Children carry blockOwnerDeletion; clusters with the OwnerReferencesPermission-
		// Enforcement admission plugin (OpenShift's default) allow that only to who may
		// update the owner's finalizers.
		c.addWatched(crd.APITypes.Group, crd.APITypes.Plural, "finalizers", "update")
	}
	if r := crd.OperatorBox.Reconcile.Remote; r != nil {
		if r.Auth != nil {
			c.secret(at+".operatorBox.reconcile.remote.auth.secretRef", r.Auth.SecretRef, orkNamespace)
		}
		if r.TLS != nil {
			c.secret(at+".operatorBox.reconcile.remote.tls.caSecretRef", r.TLS.CASecretRef, orkNamespace)
		}
		if r.Candidate != nil && r.Candidate.Auth != nil {
			c.secret(at+".operatorBox.reconcile.remote.candidate.auth.secretRef", r.Candidate.Auth.SecretRef, orkNamespace)
		}
		c.related(set, at, r.Payload.Related)
	}
	if t := crd.Target(); t != nil {
		c.targetSecret(at+".operatorBox.reconcile"+targetPath(crd), t.KubeconfigSecretRef, orkNamespace)
	}
	if t := crd.Target(); t != nil && t.KubeconfigSecretRef != nil && !render.IsTemplate(t.KubeconfigSecretRef.Name) {
		// Every child is the target's: `ork rbac gen --target` grants them there. A
		// templated name may render empty, which puts the children here.
		return
	}
	c.children(set, at, crd)
}

// children grants what the CRD's reconciler does with its children.
func (c *collector) children(set *katalog.Set, at string, crd *katalog.CRD) {
	if r := crd.OperatorBox.Reconcile.Remote; r != nil {
		for _, m := range r.ManagedResources {
			c.managed(at, m.Group, m.Plural)
		}
		return
	}
	if !crd.OperatorBox.Reconcile.DefaultEnabled() {
		return
	}
	ob := crd.OperatorBox
	for _, hook := range []struct {
		name   string
		blocks katalog.DeclaredResources
	}{{"onCreate", ob.OnCreate}, {"onReconcile", ob.OnReconcile}, {"onDelete", ob.OnDelete}} {
		for _, block := range slices.Sorted(maps.Keys(hook.blocks)) {
			c.declared(set, fmt.Sprintf("%s.operatorBox.%s.%s", at, hook.name, block), block, hook.blocks[block])
		}
	}
}

// secret grants reading one Secret: when its name and namespace are static, that Secret only,
// in its namespace (ork's own when the reference gives none); with a templated namespace, that
// name in every namespace; with a templated name, any Secret in the cluster, since the name
// is only known per custom resource.
func (c *collector) secret(at string, ref *katalog.SecretKeyRef, orkNamespace string) {
	if ref == nil || ref.Name == "" {
		return
	}
	if render.IsTemplate(ref.Name) {
		c.warnf("%s.name is a template: `get` on every Secret in the cluster is granted, as the name is known only per custom resource (use a fixed name to scope it)", at)
		c.add("", "secrets", "", "", "get")
		return
	}
	if render.IsTemplate(ref.Namespace) {
		// The name is known, its namespace only per custom resource: that name, anywhere.
		c.add("", "secrets", "", ref.Name, "get")
		return
	}
	ns := ref.Namespace
	if ns == "" {
		ns = orkNamespace
	}
	c.addIn(ns, "", "secrets", "", ref.Name, "get")
}

// managed grants what ork does with a managedResources type: where it watches it.
func (c *collector) managed(at, group, plural string) {
	if len(c.watch) > 0 && !c.scopes.known(group, plural) {
		c.warnf("%s: the scope of %s is not known to ork (not a built-in type nor a CRD of this Katalog): taken as namespaced, granted in the watched namespaces only; if it is cluster-scoped, ork's cache of it cannot sync",
			at, schema.GroupResource{Group: group, Resource: plural})
	}
	c.addWatched(group, plural, "", manageVerbs...)
}

// declared grants what the declarative reconciler does with one block's objects.
func (c *collector) declared(set *katalog.Set, at, block string, entries []map[string]any) {
	t, ok := resources.LookupBlock(block)
	if !ok {
		c.warnf("%s: unknown block %q: not covered", at, block)
		return
	}
	if t.Type != resources.Custom {
		c.managed(at, t.GVK.Group, t.Plural)
		return
	}
	for i, fields := range entries {
		apiVersion, _ := fields["apiVersion"].(string)
		kind, _ := fields["kind"].(string)
		if apiVersion == "" || kind == "" || render.IsTemplate(apiVersion) || render.IsTemplate(kind) {
			c.warnf("%s[%d]: apiVersion and kind must be literal to derive a permission: not covered", at, i)
			continue
		}
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			c.warnf("%s[%d]: apiVersion %q: %v: not covered", at, i, apiVersion, err)
			continue
		}
		plural, known := pluralOf(set, gv.Group, kind)
		if !known {
			c.warnf("%s[%d]: plural of %s %s guessed as %q (it is not a CRD of this Katalog); check it",
				at, i, apiVersion, kind, plural)
		}
		c.managed(fmt.Sprintf("%s[%d]", at, i), gv.Group, plural)
	}
}

// pluralOf finds the plural of group/kind among the Katalog's CRDs, else guesses it the way
// kubectl does; known reports whether it was found.
func pluralOf(set *katalog.Set, group, kind string) (plural string, known bool) {
	for _, crd := range set.CRDs {
		if at := crd.APITypes; at != nil && at.Group == group && at.Kind == kind && at.Plural != "" {
			return at.Plural, true
		}
	}
	gvr, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Group: group, Kind: kind})
	return gvr.Resource, false
}

func comparePermissions(a, b Permission) int {
	return cmp.Or(
		strings.Compare(a.Namespace, b.Namespace),
		strings.Compare(a.Group, b.Group),
		strings.Compare(a.Resource, b.Resource),
		strings.Compare(a.Subresource, b.Subresource),
		strings.Compare(a.Name, b.Name),
		compareVerbs(a.Verb, b.Verb),
	)
}

// compareVerbs orders known verbs as verbOrder does and unknown ones after, by name.
func compareVerbs(a, b string) int {
	ia, ib := slices.Index(verbOrder, a), slices.Index(verbOrder, b)
	if ia < 0 {
		ia = len(verbOrder)
	}
	if ib < 0 {
		ib = len(verbOrder)
	}
	return cmp.Or(cmp.Compare(ia, ib), strings.Compare(a, b))
}

// hasCandidate says whether any CRD rolls out a candidate reconciler.
func hasCandidate(set *katalog.Set) bool {
	for _, crd := range set.CRDs {
		if r := crd.OperatorBox.Reconcile.Remote; r != nil && r.Candidate != nil {
			return true
		}
	}
	return false
}

// shardLeases are the Lease rights of a sharded replica (ork run --shard-buckets): each
// bucket Lease by name; the member Leases, named after pods, not by name (get/update/delete
// cannot be narrowed further than the namespace, and create never can); list and watch for the
// Manager's view of the ring and the single leader's Lease. The Events of its takes and
// hand-backs go on the bucket Leases, in ork's namespace.
func (c *collector) shardLeases(opts Options) {
	for i := range opts.ShardBuckets {
		c.addIn(opts.Namespace, "coordination.k8s.io", "leases", "", naming.BucketLeaseName(opts.ShardName, i, opts.ShardBuckets), "get", "update")
	}
	// delete: a member Lease names its pod as owner, and where the apiserver enforces
	// owner-reference permissions (OwnerReferencesPermissionEnforcement, on by default in
	// OpenShift) setting or changing ownerReferences takes the right to delete the object.
	c.addIn(opts.Namespace, "coordination.k8s.io", "leases", "", "", "get", "update", "create", "delete", "list", "watch")
	c.addIn(opts.Namespace, "", "events", "", "", eventVerbs...)
}
