package rbacgen

import (
	"bytes"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/render"
)

// targetPath is the CRD's target below operatorBox.reconcile.
func targetPath(crd *katalog.CRD) string {
	if crd.IsRemote() {
		return ".remote.target.kubeconfigSecretRef"
	}
	return ".target.kubeconfigSecretRef"
}

// targetSecret grants reading a target's kubeconfig Secret on the hub: by name in its
// namespace; with a templated name, every Secret of that namespace (not of the cluster, as
// for a templated secretRef: the kubeconfigs are kept together), with a warning; with a
// templated namespace, every Secret of the cluster.
func (c *collector) targetSecret(at string, ref *katalog.SecretKeyRef, orkNamespace string) {
	if ref == nil || ref.Name == "" {
		return
	}
	ns := ref.Namespace
	if ns == "" {
		ns = orkNamespace
	}
	switch {
	case render.IsTemplate(ref.Namespace):
		c.warnf("%s.namespace is a template: `get` on every Secret in the cluster is granted, as the namespace is known only per custom resource (use a fixed namespace to scope it)", at)
		c.add("", "secrets", "", "", "get")
	case render.IsTemplate(ref.Name):
		c.warnf("%s.name is a template: `get` on every Secret in namespace %s is granted, as the name is known only per custom resource; keep only kubeconfigs there", at, ns)
		c.addIn(ns, "", "secrets", "", "", "get")
	default:
		c.addIn(ns, "", "secrets", "", ref.Name, "get")
	}
}

// Subject kinds of TargetOptions.SubjectKind.
const (
	SubjectServiceAccount = rbacv1.ServiceAccountKind
	SubjectUser           = rbacv1.UserKind
	SubjectGroup          = rbacv1.GroupKind
)

// TargetOptions tune what GenerateTarget prints for a spoke.
type TargetOptions struct {
	// Name is the operator's; the ClusterRole and its binding are naming.TargetRoleName of
	// it; default DefaultName.
	Name string
	// SubjectKind is the identity of the kubeconfig the hub holds: ServiceAccount, User or
	// Group; default ServiceAccount.
	SubjectKind string
	// SubjectName defaults to Name.
	SubjectName string
	// SubjectNamespace is a ServiceAccount subject's namespace on the spoke; default
	// DefaultNamespace.
	SubjectNamespace string
}

func (o TargetOptions) withDefaults() TargetOptions {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.SubjectKind == "" {
		o.SubjectKind = SubjectServiceAccount
	}
	if o.SubjectName == "" {
		o.SubjectName = o.Name
	}
	if o.SubjectNamespace == "" && o.SubjectKind == SubjectServiceAccount {
		o.SubjectNamespace = DefaultNamespace
	}
	return o
}

func (o TargetOptions) validate() error {
	if errs := validation.IsDNS1123Subdomain(o.Name); len(errs) > 0 {
		return fmt.Errorf("name %q: %s", o.Name, strings.Join(errs, "; "))
	}
	switch o.SubjectKind {
	case SubjectServiceAccount:
		if errs := validation.IsDNS1123Subdomain(o.SubjectName); len(errs) > 0 {
			return fmt.Errorf("target-subject-name %q: %s", o.SubjectName, strings.Join(errs, "; "))
		}
		if errs := validation.IsDNS1123Label(o.SubjectNamespace); len(errs) > 0 {
			return fmt.Errorf("namespace %q: %s", o.SubjectNamespace, strings.Join(errs, "; "))
		}
	case SubjectUser, SubjectGroup:
		if o.SubjectName == "" {
			return fmt.Errorf("target-subject-name: a %s subject needs a name", o.SubjectKind)
		}
	default:
		return fmt.Errorf("target-subject-kind %q: want ServiceAccount, User or Group", o.SubjectKind)
	}
	return nil
}

// TargetResult is what a spoke grants the hub's identity.
type TargetResult struct {
	ClusterRole        *rbacv1.ClusterRole
	ClusterRoleBinding *rbacv1.ClusterRoleBinding
	// Warnings name what could not be derived exactly, as Result's do.
	Warnings []string

	opts    TargetOptions
	sources []string
}

