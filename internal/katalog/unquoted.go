package katalog

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// unquotedTemplates finds values written as `key: {{ .spec.x }}` without quotes. YAML reads
// that as a mapping whose key is a mapping, which no field accepts, and the decoder's own
// message ("invalid map key") names neither the line nor the cause. Each becomes a located
// finding, and the node is turned back into the template string the user meant, so that the
// rest of the file is still checked.
func unquotedTemplates(f *File, n *yaml.Node, path string, findings *[]Finding) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			unquotedTemplates(f, c, path, findings)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := joinKey(path, n.Content[i].Value)
			fixUnquoted(f, n.Content[i+1], p, findings)
			unquotedTemplates(f, n.Content[i+1], p, findings)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := joinIndex(path, i)
			fixUnquoted(f, c, p, findings)
			unquotedTemplates(f, c, p, findings)
		}
	}
}

// fixUnquoted rewrites n in place when it is `{{ X }}` read as YAML: a flow mapping with one
// key, itself a flow mapping with the one key X, both without values.
func fixUnquoted(f *File, n *yaml.Node, path string, findings *[]Finding) {
	if n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle == 0 || len(n.Content) != 2 {
		return
	}
	inner, outerValue := n.Content[0], n.Content[1]
	if inner.Kind != yaml.MappingNode || len(inner.Content) != 2 || !isNull(outerValue) ||
		inner.Content[0].Kind != yaml.ScalarNode || !isNull(inner.Content[1]) {
		return
	}
	text := fmt.Sprintf("{{ %s }}", inner.Content[0].Value)
	*findings = append(*findings, Finding{
		Rule: RuleUnquotedTemplate, Severity: SeverityError, File: f.Path, Line: n.Line, Column: n.Column, Path: DisplayPath(path),
		Message: fmt.Sprintf("unquoted template %s: YAML reads `{{ ... }}` as a mapping", text),
		Hint:    "quote it: " + yamlQuoted(text),
	})
	*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: text, Style: yaml.DoubleQuotedStyle, Line: n.Line, Column: n.Column}
}

// yamlQuoted is text as a YAML string to paste: single quotes when it holds double quotes
// (`{{ index .spec "level" }}`), which need no escaping inside them.
func yamlQuoted(text string) string {
	if strings.Contains(text, `"`) {
		return "'" + strings.ReplaceAll(text, "'", "''") + "'"
	}
	return `"` + text + `"`
}
