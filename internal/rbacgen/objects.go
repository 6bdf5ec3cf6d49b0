package rbacgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/render"
)

// Result is the RBAC for one Katalog set.
type Result struct {
	ServiceAccount     *corev1.ServiceAccount
	ClusterRole        *rbacv1.ClusterRole
	ClusterRoleBinding *rbacv1.ClusterRoleBinding
	// Roles and RoleBindings grant, one pair per namespace (sorted), the rights that concern
	// that namespace only: the Lease, static Secrets, and the watched namespaces' types.
	Roles        []*rbacv1.Role
	RoleBindings []*rbacv1.RoleBinding
	// Warnings name what could not be derived exactly (a templated custom kind, a guessed
	// plural); the user should review them.
	Warnings []string

	opts    Options
	sources []string
}

// Generate builds the ServiceAccount, ClusterRole, ClusterRoleBinding, Roles and RoleBindings
// for set. Only invalid options are an error: a bad name or namespace, or --watch-namespace
// with a cluster-scoped CRD (its objects are in no namespace).
func Generate(set *katalog.Set, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	if err := opts.validate(set); err != nil {
		return nil, err
	}
	all, warnings := collect(set, opts)
	var perms []Permission
	byNamespace := map[string][]Permission{}
	for _, p := range all {
		if p.Namespace == "" {
			perms = append(perms, p)
		} else {
			byNamespace[p.Namespace] = append(byNamespace[p.Namespace], p)
		}
	}
	labels := map[string]string{naming.NameLabel: opts.Name, naming.ManagedByLabel: naming.ManagedBy}
	r := &Result{
		ServiceAccount: &corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Namespace: opts.Namespace, Labels: labels},
		},
		ClusterRole: &rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Labels: labels},
			Rules:      Rules(perms),
		},
		ClusterRoleBinding: &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: opts.Name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: opts.Name, Namespace: opts.Namespace}},
		},
		Warnings: warnings,
		opts:     opts,
	}
	for _, ns := range slices.Sorted(maps.Keys(byNamespace)) {
		r.Roles = append(r.Roles, &rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Namespace: ns, Labels: labels},
			Rules:      Rules(byNamespace[ns]),
		})
		r.RoleBindings = append(r.RoleBindings, &rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Namespace: ns, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: opts.Name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: opts.Name, Namespace: opts.Namespace}},
		})
	}
	if set != nil {
		for _, f := range set.Files {
			r.sources = append(r.sources, f.Path)
		}
	}
	return r, nil
}

