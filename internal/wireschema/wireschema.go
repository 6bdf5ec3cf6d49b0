// Package wireschema checks remote reconciler bodies (PreparedRequest, RemoteReconcileResult)
// against the published JSON Schemas in schema/.
package wireschema

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
