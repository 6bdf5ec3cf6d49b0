package output

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/orkspace/ork/internal/katalog"
)

// FindingsReport is the machine-readable shape of ork validate -o json: a contract.
type FindingsReport struct {
	Valid    bool              `json:"valid"`
	Findings []katalog.Finding `json:"findings"`
}

// Findings prints one line per finding and a summary line last:
// file:line:col: error: path: message (hint: ...).
func Findings(w io.Writer, st Style, fs []katalog.Finding) error {
	for _, f := range fs {
		label := st.Error("error")
		if f.Severity == katalog.SeverityWarning {
			label = st.Warning("warning")
		}
		line := fmt.Sprintf("%s:%d:%d: %s: ", f.File, f.Line, f.Column, label)
		if f.Path != "" {
			line += st.Bold(f.Path) + ": "
		}
		line += f.Message
		if f.Hint != "" {
			line += st.Dim(" (hint: " + f.Hint + ")")
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return summary(w, st, fs)
}

// summary prints the last line of the text format: valid|invalid: N errors, N warnings.
func summary(w io.Writer, st Style, fs []katalog.Finding) error {
	errs, warns := count(fs)
	verdict := st.OK("valid")
	if errs > 0 {
		verdict = st.Error("invalid")
	}
	_, err := fmt.Fprintf(w, "%s: %s, %s\n", verdict, plural(errs, "error"), plural(warns, "warning"))
	return err
}

func count(fs []katalog.Finding) (errs, warns int) {
	for _, f := range fs {
		if f.Severity == katalog.SeverityWarning {
			warns++
		} else {
			errs++
		}
	}
	return errs, warns
}

// FindingsJSON prints the FindingsReport contract.
func FindingsJSON(w io.Writer, fs []katalog.Finding) error {
	if fs == nil {
		fs = []katalog.Finding{}
	}
	return WriteJSON(w, FindingsReport{Valid: !katalog.HasErrors(fs), Findings: fs})
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// FindingsLog logs one record per finding, for stderr read as --log-format json: level ERROR
// or WARN, the message as the text format words it, and the finding's fields as attributes.
// It returns the number of errors.
func FindingsLog(logger *slog.Logger, fs []katalog.Finding) int {
	for _, f := range fs {
		level := slog.LevelError
		if f.Severity == katalog.SeverityWarning {
			level = slog.LevelWarn
		}
		logger.LogAttrs(context.Background(), level, describe(f.Path, f.Message),
			slog.String("rule", string(f.Rule)), slog.String("file", f.File), slog.Int("line", f.Line),
			slog.Int("column", f.Column), slog.String("path", f.Path), slog.String("hint", f.Hint))
	}
	errs, _ := count(fs)
	return errs
}
