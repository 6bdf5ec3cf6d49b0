package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/output"
)

// --decision-log records what ork wrote: a dry run, which writes nothing, refuses it; and a
// log whose last line was edited stops ork run before anything else (continuing would chain
// to a line ork audit verify rejects).
func TestRunDecisionLogFlag(t *testing.T) {
	dir := t.TempDir()
	edited := filepath.Join(dir, "edited.log")
	if err := os.WriteFile(edited, []byte(`{"decision":"x","prev":"","hash":"00"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	katalog := filepath.Join(testdataDir(t), "..", "..", "..", "examples", "remote", "katalog.yaml")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"with --dry-run", []string{"--dry-run", "--decision-log", filepath.Join(dir, "d.log")}, "not with --dry-run"},
		{"a broken last line", []string{"--decision-log", edited, "--kubeconfig", filepath.Join(dir, "none")}, "--decision-log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"run", "-f", katalog, "--health-addr=", "--metrics-addr="}, tt.args...)
			code := Main(context.Background(), args, output.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			if code != ExitUsage || !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want a usage error naming %q", code, errOut.String(), tt.want)
			}
		})
	}
}
