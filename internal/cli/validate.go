package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orkspace/ork/internal/apiresources"
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
	// strict makes warnings fail too.
	strict bool
	// validate holds --api-resources.
	validate validate.Options
}

func newValidateCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate [PATH]... [-f katalog.yaml]...",
		Short: "Check a Katalog and report every problem with file:line and a hint",
		Long: `Check one or more Katalog files: each PATH, a Katalog file or a directory holding katalog.yaml
(as helm lint PATH), and each -f file; katalog.yaml without either. Every finding is reported in one run, sorted by file and
line. Exit code 0: valid (warnings allowed; --strict: none), 1: invalid (or, with --strict, a
warning), 2: usage error or unreadable file.
Output formats for CI, with the same exit codes:
  -o json    {"valid", "findings": [{"rule", "severity", "file", "line", "column", "path",
             "message", "hint"}]}; rule is the check's stable id (docs/katalog.md#rules). An
             unreadable file is a finding too (rule unreadable-file, line 0), still exit 2
  -o github  one ::error or ::warning workflow command per finding: GitHub Actions annotates
             the pull request at each file, line and column
  -o sarif   a SARIF 2.1.0 log for code-scanning dashboards; each check has a stable rule id
  -o junit   a JUnit XML report: a test suite per file, a failed test case per error
Every managedResources entry is checked against the API resources of Kubernetes 1.37: a
misspelt plural or group of a built-in type is an error with a did-you-mean (ork rbac gen and
ork run refuse it too); a group that is neither built in nor declared by a CRD of the -f files
is a warning, unless --api-resources FILE (kubectl api-resources -o wide) lists it.
Every custom resource of a CRD's crFiles is judged against its crdFile's schema with the
apiserver's own validation code (defaults applied, unknown fields refused, the CRD's
x-kubernetes-validations CEL rules evaluated as on create), each finding at the field's line in
the CR file; a CEL rule the apiserver would refuse in the CRD is a finding in the CRD file.`,
		Example: `  ork validate examples/remote
  ork validate -f examples/remote/katalog.yaml
  ork validate -f a.yaml -f b.yaml -o json | jq .findings
  ork validate -f katalog.yaml -o github --strict   # in a GitHub Actions step: warnings fail too
  ork validate -f katalog.yaml -o sarif > ork.sarif # for github/codeql-action/upload-sarif`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := completeValidate(env, args)
			if err != nil {
				return err
			}
			return runValidate(env, opts)
		},
	}
	addKatalogFlag(cmd)
	addOutputFlag(cmd, output.Text, validateFormats()...)
	cmd.Flags().Bool("strict", false, "fail (exit 1) on warnings too, for CI")
	cmd.Flags().String("api-resources", "", "the output of kubectl api-resources -o wide: API groups the cluster serves beyond Kubernetes' own and the Katalog's CRDs, for managedResources")
	return cmd
}

func completeValidate(env *Env, paths []string) (validateOptions, error) {
	cfg := env.Config()
	format, err := outputFormat(cfg, validateFormats()...)
	if err != nil {
		return validateOptions{}, err
	}
	opts := validateOptions{files: append(katalogPaths(paths), cfg.StringSlice("filename")...), format: format, strict: cfg.Bool("strict")}
	if p := cfg.String("api-resources"); p != "" {
		f, err := os.Open(p)
		if err != nil {
			return validateOptions{}, usageError("--api-resources: %v", err)
		}
		defer f.Close()
		if opts.validate.APIResources, err = apiresources.ParseKubectl(f); err != nil {
			return validateOptions{}, usageError("--api-resources %s: %v", p, err)
		}
	}
	return opts, nil
}

func runValidate(env *Env, opts validateOptions) error {
	set, findings, loadErr := loadKatalog(opts.files)
	if loadErr != nil {
		// A CI step reading -o json|sarif|junit|github still gets its format, the unreadable
		// file as a finding among the others'; the exit code stays 2 and stderr says why.
		if opts.format == output.Text || set == nil {
			return loadErr
		}
	}
	findings = append(findings, validate.KatalogWith(set, opts.validate)...)
	katalog.SortFindings(findings)
	if err := printFindings(env, opts, findings); err != nil {
		return err
	}
	if loadErr != nil {
		return loadErr
	}
	if katalog.HasErrors(findings) {
		return &ExitError{Code: ExitFailed}
	}
	if opts.strict && len(findings) > 0 {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("--strict: %s, and warnings fail under --strict", plural(len(findings), "warning"))}
	}
	return nil
}

// katalogPaths are the Katalog files of ork validate's PATH arguments: a directory stands
// for the katalog.yaml in it, anything else for itself (a missing file is reported by the
// load, as one given with -f is).
func katalogPaths(paths []string) []string {
	files := make([]string, 0, len(paths))
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			p = filepath.Join(p, katalog.DefaultFile)
		}
		files = append(files, p)
	}
	return files
}

// printFindings prints the findings in opts.format on stdout.
func printFindings(env *Env, opts validateOptions, findings []katalog.Finding) error {
	var err error
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
	return err
}

// loadKatalog is the one way commands read Katalogs; an unreadable file is exit 2. With that
// error it still returns what the readable files gave, the unreadable one as a finding.
func loadKatalog(files []string) (*katalog.Set, []katalog.Finding, error) {
	set, findings, err := katalog.Load(files)
	if errors.Is(err, katalog.ErrUnreadable) {
		return set, findings, &ExitError{Code: ExitUsage, Err: fmt.Errorf("load katalog: %w", err)}
	}
	return set, findings, err
}

// loadValidKatalog loads and validates the Katalogs for a command that acts on them. On an
// error finding it prints every finding to stderr (stdout stays clean for `> role.yaml` and
// `| kubectl apply`), as log records under --log-format json, and fails with exit 1;
// warnings are not printed when there is no error.
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
	if env.jsonLogs() {
		logger, err := env.Logger()
		if err != nil {
			return nil, err
		}
		errs := output.FindingsLog(logger, findings)
		return nil, &ExitError{Code: ExitFailed, Err: fmt.Errorf("invalid katalog: %d error(s)", errs)}
	}
	if err := output.Findings(env.Streams.ErrOut, env.ErrStyle(), findings); err != nil {
		return nil, err
	}
	return nil, &ExitError{Code: ExitFailed}
}
