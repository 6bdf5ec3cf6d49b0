package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/rollout"
	"github.com/orkspace/ork/internal/version"
)

func newRolloutCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Follow the rollout of a candidate reconciler (reconcile.remote.candidate)",
		Args:  unknownSubcommand,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRolloutStatusCmd(env), newRolloutDiffCmd(env))
	return cmd
}

type rolloutStatusOptions struct {
	files     []string
	crd       string
	namespace string
	name      string
	cluster   clusterOptions
	format    output.Format
}

func newRolloutStatusCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status [-f katalog.yaml]... [--crd NAME]",
		Short: "Show a candidate reconciler's rollout: mode, step, samples, ratios, the gate's verdict",
		Long: `Read the rollout state ork run keeps in the ConfigMap <name>-rollout in its namespace (one key per
CRD, written every few seconds) and judge it against the Katalog's candidate: the mode, the
step and its share of custom resources, the samples of the current window with their error and
divergence ratios, the gate's verdict, and the last divergences as field paths (never values).
When the gate has held at 100%, it says to promote the candidate (make it the endpoint). A
state written for another candidate spec is shown as stale: ork run starts that rollout over.
--crd may be left out when the Katalog has one remote CRD.
Exit code 0: shown (also before ork wrote any state), 1: the cluster could not be read,
2: usage error (no candidate in the Katalog for the CRD: a rollout without one is aborted).`,
		Example: `  ork rollout status -f katalog.yaml --crd webapp --namespace orkestra-system
  ork rollout status -f katalog.yaml -o json | jq .verdict`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := completeRolloutStatus(env)
			if err != nil {
				return err
			}
			return runRolloutStatus(cmd.Context(), env, opts)
		},
	}
	addKatalogFlag(cmd)
	addOutputFlag(cmd, output.Text, output.Text, output.JSON)
	f := cmd.Flags()
	f.String("crd", "", "the CRD whose rollout to show (its name in the Katalog; default: the only remote one)")
	addNamespaceFlag(cmd, "ork's own namespace, where the ConfigMap is")
	f.String("name", "", "the operator's name (ork run --name): the ConfigMap is <name>-rollout"+nameDefault)
	addClusterFlags(cmd)
	return cmd
}

func completeRolloutStatus(env *Env) (rolloutStatusOptions, error) {
	cfg := env.Config()
	format, err := outputFormat(cfg, output.Text, output.JSON)
	if err != nil {
		return rolloutStatusOptions{}, err
	}
	ns := orkNamespace(env)
	return rolloutStatusOptions{files: cfg.StringSlice("filename"), crd: cfg.String("crd"), namespace: ns,
		cluster: completeCluster(cfg), format: format}, nil
}

func runRolloutStatus(ctx context.Context, env *Env, opts rolloutStatusOptions) error {
	set, err := loadValidKatalog(env, opts.files)
	if err != nil {
		return err
	}
	if opts.name, err = operatorName(env.Config(), set); err != nil {
		return err
	}
	crd, err := remoteCRD(set, opts.crd)
	if err != nil {
		return err
	}
	plan, err := candidatePlan(crd)
	if err != nil {
		return err
	}
	rc, err := opts.cluster.restConfig()
	if err != nil {
		return err
	}
	rc.UserAgent = version.UserAgent()
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	name := naming.RolloutConfigMapName(opts.name)
	var state *rollout.State
	cm, err := kube.CoreV1().ConfigMaps(opts.namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("read rollout state %s/%s: %w", opts.namespace, name, err)}
	default:
		if v, ok := cm.Data[crd.Name]; ok {
			s, err := rollout.Decode(v)
			if err != nil {
				return &ExitError{Code: ExitFailed, Err: fmt.Errorf("rollout state %s/%s key %s: %w", opts.namespace, name, crd.Name, err)}
			}
			state = &s
		}
	}
	st := rollout.Describe(crd.Name, plan, state)
	if opts.format == output.JSON {
		return output.WriteJSON(env.Streams.Out, st)
	}
	return writeRolloutStatus(env.Streams.Out, env.Style(), st, opts.namespace+"/"+name)
}

// candidatePlan is the plan of crd's candidate; a CRD without one has no rollout.
func candidatePlan(crd *katalog.CRD) (rollout.Plan, error) {
	r := crd.OperatorBox.Reconcile.Remote
	if r == nil || r.Candidate == nil {
		return rollout.Plan{}, usageError("CRD %q has no reconcile.remote.candidate: no rollout (removing candidate aborts one)", crd.Name)
	}
	p, err := rollout.PlanOf(r.Candidate)
	if err != nil {
		return rollout.Plan{}, usageError("CRD %q: %v", crd.Name, err)
	}
	return p, nil
}

// writeRolloutStatus prints st as a few aligned lines, then the recent divergences.
func writeRolloutStatus(w io.Writer, st output.Style, s rollout.Status, where string) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', 0)
	line := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t%s\n", k+":", fmt.Sprintf(format, a...)) }
	line("crd", "%s", st.Bold(s.CRD))
	line("mode", "%s", s.Mode)
	if s.Phase == "" {
		line("phase", "%s", st.Dim("no state in "+where+" yet (ork run writes it every few seconds)"))
		_ = tw.Flush() // into a strings.Builder: no error
		_, err := io.WriteString(w, b.String())
		return err
	}
	phase := string(s.Phase)
	if s.Stale {
		phase += st.Warning(" (stale: written for another candidate spec; ork run starts over)")
	}
	line("phase", "%s", phase)
	if s.Mode == rollout.ModeCanary {
		line("step", "%d (%d%% of custom resources on the candidate)", s.Step, s.Percent)
	}
	line("samples", "%d (%d compared with stable)", s.Samples, s.Compared)
	line("errors", "%d (ratio %.3f)", s.Errors, s.ErrorRatio)
	line("divergences", "%d (ratio %.3f)", s.Divergences, s.DivergenceRatio)
	verdict := s.Verdict
	switch verdict {
	case "holds":
		verdict = st.OK(verdict)
	case "fails":
		verdict = st.Error(verdict)
	}
	line("gate", "%s", verdict)
	if s.Reason != "" {
		line("reason", "%s", s.Reason)
	}
	if s.Promote {
		line("promote", "%s", st.OK("yes: make candidate.endpoint the endpoint and remove candidate"))
	}
	_ = tw.Flush()
	if len(s.Recent) > 0 {
		fmt.Fprintf(&b, "recent divergences (field paths):\n")
	}
	for _, d := range s.Recent {
		fmt.Fprintf(&b, "  %s %s %s\n", d.At.UTC().Format("2006-01-02T15:04:05Z"), d.CR, strings.Join(d.Paths, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
