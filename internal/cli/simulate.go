package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/simulate"
	"github.com/orkspace/ork/internal/suggest"
)

// remoteNote is the seed's line for a skipped remote CRD; byte-exact, a contract.
const remoteNote = "note: remote reconciler — skipping (dispatches to an external endpoint at runtime)"

// simulateFormats are the -o values of ork simulate.
func simulateFormats() []output.Format {
	return []output.Format{output.Text, output.YAML, output.JSON, output.Plan}
}

type simulateOptions struct {
	files  []string
	format output.Format
	sim    simulate.Options
	// remote: --remote and its companions.
	remote      bool
	endpoint    string
	secretFiles []string
	// relatedFiles are --related: objects payload.related may read, beside the CR file's.
	relatedFiles []string
	record       string
	replay       string
	redact       []string
	// candidate is --candidate: compare its answers with --replay's, as ork rollout diff.
	candidate string
	// strict fails a run that simulated no custom resource.
	strict bool
	// operationWait is --operation-wait.
	operationWait time.Duration
}

func newSimulateCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simulate [-f katalog.yaml]... [--crd NAME] [--cr FILE] [--cycles N] [--remote [--endpoint URL | --replay DIR [--candidate URL]] [--record DIR]]",
		Short: "Run the reconcilers against an in-memory cluster and show what they would do",
		Long: `Simulate the declarative CRDs of a Katalog without a cluster. For each custom resource in the
CRD's crFiles (or --cr), the reconciler runs in cycles against an in-memory cluster seeded with
every object of the CR file, until two cycles in a row change nothing (steady state) or
--cycles is reached. The summary lists each cycle's changes (+ create, ~ update), identical
cycles collapsed, and what deleting the CR would remove (- delete). -o yaml|json prints the
objects the cluster would hold, ready for kubectl apply --dry-run=server -f - (notes of skipped
CRDs go to stderr, and with -o yaml also to stdout as # comments). -o plan prints the plan as
JSON for CI assertions: {"steady", "crds": [{"name", "skipped", "crs": [{"file", "namespace",
"name", "ref", "cycles": [{"n", "changes": [{"op": "create|update|delete", "ref"}]}],
"steady", "steadyAt", "onDelete", "error", "operations": [{"id", "cycle", "polls", "waited",
"end", "message"}]}]}]}; steady is true when every simulated CR reached steady state. Every format has the same exit codes.
Remote CRDs print a note and are skipped, unless --remote is given: then each cycle calls the
endpoint (--endpoint to override) with the request ork run would send, children and status
of earlier cycles included, and applies the answer with ork run's checks; Secrets for
auth.secretRef come from the CR file and --secrets. A "pending" answer is applied and its
operation followed as ork run follows it: the next cycles poll (trigger requeue, with
prepared.operation) after its pollAfter, waiting at most --operation-wait in all, until a
final answer (done), another id (replaced) or the deadline (timedOut, then one more call with
timedOut: true); the summary names each operation, its polls and how it ended. A CR whose
operation is still pending is not steady. --record DIR writes every exchange as a
JSON file (Secret data and --redact paths masked); --replay DIR answers from such a
recording instead of the endpoint and names any request it has no recording for. With
--replay, --candidate URL sends each recorded request to a candidate reconciler instead and
prints where its answers differ from the recorded ones (ork rollout diff; -o json for its
report); ork remote check --candidate does the same over a sample custom resource.
A CR whose templates do not render, or whose remote reconcile fails, is reported with the
reason; the other CRs are still simulated. When remote CRDs are skipped, stderr names the
command that simulates them (with the secret.yaml beside the Katalog, when there is one).
When no custom resource at all was simulated, stderr says so; --strict makes that exit 1.
Exit code 0: simulated, 1: invalid Katalog, render or reconcile error or no steady state
(or, with --strict, nothing simulated), 2: usage error.`,
		Example: `  ork simulate -f examples/website/katalog.yaml
  ork simulate -f katalog.yaml --crd website --cr my-site.yaml -o yaml | kubectl apply --dry-run=server -f -
  ork simulate -f examples/remote/katalog.yaml --remote --secrets examples/remote/secret.yaml --record rec/
  ork simulate -f examples/remote/katalog.yaml --remote --replay rec/`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := completeSimulate(env)
			if err != nil {
				return err
			}
			return runSimulate(cmd, env, opts)
		},
	}
	addKatalogFlag(cmd)
	addOutputFlag(cmd, output.Text, simulateFormats()...)
	f := cmd.Flags()
	f.String("crd", "", "simulate only this CRD (its name in the Katalog)")
	f.String("cr", "", "custom resource file to use instead of the CRDs' crFiles")
	f.Int("cycles", simulate.DefaultCycles, "most reconcile cycles to run per CR file")
	f.String("name", "", "the operator ork run would run as (ork run --name): the value of the "+naming.OperatorLabel+" label on every child, and so of its applied digest"+nameDefault)
	f.Bool("remote", false, "simulate remote CRDs too, calling their endpoint")
	f.String("endpoint", "", "with --remote: URL to call instead of each remote CRD's endpoint")
	f.StringArray("secrets", nil, "with --remote: file of Secret manifests standing in for the cluster's; repeatable")
	f.StringArray("related", nil, "with --remote: file of objects standing in for the cluster's, for payload.related (beside the CR file's other documents); repeatable")
	f.String("record", "", "with --remote: write each exchange as a JSON file into this directory")
	f.String("replay", "", "with --remote: answer from the exchanges recorded in this directory, not the endpoint")
	f.StringArray("redact", nil, "with --record: dot-path to mask in requests, answers and objects (Secret data always is); repeatable")
	f.String("candidate", "", "with --remote --replay: compare this candidate reconciler's answers with the recorded ones (as ork rollout diff)")
	f.Duration("operation-wait", simulate.DefaultOperationWait, "with --remote: the longest the run waits, in all, for the operations of \"pending\" answers")
	f.Bool("strict", false, "fail (exit 1) when no custom resource was simulated, for CI")
	return cmd
}

