package output

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	goldenfile "github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/validate"
)

// reportSample has what the report formats must escape: a comma and a space in a file name,
// '%', ':' and a newline in a message, XML's '<' and '&'.
var reportSample = []katalog.Finding{
	{Rule: katalog.RuleRemoteRequiresDefaultOff, Severity: katalog.SeverityError, File: "deploy/k.yaml", Line: 12, Column: 7,
		Path: "crds.web.operatorBox.reconcile.remote", Message: `CRD "web": reconcile.remote requires reconcile.default: false`,
		Hint: "set `reconcile.default: false`"},
	{Rule: katalog.RuleYAMLSyntax, Severity: katalog.SeverityError, File: "deploy/odd, name.yaml", Line: 3, Column: 1,
		Message: "YAML syntax error: 100% <broken> & wrong\nsecond line"},
	{Rule: katalog.RuleNoManagedResources, Severity: katalog.SeverityWarning, File: "deploy/k.yaml", Line: 20, Column: 9,
		Path: "crds.web.operatorBox.reconcile.remote.managedResources", Message: "reconcile.remote declares no managedResources"},
}

var reportFiles = []string{"deploy/k.yaml", "deploy/clean.yaml", "deploy/odd, name.yaml"}

func TestReportGoldens(t *testing.T) {
	for _, tc := range []struct {
		golden string
		write  func(*bytes.Buffer) error
	}{
		{"findings.github", func(b *bytes.Buffer) error { return FindingsGitHub(b, reportSample) }},
		{"findings.sarif.json", func(b *bytes.Buffer) error { return FindingsSARIF(b, reportSample, "v1.2.3") }},
		{"findings.junit.xml", func(b *bytes.Buffer) error { return FindingsJUnit(b, reportFiles, reportSample) }},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			goldenfile.Assert(t, filepath.Join("testdata", tc.golden), b.Bytes())
		})
	}
}

// The Actions runner splits a command at "::" and its properties at ',' and ':'; what it
// decodes must be what ork meant.
func TestGitHubCommandsDecodeToTheFinding(t *testing.T) {
	var b bytes.Buffer
	if err := FindingsGitHub(&b, reportSample); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(reportSample)+1 || lines[len(lines)-1] != "invalid: 2 errors, 1 warning" {
		t.Fatalf("want one command per finding and the summary, got:\n%s", b.String())
	}
	unescape := strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")
	for i, f := range reportSample {
		cmd, msg, ok := strings.Cut(strings.TrimPrefix(lines[i], "::"), "::")
		if !ok {
			t.Fatalf("line %d is no workflow command: %q", i, lines[i])
		}
		name, props, _ := strings.Cut(cmd, " ")
		if want := map[katalog.Severity]string{"error": "error", "warning": "warning"}[f.Severity]; name != want {
			t.Errorf("line %d: command %q, want %q", i, name, want)
		}
		got := map[string]string{}
		for _, p := range strings.Split(props, ",") {
			k, v, _ := strings.Cut(p, "=")
			got[k] = unescape.Replace(v)
		}
		if got["file"] != f.File || got["line"] == "" || got["col"] == "" || got["title"] != "ork validate: "+string(f.Rule) {
			t.Errorf("line %d: properties %v do not name %s", i, got, f.File)
		}
		if m := unescape.Replace(msg); !strings.Contains(m, f.Message) {
			t.Errorf("line %d: message %q does not carry %q", i, m, f.Message)
		}
	}
}

func TestJUnitCountsFailuresPerFile(t *testing.T) {
	var b bytes.Buffer
	if err := FindingsJUnit(&b, reportFiles, reportSample); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	if got.Tests != 4 || got.Failures != 2 || len(got.Suites) != 3 {
		t.Fatalf("tests %d failures %d suites %d, want 4, 2, 3", got.Tests, got.Failures, len(got.Suites))
	}
	clean := got.Suites[1]
	if clean.Name != "deploy/clean.yaml" || clean.Failures != 0 || len(clean.Cases) != 1 || clean.Cases[0].Name != "valid" {
		t.Errorf("a file without findings is one passed case named valid, got %+v", clean)
	}
	if msg := got.Suites[2].Cases[0].Failure; msg == nil || !strings.Contains(msg.Text, "100% <broken> & wrong") {
		t.Errorf("the failure text does not survive XML escaping: %+v", msg)
	}
}

// sarifSchema compiles the OASIS SARIF 2.1.0 schema kept in testdata/sarif (see its README).
func sarifSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../../testdata/sarif/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const id = "sarif-schema-2.1.0.json"
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func checkSARIF(t *testing.T, s *jsonschema.Schema, data []byte) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("SARIF is not JSON: %v", err)
	}
	if err := s.Validate(doc); err != nil {
		t.Fatalf("SARIF does not match the SARIF 2.1.0 schema: %v", err)
	}
	var log sarifLog
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	rules := log.Runs[0].Tool.Driver.Rules
	for _, r := range log.Runs[0].Results {
		if r.RuleIndex < 0 || r.RuleIndex >= len(rules) || rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %q: ruleIndex %d does not point at rule %s", r.Message.Text, r.RuleIndex, r.RuleID)
		}
		if l := r.Locations[0].PhysicalLocation.Region; l.StartLine < 1 || l.StartColumn < 1 {
			t.Errorf("result %q has no line and column: %+v", r.Message.Text, l)
		}
	}
}

func TestSARIFGoldenMatchesTheSARIFSchema(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "findings.sarif.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := sarifSchema(t)
	checkSARIF(t, s, data)
	// The schema has teeth: a log with a region line of 0 does not match it.
	broken, err := jsonschema.UnmarshalJSON(bytes.NewReader(bytes.Replace(data, []byte(`"startLine": 12`), []byte(`"startLine": 0`), 1)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Validate(broken) == nil {
		t.Error("a SARIF log with startLine 0 matches the schema: the schema is not checking")
	}
}

// Every invalid Katalog of the validate suite, as SARIF, matches the schema.
func TestSARIFOfEveryInvalidKatalogMatchesTheSchema(t *testing.T) {
	s := sarifSchema(t)
	t.Chdir("../../testdata/validate/invalid")
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		files := []string{e.Name()}
		switch {
		case e.IsDir():
			files, _ = filepath.Glob(filepath.Join(e.Name(), "*.yaml"))
		case !strings.HasSuffix(e.Name(), ".yaml"):
			continue
		}
		set, fs, err := katalog.Load(files)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, validate.Katalog(set)...)
		var b bytes.Buffer
		if err := FindingsSARIF(&b, fs, "dev"); err != nil {
			t.Fatal(err)
		}
		t.Run(e.Name(), func(t *testing.T) { checkSARIF(t, s, b.Bytes()) })
		n++
	}
	if n < 30 {
		t.Errorf("checked %d cases, want the whole invalid suite", n)
	}
}
