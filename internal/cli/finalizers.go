package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"

	"github.com/orkspace/ork/internal/finalizer"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/version"
)

type releaseOptions struct {
	files   []string
	cluster clusterOptions
	format  output.Format
}

// releaseReport is ork finalizers release -o json: a contract.
type releaseReport struct {
	Finalizer string               `json:"finalizer"`
	Released  []finalizer.Released `json:"released"`
}

func newFinalizersCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "finalizers",
		Short: "Manage ork's finalizer (" + naming.Finalizer + ") on custom resources",
		Args:  unknownSubcommand,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newFinalizersReleaseCmd(env))
	return cmd
}

func newFinalizersReleaseCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "release [-f katalog.yaml]...",
		Short: "Remove ork's finalizer from every custom resource of the Katalog's CRDs",
		Long: `Remove the finalizer ` + naming.Finalizer + ` (reconcile.remote.finalize) from every custom resource
of every CRD of the Katalog, in every namespace, whatever finalize says now. It is the way out
before uninstalling ork: without it, a custom resource deleted while no ork runs stays
undeletable. Another controller's finalizer is never touched. A custom resource being deleted
goes at once unless another finalizer holds it; its reconciler is not called. Stop ork run first:
while it runs with finalize on, it puts the finalizer back at the next reconcile.
Exit code 0: done (also when there was nothing to release), 1: a CRD could not be listed or a
write failed (the rest is still released).`,
		Example: `  ork finalizers release -f katalog.yaml
  ork finalizers release -f katalog.yaml --kubeconfig ~/.kube/dev --context kind-dev -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := completeRelease(env)
			if err != nil {
				return err
			}
			return runRelease(cmd, env, opts)
		},
	}
	addKatalogFlag(cmd)
	addOutputFlag(cmd, output.Text, output.Text, output.JSON)
	addClusterFlags(cmd)
	return cmd
}

func completeRelease(env *Env) (releaseOptions, error) {
	cfg := env.Config()
	format, err := outputFormat(cfg, output.Text, output.JSON)
	if err != nil {
		return releaseOptions{}, err
	}
	return releaseOptions{files: cfg.StringSlice("filename"), cluster: completeCluster(cfg), format: format}, nil
}

func runRelease(cmd *cobra.Command, env *Env, opts releaseOptions) error {
	set, err := loadValidKatalog(env, opts.files)
	if err != nil {
		return err
	}
	rc, err := opts.cluster.restConfig()
	if err != nil {
		return err
	}
	rc.UserAgent = version.UserAgent()
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	released, relErr := finalizer.Release(cmd.Context(), dyn, set, finalizer.Options{FieldManager: run.FieldManager})
	if opts.format == output.JSON {
		if released == nil {
			released = []finalizer.Released{}
		}
		err = output.WriteJSON(env.Streams.Out, releaseReport{Finalizer: naming.Finalizer, Released: released})
	} else {
		err = writeReleased(env.Streams.Out, env.Style(), released)
	}
	if relErr != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("release %s: %w", naming.Finalizer, relErr)}
	}
	return err
}

// writeReleased prints a line per custom resource released and a summary line.
func writeReleased(w io.Writer, st output.Style, released []finalizer.Released) error {
	var b strings.Builder
	for _, r := range released {
		name := r.Name
		if r.Namespace != "" {
			name = r.Namespace + "/" + r.Name
		}
		line := fmt.Sprintf("released %s %s", st.Bold(r.CRD), name)
		if r.Deleting {
			line += st.Dim(" (being deleted: it goes now unless another finalizer holds it)")
		}
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "%s removed from %s\n", naming.Finalizer, plural(len(released), "custom resource"))
	_, err := io.WriteString(w, b.String())
	return err
}
