// Package cli is ork's cobra command tree: flags become options, options call a feature
// package, and its data goes to output.
package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/orkspace/ork/internal/config"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/version"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)

// ExitError carries an exit code; a nil Err means the command already reported the problem.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

func usageError(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

// Env is what every command gets from the root: streams, settings and a logger.
type Env struct {
	Streams output.Streams
	Getenv  func(string) string
	// cfg is resolved in the root's PersistentPreRunE, before any command runs.
	cfg *config.Config
}

// Config returns ork's resolved settings.
func (e *Env) Config() *config.Config { return e.cfg }

// Style returns the styling for stdout.
func (e *Env) Style() output.Style {
	return output.NewStyle(e.Streams.Out, output.UseColor(e.Streams.OutTTY, e.cfg.Bool("no-color"), e.Getenv))
}

// ErrStyle returns the styling for stderr.
func (e *Env) ErrStyle() output.Style {
	return output.NewStyle(e.Streams.ErrOut, output.UseColor(e.Streams.ErrTTY, e.cfg.Bool("no-color"), e.Getenv))
}

// Logger returns a slog logger on stderr at --log-level in --log-format.
func (e *Env) Logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(e.cfg.String("log-level"))); err != nil {
		return nil, usageError("--log-level: want debug, info, warn or error, got %q", e.cfg.String("log-level"))
	}
	opts := &slog.HandlerOptions{Level: level}
	switch e.cfg.String("log-format") {
	case "json":
		return slog.New(slog.NewJSONHandler(e.Streams.ErrOut, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(e.Streams.ErrOut, opts)), nil
	default:
		return nil, usageError("--log-format: want text or json, got %q", e.cfg.String("log-format"))
	}
}

// Main runs ork with args and returns the process exit code.
func Main(ctx context.Context, args []string, streams output.Streams) int {
	env := &Env{Streams: streams, Getenv: os.Getenv}
	root := NewRootCmd(env)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var exit *ExitError
	code := ExitFailed
	switch {
	case errors.As(err, &exit):
		code = exit.Code
		if exit.Err == nil {
			return code
		}
	case errors.Is(err, context.Canceled):
		code = ExitInterrupted
	case isFlagError(err), strings.HasPrefix(err.Error(), "unknown command"):
		code = ExitUsage
	}
	if env.jsonLogs() {
		// A log collector reading --log-format json gets the last word as one more record.
		slog.New(slog.NewJSONHandler(streams.ErrOut, nil)).Error(err.Error(), "exitCode", code)
		return code
	}
	fmt.Fprintf(streams.ErrOut, "%s %v\n", errStyle(env).Error("error:"), err)
	return code
}

// jsonLogs reports whether stderr is for machines: --log-format json was resolved (a flag
// error comes before the settings are, and stays text).
func (e *Env) jsonLogs() bool { return e.cfg != nil && e.cfg.String("log-format") == "json" }

// errStyle styles stderr even when the config never got resolved (a flag error).
func errStyle(env *Env) output.Style {
	color := output.UseColor(env.Streams.ErrTTY, false, env.Getenv)
	return output.NewStyle(env.Streams.ErrOut, color)
}

// flagError marks cobra's flag-parsing failures so Main maps them to exit 2.
type flagError struct{ error }

func isFlagError(err error) bool {
	var fe flagError
	return errors.As(err, &fe)
}

// NewRootCmd builds the command tree.
func NewRootCmd(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "ork",
		Short: "Run Kubernetes operators declared in a Katalog, with remote or declarative reconcilers",
		Long: `ork runs Kubernetes operators declared in YAML (a Katalog). The reconcile logic can live in
your own HTTP service (reconcile.remote): ork does the informers, work queue, workers, backoff,
server-side apply, status, events, health, metrics and RBAC.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(env, cmd)
			if err != nil {
				return err
			}
			env.cfg = cfg
			_, err = env.Logger() // every command rejects a bad --log-level or --log-format
			return err
		},
	}
	pf := root.PersistentFlags()
	pf.String("config", "", "ork settings file: global settings at the top, each command's under its name (default $XDG_CONFIG_HOME/ork/config.yaml when present; never ./ork.yaml)")
	pf.String("log-level", "info", "log level: debug, info, warn, error")
	pf.String("log-format", "text", "log format: text or json")
	pf.Bool("no-color", false, "never colour output (NO_COLOR, TERM=dumb and CLICOLOR=0 are honoured too; CLICOLOR_FORCE colours a pipe)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return flagError{withFlagSuggestion(c, err)} })
	// ork --version prints what ork version prints.
	info := version.Get()
	root.Version = info.Version
	root.SetVersionTemplate(fmt.Sprintf("ork %s (commit %s, built %s)\n", info.Version, orUnknown(info.Commit), orUnknown(info.Date)))

	root.AddCommand(
		newVersionCmd(env),
		newValidateCmd(env),
		newSimulateCmd(env),
		newRBACCmd(env),
		newBundleCmd(env),
		newRunCmd(env),
		newSchemaCmd(env),
		newInitCmd(env),
		newRemoteCmd(env),
		newTraceCmd(env),
		newFinalizersCmd(env),
		newRolloutCmd(env),
		newGenCmd(env),
		newAuditCmd(env),
		newBlameCmd(env),
	)
	// One spelling of every flag: the singular --include-delete of earlier releases still parses.
	root.SetGlobalNormalizationFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "include-delete" {
			name = "include-deletes"
		}
		return pflag.NormalizedName(name)
	})
	registerCompletions(root)
	// cobra's completion command prints help and exits 0 for a shell it does not know.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Args = unknownSubcommand
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
	return root
}

// unknownSubcommand is Args for a command that only groups others: an argument is a
// mistyped subcommand, a usage error (exit 2) with cobra's suggestion.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, set by it only on the root
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return usageError("%s", msg)
}

// noArgs rejects positional arguments as a usage error (exit 2).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError("%s takes no arguments, got %q (Katalog files go after -f)", cmd.CommandPath(), args)
	}
	return nil
}

// outputFormat is the command's -o, one of allowed; a bad value is a usage error that says
// where it came from (a settings file's `output:` applies to every command).
func outputFormat(cfg *config.Config, allowed ...output.Format) (output.Format, error) {
	f, err := output.ParseFormat(cfg.String("output"), allowed...)
	if err != nil {
		return "", usageError("output format from %s: %v", cfg.Source("output"), err)
	}
	return f, nil
}

// addOutputFlag adds -o/--output to a command that has results.
func addOutputFlag(cmd *cobra.Command, def output.Format, allowed ...output.Format) {
	names := ""
	for i, a := range allowed {
		if i > 0 {
			names += "|"
		}
		names += string(a)
	}
	cmd.Flags().StringP("output", "o", string(def), "output format: "+names)
}

// addKatalogFlag adds the repeatable -f/--filename flag.
func addKatalogFlag(cmd *cobra.Command) {
	cmd.Flags().StringArrayP("filename", "f", nil, "Katalog file (repeatable; default katalog.yaml)")
}
