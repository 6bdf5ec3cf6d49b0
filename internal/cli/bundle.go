package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orkspace/ork/internal/bundle"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/rbacgen"
	"github.com/orkspace/ork/internal/version"
)

type bundleOptions struct {
	files         []string
	format        output.Format
	helm          string
	migrationNote bool
	gen           bundle.Options
}

func newBundleCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle [-f katalog.yaml]...",
		Short: "Print everything that runs ork in a cluster for a Katalog, or write its Helm chart",
		Long: `Print, in apply order, the manifests that run ork run --leader-elect in a cluster for the given
Katalogs: the Namespace, the CRDs of crdFile entries, the ServiceAccount, ClusterRole and
ClusterRoleBinding (exactly ork rbac gen --leader-elect's), a ConfigMap holding the Katalog as
ork reads it in the pod (crdFile becomes apiTypes and scope, crFiles are dropped, a tls.caFile's
PEM comes along), the Deployment, a Service for metrics, a PodDisruptionBudget from 2 replicas
and a FlowSchema that puts ork's Lease requests in the apiserver's leader-election priority
level. The same input gives the same bytes. Apply with kubectl apply --server-side (installing
the FlowSchema and the ClusterRole takes a cluster admin; ork itself needs neither at run time).

Every object, the leader Lease and ork run --name are named after the operator: --name,
by default the Katalog's metadata.name (the same in every -f file, a DNS-1035 label of at most
40 characters; otherwise exit 2). Two operators' bundles so apply side by side, and each
ork caches only the children labelled orkestra.orkspace.io/operator=<its name>.
--migration-note lists on stderr the objects renamed since bundles named everything
orkestra (docs/naming.md: delete the old Deployment first). ork bundle reads only its -f
files: it never talks to a cluster.

The Deployment's pods run the restricted Pod Security profile, read their namespace from the
downward API, spread across nodes, and get terminationGracePeriodSeconds above
--shutdown-timeout. The image defaults to this ork's release image, which exists only when this
ork is a release (vX.Y.Z or vX.Y.Z-pre); otherwise pass --image (exit 2 without it), e.g. one
built with KO_DOCKER_REPO=<registry> ko build ./cmd/ork.

--helm DIR writes a Helm chart of the same install instead (CRDs in crds/, no Namespace: use
helm install --create-namespace; objects named after the release as Helm charts name
theirs; values.yaml documents every value, values.schema.json checks them, NOTES.txt says
what is left to do). Without --image and a release, the chart leaves image.repository and
image.tag to set at install (the schema requires them). DIR must be new, empty, or a chart
ork wrote, which is replaced. --chart-version sets its version.

The Katalog is validated first; an invalid one is reported as validate does (exit 1) and
nothing is printed on stdout. Warnings go to stderr.`,
		Example: `  ork bundle -f katalog.yaml --image "$(KO_DOCKER_REPO=registry.example/ork ko build ./cmd/ork)" | kubectl apply --server-side -f -
  ork bundle -f katalog.yaml --namespace ops --replicas 3 --image registry.example/ork:1.2.3
  ork bundle -f katalog.yaml --helm charts/my-operator --chart-version 1.0.0 && helm install my-operator charts/my-operator -n ops --create-namespace`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := completeBundle(env)
			if err != nil {
				return err
			}
			return runBundle(env, opts)
		},
	}
	addKatalogFlag(cmd)
	addOutputFlag(cmd, output.YAML, output.YAML, output.JSON)
	f := cmd.Flags()
	f.String("name", "", "the operator's name: of every object, of the leader Lease and ork run --name (default the Katalog's metadata.name)")
	addNamespaceFlag(cmd, "ork's own namespace, where it runs")
	f.String("image", "", "ork image (default "+bundle.ImageRepository+":<this ork's version>)")
	f.Int("replicas", bundle.DefaultReplicas, "replicas of the Deployment (one leads, the others stand by; with --shard-buckets each reconciles its share)")
	f.Int("shard-buckets", 0, "ork run --shard-buckets: every replica reconciles a share of the custom resources, cut into this many buckets (a power of two from 2 to 256), in place of one leader; the Role grants the bucket Leases by name (docs/scaling.md)")
	f.Duration("shutdown-timeout", bundle.DefaultShutdownTimeout, "ork run --shutdown-timeout; the pods' termination grace period is derived from it")
	f.StringArray("watch-namespace", nil, "ork run --watch-namespace: reconcile only the custom resources in this namespace, granted by a Role there (repeatable; default every namespace)")
	f.String("helm", "", "write a Helm chart of the same install into this directory instead of printing manifests")
	f.String("chart-version", bundle.ChartVersion, "with --helm: the chart's version (SemVer 2)")
	f.Bool("migration-note", false, "list on stderr the objects renamed since bundles named everything orkestra (for an install from such a bundle)")
	return cmd
}

