package katalog

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/orkspace/ork/internal/suggest"
)

// checkStructure walks the YAML tree against the Go type t (by json tags), records a finding
// for every unknown field and every value of the wrong kind, and prunes those nodes so that
// the rest still decodes: one run reports every structural problem, not just the first.
// It returns false when n itself has the wrong kind and must be dropped by its parent.
func checkStructure(f *File, n *yaml.Node, t reflect.Type, path string, out *[]Finding) bool {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if isNull(n) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct:
		if !expectKind(f, n, yaml.MappingNode, "a mapping", path, out) {
			return false
		}
		fields := jsonFields(t)
		kept := n.Content[:0]
		seen := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := joinKey(path, k.Value)
			if duplicateKey(f, k, p, seen, out) {
				continue
			}
			ft, ok := fields[k.Value]
			if !ok {
				*out = append(*out, unknownField(f, p, k.Value, fields))
				continue
			}
			if !checkValue(f, v, ft, p, out) {
				continue
			}
			kept = append(kept, k, v)
		}
		n.Content = kept
	case reflect.Map:
		if !expectKind(f, n, yaml.MappingNode, "a mapping", path, out) {
			return false
		}
		kept := n.Content[:0]
		seen := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if duplicateKey(f, k, joinKey(path, k.Value), seen, out) {
				continue
			}
			if checkValue(f, v, t.Elem(), joinKey(path, k.Value), out) {
				kept = append(kept, k, v)
			}
		}
		n.Content = kept
	case reflect.Slice:
		if !expectKind(f, n, yaml.SequenceNode, "a list", path, out) {
			return false
		}
		kept := n.Content[:0]
		for i, c := range n.Content {
			if checkValue(f, c, t.Elem(), joinIndex(path, i), out) {
				kept = append(kept, c)
			}
		}
		n.Content = kept
	}
	return true
}

// duplicateKey reports a key that its mapping already holds, at its own (second) position;
// the caller drops it, so that the first value stands, as every finding's position says.
// YAML forbids duplicates, yet the node parser accepts them, and strict decoding would
// later fail without a position.
func duplicateKey(f *File, k *yaml.Node, path string, seen map[string]*yaml.Node, out *[]Finding) bool {
	first, dup := seen[k.Value]
	if !dup {
		seen[k.Value] = k
		return false
	}
	*out = append(*out, Finding{Rule: RuleDuplicateKey, Severity: SeverityError, File: f.Path, Line: k.Line, Column: k.Column,
		Path: DisplayPath(path), Message: fmt.Sprintf("key %q is already set at line %d", k.Value, first.Line),
		Hint: "remove one of them: ork reads the first, other YAML tools may read the last"})
	return true
}

// checkValue checks one value node; false means it is wrong and its parent drops it.
func checkValue(f *File, n *yaml.Node, t reflect.Type, path string, out *[]Finding) bool {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	base := t
	if base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if isNull(n) {
		return true
	}
	want := ""
	switch base.Kind() {
	case reflect.String:
		want = "!!str"
	case reflect.Bool:
		want = "!!bool"
	case reflect.Int, reflect.Int32, reflect.Int64:
		want = "!!int"
	}
	if want == "" {
		return checkStructure(f, n, t, path, out)
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != want {
		hint := hintForTag(want)
		if durationFields[path[strings.LastIndex(path, ".")+1:]] {
			hint = "a Go duration with its unit, such as 30s or 10m" // "30" quoted is no duration either
		}
		*out = append(*out, f.Finding(RuleWrongType, SeverityError, path,
			fmt.Sprintf("expected %s, got %s", describeTag(want), describeNode(n)), hint))
		return false
	}
	return true
}

func expectKind(f *File, n *yaml.Node, kind yaml.Kind, what, path string, out *[]Finding) bool {
	if n.Kind == kind {
		return true
	}
	*out = append(*out, f.Finding(RuleWrongType, SeverityError, path,
		fmt.Sprintf("expected %s, got %s", what, describeNode(n)), ""))
	return false
}

func unknownField(f *File, path, name string, fields map[string]reflect.Type) Finding {
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	slices.Sort(known)
	hint := "known fields: " + strings.Join(known, ", ")
	if near := suggest.Nearest(name, known); near != "" {
		hint = fmt.Sprintf("did you mean `%s`?", near)
		f.meant[joinKey(parentPath(path), near)] = true
	}
	return f.Finding(RuleUnknownField, SeverityError, path, fmt.Sprintf("unknown field %q", name), hint)
}

// jsonFields maps the json names of t's fields to their types; fields tagged "-" are not
// part of the file format.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out[name] = sf.Type
	}
	return out
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%s %q", describeTag(n.ShortTag()), n.Value)
}

func describeTag(tag string) string {
	switch tag {
	case "!!str":
		return "a string"
	case "!!bool":
		return "a boolean"
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	}
	return strings.TrimPrefix(tag, "!!")
}

// durationFields are the Katalog's string fields that hold a Go duration.
var durationFields = map[string]bool{"timeout": true, "resync": true}

func hintForTag(want string) string {
	switch want {
	case "!!str":
		return "quote the value"
	case "!!bool":
		return "use true or false"
	case "!!int":
		return "use a whole number without quotes"
	}
	return ""
}
