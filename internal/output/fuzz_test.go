package output

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/orkspace/ork/internal/katalog"
)

// FuzzFindingReports writes one arbitrary finding (beside a fixed one) in each CI format and
// checks what a CI system reads back:
//
//   - SARIF validates against the OASIS SARIF 2.1.0 schema in testdata/sarif, every
//     ruleIndex points at its rule, and the result's message is the finding's text;
//
//   - JUnit parses with encoding/xml, counts one test case per finding and a failure per
//     error, and the failure carries the message (characters XML cannot hold read back
//     as U+FFFD);
//
//   - GitHub workflow commands are one line per finding, and the Actions runner's
//     unescaping gives back the file, the title and the message exactly:
//     unescape(escape(s)) == s.
//
//     go test ./internal/output -run '^$' -fuzz FuzzFindingReports -fuzztime 5m
func FuzzFindingReports(f *testing.F) {
	for _, fd := range reportSample {
		f.Add(fd.File, fd.Path, fd.Message, fd.Hint, fd.Line, fd.Column, fd.Severity == katalog.SeverityWarning, uint8(0))
	}
	f.Add("/abs/dir/k.yaml", "a.b", "%0A%25::,=", "100%\r\n", 0, -3, false, uint8(7))
	f.Add("C:/x/k.yaml", "", "\x00\x1b\xff\uFFFE ]]> <!-- -->", "", 1<<40, 1, true, uint8(200))
	f.Add("a:b/c?d#e f%zz", "p", "x", "y", 1, 1, false, uint8(3))
	schema := sarifSchema(f)
	rules := katalog.Rules()
	f.Fuzz(func(t *testing.T, file, path, message, hint string, line, col int, warning bool, rule uint8) {
		if file == "" {
			return // every finding ork makes names its file (FuzzDecodeAndValidate checks that)
		}
		sev := katalog.SeverityError
		if warning {
			sev = katalog.SeverityWarning
		}
		fd := katalog.Finding{Rule: rules[int(rule)%len(rules)].ID, Severity: sev, File: file, Line: line, Column: col,
			Path: path, Message: message, Hint: hint}
		fs := []katalog.Finding{fd, reportSample[0]}
		checkSARIFOf(t, schema, fs)
		checkJUnitOf(t, fs)
		checkGitHubOf(t, fs)
	})
}

func checkSARIFOf(t *testing.T, schema *jsonschema.Schema, fs []katalog.Finding) {
	var b bytes.Buffer
	if err := FindingsSARIF(&b, fs, "dev"); err != nil {
		t.Fatal(err)
	}
	checkSARIF(t, schema, b.Bytes())
	var log sarifLog
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	for i, r := range log.Runs[0].Results {
		want := describe(fs[i].Path, fs[i].Message)
		if fs[i].Hint != "" {
			want += " (hint: " + fs[i].Hint + ")"
		}
		// encoding/json writes each byte that is not UTF-8 as U+FFFD.
		if want = replaceRunes(want, func(rune) bool { return true }); r.Message.Text != want {
			t.Errorf("SARIF result %d: message %q, want %q", i, r.Message.Text, want)
		}
	}
}

func checkJUnitOf(t *testing.T, fs []katalog.Finding) {
	var b bytes.Buffer
	if err := FindingsJUnit(&b, nil, fs); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("JUnit is not XML: %v\n%s", err, b.String())
	}
	errs, cases := 0, 0
	for _, s := range got.Suites {
		cases += len(s.Cases)
		for _, c := range s.Cases {
			if c.Failure != nil {
				errs++
			}
		}
	}
	wantErrs := 0
	for _, f := range fs {
		if f.Severity != katalog.SeverityWarning {
			wantErrs++
		}
	}
	if cases != len(fs) || got.Tests != len(fs) || errs != wantErrs || got.Failures != wantErrs {
		t.Fatalf("JUnit reads %d cases (tests=%d), %d failures (failures=%d); want %d and %d:\n%s",
			cases, got.Tests, errs, got.Failures, len(fs), wantErrs, b.String())
	}
	if f := fs[0]; f.Severity != katalog.SeverityWarning {
		c := got.Suites[0].Cases[0]
		if c.Failure.Message != xmlChars(f.Message) {
			t.Errorf("JUnit failure message %q, want %q", c.Failure.Message, xmlChars(f.Message))
		}
	}
}

// xmlChars is s as encoding/xml writes it: every rune XML 1.0 cannot hold as U+FFFD.
func xmlChars(s string) string {
	return replaceRunes(s, func(r rune) bool {
		return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000
	})
}

// replaceRunes writes U+FFFD for each byte of s that is not UTF-8 and each rune keep refuses.
func replaceRunes(s string, keep func(rune) bool) string {
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		if r == utf8.RuneError && n == 1 || !keep(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

func checkGitHubOf(t *testing.T, fs []katalog.Finding) {
	var b bytes.Buffer
	if err := FindingsGitHub(&b, fs); err != nil {
		t.Fatal(err)
	}
	// The runner reads the output line by line, a line ending at \n, \r or \r\n.
	lines := strings.FieldsFunc(b.String(), func(r rune) bool { return r == '\n' || r == '\r' })
	if len(lines) != len(fs)+1 || strings.Count(b.String(), "\n") != len(fs)+1 || strings.Contains(b.String(), "\r") {
		t.Fatalf("want one line per finding and the summary, got %d lines:\n%q", len(lines), b.String())
	}
	for i, f := range fs {
		cmd, props, data, ok := parseWorkflowCommand(lines[i])
		if !ok {
			t.Fatalf("line %d is no workflow command: %q", i, lines[i])
		}
		want := map[katalog.Severity]string{katalog.SeverityError: "error", katalog.SeverityWarning: "warning"}[f.Severity]
		msg := describe(f.Path, f.Message)
		if f.Hint != "" {
			msg += "\nhint: " + f.Hint
		}
		if cmd != want || props["file"] != f.File || props["title"] != "ork validate: "+string(f.Rule) || data != msg {
			t.Errorf("line %d %q decodes to %s %q %q, want %s file=%q title=%q %q", i, lines[i], cmd, props, data,
				want, f.File, "ork validate: "+string(f.Rule), msg)
		}
	}
}

// parseWorkflowCommand reads a line as the GitHub Actions runner does (ActionCommand.TryParseV2
// in actions/runner): the command name up to a space, properties split at ',' and each at
// its first '=', the data after the first "::" that follows the leading one; values
// unescaped mapping by mapping, in the runner's order.
func parseWorkflowCommand(line string) (cmd string, props map[string]string, data string, ok bool) {
	line = strings.TrimLeft(line, " \t")
	if !strings.HasPrefix(line, "::") {
		return "", nil, "", false
	}
	end := strings.Index(line[2:], "::")
	if end < 0 {
		return "", nil, "", false
	}
	info, data := line[2:2+end], line[2+end+2:]
	cmd, rest, _ := strings.Cut(info, " ")
	props = map[string]string{}
	for _, p := range strings.Split(strings.TrimSpace(rest), ",") {
		if k, v, ok := strings.Cut(p, "="); ok && p != "" {
			props[k] = runnerUnescape(v, "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C", "%", "%25")
		}
	}
	return cmd, props, runnerUnescape(data, "\r", "%0D", "\n", "%0A", "%", "%25"), true
}

// runnerUnescape undoes token/escape pairs one after another, as the runner's UnescapeValue
// does (String.Replace per mapping, not a single pass).
func runnerUnescape(s string, pairs ...string) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		s = strings.ReplaceAll(s, pairs[i+1], pairs[i])
	}
	return s
}
