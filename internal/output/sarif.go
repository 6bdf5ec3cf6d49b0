package output

import (
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/orkspace/ork/internal/katalog"
)

// SARIF 2.1.0, the subset ork writes: one run, every rule in tool.driver.rules, one result
// per finding with its file, line, column and Katalog path.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool       sarifTool     `json:"tool"`
		ColumnKind string        `json:"columnKind"`
		Results    []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string      `json:"id"`
		ShortDescription     sarifText   `json:"shortDescription"`
		DefaultConfiguration sarifConfig `json:"defaultConfiguration"`
	}
	sarifConfig struct {
		Level string `json:"level"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID    string          `json:"ruleId"`
		RuleIndex int             `json:"ruleIndex"`
		Level     string          `json:"level"`
		Message   sarifText       `json:"message"`
		Locations []sarifLocation `json:"locations"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical  `json:"physicalLocation"`
		LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           sarifRegion   `json:"region"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn"`
	}
	sarifLogical struct {
		FullyQualifiedName string `json:"fullyQualifiedName"`
	}
)

// SARIFSchemaURI is the $schema of ork's SARIF logs.
const SARIFSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

// FindingsSARIF prints the findings as a SARIF 2.1.0 log, as code-scanning dashboards read
// it (GitHub's upload-sarif among them). Rule IDs are katalog's, stable across versions;
// toolVersion is ork's.
func FindingsSARIF(w io.Writer, fs []katalog.Finding, toolVersion string) error {
	rules := katalog.Rules()
	index := map[katalog.Rule]int{}
	driver := sarifDriver{Name: "ork", Version: toolVersion, InformationURI: "https://github.com/orkspace/ork",
		Rules: make([]sarifRule, len(rules))}
	for i, r := range rules {
		index[r.ID] = i
		driver.Rules[i] = sarifRule{ID: string(r.ID), ShortDescription: sarifText{r.Summary},
			DefaultConfiguration: sarifConfig{sarifLevel(r.Severity)}}
	}
	results := make([]sarifResult, 0, len(fs))
	for _, f := range fs {
		msg := describe(f.Path, f.Message)
		if f.Hint != "" {
			msg += " (hint: " + f.Hint + ")"
		}
		loc := sarifLocation{PhysicalLocation: sarifPhysical{
			ArtifactLocation: sarifArtifact{URI: fileURI(f.File)},
			Region:           sarifRegion{StartLine: max(f.Line, 1), StartColumn: max(f.Column, 1)},
		}}
		if f.Path != "" {
			loc.LogicalLocations = []sarifLogical{{FullyQualifiedName: f.Path}}
		}
		i, ok := index[f.Rule]
		if !ok {
			i = -1 // SARIF's "no rule index"; every finding ork makes has a known rule
		}
		results = append(results, sarifResult{RuleID: string(f.Rule), RuleIndex: i,
			Level: sarifLevel(f.Severity), Message: sarifText{msg}, Locations: []sarifLocation{loc}})
	}
	return WriteJSON(w, sarifLog{Schema: SARIFSchemaURI, Version: "2.1.0", Runs: []sarifRun{{
		Tool: sarifTool{driver}, ColumnKind: "unicodeCodePoints", Results: results,
	}}})
}

func sarifLevel(s katalog.Severity) string {
	if s == katalog.SeverityWarning {
		return "warning"
	}
	return "error"
}

// fileURI is a file's SARIF artifact URI: relative paths stay relative (dashboards resolve
// them against the repository root), absolute ones become file:// URIs.
func fileURI(p string) string {
	u := url.URL{Path: filepath.ToSlash(p)}
	if filepath.IsAbs(p) {
		u.Scheme = "file"
		if !strings.HasPrefix(u.Path, "/") {
			u.Path = "/" + u.Path // C:/x is file:///C:/x
		}
	}
	return u.String()
}
