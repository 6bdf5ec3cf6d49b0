package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/orkspace/ork/internal/decisionlog"
	"github.com/orkspace/ork/internal/output"
)

type auditVerifyOptions struct {
	file   string
	format output.Format
}

// auditVerifyReport is ork audit verify -o json: a contract.
type auditVerifyReport struct {
	File  string `json:"file"`
	Lines int    `json:"lines"`
	Valid bool   `json:"valid"`
	// FirstBad is the first broken line, 1-based; 0 when valid.
	FirstBad int    `json:"firstBad"`
	Reason   string `json:"reason,omitempty"`
}

func newAuditCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Check ork's decision log",
		Args:  unknownSubcommand,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newAuditVerifyCmd(env))
	return cmd
}

func newAuditVerifyCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify FILE",
		Short: "Check the hash chain of a decision log (ork run --decision-log) and name the first broken line",
		Long: `Check the hash chain of a decision log written by ork run --decision-log: every line's hash
must match its content and name the line before it, from an empty prev on the first line. An
edited line is named itself; a deleted, inserted or moved line is named by the first line
whose link no longer holds. FILE - reads stdin. Lines removed from the end of the log leave a
valid, shorter chain: compare the last entry with the custom resources' status.lastDecision.
Exit code 0: the chain holds, 1: it is broken (the message names the line, 1-based), 2: usage
error or unreadable file.`,
		Example: `  ork audit verify /var/log/ork/decisions.log
  ork audit verify decisions.log -o json | jq .firstBad`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("%s takes one FILE, got %d arguments", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := completeAuditVerify(env, args)
			if err != nil {
				return err
			}
			return runAuditVerify(env, opts)
		},
	}
	addOutputFlag(cmd, output.Text, output.Text, output.JSON)
	return cmd
}

func completeAuditVerify(env *Env, args []string) (auditVerifyOptions, error) {
	format, err := outputFormat(env.Config(), output.Text, output.JSON)
	if err != nil {
		return auditVerifyOptions{}, err
	}
	return auditVerifyOptions{file: args[0], format: format}, nil
}

func runAuditVerify(env *Env, opts auditVerifyOptions) error {
	r := env.Streams.In
	if opts.file != "-" {
		f, err := os.Open(opts.file)
		if err != nil {
			return usageError("%v", err)
		}
		defer f.Close()
		r = f
	}
	lines, firstBad, err := decisionlog.Verify(r)
	var broken *decisionlog.BrokenError
	if err != nil && !errors.As(err, &broken) {
		return usageError("%s: %v", opts.file, err)
	}
	report := auditVerifyReport{File: opts.file, Lines: lines, Valid: broken == nil, FirstBad: firstBad}
	if broken != nil {
		report.Reason = broken.Reason
	}
	if opts.format == output.JSON {
		if err := output.WriteJSON(env.Streams.Out, report); err != nil {
			return err
		}
	} else if broken == nil {
		if _, err := fmt.Fprintf(env.Streams.Out, "%s: the chain of %s holds\n", opts.file, plural(lines, "line")); err != nil {
			return err
		}
	}
	if broken != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: the chain breaks at line %d of %d: %s", opts.file, firstBad, lines, broken.Reason)}
	}
	return nil
}
