package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/output"
)

// On a terminal ork colours its findings, unless --no-color, NO_COLOR, TERM=dumb or
// CLICOLOR=0 says not to; CLICOLOR_FORCE colours a pipe too. (The testscripts cover pipes;
// only here can stdout claim to be a terminal.)
func TestColourOnATerminalFollowsNoColor(t *testing.T) {
	bad := "../../testdata/validate/invalid/endpoint-ftp.yaml"
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		pipe      bool
		wantColor bool
	}{
		{"terminal", nil, nil, false, true},
		{"--no-color", []string{"--no-color"}, nil, false, false},
		{"NO_COLOR", nil, map[string]string{"NO_COLOR": "1"}, false, false},
		{"TERM=dumb", nil, map[string]string{"TERM": "dumb"}, false, false},
		{"CLICOLOR=0", nil, map[string]string{"CLICOLOR": "0"}, false, false},
		{"a pipe", nil, nil, true, false},
		{"CLICOLOR_FORCE on a pipe", nil, map[string]string{"CLICOLOR_FORCE": "1"}, true, true},
		{"NO_COLOR beats CLICOLOR_FORCE", nil, map[string]string{"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE"} {
				t.Setenv(k, tt.env[k])
			}
			t.Setenv("TERM", "xterm-256color")
			if term, ok := tt.env["TERM"]; ok {
				t.Setenv("TERM", term)
			}
			var out, errOut bytes.Buffer
			args := append([]string{"validate", "-f", bad}, tt.args...)
			code := Main(context.Background(), args, output.Streams{
				In: strings.NewReader(""), Out: &out, ErrOut: &errOut, OutTTY: !tt.pipe, ErrTTY: !tt.pipe,
			})
			if code != ExitFailed {
				t.Fatalf("exit %d, want 1; stderr %s", code, errOut.String())
			}
			if got := strings.Contains(out.String(), "\x1b["); got != tt.wantColor {
				t.Errorf("escape codes on stdout = %v, want %v:\n%q", got, tt.wantColor, out.String())
			}
		})
	}
}
