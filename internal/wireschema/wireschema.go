// Package wireschema checks remote reconciler bodies (PreparedRequest, RemoteReconcileResult)
// against the published JSON Schemas in schema/.
package wireschema

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	sigsjson "sigs.k8s.io/json"

	"github.com/orkspace/ork/schema"
)

// Validator holds both schemas, compiled once. It is safe for concurrent use: compiled
// schemas are never modified by validation.
type Validator struct {
	request *jsonschema.Schema
	result  *jsonschema.Schema
}

// New compiles the embedded schemas. It fails only if a schema file is broken, which the
// package's tests rule out.
func New() (*Validator, error) {
	c := jsonschema.NewCompiler()
	request, err := compile(c, schema.PreparedRequestFile, schema.PreparedRequest())
	if err != nil {
		return nil, err
	}
	result, err := compile(c, schema.ResultFile, schema.RemoteReconcileResult())
	if err != nil {
		return nil, err
	}
	return &Validator{request: request, result: result}, nil
}

// compile registers a schema under its own $id, so nothing is ever fetched, and compiles it.
func compile(c *jsonschema.Compiler, name string, data []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	obj, _ := doc.(map[string]any)
	id, _ := obj["$id"].(string)
	if id == "" {
		return nil, fmt.Errorf("schema %s: no $id", name)
	}
	if err := c.AddResource(id, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s, err := c.Compile(id)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return s, nil
}

// ValidatePreparedRequest checks a request body ork sent against
// prepared-request.schema.json.
func (v *Validator) ValidatePreparedRequest(body []byte) error {
	return validate(v.request, "PreparedRequest", schema.PreparedRequestFile, body)
}

// ValidateResult checks a reconciler's response body against
// remote-reconcile-result.schema.json. Like ork's own decoder, it also rejects a body that
// is not exactly one JSON object or that repeats a field, which a schema cannot express.
func (v *Validator) ValidateResult(body []byte) error {
	return validate(v.result, "RemoteReconcileResult", schema.ResultFile, body)
}

func validate(s *jsonschema.Schema, what, file string, body []byte) error {
	var doc any
	// The strict decoder reports duplicate fields (encoding/json keeps the last silently)
	// and, unlike encoding/json, decodes whole numbers as int64 rather than float64.
	strict, err := sigsjson.UnmarshalStrict(body, &doc, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return fmt.Errorf("%s is not valid JSON: %w", what, err)
	}
	if len(strict) > 0 {
		return fmt.Errorf("%s: %w", what, strict[0])
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("%s does not match %s: %w", what, file, err)
	}
	return nil
}

// Violation is one place where a body breaks its schema.
type Violation struct {
	// Path is the JSON Pointer tokens of the offending value: ["resources", "0", "fields"];
	// empty for the body as a whole.
	Path []string
	// Message says what is wrong there: "additional properties 'imagee' not allowed".
	Message string
}

// ResultViolations checks a reconciler's response body like ValidateResult and lists every
// violation with its location, sorted by location; nil when the body is valid. Where the schema offers
// alternatives (oneOf, anyOf), only the alternative that matched deepest is reported: an
// intent entry with a wrong field is not also told it lacks a full object's apiVersion.
func (v *Validator) ResultViolations(body []byte) []Violation {
	var doc any
	strict, err := sigsjson.UnmarshalStrict(body, &doc, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return []Violation{{Message: fmt.Sprintf("not valid JSON: %v", err)}}
	}
	if len(strict) > 0 {
		return []Violation{{Message: strict[0].Error()}}
	}
	err = v.result.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Message: err.Error()}}
	}
	p := message.NewPrinter(language.English)
	var out []Violation
	for _, l := range leaves(ve, nil) {
		out = append(out, l.violations(p)...)
	}
	// The library visits properties in map order: sort, so that output is reproducible.
	slices.SortStableFunc(out, func(a, b Violation) int {
		return slices.Compare(a.Path, b.Path)
	})
	return out
}

// leaf is an innermost error and the location of the object it is about.
type leaf struct {
	err *jsonschema.ValidationError
	at  []string
}

// violations describe a leaf. An error about properties that are not allowed is placed at
// each property; for propertyNames the library's location is wrong, so its parent's is
// used.
func (l leaf) violations(p *message.Printer) []Violation {
	switch k := l.err.ErrorKind.(type) {
	case *kind.PropertyNames:
		msg := fmt.Sprintf("property %q is not allowed here", k.Property)
		if len(l.err.Causes) > 0 {
			msg += ": " + l.err.Causes[0].ErrorKind.LocalizedString(p)
		}
		return []Violation{{Path: append(slices.Clone(l.at), k.Property), Message: msg}}
	case *kind.AdditionalProperties:
		out := make([]Violation, 0, len(k.Properties))
		for _, prop := range k.Properties {
			out = append(out, Violation{Path: append(slices.Clone(l.at), prop), Message: fmt.Sprintf("property %q is not allowed here", prop)})
		}
		return out
	}
	return []Violation{{Path: l.at, Message: l.err.ErrorKind.LocalizedString(p)}}
}

// leaves are the innermost errors under e (a propertyNames error counts as one), following
// only the deepest alternative of a oneOf or anyOf; parent is the location of e's parent.
func leaves(e *jsonschema.ValidationError, parent []string) []leaf {
	switch e.ErrorKind.(type) {
	case *kind.PropertyNames:
		return []leaf{{err: e, at: parent}}
	case *kind.OneOf, *kind.AnyOf:
		var best []leaf
		depth := -1
		for _, c := range e.Causes {
			ls := leaves(c, e.InstanceLocation)
			if d := maxDepth(ls); d > depth {
				best, depth = ls, d
			}
		}
		if best != nil {
			return best
		}
	}
	if len(e.Causes) == 0 {
		return []leaf{{err: e, at: e.InstanceLocation}}
	}
	var out []leaf
	for _, c := range e.Causes {
		out = append(out, leaves(c, e.InstanceLocation)...)
	}
	return out
}

func maxDepth(ls []leaf) int {
	d := 0
	for _, l := range ls {
		n := len(l.at)
		if _, ok := l.err.ErrorKind.(*kind.PropertyNames); ok {
			n++
		}
		d = max(d, n)
	}
	return d
}