func completeSimulate(env *Env) (simulateOptions, error) {
	cfg := env.Config()
	format, err := outputFormat(cfg, simulateFormats()...)
	if err != nil {
		return simulateOptions{}, err
	}
	opts := simulateOptions{files: cfg.StringSlice("filename"), format: format, sim: simulate.Options{
		CRD: cfg.String("crd"), CRFile: cfg.String("cr"), Cycles: cfg.Int("cycles"),
	}}
	if opts.sim.Cycles < 1 {
		return simulateOptions{}, usageError("--cycles: want at least 1, got %d", opts.sim.Cycles)
	}
	opts.remote, opts.endpoint, opts.secretFiles = cfg.Bool("remote"), cfg.String("endpoint"), cfg.StringSlice("secrets")
	opts.relatedFiles = cfg.StringSlice("related")
	opts.record, opts.replay, opts.redact = cfg.String("record"), cfg.String("replay"), cfg.StringSlice("redact")
	opts.candidate, opts.strict = cfg.String("candidate"), cfg.Bool("strict")
	opts.operationWait = cfg.Duration("operation-wait")
	if opts.operationWait <= 0 {
		return simulateOptions{}, usageError("--operation-wait %s: want a positive duration such as 2m", opts.operationWait)
	}
	if !opts.remote {
		for _, f := range []struct {
			name string
			set  bool
		}{{"endpoint", opts.endpoint != ""}, {"secrets", len(opts.secretFiles) > 0}, {"related", len(opts.relatedFiles) > 0}, {"record", opts.record != ""}, {"replay", opts.replay != ""}, {"candidate", opts.candidate != ""}} {
			if f.set {
				return simulateOptions{}, usageError("--%s needs --remote", f.name)
			}
		}
	}
	switch {
	case opts.replay != "" && opts.record != "":
		return simulateOptions{}, usageError("--record and --replay: pick one (a replay would record what was recorded)")
	case opts.replay != "" && opts.endpoint != "":
		return simulateOptions{}, usageError("--endpoint and --replay: pick one (a replay calls no endpoint)")
	case len(opts.redact) > 0 && opts.record == "":
		return simulateOptions{}, usageError("--redact needs --record")
	case opts.candidate != "" && opts.replay == "":
		return simulateOptions{}, usageError("--candidate needs --replay DIR, the recorded answers to compare with (ork remote check --candidate compares over a sample custom resource)")
	case opts.candidate != "" && opts.format != output.Text && opts.format != output.JSON:
		return simulateOptions{}, usageError("--candidate prints a divergence report: -o text or json")
	}
	return opts, nil
}

