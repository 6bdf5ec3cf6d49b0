// Package manifest reads Kubernetes objects from YAML or JSON files (sample custom
// resources, Secrets) for the commands that work without a cluster.
package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// Read returns every object of a multi-document YAML (or JSON) file; a List's items count
// as objects. Numbers decode as int64, the way the API server hands them out. A file that
// cannot be read returns the *fs.PathError as is.
func Read(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		objs, err := decode(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		out = append(out, objs...)
	}
}

func decode(raw []byte) ([]*unstructured.Unstructured, error) {
	j, err := sigsyaml.YAMLToJSON(raw)
	if err != nil {
		return nil, err
	}
	var head struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
	}
	if string(bytes.TrimSpace(j)) == "null" {
		return nil, nil // an empty document: only comments, or a stray ---
	}
	if err := sigsyaml.Unmarshal(j, &head); err != nil {
		return nil, errors.New("not a Kubernetes object: expected a mapping")
	}
	if s, _ := head.APIVersion.(string); s == "" {
		return nil, errors.New("not a Kubernetes object: apiVersion is missing")
	}
	if s, _ := head.Kind.(string); s == "" {
		return nil, errors.New("not a Kubernetes object: kind is missing")
	}
	obj, err := runtime.Decode(unstructured.UnstructuredJSONScheme, j)
	if err != nil {
		return nil, err
	}
	switch x := obj.(type) {
	case *unstructured.UnstructuredList:
		var out []*unstructured.Unstructured
		for i := range x.Items {
			out = append(out, &x.Items[i])
		}
		return out, nil
	case *unstructured.Unstructured:
		if x.GetName() == "" {
			return nil, fmt.Errorf("%s: metadata.name is required", x.GetKind())
		}
		return []*unstructured.Unstructured{x}, nil
	}
	return nil, fmt.Errorf("unexpected object %T", obj)
}