// GenerateTarget builds the ClusterRole and ClusterRoleBinding a spoke grants the identity
// of the kubeconfig the hub holds for it: on the children of the CRDs that have a target,
// the verbs the hub's own role has on children, and nothing else (no custom resources, CRDs,
// Leases, Events or Secrets: those stay on the hub). Only invalid options are an error.
func GenerateTarget(set *katalog.Set, opts TargetOptions) (*TargetResult, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	perms, warnings := TargetPermissions(set)
	if len(perms) == 0 {
		warnings = append(warnings, "no CRD has reconcile.target or reconcile.remote.target: a spoke has nothing to grant")
	}
	name := naming.TargetRoleName(opts.Name)
	labels := map[string]string{naming.NameLabel: opts.Name, naming.ManagedByLabel: naming.ManagedBy}
	subject := rbacv1.Subject{Kind: opts.SubjectKind, Name: opts.SubjectName, Namespace: opts.SubjectNamespace}
	if opts.SubjectKind != SubjectServiceAccount {
		subject.APIGroup = rbacv1.GroupName
	}
	r := &TargetResult{
		ClusterRole: &rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Rules:      Rules(perms),
		},
		ClusterRoleBinding: &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{subject},
		},
		Warnings: warnings,
		opts:     opts,
	}
	if set != nil {
		for _, f := range set.Files {
			r.sources = append(r.sources, f.Path)
		}
	}
	return r, nil
}

// TargetPermissions lists what a spoke grants for set, sorted as Permissions: the children
// of each CRD that has a target, cluster-wide (ork watches a spoke's children by label across
// its namespaces, as the custom resources' namespaces come and go on the hub).
func TargetPermissions(set *katalog.Set) ([]Permission, []string) {
	c := &collector{perms: map[Permission]struct{}{}, scopes: newScopes(set)}
	if set != nil {
		for _, crd := range set.CRDs {
			if crd.Target() != nil {
				c.children(set, "crds."+crd.Name, crd)
			}
		}
	}
	ps := make([]Permission, 0, len(c.perms))
	for p := range c.perms {
		ps = append(ps, p)
	}
	sortPermissions(ps)
	return ps, c.warnings
}

// Objects are the ClusterRole, then its binding.
func (r *TargetResult) Objects() []runtime.Object {
	return []runtime.Object{r.ClusterRole, r.ClusterRoleBinding}
}

// YAML is the multi-document YAML to apply on each spoke, after a comment header.
func (r *TargetResult) YAML(orkVersion string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# RBAC a target cluster grants `ork run`, generated by ork %s from:\n", orkVersion)
	for _, s := range r.sources {
		fmt.Fprintf(&b, "#   %s\n", s)
	}
	fmt.Fprintf(&b, "# Apply on each target cluster. Regenerate, do not edit: %s\n", r.command())
	return appendYAML(&b, r.Objects())
}

// JSON is a v1 List holding the objects, indented.
func (r *TargetResult) JSON() ([]byte, error) { return listJSON(r.Objects()) }

// command is the `ork rbac gen --target` invocation that gives this result.
func (r *TargetResult) command() string {
	args := []string{"ork", "rbac", "gen", "--target"}
	for _, s := range r.sources {
		args = append(args, "-f", s)
	}
	if r.opts.Name != DefaultName {
		args = append(args, "--name", r.opts.Name)
	}
	if r.opts.SubjectKind != SubjectServiceAccount {
		args = append(args, "--target-subject-kind", r.opts.SubjectKind)
	}
	if r.opts.SubjectName != r.opts.Name {
		args = append(args, "--target-subject-name", r.opts.SubjectName)
	}
	if r.opts.SubjectKind == SubjectServiceAccount && r.opts.SubjectNamespace != DefaultNamespace {
		args = append(args, "--namespace", r.opts.SubjectNamespace)
	}
	return strings.Join(args, " ")
}
