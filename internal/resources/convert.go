package resources

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// toUnstructured converts a typed object and prunes what the conversion adds for fields ork
// never set (creationTimestamp: null, status: {}, resources: {}, serviceName: ""), so the
// object states only what ork wants to own under server-side apply.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", obj, err)
	}
	// Status belongs to the object's controller; typed structs carry zero counters in it.
	delete(m, "status")
	prune(m)
	return &unstructured.Unstructured{Object: m}, nil
}

// userStringMaps are keys whose maps hold the user's values verbatim.
var userStringMaps = map[string]bool{"data": true, "stringData": true, "binaryData": true, "labels": true, "annotations": true}

// prune removes nulls, empty strings and maps left empty by that, recursively. Objects built
// from typed structs never mean anything by them.
func prune(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case string:
			if x == "" {
				delete(m, k)
			}
		case map[string]any:
			// The user's own string maps keep their empty values: data: {K: ""} means K.
			if !userStringMaps[k] {
				prune(x)
			}
			if len(x) == 0 {
				delete(m, k)
			}
		case []any:
			for _, e := range x {
				if em, ok := e.(map[string]any); ok {
					prune(em)
				}
			}
		}
	}
}