// validate checks the options against set.
func (o Options) validate(set *katalog.Set) error {
	if errs := validation.IsDNS1123Subdomain(o.Name); len(errs) > 0 {
		return fmt.Errorf("name %q: %s", o.Name, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q: %s", o.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(o.LeaseName); len(errs) > 0 {
		return fmt.Errorf("lease-name %q: %s", o.LeaseName, strings.Join(errs, "; "))
	}
	for _, ns := range o.WatchNamespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("watch-namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	if o.ShardBuckets != 0 {
		if err := naming.ValidBuckets(o.ShardBuckets); err != nil {
			return fmt.Errorf("shard-buckets: %w", err)
		}
	}
	return CheckWatchScope(set, o.WatchNamespaces)
}

// CheckWatchScope fails when watch namespaces are given and a CRD of set is cluster-scoped:
// its objects are in no namespace, so no namespace-scoped watch can see them.
func CheckWatchScope(set *katalog.Set, watchNamespaces []string) error {
	if len(watchNamespaces) == 0 || set == nil {
		return nil
	}
	for _, crd := range set.CRDs {
		if !crd.IsNamespaced() {
			return fmt.Errorf("watch-namespace: crd %s is cluster-scoped: its custom resources are in no namespace, so a watch limited to namespaces cannot see them (run it in an ork without --watch-namespace)", crd.Name)
		}
	}
	return checkRelatedScope(set, watchNamespaces)
}

// checkRelatedScope fails when a payload.related entry names outright a namespace outside
// the watched ones: ork would neither watch nor be granted its objects there.
func checkRelatedScope(set *katalog.Set, watchNamespaces []string) error {
	sc := newScopes(set)
	for _, crd := range set.CRDs {
		rem := crd.OperatorBox.Reconcile.Remote
		if rem == nil {
			continue
		}
		for i, e := range rem.Payload.Related {
			if e.Namespace == "" || render.IsTemplate(e.Namespace) || slices.Contains(watchNamespaces, e.Namespace) {
				continue
			}
			if plural, _ := relatedPlural(set, e); plural != "" && !sc.namespaced(e.Group, plural) {
				continue // a cluster-scoped kind: the namespace is ignored
			}
			return fmt.Errorf("watch-namespace: crd %s: payload.related[%d] (%s) names namespace %q, outside the watched namespaces %v: ork would never see its objects (add it to --watch-namespace)",
				crd.Name, i, e.As, e.Namespace, watchNamespaces)
		}
	}
	return nil
}

// Objects are the ServiceAccount, ClusterRole, ClusterRoleBinding, then each namespace's
// Role and RoleBinding, in the order they should be applied.
func (r *Result) Objects() []runtime.Object {
	objs := []runtime.Object{r.ServiceAccount, r.ClusterRole, r.ClusterRoleBinding}
	for i := range r.Roles {
		objs = append(objs, r.Roles[i], r.RoleBindings[i])
	}
	return objs
}

// YAML is the multi-document YAML that `kubectl apply -f` takes, after a comment header
// naming the Katalog files, the ork version and the command that regenerates it.
func (r *Result) YAML(orkVersion string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# RBAC for `ork run`, generated by ork %s from:\n", orkVersion)
	for _, s := range r.sources {
		fmt.Fprintf(&b, "#   %s\n", s)
	}
	fmt.Fprintf(&b, "# Regenerate, do not edit: %s\n", r.command())
	return appendYAML(&b, r.Objects())
}

// appendYAML appends objs to b as YAML documents, each after "---".
func appendYAML(b *bytes.Buffer, objs []runtime.Object) ([]byte, error) {
	for _, o := range objs {
		y, err := sigsyaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("encode %T: %w", o, err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes(), nil
}

// JSON is a v1 List holding the objects, indented.
func (r *Result) JSON() ([]byte, error) { return listJSON(r.Objects()) }

// listJSON is a v1 List holding objs, indented.
func listJSON(objs []runtime.Object) ([]byte, error) {
	list := &metav1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("encode %T: %w", o, err)
		}
		list.Items = append(list.Items, runtime.RawExtension{Raw: raw})
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode list: %w", err)
	}
	return append(b, '\n'), nil
}

// command is the `ork rbac gen` invocation that gives this result.
func (r *Result) command() string {
	args := []string{"ork", "rbac", "gen"}
	for _, s := range r.sources {
		args = append(args, "-f", s)
	}
	if r.opts.Name != DefaultName {
		args = append(args, "--name", r.opts.Name)
	}
	if r.opts.Namespace != DefaultNamespace {
		args = append(args, "--namespace", r.opts.Namespace)
	}
	if r.opts.LeaderElect {
		args = append(args, "--leader-elect")
		if r.opts.LeaseName != r.opts.Name {
			args = append(args, "--lease-name", r.opts.LeaseName)
		}
	}
	if r.opts.ShardBuckets > 0 {
		args = append(args, fmt.Sprintf("--shard-buckets=%d", r.opts.ShardBuckets))
	}
	if r.opts.InstallCRDs {
		args = append(args, "--install-crds")
	}
	for _, ns := range r.opts.WatchNamespaces {
		args = append(args, "--watch-namespace", ns)
	}
	return strings.Join(args, " ")
}
