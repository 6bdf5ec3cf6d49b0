// Package katalogschema generates schema/katalog.schema.json, the JSON Schema (draft
// 2020-12) of a Katalog file that editors and other tools read, and checks YAML documents
// against it. The schema is built from the Katalog's Go types (which fields exist, their
// types), docs/katalog.md (descriptions, defaults, which fields are required, where a
// template may stand), the intent form's schema (declarative entries), and the rules of
// internal/validate that a schema can express (constraints.go).
package katalogschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/orkspace/ork/internal/katalog"
)

// ID is the schema's $id: where the released file is read from.
const ID = "https://raw.githubusercontent.com/orkspace/ork/main/schema/katalog.schema.json"

// Generate returns the Katalog schema as indented JSON. docs is docs/katalog.md, intent is
// schema/remote-reconcile-result.schema.json. It fails when the docs and the Go types
// disagree: a documented field the types lack, a field without a row, a type column that
// does not fit the Go type, or a template allowed where the field is no string.
func Generate(docs, intent []byte) ([]byte, error) {
	fs := fieldsOf(reflect.TypeFor[katalog.Katalog](), "")
	rows, err := parseDocs(docs, resolver(fs))
	if err != nil {
		return nil, err
	}
	g := &generator{rows: map[string]docRow{}, constraints: constraints()}
	if err := g.check(fs, rows); err != nil {
		return nil, err
	}
	defs, err := intentDefs(intent)
	if err != nil {
		return nil, err
	}
	root := object(
		"$schema", "https://json-schema.org/draft/2020-12/schema",
		"$id", ID,
		"title", "Katalog",
		"description", intro(docs),
	)
	root.merge(g.structSchema(reflect.TypeFor[katalog.Katalog](), ""))
	root.merge(g.constraints[""])
	root.set("$defs", defs)
	raw, err := root.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

type generator struct {
	rows        map[string]docRow
	constraints map[string]*obj
}

// check matches the docs' rows with the Go fields, one to one, and indexes the rows.
func (g *generator) check(fs []field, rows []docRow) error {
	byPath := map[string]field{}
	for _, f := range fs {
		byPath[f.path] = f
	}
	var errs []error
	for _, r := range rows {
		f, ok := byPath[r.path]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("docs/katalog.md:%d documents %s, which the Katalog types do not have", r.line, r.path))
			continue
		case !docKindFits(f.typ, r.typ):
			errs = append(errs, fmt.Errorf("docs/katalog.md:%d says %s is %q, but its Go type is %s", r.line, r.path, r.typ, f.typ))
		case r.templated() && f.typ.Kind() != reflect.String:
			errs = append(errs, fmt.Errorf("docs/katalog.md:%d allows a template in %s, which is no string", r.line, r.path))
		}
		if prev, dup := g.rows[r.path]; dup {
			errs = append(errs, fmt.Errorf("docs/katalog.md:%d documents %s again (first at line %d)", r.line, r.path, prev.line))
		}
		g.rows[r.path] = r
	}
	for _, f := range fs {
		if _, ok := g.rows[f.path]; !ok && f.typ.Kind() != reflect.Struct {
			errs = append(errs, fmt.Errorf("%s (Go type %s) has no row in docs/katalog.md", f.path, f.typ))
		}
	}
	for p := range g.constraints {
		if _, ok := byPath[p]; !ok && p != "" && !strings.HasSuffix(p, ".*") && !strings.HasSuffix(p, "[]") {
			errs = append(errs, fmt.Errorf("constraints.go constrains %s, which the Katalog types do not have", p))
		}
	}
	return errors.Join(errs...)
}

// resolver turns a section heading of docs/katalog.md into the path its tables document:
// "Top level" is the root, "spec.crds.<name>" is spec.crds.*, and any other heading is the
// one field path that ends with it ("operatorBox.reconcile").
func resolver(fs []field) func(string) (string, error) {
	return func(heading string) (string, error) {
		switch heading {
		case "Top level":
			return "", nil
		case "spec.crds.<name>":
			return "spec.crds.*", nil
		}
		var match []string
		for _, f := range fs {
			if f.path == heading || strings.HasSuffix(f.path, "."+heading) {
				match = append(match, f.path)
			}
		}
		if len(match) != 1 {
			return "", fmt.Errorf("heading %q names %d fields", heading, len(match))
		}
		return match[0], nil
	}
}

// structSchema is the object schema of a struct at path: its fields as properties, closed
// to others (ork rejects unknown fields), with the required ones listed.
func (g *generator) structSchema(t reflect.Type, path string) *obj {
	props := object()
	var required []string
	for _, f := range ownFields(t, path) {
		props.set(f.name, g.property(f))
		if g.rows[f.path].required() {
			required = append(required, f.name)
		}
	}
	s := object("type", "object")
	if len(required) > 0 {
		s.set("required", required)
	}
	return s.set("additionalProperties", false).set("properties", props)
}

// property is the schema of one field: its type, described and defaulted by its docs row,
// null allowed unless it is required (ork reads null as absent), and its constraints.
func (g *generator) property(f field) *obj {
	row, documented := g.rows[f.path]
	s := object()
	if documented && row.desc != "" {
		s.set("description", row.desc)
	}
	s.merge(g.typeSchema(f.typ, f.path))
	required := row.required()
	if !required {
		if typ, ok := s.get("type"); ok {
			s.set("type", []any{typ, "null"})
		}
	}
	if required && f.typ.Kind() == reflect.String {
		s.set("minLength", 1) // "" is as missing as an absent field
	}
	if v, ok := row.defaultValue(); documented && ok {
		s.set("default", v)
	}
	c := g.constraints[f.path]
	switch {
	case c == nil:
	case row.templated():
		s.set("anyOf", []any{object("$ref", "#/$defs/template"), c})
	default:
		s.merge(c)
	}
	if enum, ok := s.get("enum"); ok && !required && !slices.Contains(enum.([]any), nil) {
		s.set("enum", append(enum.([]any), nil))
	}
	return s
}

// typeSchema is the schema of a Go type at path.
func (g *generator) typeSchema(t reflect.Type, path string) *obj {
	if t == reflect.TypeFor[katalog.DeclaredResources]() {
		return object("$ref", "#/$defs/declarativeBlocks")
	}
	switch t.Kind() {
	case reflect.String:
		return object("type", "string")
	case reflect.Bool:
		return object("type", "boolean")
	case reflect.Int, reflect.Int32, reflect.Int64:
		return object("type", "integer")
	case reflect.Float64:
		return object("type", "number")
	case reflect.Struct:
		return g.structSchema(t, path)
	case reflect.Slice:
		return object("type", "array", "items", g.elemSchema(t.Elem(), path+"[]"))
	case reflect.Map:
		s := object("type", "object")
		if e := deref(t.Elem()); e.Kind() != reflect.Interface {
			s.set("additionalProperties", g.elemSchema(e, path+".*"))
		}
		return s
	}
	return object()
}

// elemSchema is the schema of a list's items or a map's values: never null for a struct
// (an empty entry misses its required fields), with the constraints of its path.
func (g *generator) elemSchema(t reflect.Type, path string) *obj {
	t = deref(t)
	s := g.typeSchema(t, path)
	if c := g.constraints[path]; c != nil {
		s.merge(c)
	}
	return s
}

// intro is the docs' first paragraph: what a Katalog is.
func intro(docs []byte) string {
	var para []string
	for _, line := range strings.Split(string(docs), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#"):
		case line == "" && len(para) > 0:
			return plain(strings.Join(para, " "))
		case line != "":
			para = append(para, line)
		}
	}
	return plain(strings.Join(para, " "))
}
