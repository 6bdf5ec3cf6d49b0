package katalog

import (
	"cmp"
	"slices"
)

// Severity of a Finding.
type Severity string

// Severities: an error makes the Katalog invalid, a warning does not.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one problem in a Katalog, located in its file. Its JSON shape is a contract
// (ork validate -o json): every key is always present, hint "" when there is none.
type Finding struct {
	// Rule is the check that found it: the id SARIF, JUnit and -o github report too, listed
	// in docs/katalog.md#rules.
	Rule     Rule     `json:"rule"`
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	Path     string   `json:"path"`
	Message  string   `json:"message"`
	Hint     string   `json:"hint"`
}

// SortFindings orders findings by file, line, column, then path and message, so that output
// is deterministic.
func SortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Column, b.Column),
			cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Severity == SeverityError })
}
