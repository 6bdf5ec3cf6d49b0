package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/remotecheck"
	"github.com/orkspace/ork/internal/suggest"
)

func newRemoteCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "remote",
		Short: "Work with remote reconcilers without a cluster",
		Args:  unknownSubcommand,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRemoteCheckCmd(env))
	return cmd
}

type remoteCheckOptions struct {
	files       []string
	format      output.Format
	crFile      string
	secretFiles []string
	// relatedFiles are --related: objects payload.related may read, beside the CR file's.
	relatedFiles []string
	check        remotecheck.Options
}

func newRemoteCheckCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check [-f katalog.yaml]... [--crd NAME] [--cr FILE] [--endpoint URL]",
		Short: "Check a remote reconciler against ork's wire contract, without a cluster",
		Long: `Send a remote reconciler the PreparedRequests ork would send for one custom resource and judge
every answer: by the JSON Schema (schema/remote-reconcile-result.schema.json), by ork's own
decoder and intent builders, and by the Katalog's managedResources; latency is measured
against reconcile.remote.timeout. Round 1 sends create, update and resync (and delete with
--include-deletes); round 2 sends each again with the children the first answer produced, as
ork run would present them, and requires the same resources: a reconciler whose answer moves
with its own children makes ork loop. Every request carries prepared.dryRun: true.
A "pending" answer is followed as ork run follows it: after its pollAfter the check polls
(trigger requeue, with prepared.operation) until a final answer, waiting at most
--operation-wait in all; an operation still pending then, an id that changes without
superseded, or a deadline that passes (then one more call with timedOut: true) is a warning.
The CR is --cr, else the CRD's first crFiles entry; Secrets for auth.secretRef and
tls.caSecretRef are taken from the CR file and --secrets. The endpoint is the Katalog's
unless --endpoint is given. --crd may be left out when the Katalog has one remote CRD.
With --candidate URL, every request goes to that reconciler too (with the Katalog's
candidate auth and timeout when declared) and its answers are compared with the checked
one's as ork run's shadow mode compares them: the differing field paths are listed, never
values. Masked Secret data in the files can make offline divergences differ from live ones.
Every violation of an answer is reported, also beside one that ork's decoder stops at.
Exit code 0: conformant (warnings allowed); 1: the contract is violated (an HTTP status other
than 200, a 401 included, counts); 2: nothing could be checked: no request got an HTTP answer
(nothing listens, every call timed out, the Secret of auth.secretRef is missing), or a
Katalog, --cr or --secrets file is missing, or another usage error. The report is printed
(-o json included) whatever the exit code, but for usage errors.`,
		Example: `  ork remote check -f examples/remote/katalog.yaml --secrets examples/remote/secret.yaml
  ork remote check -f katalog.yaml --crd webapp --cr my-app.yaml --endpoint http://127.0.0.1:8088/reconcile -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := completeRemoteCheck(env)
			if err != nil {
				return err
			}
			return runRemoteCheck(cmd, env, opts)
		},
	}
	addKatalogFlag(cmd)
	addOutputFlag(cmd, output.Text, output.Text, output.JSON)
	f := cmd.Flags()
	f.String("crd", "", "the remote CRD to check (its name in the Katalog; default: the only remote one)")
	f.String("cr", "", "custom resource file (default: the CRD's first crFiles entry)")
	f.String("endpoint", "", "URL to call instead of reconcile.remote.endpoint")
	f.String("candidate", "", "URL of a candidate reconciler: send it every request too and report where its answers differ (field paths, never values); its answers never fail the check")
	f.String("name", "", "the operator ork run would run as (ork run --name): the value of the "+naming.OperatorLabel+" label on every child, and so of its applied digest"+nameDefault)
	f.Bool("include-deletes", false, "also send the delete request (a reconciler may clean up real things despite prepared.dryRun)")
	f.StringArray("secrets", nil, "file of Secret manifests standing in for the cluster's (auth.secretRef, tls.caSecretRef); repeatable")
	f.StringArray("related", nil, "file of objects standing in for the cluster's, for payload.related (beside the CR file's other documents); repeatable")
	f.Duration("operation-wait", remotecheck.DefaultOperationWait, "the longest the check waits, in all, for the operations of \"pending\" answers before it stops following them (a warning)")
	return cmd
}

func completeRemoteCheck(env *Env) (remoteCheckOptions, error) {
	cfg := env.Config()
	format, err := outputFormat(cfg, output.Text, output.JSON)
	if err != nil {
		return remoteCheckOptions{}, err
	}
	wait := cfg.Duration("operation-wait")
	if wait <= 0 {
		return remoteCheckOptions{}, usageError("--operation-wait %s: want a positive duration such as 2m", wait)
	}
	return remoteCheckOptions{
		files: cfg.StringSlice("filename"), format: format, crFile: cfg.String("cr"), secretFiles: cfg.StringSlice("secrets"),
		relatedFiles: cfg.StringSlice("related"),
		check: remotecheck.Options{CRD: cfg.String("crd"), Endpoint: cfg.String("endpoint"), Candidate: cfg.String("candidate"), IncludeDelete: cfg.Bool("include-deletes"),
			OperationWait: wait},
	}, nil
}

func runRemoteCheck(cmd *cobra.Command, env *Env, opts remoteCheckOptions) error {
	set, err := loadValidKatalog(env, opts.files)
	if err != nil {
		return err
	}
	if opts.check.Operator, err = operatorName(env.Config(), set); err != nil {
		return err
	}
	crd, err := remoteCRD(set, opts.check.CRD)
	if err != nil {
		return err
	}
	opts.check.CRD = crd.Name
	cr, secrets, err := readCR(crd, opts.crFile, opts.secretFiles)
	if err != nil {
		return err
	}
	opts.check.CR = cr
	opts.check.Secrets = secrets
	opts.check.SecretFile = besideSecrets(crd, opts.secretFiles)
	if opts.check.Objects, err = readObjects(crd, opts.crFile, opts.relatedFiles); err != nil {
		return err
	}
	rep, err := remotecheck.Run(cmd.Context(), set, opts.check)
	if err != nil {
		return fmt.Errorf("remote check: %w", err)
	}
	if opts.format == output.JSON {
		err = output.WriteJSON(env.Streams.Out, rep)
	} else {
		err = writeRemoteCheck(env.Streams.Out, env.Style(), rep)
	}
	if err != nil {
		return err
	}
	switch {
	case !rep.Answered:
		// Nothing was checked: a CI step must not read this as "the reconciler is broken".
		return &ExitError{Code: ExitUsage}
	case !rep.Conformant:
		return &ExitError{Code: ExitFailed}
	}
	if opts.format == output.Text {
		_, err = fmt.Fprintf(env.Streams.ErrOut, "%s simulate it cycle by cycle: %s\n", env.ErrStyle().Dim("next:"),
			remoteNextStep(set, []string{crd.Name}, "simulate", opts.secretFiles))
	}
	return err
}

// remoteCRD is the CRD --crd names, else the Katalog's only remote CRD.
func remoteCRD(set *katalog.Set, name string) (*katalog.CRD, error) {
	return remoteCRDOf(set, name, "--crd")
}

// remoteCRDOf is the remote CRD name names, else the Katalog's only remote CRD; errors
// name flag, the option the name came from.
func remoteCRDOf(set *katalog.Set, name, flag string) (*katalog.CRD, error) {
	var remotes []string
	for _, c := range set.CRDs {
		if c.IsRemote() {
			remotes = append(remotes, c.Name)
		}
	}
	if name == "" {
		switch len(remotes) {
		case 0:
			return nil, usageError("the Katalog has no CRD with reconcile.remote")
		case 1:
			return set.CRD(remotes[0]), nil
		}
		return nil, usageError("%s: the Katalog has %d remote CRDs (%s): name one", flag, len(remotes), strings.Join(remotes, ", "))
	}
	c := set.CRD(name)
	switch {
	case c == nil && len(remotes) > 0:
		if near := suggest.Nearest(name, remotes); near != "" {
			return nil, usageError("%s: no CRD %q in the Katalog (did you mean %q?)", flag, name, near)
		}
		return nil, usageError("%s: no CRD %q in the Katalog (remote CRDs: %s)", flag, name, strings.Join(remotes, ", "))
	case c == nil:
		return nil, usageError("%s: no CRD %q in the Katalog, which has no remote CRD", flag, name)
	case !c.IsRemote():
		return nil, usageError("%s: CRD %q has no reconcile.remote (it uses the declarative reconciler: try ork simulate)", flag, name)
	}
	return c, nil
}

// readCR reads the one custom resource of crd from file (else the CRD's first crFiles entry),
// and the Secrets in it and in secretFiles.
func readCR(crd *katalog.CRD, file string, secretFiles []string) (*unstructured.Unstructured, manifest.Secrets, error) {
	if file == "" {
		if len(crd.CRFiles) == 0 {
			return nil, manifest.Secrets{}, usageError("--cr: CRD %q lists no crFiles: pass a custom resource file with --cr FILE", crd.Name)
		}
		file = crd.Source.Resolve(crd.CRFiles[0])
	}
	objs, err := manifest.Read(file)
	if err != nil {
		return nil, manifest.Secrets{}, usageError("--cr: %v", err)
	}
	all := objs
	for _, f := range secretFiles {
		more, err := manifest.Read(f)
		if err != nil {
			return nil, manifest.Secrets{}, usageError("--secrets: %v", err)
		}
		all = append(all, more...)
	}
	var crs []*unstructured.Unstructured
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if crd.APITypes != nil && gvk.Group == crd.APITypes.Group && gvk.Kind == crd.APITypes.Kind {
			crs = append(crs, o)
		}
	}
	kind := crd.Name
	if crd.APITypes != nil {
		kind = crd.APITypes.Kind
	}
	switch len(crs) {
	case 0:
		return nil, manifest.Secrets{}, usageError("--cr: %s holds no %s to send", file, kind)
	case 1:
		return crs[0], manifest.NewSecrets("the CR file or --secrets", all...), nil
	}
	return nil, manifest.Secrets{}, usageError("--cr: %s holds %d %ss: check one at a time (one per file)", file, len(crs), kind)
}

// writeRemoteCheck prints each request with its verdict and violations, then a summary.
func writeRemoteCheck(w io.Writer, st output.Style, rep remotecheck.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s → %s %s\n", st.Bold(rep.CRD), rep.CR, rep.Endpoint, st.Dim("(timeout "+rep.Timeout+")"))
	for _, r := range rep.Related {
		fmt.Fprintf(&b, "  related %s\n", r)
	}
	for _, m := range rep.MissingRelated {
		fmt.Fprintf(&b, "  %s required related object missing: %s (ork run would not call; add it to the CR file or --related)\n", st.Dim("!"), m)
	}
	width := 0
	for _, r := range rep.Requests {
		width = max(width, len(r.Name))
	}
	byRequest := map[string][]remotecheck.Violation{}
	errs, warns := 0, 0
	for _, v := range rep.Violations {
		byRequest[v.Request] = append(byRequest[v.Request], v)
		if v.Severity == remotecheck.Error {
			errs++
		} else {
			warns++
		}
	}
	var shown [][]remotecheck.Violation
	var shownBy []string
	for _, r := range rep.Requests {
		status, latency := "---", "-"
		if r.Status != 0 {
			status = fmt.Sprint(r.Status)
		}
		if r.LatencyMS > 0 {
			latency = fmt.Sprintf("%.1fms", r.LatencyMS)
		}
		vs := byRequest[r.Name]
		waited := ""
		if r.Poll != nil {
			waited = " " + st.Dim(fmt.Sprintf("(after %s)", time.Duration(r.WaitedMS)*time.Millisecond))
		}
		fmt.Fprintf(&b, "  %-*s  %s %8s  %s%s\n", width, r.Name, status, latency, verdict(st, r, len(vs) > 0), waited)
		writeCandidate(&b, st, r.Candidate)
		// The same answer to another trigger is usually the same mistake: say so once.
		if i := slices.IndexFunc(shown, func(prev []remotecheck.Violation) bool { return sameViolations(prev, vs) }); i >= 0 && len(vs) > 0 {
			fmt.Fprintf(&b, "    %s\n", st.Dim(fmt.Sprintf("the same %s as %s", plural(len(vs), "violation"), shownBy[i])))
			continue
		}
		shown, shownBy = append(shown, vs), append(shownBy, r.Name)
		for _, v := range vs {
			label := st.Error("error")
			if v.Severity == remotecheck.Warning {
				label = st.Warning("warning")
			}
			at := ""
			if v.Path != "" {
				at = st.Bold(v.Path) + " "
			}
			fmt.Fprintf(&b, "    %s %s%s %s\n", label, at, st.Dim("["+v.Check+"]"), v.Message)
			if v.Hint != "" {
				fmt.Fprintf(&b, "      %s\n", st.Dim("hint: "+v.Hint))
			}
		}
	}
	if len(rep.NotSent) > 0 {
		fmt.Fprintf(&b, "  %s\n", st.Dim("not sent: "+strings.Join(rep.NotSent, "; ")))
	}
	summary := st.OK("conformant")
	switch {
	case !rep.Answered:
		summary = st.Error("not checked (no request got an HTTP answer)")
	case !rep.Conformant:
		summary = st.Error("not conformant")
	}
	fmt.Fprintf(&b, "%s: %s, %s, %s\n", summary, plural(len(rep.Requests), "request"), plural(errs, "violation"), plural(warns, "warning"))
	if rep.Candidate != "" {
		fmt.Fprintf(&b, "candidate %s: %d of %s answered differently\n", rep.Candidate, rep.Divergences, plural(len(rep.Requests), "request"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCandidate prints the candidate's answer to a request under it: its reason, and the
// paths where it differs.
func writeCandidate(b *strings.Builder, st output.Style, c *remotecheck.CandidateAnswer) {
	switch {
	case c == nil:
	case c.Reason != "ReconcileSucceeded":
		fmt.Fprintf(b, "    candidate %s\n", st.Warning(c.Reason))
	case len(c.Divergences) == 0:
		fmt.Fprintf(b, "    candidate %s\n", st.Dim("agrees"))
	default:
		fmt.Fprintf(b, "    candidate %s\n", st.Warning("differs at "+strings.Join(c.Divergences, ", ")))
	}
}

// sameViolations compares violations but for the request they belong to.
func sameViolations(a, b []remotecheck.Violation) bool {
	return slices.EqualFunc(a, b, func(x, y remotecheck.Violation) bool {
		x.Request, y.Request = "", ""
		return x == y
	})
}

// verdict sums up a request: what ork would apply, or why it would not.
func verdict(st output.Style, r remotecheck.Request, faulty bool) string {
	if r.Operation != nil && r.Reason == operation.ReasonPending {
		// Not a failure: the operation goes on, and the next line is its poll.
		s := r.Message
		if r.Operation.PollAfter != "" {
			s += ", poll after " + r.Operation.PollAfter
		}
		if faulty {
			return st.Warning(s)
		}
		return st.Dim(s)
	}
	if r.Reason != "ReconcileSucceeded" {
		return st.Error(r.Reason)
	}
	s := "ok"
	if len(r.Resources) > 0 {
		s += ": " + strings.Join(r.Resources, ", ")
	}
	switch {
	case r.Stable != nil && *r.Stable:
		s += " " + st.Dim("(stable)")
	case r.Stable != nil:
		s += " " + st.Error("(changed)")
	}
	if faulty {
		return st.Warning(s)
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// readObjects reads the documents of the CR file (else the CRD's first crFiles entry) and
// of the --related files: what payload.related finds offline.
func readObjects(crd *katalog.CRD, file string, relatedFiles []string) ([]*unstructured.Unstructured, error) {
	if file == "" && len(crd.CRFiles) > 0 {
		file = crd.Source.Resolve(crd.CRFiles[0])
	}
	var all []*unstructured.Unstructured
	for i, f := range append([]string{file}, relatedFiles...) {
		if f == "" {
			continue
		}
		objs, err := manifest.Read(f)
		if err != nil && i > 0 {
			return nil, usageError("--related: %v", err)
		}
		all = append(all, objs...)
	}
	return all, nil
}
