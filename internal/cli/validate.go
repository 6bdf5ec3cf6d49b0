package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/validate"
)

type validateOptions struct {
	files  []string
	format output.Format
}

func newValidateCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate [-f katalog.yaml]...",
		Short: "Check a Katalog and report every problem with file:line and a hint",
		Long: `Check one or more Katalog files. Every finding is reported in one run, sorted by file and
line. Exit code 0: valid (warnings allowed), 1: invalid, 2: usage error or unreadable file.`,
		Example: `  ork validate -f examples/remote/katalog.yaml
  ork validate -f a.yaml -f b.yaml -o json | jq .findings`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := completeValidate(env)
			if err != nil {
				return err
			}
			return runValidate(env, opts)
		},
	}
	addKatalogFlag(cmd)
	addOutputFlag(cmd, output.Text, output.Text, output.JSON)
	return cmd
}

func completeValidate(env *Env) (validateOptions, error) {
	format, err := outputFormat(env.Config(), output.Text, output.JSON)
	if err != nil {
		return validateOptions{}, err
	}
	return validateOptions{files: env.Config().StringSlice("filename"), format: format}, nil
}

func runValidate(env *Env, opts validateOptions) error {
	set, findings, err := loadKatalog(opts.files)
	if err != nil {
		return err
	}
	findings = append(findings, validate.Katalog(set)...)
	katalog.SortFindings(findings)
	if opts.format == output.JSON {
		err = output.FindingsJSON(env.Streams.Out, findings)
	} else {
		err = output.Findings(env.Streams.Out, env.Style(), findings)
	}
	if err != nil {
		return err
	}
	if katalog.HasErrors(findings) {
		return &ExitError{Code: ExitFailed}
	}
	return nil
}

// loadKatalog is the one way commands read Katalogs; an unreadable file is exit 2.
func loadKatalog(files []string) (*katalog.Set, []katalog.Finding, error) {
	set, findings, err := katalog.Load(files)
	if errors.Is(err, katalog.ErrUnreadable) {
		return nil, nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("load katalog: %w", err)}
	}
	return set, findings, err
}

// loadValidKatalog loads and validates the Katalogs for a command that acts on them. On an
// error finding it prints every finding to stderr (stdout stays clean for `> role.yaml` and
// `| kubectl apply`) and fails with exit 1; warnings are not printed.
func loadValidKatalog(env *Env, files []string) (*katalog.Set, error) {
	set, findings, err := loadKatalog(files)
	if err != nil {
		return nil, err
	}
	findings = append(findings, validate.Katalog(set)...)
	if !katalog.HasErrors(findings) {
		return set, nil
	}
	katalog.SortFindings(findings)
	if err := output.Findings(env.Streams.ErrOut, env.ErrStyle(), findings); err != nil {
		return nil, err
	}
	return nil, &ExitError{Code: ExitFailed}
}
