package crschema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsyaml "sigs.k8s.io/yaml"
)

// Pos is a 1-based line and column.
type Pos struct{ Line, Column int }

// Doc is one document of a manifest file, with the position of each of its fields.
type Doc struct {
	// Object is the document as the apiserver decodes JSON: integers as int64.
	Object map[string]any
	// Line is where the document starts.
	Line      int
	positions map[string]Pos
}

// Pos returns the position of the field at path ("spec.ports[0].port"), or of its nearest
// ancestor in the document.
func (d Doc) Pos(path string) Pos {
	for p := path; p != ""; p = parent(p) {
		if pos, ok := d.positions[p]; ok {
			return pos
		}
	}
	return Pos{Line: d.Line, Column: 1}
}

// ReadFile reads every mapping document of a YAML manifest file with its positions.
func ReadFile(path string) ([]Doc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse is ReadFile for a manifest already read; path names it in errors.
func Parse(path string, data []byte) ([]Doc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []Doc
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
			continue // an empty document, or no object
		}
		raw, err := yaml.Marshal(&n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		j, err := sigsyaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, n.Line, err)
		}
		var obj map[string]any
		if err := utiljson.Unmarshal(j, &obj); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, n.Line, err)
		}
		d := Doc{Object: obj, Line: n.Content[0].Line, positions: map[string]Pos{}}
		index(n.Content[0], "", d.positions)
		out = append(out, d)
	}
}

// index records where each field stands; a mapping value is located at its key.
func index(n *yaml.Node, path string, into map[string]Pos) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if _, dup := into[p]; !dup {
				into[p] = Pos{Line: k.Line, Column: k.Column}
			}
			index(v, p, into)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := path + "[" + strconv.Itoa(i) + "]"
			into[p] = Pos{Line: c.Line, Column: c.Column}
			index(c, p, into)
		}
	}
}

func parent(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '.' || p[i] == '[' {
			return p[:i]
		}
	}
	return ""
}
