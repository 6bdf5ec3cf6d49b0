package output

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"

	"github.com/orkspace/ork/internal/katalog"
)

// JUnit XML, as CI systems (GitLab, Jenkins, Azure Pipelines...) read test reports.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		ClassName string        `xml:"classname,attr"`
		Name      string        `xml:"name,attr"`
		Failure   *junitFailure `xml:"failure,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

// FindingsJUnit prints the findings as a JUnit XML report: a test suite per Katalog file in
// files (in that order), a failed test case per error, a passed one per warning (the warning
// in its system-out), and a single passed case "valid" for a file with no findings.
func FindingsJUnit(w io.Writer, files []string, fs []katalog.Finding) error {
	files = slices.Clone(files)
	for _, f := range fs {
		if !slices.Contains(files, f.File) {
			files = append(files, f.File)
		}
	}
	report := junitSuites{Name: "ork validate"}
	for _, file := range files {
		suite := junitSuite{Name: file}
		for _, f := range fs {
			if f.File != file {
				continue
			}
			name := string(f.Rule)
			if f.Path != "" {
				name += " " + f.Path
			}
			line := fmt.Sprintf("%s:%d:%d: %s: %s", f.File, f.Line, f.Column, f.Severity, describe(f.Path, f.Message))
			if f.Hint != "" {
				line += " (hint: " + f.Hint + ")"
			}
			c := junitCase{ClassName: file, Name: name}
			if f.Severity == katalog.SeverityWarning {
				c.SystemOut = line
			} else {
				c.Failure = &junitFailure{Message: f.Message, Type: string(f.Rule), Text: line}
				suite.Failures++
			}
			suite.Cases = append(suite.Cases, c)
		}
		if len(suite.Cases) == 0 {
			suite.Cases = []junitCase{{ClassName: file, Name: "valid"}}
		}
		suite.Tests = len(suite.Cases)
		report.Tests += suite.Tests
		report.Failures += suite.Failures
		report.Suites = append(report.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(report); err != nil {
		return fmt.Errorf("encode junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