func runSimulate(cmd *cobra.Command, env *Env, opts simulateOptions) error {
	if opts.candidate != "" {
		return runRolloutDiff(cmd.Context(), env, rolloutDiffOptions{files: opts.files, crd: opts.sim.CRD, replay: opts.replay,
			candidate: opts.candidate, secretFiles: opts.secretFiles, format: opts.format})
	}
	set, err := loadValidKatalog(env, opts.files)
	if err != nil {
		return err
	}
	if opts.sim.Operator, err = operatorName(env.Config(), set); err != nil {
		return err
	}
	if name := opts.sim.CRD; name != "" && set.CRD(name) == nil {
		var names []string
		for _, c := range set.CRDs {
			names = append(names, c.Name)
		}
		if near := suggest.Nearest(name, names); near != "" {
			return usageError("--crd: no CRD %q in the Katalog (did you mean %q?)", name, near)
		}
		return usageError("--crd: no CRD %q in the Katalog (CRDs: %s)", name, strings.Join(names, ", "))
	}
	finish, err := remoteOptions(&opts)
	if err != nil {
		return err
	}
	rep, err := simulate.Run(cmd.Context(), set, opts.sim)
	if err != nil {
		return err
	}
	if err := finish(); err != nil {
		return err
	}
	switch opts.format {
	case output.YAML, output.JSON:
		// stdout stays pure YAML/JSON for kubectl; the notes go to stderr, and in YAML also
		// to stdout as comments, so that an empty output says why it is empty.
		if err := writeSimulateNotes(env.Streams.ErrOut, rep, ""); err != nil {
			return err
		}
		if opts.format == output.YAML {
			if err := writeSimulateNotes(env.Streams.Out, rep, "# "); err != nil {
				return err
			}
		}
		err = writeSimulateObjects(env.Streams.Out, opts.format, rep)
	case output.Plan:
		if err := writeSimulateNotes(env.Streams.ErrOut, rep, ""); err != nil {
			return err
		}
		err = output.WriteJSON(env.Streams.Out, rep.Plan())
	default:
		err = writeSimulateText(env.Streams.Out, env.Style(), rep)
	}
	if err != nil {
		return err
	}
	if err := writeNextSteps(env, set, rep, opts); err != nil {
		return err
	}
	if err := failed(rep); err != nil {
		return err
	}
	return unsettled(rep, opts.sim.Cycles)
}

// writeNextSteps tells, on stderr, how to simulate the remote CRDs a plain run skipped, and
// says when nothing was simulated at all (an error under --strict).
func writeNextSteps(env *Env, set *katalog.Set, rep simulate.Report, opts simulateOptions) error {
	var remotes []string
	simulated := 0
	for _, c := range rep.CRDs {
		simulated += len(c.CRs)
		if c.Skipped == simulate.SkipRemote {
			remotes = append(remotes, c.Name)
		}
	}
	st := env.ErrStyle()
	if len(remotes) > 0 {
		fmt.Fprintf(env.Streams.ErrOut, "%s with the reconciler running, simulate it: %s (ork remote check takes the same -f and --secrets and judges each answer)\n",
			st.Dim("next:"), remoteNextStep(set, remotes, "simulate", opts.secretFiles))
	}
	if simulated > 0 {
		return nil
	}
	if opts.strict {
		return &ExitError{Code: ExitFailed, Err: errors.New("--strict: no custom resource was simulated")}
	}
	if opts.format != output.Text {
		_, err := fmt.Fprintf(env.Streams.ErrOut, "%s nothing simulated: no custom resource had a reconcile to simulate (--strict makes this exit 1)\n", st.Warning("note:"))
		return err
	}
	return nil
}

