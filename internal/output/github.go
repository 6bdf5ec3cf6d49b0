package output

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/orkspace/ork/internal/katalog"
)

// FindingsGitHub prints one GitHub Actions workflow command per finding,
// ::error file=F,line=L,col=C,title=T::message (or ::warning), which Actions shows as an
// annotation on that line of the pull request, then the summary line of the text format.
func FindingsGitHub(w io.Writer, fs []katalog.Finding) error {
	for _, f := range fs {
		cmd := "error"
		if f.Severity == katalog.SeverityWarning {
			cmd = "warning"
		}
		title := "ork validate"
		if f.Rule != "" {
			title += ": " + string(f.Rule)
		}
		msg := describe(f.Path, f.Message)
		if f.Hint != "" {
			msg += "\nhint: " + f.Hint
		}
		if _, err := fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d,title=%s::%s\n", cmd,
			ghProperty(filepath.ToSlash(f.File)), f.Line, f.Column, ghProperty(title), ghData(msg)); err != nil {
			return err
		}
	}
	return summary(w, NewStyle(w, false), fs)
}

// describe is a finding's path and message as the text format prints them.
func describe(path, message string) string {
	if path == "" {
		return message
	}
	return path + ": " + message
}

// ghData escapes a workflow command's message as the Actions runner decodes it.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command property value, where ':' and ',' separate too.
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
