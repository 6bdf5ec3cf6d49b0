package render

import (
	"fmt"
	"regexp"
	"strings"
)

// MissingField is the error of a template, parsed with missingkey=error, that reads a field
// its data lacks. Go's own words ("map has no entry for key") name neither the path nor
// what to do about it.
type MissingField struct {
	// Path is the missing field as the template reads it, up to the first absent key:
	// ".spec.level" (for {{ .spec.level.name }} when spec has no level).
	Path string
}

func (e *MissingField) Error() string {
	parent, key := e.Path[:strings.LastIndex(e.Path, ".")], e.Path[strings.LastIndex(e.Path, ".")+1:]
	if parent == "" {
		parent = "."
	}
	return fmt.Sprintf("template reads %s, which the custom resource lacks (outside remote.args a missing field fails the render; "+
		"read an optional one with {{ index %s %q | default \"…\" }})", e.Path, parent, key)
}

// missingKey matches text/template's execution error for a missing map key.
var missingKey = regexp.MustCompile(`at <(\.[^>]*)>: map has no entry for key "([^"]*)"`)

// missingField recognises text/template's missing-key error; nil for any other error.
func missingField(err error) *MissingField {
	m := missingKey.FindStringSubmatch(err.Error())
	if m == nil {
		return nil
	}
	segs := strings.Split(strings.TrimPrefix(m[1], "."), ".")
	for i, s := range segs {
		if s == m[2] {
			return &MissingField{Path: "." + strings.Join(segs[:i+1], ".")}
		}
	}
	return &MissingField{Path: m[1]}
}
