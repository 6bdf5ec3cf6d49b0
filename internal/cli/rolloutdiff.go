package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/replaydiff"
)

type rolloutDiffOptions struct {
	files       []string
	crd         string
	replay      string
	candidate   string
	secretFiles []string
	format      output.Format
	// includeDelete sends recorded deletes too (default: the candidate's shadowDeletes).
	includeDelete bool
}

func newRolloutDiffCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diff [-f katalog.yaml]... [--crd NAME] --replay DIR [--candidate URL]",
		Short: "Compare a candidate reconciler's answers with recorded ones, offline",
		Long: `Send every recorded request of a CRD in a recording directory (ork run --record, ork simulate
--remote --record) to the candidate reconciler again, with prepared.dryRun: true, and compare
each answer with the recorded one as ork run's shadow mode compares a candidate's answer with
the stable reconciler's: result, requeueAfter, status and the objects ork would build. Each
diverging exchange is listed with the differing field paths, never values. Recorded Secret
data and --redact paths are masked, so a divergence found offline can differ from one found
live. The candidate is --candidate, else the Katalog's candidate.endpoint (with its auth:
Secrets from --secrets FILE). --crd may be left out when the Katalog has one remote CRD.
Recorded deletes are sent only with the candidate's shadowDeletes or --include-deletes (a
reconciler may clean up outside the cluster whatever dryRun says).
Exit code 0: every compared answer agrees and no candidate call failed; 1: a divergence, a
failed candidate call, or nothing compared; 2: usage error (no recording, no candidate).`,
		Example: `  ork rollout diff -f katalog.yaml --crd webapp --replay rec/ --candidate http://127.0.0.1:8089/reconcile
  ork rollout diff -f katalog.yaml --replay rec/ -o json | jq .divergences`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := completeRolloutDiff(env)
			if err != nil {
				return err
			}
			return runRolloutDiff(cmd.Context(), env, opts)
		},
	}
	addKatalogFlag(cmd)
	addOutputFlag(cmd, output.Text, output.Text, output.JSON)
	f := cmd.Flags()
	f.String("crd", "", "the CRD whose exchanges to compare (its name in the Katalog; default: the only remote one)")
	f.String("replay", "", "the recording directory (required)")
	f.String("candidate", "", "the candidate's URL (default: the Katalog's candidate.endpoint)")
	f.StringArray("secrets", nil, "file of Secret manifests for the candidate's auth.secretRef; repeatable")
	f.Bool("include-deletes", false, "send recorded deletes too (default: only with the candidate's shadowDeletes: a reconciler may clean up outside the cluster whatever dryRun says)")
	return cmd
}

func completeRolloutDiff(env *Env) (rolloutDiffOptions, error) {
	cfg := env.Config()
	format, err := outputFormat(cfg, output.Text, output.JSON)
	if err != nil {
		return rolloutDiffOptions{}, err
	}
	opts := rolloutDiffOptions{files: cfg.StringSlice("filename"), crd: cfg.String("crd"), replay: cfg.String("replay"),
		candidate: cfg.String("candidate"), secretFiles: cfg.StringSlice("secrets"), format: format, includeDelete: cfg.Bool("include-deletes")}
	if opts.replay == "" {
		return opts, usageError("--replay DIR is required: the recording to compare against")
	}
	return opts, nil
}

func runRolloutDiff(ctx context.Context, env *Env, opts rolloutDiffOptions) error {
	set, err := loadValidKatalog(env, opts.files)
	if err != nil {
		return err
	}
	crd, err := remoteCRD(set, opts.crd)
	if err != nil {
		return err
	}
	var secrets []*unstructured.Unstructured
	for _, f := range opts.secretFiles {
		objs, err := manifest.Read(f)
		if err != nil {
			return usageError("--secrets: %v", err)
		}
		secrets = append(secrets, objs...)
	}
	rep, err := replaydiff.Run(ctx, crd, replaydiff.Options{Dir: opts.replay, Candidate: opts.candidate,
		Secrets: manifest.NewSecrets("--secrets", secrets...), IncludeDelete: opts.includeDelete})
	if err != nil {
		return usageError("%v", err)
	}
	if opts.format == output.JSON {
		err = output.WriteJSON(env.Streams.Out, rep)
	} else {
		err = writeRolloutDiff(env.Streams.Out, env.Style(), rep)
	}
	if err != nil {
		return err
	}
	if rep.Divergences > 0 || rep.Errors > 0 {
		return &ExitError{Code: ExitFailed}
	}
	if rep.Compared == 0 {
		// Nothing was checked: a green CI job would claim what no comparison showed.
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("no answer of %s in %s could be compared (%d recorded exchanges of it sent)", rep.CRD, opts.replay, rep.Exchanges)}
	}
	return nil
}

// writeRolloutDiff lists the exchanges that diverge or failed, then a summary line.
func writeRolloutDiff(w io.Writer, st output.Style, rep replaydiff.Report) error {
	var b strings.Builder
	for _, r := range rep.Results {
		switch {
		case r.Reason != "ReconcileSucceeded":
			fmt.Fprintf(&b, "%s %s %s: %s\n", r.File, r.Key, r.Trigger, st.Error(r.Reason))
		case len(r.Divergences) > 0:
			fmt.Fprintf(&b, "%s %s %s: %s %s\n", r.File, r.Key, r.Trigger, st.Warning("differs at"), strings.Join(r.Divergences, ", "))
		}
	}
	fmt.Fprintf(&b, "%s: %s, %d compared, %d diverging, %d failed", st.Bold(rep.CRD), plural(rep.Exchanges, "exchange"), rep.Compared, rep.Divergences, rep.Errors)
	if rep.SkippedDeletes > 0 {
		fmt.Fprintf(&b, ", %s not sent (--include-deletes)", plural(rep.SkippedDeletes, "delete"))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
