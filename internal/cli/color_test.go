package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/output"
)

// On a terminal ork colours its findings, unless --no-color or NO_COLOR says not to. (The
// testscripts cover pipes; only here can stdout claim to be a terminal.)
func TestColourOnATerminalFollowsNoColor(t *testing.T) {
	bad := "../../testdata/validate/invalid/endpoint-ftp.yaml"
	tests := []struct {
		name      string
		args      []string
		noColor   string
		wantColor bool
	}{
		{"terminal", nil, "", true},
		{"--no-color", []string{"--no-color"}, "", false},
		{"NO_COLOR", nil, "1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tt.noColor)
			var out, errOut bytes.Buffer
			args := append([]string{"validate", "-f", bad}, tt.args...)
			code := Main(context.Background(), args, output.Streams{
				In: strings.NewReader(""), Out: &out, ErrOut: &errOut, OutTTY: true, ErrTTY: true,
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