// remoteOptions sets opts.sim.Remote from the --remote flags; finish reports a recording
// that could not be written, once the run is over.
func remoteOptions(opts *simulateOptions) (finish func() error, err error) {
	finish = func() error { return nil }
	if !opts.remote {
		return finish, nil
	}
	ro := &simulate.RemoteOptions{Endpoint: opts.endpoint, OperationWait: opts.operationWait}
	for _, f := range opts.secretFiles {
		objs, err := manifest.Read(f)
		if err != nil {
			return nil, usageError("--secrets: %v", err)
		}
		ro.Secrets = append(ro.Secrets, objs...)
	}
	for _, f := range opts.relatedFiles {
		objs, err := manifest.Read(f)
		if err != nil {
			return nil, usageError("--related: %v", err)
		}
		ro.Related = append(ro.Related, objs...)
	}
	switch {
	case opts.replay != "":
		rp, err := exchange.LoadReplay(opts.replay)
		if err != nil {
			return nil, usageError("--replay: %v", err)
		}
		ro.HTTPClient, ro.Placeholder = &http.Client{Transport: rp}, true
		// The recording answers at once: waiting out pollAfter would only slow the replay.
		ro.Sleep = func(context.Context, time.Duration) error { return nil }
	case opts.record != "":
		rec, err := exchange.NewRecorder(opts.record, exchange.RecorderOptions{Redact: opts.redact})
		if err != nil {
			return nil, usageError("--record: %v", err)
		}
		ro.Record = rec.Record
		finish = func() error {
			if err := rec.Err(); err != nil {
				return fmt.Errorf("--record: %w", err)
			}
			return nil
		}
	}
	opts.sim.Remote = ro
	return finish, nil
}

