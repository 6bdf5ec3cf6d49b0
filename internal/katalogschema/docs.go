package katalogschema

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
)

// docRow is one row of a field table in docs/katalog.md: | field | type | default | description |.
type docRow struct {
	// path is the field's full path: spec.crds.*.operatorBox.reconcile.remote.managedResources[].plural.
	path string
	// typ is the type column: "string or template", "duration, positive", "list of paths"...
	typ string
	// def is the default column: "`30s`", "required", "none"...
	def  string
	desc string
	line int
}

// required reports whether the default column says the field is required.
func (r docRow) required() bool { return strings.HasPrefix(r.def, "required") }

// defaultValue is the default column's leading `literal` as JSON (true, 4, "", {}) or as a
// string (30s, http); ok is false when the default is no literal ("none", "from crdFile").
func (r docRow) defaultValue() (any, bool) {
	m := leadingLiteral.FindStringSubmatch(r.def)
	if m == nil {
		return nil, false
	}
	var v any
	if err := json.Unmarshal([]byte(m[1]), &v); err == nil {
		return v, true
	}
	return m[1], true
}

// templated reports whether the type column allows a template.
func (r docRow) templated() bool { return strings.Contains(r.typ, "template") }

var (
	leadingLiteral = regexp.MustCompile("^`([^`]*)`")
	fieldName      = regexp.MustCompile("`([^`]+)`")
	mdLink         = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
)

// parseDocs reads every field table of docs/katalog.md. A table is a field table when its
// header is | field | type | default | |; it documents the fields below its section's
// heading, a path such as "operatorBox.reconcile" that resolve turns into a full path
// ("Top level" is the root). A row may name several fields: "`operatorBox.onCreate`,
// `onReconcile`" (the later names are siblings of the first).
func parseDocs(md []byte, resolve func(heading string) (string, error)) ([]docRow, error) {
	var rows []docRow
	prefix, inTable, ok := "", false, false
	for i, line := range strings.Split(string(md), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			heading := strings.TrimSpace(html.UnescapeString(strings.TrimPrefix(line, "## ")))
			p, err := resolve(heading)
			prefix, ok = p, err == nil
			inTable = false
		case !strings.HasPrefix(line, "|"):
			inTable = false
		case isFieldHeader(line):
			if !ok {
				return nil, fmt.Errorf("docs line %d: a field table under a heading that names no Katalog field", i+1)
			}
			inTable = true
		case inTable && !strings.HasPrefix(line, "|---"):
			cells := splitRow(line)
			if len(cells) != 4 {
				return nil, fmt.Errorf("docs line %d: a field row has %d cells, want 4", i+1, len(cells))
			}
			names := fieldName.FindAllStringSubmatch(cells[0], -1)
			if len(names) == 0 {
				return nil, fmt.Errorf("docs line %d: no `field` in the first cell", i+1)
			}
			first := join(prefix, names[0][1])
			for j, n := range names {
				p := first
				if j > 0 {
					p = join(parent(first), n[1])
				}
				rows = append(rows, docRow{path: p, typ: cells[1], def: cells[2], desc: plain(cells[3]), line: i + 1})
			}
		}
	}
	return rows, nil
}

func isFieldHeader(line string) bool {
	c := splitRow(line)
	return len(c) == 4 && c[0] == "field" && c[1] == "type" && c[2] == "default" && c[3] == ""
}

// splitRow splits a Markdown table row at unescaped '|'.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// plain is a description cell as plain text: links become their text, the rest (backticks
// included) stays as written.
func plain(md string) string {
	return strings.ReplaceAll(mdLink.ReplaceAllString(md, "$1"), "**", "")
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func parent(p string) string {
	if i := strings.LastIndex(p, "."); i >= 0 {
		return p[:i]
	}
	return ""
}