func completeBundle(env *Env) (bundleOptions, error) {
	cfg := env.Config()
	format, err := outputFormat(cfg, output.YAML, output.JSON)
	if err != nil {
		return bundleOptions{}, err
	}
	opts := bundleOptions{
		files:         cfg.StringSlice("filename"),
		format:        format,
		helm:          cfg.String("helm"),
		migrationNote: cfg.Bool("migration-note"),
		gen: bundle.Options{
			Name:            cfg.String("name"),
			Namespace:       orkNamespace(env),
			Image:           cfg.String("image"),
			Replicas:        cfg.Int("replicas"),
			ShutdownTimeout: cfg.Duration("shutdown-timeout"),
			WatchNamespaces: cfg.StringSlice("watch-namespace"),
			Version:         version.Get().Version,
			ChartVersion:    cfg.String("chart-version"),
			ShardBuckets:    cfg.Int("shard-buckets"),
			ChartOnly:       cfg.String("helm") != "",
		},
	}
	if opts.gen.Replicas < 1 {
		return opts, usageError("--replicas must be at least 1, got %d", opts.gen.Replicas)
	}
	return opts, nil
}

func runBundle(env *Env, opts bundleOptions) error {
	set, err := loadValidKatalog(env, opts.files)
	if err != nil {
		return err
	}
	defaulted := opts.gen.Name == ""
	if defaulted {
		if opts.gen.Name, err = bundle.DefaultName(set); err != nil {
			return usageError("%v: pass --name (a DNS-1035 label of at most 40 characters)", err)
		}
	}
	b, err := bundle.Generate(set, opts.gen)
	if noImage, ok := errors.AsType[*bundle.NoImageError](err); ok {
		return usageError("%v", noImage)
	}
	if err != nil {
		return usageError("--%v", err) // only the options can be invalid here
	}
	for _, w := range b.Warnings {
		fmt.Fprintf(env.Streams.ErrOut, "%s %s\n", env.ErrStyle().Warning("warning:"), w)
	}
	if renamed := b.Renamed(); opts.migrationNote && defaulted && len(renamed) > 0 {
		fmt.Fprintf(env.Streams.ErrOut, "%s the objects are named after the Katalog (%s), no longer %s; an install from an older bundle keeps the old ones: delete its Deployment first, so that two leaders never run (docs/naming.md, \"Upgrading from orkestra\"):\n",
			env.ErrStyle().Warning("note:"), opts.gen.Name, rbacgen.DefaultName)
		for _, r := range renamed {
			fmt.Fprintf(env.Streams.ErrOut, "  %s\n", r)
		}
	}
	if opts.helm != "" {
		if opts.gen.Image == "" && !bundle.Released(opts.gen.Version) {
			fmt.Fprintf(env.Streams.ErrOut, "%s ork %s is no release, so the chart has no default image: set image.repository and image.tag when installing it (e.g. --set image.repository=REPO --set image.tag=TAG)\n",
				env.ErrStyle().Warning("note:"), opts.gen.Version)
		}
		return writeChart(env, b, opts.helm)
	}
	var out []byte
	if opts.format == output.JSON {
		out, err = b.JSON()
	} else {
		out, err = b.YAML()
	}
	if err != nil {
		return err
	}
	_, err = env.Streams.Out.Write(out)
	return err
}

func writeChart(env *Env, b *bundle.Bundle, dir string) error {
	files, err := b.Chart()
	if err != nil {
		return err
	}
	written, err := bundle.WriteChart(dir, files)
	var notChart *bundle.NotAChartError
	if errors.As(err, &notChart) {
		return &ExitError{Code: ExitFailed, Err: err}
	}
	if err != nil {
		return err
	}
	for _, p := range written {
		fmt.Fprintf(env.Streams.Out, "wrote %s\n", p)
	}
	return nil
}