// failed fails the run when a CR's reconcile could not render; the other CRs were printed.
func failed(rep simulate.Report) error {
	var errs []error
	for _, c := range rep.CRDs {
		for _, cr := range c.CRs {
			if cr.Err != "" {
				errs = append(errs, fmt.Errorf("simulate %s %s: %s", c.Name, cr.Ref, cr.Err))
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &ExitError{Code: ExitFailed, Err: errors.Join(errs...)}
}

// unsettled fails the run when a CR never reached steady state.
func unsettled(rep simulate.Report, cycles int) error {
	var crs []string
	for _, c := range rep.CRDs {
		for _, cr := range c.CRs {
			if cr.SteadyAt == 0 && cr.Err == "" {
				crs = append(crs, c.Name+" "+cr.Ref)
			}
		}
	}
	if len(crs) == 0 {
		return nil
	}
	if cycles < 3 {
		// The first pass creates; steady state is two unchanged passes after it.
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("no steady state after %d cycles: %s "+
			"(steady state takes two cycles in a row without changes, after the first that creates: use --cycles 3 or more)",
			cycles, strings.Join(crs, ", "))}
	}
	return &ExitError{Code: ExitFailed, Err: fmt.Errorf("no steady state after %d cycles: %s "+
		"(raise --cycles, or look for entries that change the same object on every pass)",
		cycles, strings.Join(crs, ", "))}
}

func skipNote(s simulate.Skip) string {
	switch s {
	case simulate.SkipRemote:
		return remoteNote
	case simulate.SkipDisabled:
		return "note: declarative reconciler off (reconcile.default: false) — nothing to simulate"
	case simulate.SkipNoCRs:
		return "note: no custom resource to simulate (list some in crFiles or pass --cr)"
	}
	return ""
}

// writeSimulateNotes writes the note of each skipped CRD, each line after prefix.
func writeSimulateNotes(w io.Writer, rep simulate.Report, prefix string) error {
	var b strings.Builder
	for _, c := range rep.CRDs {
		if c.Skipped != "" {
			fmt.Fprintf(&b, "%s%s:\n%s%s\n", prefix, c.Name, prefix, skipNote(c.Skipped))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSimulateText prints, per CRD and CR, each run of identical cycles and the outcome.
func writeSimulateText(w io.Writer, st output.Style, rep simulate.Report) error {
	var b strings.Builder
	for i, c := range rep.CRDs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s:\n", st.Bold(c.Name))
		if c.Skipped != "" {
			fmt.Fprintln(&b, skipNote(c.Skipped))
			continue
		}
		for _, cr := range c.CRs {
			where := cr.Ref
			if cr.Namespace != "" {
				where += " in " + cr.Namespace
			}
			fmt.Fprintf(&b, "  %s %s\n", where, st.Dim("("+cr.File+")"))
			for _, s := range cr.Spans() {
				label := fmt.Sprintf("cycle %d", s.From)
				if s.To > s.From {
					label = fmt.Sprintf("cycles %d-%d", s.From, s.To)
				}
				if s.Operation != "" {
					label += " " + st.Dim(fmt.Sprintf("(operation %q pending)", s.Operation))
				}
				if len(s.Changes) == 0 {
					fmt.Fprintf(&b, "    %s: %s\n", label, st.Dim("no changes"))
					continue
				}
				fmt.Fprintf(&b, "    %s:\n", label)
				writeChanges(&b, st, s.Changes)
			}
			switch {
			case cr.Err != "":
				fmt.Fprintf(&b, "    %s\n", st.Error("reconcile failed (the error is on stderr)"))
			case cr.SteadyAt > 0:
				fmt.Fprintf(&b, "    %s\n", st.OK(fmt.Sprintf("steady state at cycle %d", cr.SteadyAt)))
			default:
				fmt.Fprintf(&b, "    %s\n", st.Error(fmt.Sprintf("no steady state after %d cycles", len(cr.Cycles))))
			}
			for _, op := range cr.Operations {
				fmt.Fprintf(&b, "    %s\n", operationLine(st, op))
			}
			if len(cr.OnDelete) > 0 {
				fmt.Fprintf(&b, "    on delete:\n")
				writeChanges(&b, st, cr.OnDelete)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// operationLine says how an operation the CR waited on went: its polls, the time waited,
// and how it ended.
func operationLine(st output.Style, op simulate.Operation) string {
	s := fmt.Sprintf("operation %q (cycle %d): %s, waited %s, ", op.ID, op.Cycle, plural(op.Polls, "poll"), op.Waited)
	switch op.End {
	case simulate.OperationDone:
		return s + st.OK("done")
	case simulate.OperationReplaced:
		return s + st.Dim("replaced by another id")
	case simulate.OperationTimedOut:
		return s + st.Error("timed out") + ": " + op.Message
	case simulate.OperationFailed:
		return s + st.Error("failed")
	}
	return s + st.Warning("still pending") + " (raise --operation-wait or --cycles to follow it further): " + op.Message
}

func writeChanges(b *strings.Builder, st output.Style, changes []simulate.Change) {
	for _, ch := range changes {
		sign := string(ch.Op)
		switch ch.Op {
		case simulate.Create:
			sign = st.OK(sign)
		case simulate.Update:
			sign = st.Warning(sign)
		case simulate.Delete:
			sign = st.Error(sign)
		}
		fmt.Fprintf(b, "      %s %s\n", sign, ch.Ref)
	}
}

// writeSimulateObjects prints the final objects: multi-document YAML, or a v1 List in JSON.
func writeSimulateObjects(w io.Writer, format output.Format, rep simulate.Report) error {
	if format == output.JSON {
		items := make([]any, 0, len(rep.Objects))
		for _, o := range rep.Objects {
			items = append(items, o.Object)
		}
		return output.WriteJSON(w, map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	}
	for i, o := range rep.Objects {
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if err := output.WriteYAML(w, o.Object); err != nil {
			return err
		}
	}
	return nil
}
