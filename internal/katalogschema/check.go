package katalogschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
	yaml "go.yaml.in/yaml/v3"
)

// Validator checks Katalog files against a Katalog schema with an independent JSON Schema
// validator (santhosh-tekuri/jsonschema), as an editor would.
type Validator struct {
	schema *jsonschema.Schema
}

// NewValidator compiles a Katalog schema (schema/katalog.schema.json). Nothing is fetched:
// the schema is registered under its own $id.
func NewValidator(schemaJSON []byte) (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("katalog schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(ID, doc); err != nil {
		return nil, fmt.Errorf("katalog schema: %w", err)
	}
	s, err := c.Compile(ID)
	if err != nil {
		return nil, fmt.Errorf("katalog schema: %w", err)
	}
	return &Validator{schema: s}, nil
}

// Check validates every YAML document of data (an empty trailing one aside) as an editor's
// YAML language server does: YAML 1.2, so `yes` is a string. A file with no document is
// checked as null. The error is a *jsonschema.ValidationError, or says why data is no JSON.
func (v *Validator) Check(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	checked := 0
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("YAML: %w", err)
		}
		if len(n.Content) == 0 || (checked > 0 && isNullNode(n.Content[0])) {
			continue
		}
		doc, err := toJSON(&n)
		if err != nil {
			return err
		}
		if err := v.schema.Validate(doc); err != nil {
			return err
		}
		checked++
	}
	if checked == 0 {
		return v.schema.Validate(nil)
	}
	return nil
}

func isNullNode(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// toJSON converts a YAML node to the JSON value it denotes; a mapping key that is not a
// scalar (`key: {{ x }}` unquoted) has no JSON form.
func toJSON(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		return toJSON(n.Content[0])
	case yaml.AliasNode:
		return toJSON(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := toJSON(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a mapping key that is no string has no JSON form", k.Line)
			}
			v, err := toJSON(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		err := n.Decode(&b)
		return b, err
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return nil, err
		}
		return json.Number(strconv.FormatInt(i, 10)), nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, err
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("line %d: %s has no JSON form", n.Line, n.Value)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	}
	return n.Value, nil
}
