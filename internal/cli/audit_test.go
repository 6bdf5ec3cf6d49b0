package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/decisionlog"
	"github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/internal/output"
)

// decisionLogLines is a valid decision log of n entries, one string per line.
func decisionLogLines(t *testing.T, n int) []string {
	t.Helper()
	var buf bytes.Buffer
	l := decisionlog.NewWriter(&buf, decisionlog.Options{})
	t0 := time.Date(2026, 12, 6, 22, 0, 0, 0, time.UTC)
	for i := range n {
		id, err := decision.NewID(t0.Add(time.Duration(i)*time.Second), bytes.NewReader(bytes.Repeat([]byte{byte(i)}, 16)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.Append(decision.Entry{Decision: id, Time: t0.Add(time.Duration(i) * time.Second), Trigger: "update", Outcome: "ok",
			Object: decision.Object{Ref: decision.Ref{APIVersion: "example.com/v1", Kind: "App", Namespace: "ns", Name: "a"}, Generation: int64(i + 1), ResourceVersion: fmt.Sprint(10 + i)}})
		if err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	return lines[:len(lines)-1]
}

func TestAuditVerify(t *testing.T) {
	tests := []struct {
		name string
		// log edits a valid log of 4 lines; nil writes no file.
		log   func(lines []string) []string
		args  []string
		stdin bool
		code  int
	}{
		{name: "valid", log: func(l []string) []string { return l }, code: 0},
		{name: "valid-json", log: func(l []string) []string { return l }, args: []string{"-o", "json"}, code: 0},
		{name: "edited", log: func(l []string) []string {
			l[1] = strings.Replace(l[1], `"generation":2`, `"generation":7`, 1)
			return l
		}, code: 1},
		{name: "edited-json", log: func(l []string) []string {
			l[1] = strings.Replace(l[1], `"generation":2`, `"generation":7`, 1)
			return l
		}, args: []string{"-o", "json"}, code: 1},
		{name: "deleted", log: func(l []string) []string { return append(l[:1], l[2:]...) }, code: 1},
		{name: "reordered", log: func(l []string) []string {
			l[2], l[3] = l[3], l[2]
			return l
		}, code: 1},
		{name: "stdin", log: func(l []string) []string { return l }, stdin: true, code: 0},
		{name: "missing-file", code: 2},
		{name: "no-file-argument", args: []string{}, code: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			goldenFile := filepath.Join(testdataDir(t), "audit", tt.name+".golden")
			t.Chdir(t.TempDir())
			var log string
			if tt.log != nil {
				log = strings.Join(tt.log(decisionLogLines(t, 4)), "")
				if err := os.WriteFile("decisions.log", []byte(log), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"audit", "verify", "decisions.log"}, tt.args...)
			switch {
			case tt.stdin:
				args[2] = "-"
			case tt.args != nil && len(tt.args) == 0:
				args = args[:2]
			}
			var out, errOut bytes.Buffer
			stdin := strings.NewReader("")
			if tt.stdin {
				stdin = strings.NewReader(log)
			}
			code := Main(context.Background(), args, output.Streams{In: stdin, Out: &out, ErrOut: &errOut})
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.code, errOut.String())
			}
			got := fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", code, out.String(), errOut.String())
			golden.Assert(t, goldenFile, []byte(got))
		})
	}
}

// testdataDir is the package's testdata, absolute, for a test about to change directory.
func testdataDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "testdata")
}
