package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/rbacgen"
	"github.com/orkspace/ork/internal/version"
)

func newRBACCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rbac",
		Short: "Generate the RBAC that `ork run` needs",
		Args:  unknownSubcommand,
		// A RunE makes cobra check Args, so `ork rbac gne > role.yaml` is exit 2, not help.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRBACGenCmd(env))
	return cmd
}

type rbacGenOptions struct {
	files  []string
	format output.Format
	gen    rbacgen.Options
	// target prints what a target cluster grants instead (targetGen).
	target    bool
	targetGen rbacgen.TargetOptions
}

func newRBACGenCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "gen [-f katalog.yaml]...",
		Aliases: []string{"generate"},
		Short:   "Print a least-privilege ServiceAccount, roles and bindings for a Katalog",
		Long: `Print the ServiceAccount, ClusterRole, ClusterRoleBinding, Roles and RoleBindings that ork run
needs for the given Katalogs, as YAML for kubectl apply -f (or a v1 List with -o json). They grant:
  - every managedResources entry: get, list, watch, create, update, patch, delete;
  - auth.secretRef / tls.caSecretRef: get on that Secret by name, in a Role in its namespace
    (--namespace when it names none); by name in every namespace when the namespace is a
    template; on any Secret when the name is a template (with a warning);
  - a target's kubeconfigSecretRef: get on that Secret by name, in a Role in its namespace; on
    every Secret of that namespace when the name is a template (with a warning); and nothing
    on the children of a CRD whose target is a fixed name: they are the target's (--target);
  - each CRD: get, list, watch, update, patch, get, update, patch on its status, and update
    on its finalizers (for blockOwnerDeletion under OwnerReferencesPermissionEnforcement);
  - declarative CRDs: the types their onCreate/onReconcile/onDelete blocks create;
  - events (create, patch), SelfSubjectAccessReviews (create, for run's preflight);
  - with --install-crds, get, create and patch on the Katalog's CRDs by name (ork installs
    them by server-side apply, which names the CRD even when it creates it);
  - with --leader-elect, in a Role in --namespace: Leases get and update by the Lease's name
    (--lease-name), create (which RBAC cannot limit by name).
Rights go cluster-wide, except those that concern one namespace. With --watch-namespace, the
namespaced types (custom resources, children, events) are granted by a Role in each watched
namespace and not cluster-wide; a cluster-scoped CRD is then an error (exit 2).
The namespaces must exist. The Katalog is validated first; an invalid one is
reported as validate does (exit 1). Warnings about what cannot be derived go to stderr.

With --target, print instead what each target cluster (a spoke whose kubeconfig ork holds in a
Secret) grants the kubeconfig's identity: a ClusterRole <name>-target with the verbs above on
the children of the CRDs that have a target, and nothing else, and its ClusterRoleBinding to
--target-subject-kind/--target-subject-name (default the ServiceAccount --name in --namespace,
as on the hub). The hub-only flags (--leader-elect, --lease-name, --shard-buckets,
--install-crds, --watch-namespace) do not apply to it.`,
		Example: `  ork rbac gen -f examples/remote/katalog.yaml > role.yaml && kubectl apply -f role.yaml
  ork rbac gen -f katalog.yaml --leader-elect -n ops -o json | jq '.items[1].rules'
  ork rbac gen -f katalog.yaml --target | kubectl --context spoke-eu apply -f -`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := completeRBACGen(env)
			if err != nil {
				return err
			}
			return runRBACGen(env, opts)
		},
	}
	addKatalogFlag(cmd)
	addOutputFlag(cmd, output.YAML, output.YAML, output.JSON)
	f := cmd.Flags()
	f.String("name", "", "name of the ServiceAccount, ClusterRole, ClusterRoleBinding, Roles and RoleBindings: ork run --name"+nameDefault)
	addNamespaceFlag(cmd, "ork's own namespace: the ServiceAccount's, the Lease's and a secretRef's without one; it does not limit what is granted: see --watch-namespace")
	f.Bool("leader-elect", false, "grant the Lease verbs that ork run --leader-elect needs, in --namespace")
	f.String("lease-name", "", "the Lease that get/update are limited to: ork run's --lease-name (default --name)")
	f.Int("shard-buckets", 0, "grant the Lease verbs that ork run --shard-buckets needs, in --namespace: the bucket Leases (named after --name) by name, the member Leases, list and watch")
	f.Bool("install-crds", false, "grant get/create/patch on the Katalog's CustomResourceDefinitions (by name) for ork run --install-crds")
	f.StringArray("watch-namespace", nil, "grant the namespaced types in this namespace only, by a Role there, for ork run --watch-namespace (repeatable; default cluster-wide)")
	f.String("operation-callback-secret", "", "grant get on this Secret in --namespace, whose key signs the operation callback tokens: ork run's --operation-callback-secret")
	f.Bool("target", false, "print what a target cluster grants instead: a ClusterRole on the children of the CRDs that have a target, and its binding")
	f.String("target-subject-kind", rbacgen.SubjectServiceAccount, "with --target, the kind of the identity in the target's kubeconfig: ServiceAccount (in --namespace), User or Group")
	f.String("target-subject-name", "", "with --target, the name of the identity in the target's kubeconfig (default --name)")
	return cmd
}

