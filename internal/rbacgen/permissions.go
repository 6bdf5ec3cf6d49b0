// Package rbacgen derives the least-privilege RBAC that `ork run` needs for a Katalog: one
// ServiceAccount, one ClusterRole and one ClusterRoleBinding, merged and sorted so that the same
// Katalog always gives byte-identical output.
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
	"github.com/orkspace/ork/internal/render"
	"github.com/orkspace/ork/internal/resources"
)

// Defaults of Options.
const (
	DefaultName      = "orkestra"
	DefaultNamespace = "orkestra-system"
)

// Options tune what is generated.
type Options struct {
	// Name of the ServiceAccount, ClusterRole and ClusterRoleBinding; default DefaultName.
	Name string
	// Namespace of the ServiceAccount; default DefaultNamespace.
	Namespace string
	// LeaderElect adds the Lease verbs `ork run --leader-elect` needs; default false.
	LeaderElect bool
	// InstallCRDs adds create/patch on CustomResourceDefinitions for `ork run --install-crds`;
	// default false.
	InstallCRDs bool
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	return o
}

// Permission is one verb on one resource, in the shape of a SubjectAccessReview's
// ResourceAttributes, so `ork run`'s preflight can check exactly what the ClusterRole grants.
// An empty Name means any object; namespaces are not part of it (the role is cluster-wide).
type Permission struct {
	Verb        string `json:"verb"`
	Group       string `json:"group"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
}

// Attributes is p as a SubjectAccessReview asks it, cluster-wide; set Namespace to ask
// about one namespace.
func (p Permission) Attributes() authorizationv1.ResourceAttributes {
	return authorizationv1.ResourceAttributes{
		Verb: p.Verb, Group: p.Group, Resource: p.Resource, Subresource: p.Subresource, Name: p.Name,
	}
}

// Verb sets. Their order is Kubernetes' usual reading order, which the output keeps.
var (
	verbOrder   = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	manageVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	crVerbs     = []string{"get", "list", "watch", "update", "patch"}
	statusVerbs = []string{"get", "update", "patch"}
	eventVerbs  = []string{"create", "patch"}
	leaseVerbs  = []string{"get", "create", "update"}
	readVerbs   = []string{"get", "list", "watch"}
)

// Permissions lists every permission the generated ClusterRole grants for set, sorted by
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
}

func (c *collector) add(group, resource, subresource, name string, verbs ...string) {
	for _, v := range verbs {
		c.perms[Permission{Verb: v, Group: group, Resource: resource, Subresource: subresource, Name: name}] = struct{}{}
	}
}

func (c *collector) warnf(format string, a ...any) {
	c.warnings = append(c.warnings, fmt.Sprintf(format, a...))
}

// collect applies the rules of the seed's RBAC section and SPEC §5.
func collect(set *katalog.Set, opts Options) ([]Permission, []string) {
	c := &collector{perms: map[Permission]struct{}{}}
	// What the engine itself does whatever the Katalog: events on the CRs and the
	// preflight's SelfSubjectAccessReviews. Discovery needs no grant, so CRDs are touched
	// only by --install-crds: server-side apply (patch, create when absent) and get while
	// waiting for Established.
	c.add("", "events", "", "", eventVerbs...)
	c.add("events.k8s.io", "events", "", "", eventVerbs...)
	c.add("authorization.k8s.io", "selfsubjectaccessreviews", "", "", "create")
	if opts.InstallCRDs {
		c.add("apiextensions.k8s.io", "customresourcedefinitions", "", "", "get", "create", "patch")
	}
	if opts.LeaderElect {
		c.add("coordination.k8s.io", "leases", "", "", leaseVerbs...)
	}
	if set != nil {
		for _, crd := range set.CRDs {
			c.crd(set, crd)
		}
	}
	ps := make([]Permission, 0, len(c.perms))
	for p := range c.perms {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, comparePermissions)
	return ps, c.warnings
}

func (c *collector) crd(set *katalog.Set, crd *katalog.CRD) {
	at := "crds." + crd.Name
	if crd.APITypes == nil || crd.APITypes.Plural == "" {
		c.warnf("%s: no apiTypes.plural (nor a crdFile to infer it from): its custom resources are not covered", at)
	} else {
		// update/patch also carry reconcile.remote.finalize's finalizer writes (and ork
		// finalizers release's); prune's deletes are managedResources' delete.
		c.add(crd.APITypes.Group, crd.APITypes.Plural, "", "", crVerbs...)
		c.add(crd.APITypes.Group, crd.APITypes.Plural, "status", "", statusVerbs...)
		// Children carry blockOwnerDeletion; clusters with the OwnerReferencesPermission-
		// Enforcement admission plugin (OpenShift's default) allow that only to who may
		// update the owner's finalizers.
		c.add(crd.APITypes.Group, crd.APITypes.Plural, "finalizers", "", "update")
	}
	if r := crd.OperatorBox.Reconcile.Remote; r != nil {
		for _, m := range r.ManagedResources {
			c.add(m.Group, m.Plural, "", "", manageVerbs...)
		}
		if r.Auth != nil {
			c.secret(at+".operatorBox.reconcile.remote.auth.secretRef", r.Auth.SecretRef)
		}
		if r.TLS != nil {
			c.secret(at+".operatorBox.reconcile.remote.tls.caSecretRef", r.TLS.CASecretRef)
		}
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

// secret grants reading one Secret: scoped to its name when static, any Secret when the
// name is a template, since it is only known per custom resource.
func (c *collector) secret(at string, ref *katalog.SecretKeyRef) {
	if ref == nil || ref.Name == "" {
		return
	}
	if render.IsTemplate(ref.Name) {
		c.warnf("%s.name is a template: `get` on every Secret in the cluster is granted, as the name is known only per custom resource (use a fixed name to scope it)", at)
		c.add("", "secrets", "", "", "get")
		return
	}
	c.add("", "secrets", "", ref.Name, "get")
}

// declared grants what the declarative reconciler does with one block's objects.
func (c *collector) declared(set *katalog.Set, at, block string, entries []map[string]any) {
	t, ok := resources.LookupBlock(block)
	if !ok {
		c.warnf("%s: unknown block %q: not covered", at, block)
		return
	}
	if t.Type != resources.Custom {
		c.add(t.GVK.Group, t.Plural, "", "", manageVerbs...)
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
		c.add(gv.Group, plural, "", "", manageVerbs...)
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
