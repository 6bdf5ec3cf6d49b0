package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orkspace/ork/internal/scaffold"
)

type initOptions struct {
	dir   string
	force bool
	gen   scaffold.Options
}

func newInitCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a new operator's Katalog, CRD, sample custom resource and, with --remote, a reconciler",
		Long: `Write a working starting point into DIR (default: the current directory): katalog.yaml, the
CRD (crd.yaml), a sample custom resource (cr.yaml) and README.md (how to run it, on your machine
and in a cluster). Without --remote the Katalog uses the declarative reconciler (a Deployment
and a Service per custom resource; try ork simulate). --remote go, python or ts adds
reconciler/, an HTTP reconciler built on ork's reconciler SDK for the language (vendored into
reconciler/ until a release of it exists; no other dependency) and on the types of crd.yaml as
ork gen types writes them, with its own test (go test ./..., python3 -m unittest or npm test)
and its Dockerfile (a distroless, non-root image pinned by digest); deploy/reconciler.yaml,
its Deployment and Service in --reconciler-namespace (restricted
Pod Security, probes, the token Secret mounted as a file that it re-reads at every request);
and secret.yaml, the token ork sends it. The Katalog's endpoint is that Service
(http://NAME-operator-reconciler.NAMESPACE.svc:8088/reconcile); ork run --endpoint points it at
a reconciler on your machine instead. The Katalog passes ork validate as written, and its first
line points editors at the Katalog schema. Existing files are never overwritten unless --force:
ork init checks them all first and writes nothing when one exists (exit 1). An existing
README.md is extended, not overwritten.`,
		Example: `  ork init my-operator
  ork init my-operator --remote go --kind Database --group data.myorg.io --reconciler-namespace data
  ork validate -f my-operator/katalog.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError("ork init takes one directory, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := completeInit(env, args)
			if err != nil {
				return err
			}
			return runInit(env, opts)
		},
	}
	f := cmd.Flags()
	f.String("remote", string(scaffold.RemoteNone), "reconciler to write: go, python, ts, or none (the declarative reconciler)")
	f.String("name", "", "the CRD's name in the Katalog (default: the kind in lower case)")
	f.String("group", scaffold.DefaultGroup, "the custom resource's API group")
	f.String("kind", scaffold.DefaultKind, "the custom resource's kind (CamelCase)")
	f.String("reconciler-namespace", scaffold.DefaultNamespace, "with --remote: the namespace of the reconciler's Deployment, Service and token Secret")
	f.String("namespace", scaffold.DefaultNamespace, "the former name of --reconciler-namespace")
	// Deprecated, hidden, and said so on stderr by completeInit: cobra's own deprecation
	// notice would go to stdout.
	_ = f.MarkHidden("namespace")
	f.Bool("force", false, "overwrite files that exist")
	return cmd
}

func completeInit(env *Env, args []string) (initOptions, error) {
	cfg := env.Config()
	ns := cfg.String("reconciler-namespace")
	if cfg.Source("namespace") != "the default" {
		if cfg.Source("reconciler-namespace") != "the default" {
			return initOptions{}, usageError("ork init: --namespace is the former name of --reconciler-namespace: pass one")
		}
		ns = cfg.String("namespace")
		fmt.Fprintf(env.Streams.ErrOut, "%s ork init --namespace is deprecated: use --reconciler-namespace (ork's own namespace is -n/--namespace of the commands that run ork)\n",
			env.ErrStyle().Warning("warning:"))
	}
	opts := initOptions{dir: ".", force: cfg.Bool("force"), gen: scaffold.Options{
		Kind: cfg.String("kind"), Group: cfg.String("group"), Name: cfg.String("name"),
		Remote: scaffold.Remote(cfg.String("remote")), Namespace: ns,
	}.Complete()}
	if len(args) == 1 {
		opts.dir = args[0]
	}
	if err := opts.gen.Validate(); err != nil {
		return initOptions{}, usageError("ork init: %v", err)
	}
	return opts, nil
}

func runInit(env *Env, opts initOptions) error {
	files, err := scaffold.Files(opts.gen)
	if err != nil {
		return err
	}
	written, err := scaffold.Write(opts.dir, files, opts.force)
	var exists *scaffold.ExistsError
	if errors.As(err, &exists) {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("ork init: %w", err)}
	}
	for _, p := range written {
		fmt.Fprintf(env.Streams.Out, "wrote %s\n", p)
	}
	if err != nil {
		return fmt.Errorf("ork init: %w", err)
	}
	_, err = fmt.Fprintf(env.Streams.Out, "next:\n%s", nextSteps(opts))
	return err
}

// nextSteps are the commands that take the new operator from files to a running one, on
// this machine; README.md has the way into a cluster.
func nextSteps(opts initOptions) string {
	k := filepath.Join(opts.dir, "katalog.yaml")
	rec := filepath.Join(opts.dir, "reconciler")
	steps := fmt.Sprintf("  ork validate -f %s\n", k)
	local := fmt.Sprintf("127.0.0.1:%d", scaffold.Port)
	switch opts.gen.Remote {
	case scaffold.RemoteGo:
		steps += fmt.Sprintf("  (cd %s && go test ./... && RECONCILER_TOKEN=change-me go run . -addr %s)\n", rec, local)
	case scaffold.RemotePython:
		steps += fmt.Sprintf("  (cd %s && python3 -m unittest && RECONCILER_TOKEN=change-me python3 reconciler.py --addr %s)\n", rec, local)
	case scaffold.RemoteTS:
		steps += fmt.Sprintf("  (cd %s && npm ci && npm test && RECONCILER_TOKEN=change-me node build/reconciler.js --addr %s)\n", rec, local)
	default:
		return steps + fmt.Sprintf("  ork simulate -f %s\n  ork run --install-crds -f %s\n  kubectl apply -f %s\nin a cluster: see %s\n",
			k, k, filepath.Join(opts.dir, "cr.yaml"), filepath.Join(opts.dir, "README.md"))
	}
	if opts.gen.Namespace != scaffold.DefaultNamespace {
		steps += fmt.Sprintf("  kubectl create namespace %s\n", opts.gen.Namespace)
	}
	return steps + fmt.Sprintf("  kubectl apply -f %s\n  ork run --install-crds --namespace %s -f %s --endpoint %s=http://%s/reconcile\n  kubectl apply -f %s\nin a cluster: see %s\n",
		filepath.Join(opts.dir, "secret.yaml"), opts.gen.Namespace, k, opts.gen.Name, local,
		filepath.Join(opts.dir, "cr.yaml"), filepath.Join(opts.dir, "README.md"))
}