func completeRBACGen(env *Env) (rbacGenOptions, error) {
	cfg := env.Config()
	format, err := outputFormat(cfg, output.YAML, output.JSON)
	if err != nil {
		return rbacGenOptions{}, err
	}
	return rbacGenOptions{
		files:  cfg.StringSlice("filename"),
		format: format,
		gen: rbacgen.Options{
			Namespace:               orkNamespace(env),
			LeaderElect:             cfg.Bool("leader-elect"),
			LeaseName:               cfg.String("lease-name"),
			ShardBuckets:            cfg.Int("shard-buckets"),
			InstallCRDs:             cfg.Bool("install-crds"),
			WatchNamespaces:         cfg.StringSlice("watch-namespace"),
			OperationCallbackSecret: cfg.String("operation-callback-secret"),
		},
		target: cfg.Bool("target"),
		targetGen: rbacgen.TargetOptions{
			SubjectKind:      cfg.String("target-subject-kind"),
			SubjectName:      cfg.String("target-subject-name"),
			SubjectNamespace: orkNamespace(env),
		},
	}, nil
}

func runRBACGen(env *Env, opts rbacGenOptions) error {
	set, err := loadValidKatalog(env, opts.files)
	if err != nil {
		return err
	}
	if opts.gen.Name, err = operatorName(env.Config(), set); err != nil {
		return err
	}
	if opts.target {
		opts.targetGen.Name = opts.gen.Name
		res, err := rbacgen.GenerateTarget(set, opts.targetGen)
		if err != nil {
			return usageError("--%v", err) // only the options can be invalid
		}
		return printRBAC(env, opts.format, res.Warnings, res)
	}
	res, err := rbacgen.Generate(set, opts.gen)
	if err != nil {
		return usageError("--%v", err) // only the options can be invalid
	}
	return printRBAC(env, opts.format, res.Warnings, res)
}

// rbacObjects are what ork rbac gen prints: the hub's rbacgen.Result, or a target's
// rbacgen.TargetResult (--target).
type rbacObjects interface {
	YAML(orkVersion string) ([]byte, error)
	JSON() ([]byte, error)
}

// printRBAC prints the warnings to stderr and objs to stdout, as YAML documents or a JSON
// List.
func printRBAC(env *Env, format output.Format, warnings []string, objs rbacObjects) error {
	for _, w := range warnings {
		fmt.Fprintf(env.Streams.ErrOut, "%s %s\n", env.ErrStyle().Warning("warning:"), w)
	}
	var out []byte
	var err error
	if format == output.JSON {
		out, err = objs.JSON()
	} else {
		out, err = objs.YAML(version.Get().Version)
	}
	if err != nil {
		return err
	}
	_, err = env.Streams.Out.Write(out)
	return err
}
