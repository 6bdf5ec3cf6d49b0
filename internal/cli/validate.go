package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/validate"
	"github.com/orkspace/ork/internal/version"
)

// validateFormats are the -o values of ork validate.
func validateFormats() []output.Format {
	return []output.Format{output.Text, output.JSON, output.GitHub, output.SARIF, output.JUnit}
}

type validateOptions struct {
	files  []string
	format output.Format
}

func newValidateCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate [-f katalog.yaml]...",
		Short: "Check a Katalog and report every problem with file:line and a hint",
		Long: `Check one or more Katalog files. Every finding is reported in one run, sorted by file and
line. Exit code 0: valid (warnings allowed), 1: invalid, 2: usage error or unreadable file.
Output formats for CI, with the same exit codes:
  -o json    {"valid", "findings": [{"severity", "file", "line", "column", "path", "message", "hint"}]}
  -o github  one ::error or ::warning workflow command per finding: GitHub Actions annotates
             the pull request at each file, line and column
  -o sarif   a SARIF 2.1.0 log for code-scanning dashboards; each check has a stable rule id
  -o junit   a JUnit XML report: a test suite per file, a failed test case per error`,
		Example: `  ork validate -f examples/remote/katalog.yaml
  ork validate -f a.yaml -f b.yaml -o json | jq .findings
  ork validate -f katalog.yaml -o github            # in a GitHub Actions step
  ork validate -f katalog.yaml -o sarif > ork.sarif # for github/codeql-action/upload-sarif`,
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
	addOutputFlag(cmd, output.Text, validateFormats()...)
	return cmd
}

func completeValidate(env *Env) (validateOptions, error) {
	format, err := outputFormat(env.Config(), validateFormats()...)
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
	switch opts.format {
	case output.JSON:
		err = output.FindingsJSON(env.Streams.Out, findings)
	case output.GitHub:
		err = output.FindingsGitHub(env.Streams.Out, findings)
	case output.SARIF:
		err = output.FindingsSARIF(env.Streams.Out, findings, version.Get().Version)
	case output.JUnit:
		files := opts.files
		if len(files) == 0 {
			files = []string{katalog.DefaultFile}
		}
		err = output.FindingsJUnit(env.Streams.Out, files, findings)
	default:
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
